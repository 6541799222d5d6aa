// The LSTM baselines of the DMNC paper's Table 1 (section 4.1), registered as "lstm", "dual-lstm"
// and "wlas". All read the two-view batch of two_view.hpp (x1, x2 with per-sample masks) and end in
// the shared decoder of models/layers/decoder.hpp (sequence output with teacher forcing or greedy
// decoding, or set output), so they differ from DMNC only in how the views are encoded and what the
// decoder reads.
//
//   lstm       view-concatenated LSTM: one LSTM encoder (hidden H) reads view 1's events and then
//              view 2's (each view embedded with its own table, i.e. one sequence over the union
//              of the vocabularies); a decoder LSTM of hidden H starts from its final state.
//   dual-lstm  two LSTM encoders (hidden H each, their own embeddings), asynchronous over views of
//              different lengths (per-sample masks); the decoder (hidden 2H) starts from the
//              concatenation of their final states, h0 = [h1; h2], c0 = [c1; c2], and reads
//              nothing else ("WLAS without attention").
//   wlas       Watch, Listen, Attend and Spell (Chung et al. 2017) with the feature extractors
//              replaced by embeddings, as the DMNC paper does: the Dual LSTM encoders and a decoder
//              (hidden 2H, same h0) with one additive attention per encoder over that encoder's
//              outputs (its h at every event, padding excluded). The decoder's input is
//              [emb(y*_{t-1}); ctx1_{t-1}; ctx2_{t-1}], where ctx_i is attention i queried with the
//              decoder's hidden state (ctx_0 queried with h0), and logits = W [h_t; ctx1_t; ctx2_t]
//              + b: the DMNC decoder with attention in place of memory reads.
//
// Set output (config "output": "set"): logits = W [h0; context] + b with the context read once
// with h0 (nothing for lstm and dual-lstm), bce_with_logits against "labels" [B, V].
// Defaults (section 4.1): embedding 64, hidden 128; WLAS attention size 128 ("attention_size"),
// attention weights Glorot-uniform ("attention_init_range" r > 0: uniform(-r, r), as the DMNC
// authors' code draws them with r = 1; see docs/sum2seq.md for what that does to WLAS).
// Two more WLAS keys reproduce the authors' decoder: "attention_query": "cell_halves" (attention k
// queried with half k of the decoder's cell state c, not with h) and "context_in_output": false
// (logits = W h_t + b; the context enters the next step's input only).
// "attention_memory": "authors_reshape" reproduces what the authors' WLAS attends over (their
// dual_dnc.py `_step_op`): each encoder's cell states c at every step, gathered time-major
// [T, B, H] and reshaped to [B, T, H] without a transpose, unmasked. Row b of that buffer holds
// rows b*T .. b*T+T-1 of the time-major stack, i.e. mostly other samples' states: sample b
// attends over the batch's states, not its own. Ours ("outputs") attends over the sample's own
// h at each of its events. docs/sum2seq.md measures what the authors' buffer does to WLAS.
#pragma once
#include <array>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/layers/attention.hpp"
#include "models/layers/decoder.hpp"
#include "models/layers/linear.hpp"
#include "models/layers/rnn_cells.hpp"
#include "models/model.hpp"

namespace memgrad {

enum class SeqBaseline { view_concat_lstm, dual_lstm, wlas };

class SeqBaselineModel : public Model {
 public:
  SeqBaselineModel(SeqBaseline kind, const nlohmann::json& config, DType dtype, uint64_t seed);
  std::string name() const override;
  nlohmann::json config() const override { return config_; }
  ForwardResult forward(Tape& tape, const Batch& batch, const ForwardOptions& opts) override;
  bool supports_shards() const override { return true; }

 private:
  SeqBaseline kind_;
  nlohmann::json config_;
  int64_t hidden_ = 0;
  bool pack_rows_ = true;                   // config "pack_rows"
  bool query_cell_halves_ = false;          // wlas: config "attention_query"
  bool authors_memory_ = false;             // wlas: config "attention_memory"
  std::array<bool, 2> use_ = {true, true};  // lstm: config "views"
  std::array<layers::Embedding, 2> embed_;
  std::vector<LstmCell> cell_;  // lstm: one encoder; dual-lstm, wlas: two
  std::array<layers::Attention, 2> attention_;
  layers::Decoder decoder_;
};

}  // namespace memgrad
