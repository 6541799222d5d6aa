// The decoder every two-view sequence model ends in (sequence output with teacher forcing or
// greedy decoding, or set output), reading its context through a DecoderReader.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/batch.hpp"
#include "engine/parameter.hpp"
#include "engine/rng.hpp"
#include "engine/tape.hpp"
#include "models/layers/decoder_reader.hpp"
#include "models/layers/linear.hpp"
#include "models/layers/rnn_cells.hpp"
#include "models/model.hpp"

namespace memgrad::layers {

// The output stage every model ends in.
//   sequence: an LSTM decoder of hidden Hd reads [embedding of y*_{t-1}; context_{t-1}] (y*_0 =
//     GO, an extra embedding row), steps, reads context_t with its hidden state h_t, and scores
//     logits_t = W [h_t; context_t] + b (Eq. 14: W_y h + W_r r). y*_{t-1} is the target y_{t-1}
//     with teacher forcing (ForwardOptions::teacher_forcing) or the argmax of the previous logits
//     (greedy decoding, computed on values: no gradient). Loss: cross_entropy(logits, y, y_mask)
//     over batch fields y, y_mask [B, Ly]; predictions: logits [B, Ly, V].
//   set: logits = W [h; context] + b with context read once with h (Eq. 16), h = the initial state
//     h0 ("set_decoder": "read"), or h = the decoder LSTM's state after one step from h0 on [GO;
//     context0] ("step": the DMNC authors' code, which decodes a set in one decoder step). With
//     "read" the logits of a two-encoder model are a sum of one term per view (h0 = [h^1; h^2],
//     and DMNC-late reads M_i with h^i), so no interaction between the views can be scored;
//     "step" mixes the views through the LSTM's gates (docs/mimic.md, the "either" drugs). Loss:
//     bce_with_logits(logits, labels) over batch field labels [B, V] (multi-hot), over the rows the
//     optional field labels_mask [B] marks 1 when the batch has it (mimic-progression: rows of
//     patients without an admission at this step); predictions: logits [B, V].
struct DecoderSpec {
  int64_t output_vocab = 0;
  int64_t embedding = 0;
  int64_t hidden = 0;   // Hd
  int64_t context = 0;  // width of what the reader returns (0: no reader)
  bool sequence = true;
  bool set_step =
      false;        // set output: one decoder LSTM step before the read (config "set_decoder")
  double clip = 0;  // clip of the decoder LSTM's cell state (0 = off)
  // false: every step's input embedding is GO's, as in the DMNC authors' runs (decoder_mode=False):
  // the decoder never sees the previous target or prediction. Config key "decoder_feedback".
  bool feedback = true;
  // false: in training too the decoder is fed its own previous prediction (greedy, as in
  // evaluation), never the target, as the DMNC authors' view-concatenated LSTM and DNC are trained
  // (decoder_mode=True, use_teacher=False). Config key "train_teacher_forcing".
  bool train_teacher_forcing = true;
  // false (sequence output): logits_t = W h_t + b, the context entering only the next step's input,
  // as the DMNC authors' WLAS decoder has it. Config key "context_in_output" (WLAS).
  bool context_in_output = true;
  // Packing (config key "pack_rows"): sample b's outputs end at its last unmasked position L_b, and
  // nothing the decoder computes for it after that reaches the loss; so step t computes the rows of
  // the samples with L_b > t only. The samples are put in order of L_b, longest first
  // (DecoderReader::take_rows), so that the state, the context and the reader drop the rows of
  // those that end by keeping the leading rows (DecoderReader::keep_leading, views); the logits of
  // every step are scattered back into [B, Ly, V], zero at the positions never computed (masked:
  // no loss reads them). The same loss and gradients as stepping every row, at sum_b L_b / (B Ly)
  // of the cost. Off in traced forwards.
  bool pack_rows = true;
};

// The decoder settings every sequence model's config holds: output_vocab, embedding, "output"
// ("sequence" or "set", anything else an Error naming the model), set_decoder ("read" or "step"),
// decoder_feedback, pack_rows.
// The caller sets hidden, context, clip and context_in_output.
DecoderSpec decoder_spec(const nlohmann::json& cfg, const std::string& model);
// The ModelInfo::config_before of every model with this decoder: runs saved before the key
// "set_decoder" existed read their set output once with h0 ("read").
nlohmann::json decoder_config_before();

class Decoder {
 public:
  Decoder() = default;
  Decoder(ParameterSet& params, const std::string& prefix, const DecoderSpec& spec, Rng& rng);
  // init: the decoder's initial LSTM state [B, Hd]; context0: what the first step reads as the
  // previous context (undefined when spec.context == 0; unused for set output); reader: null when
  // spec.context == 0.
  ForwardResult run(Tape& tape, const Batch& batch, const ForwardOptions& opts,
                    const std::string& model, const LstmState& init, Var context0,
                    DecoderReader* reader) const;
  const DecoderSpec& spec() const { return spec_; }

 private:
  ForwardResult run_sequence(Tape& tape, const Batch& batch, const ForwardOptions& opts,
                             const std::string& model, const LstmState& init, Var context0,
                             DecoderReader* reader) const;
  DecoderSpec spec_;
  Embedding embedding_;         // [V + 1, E]; row V is GO (set output's one step: [1, E], GO)
  std::vector<LstmCell> cell_;  // one cell (sequence output, set_step) or none (set output)
  Linear out_;
};

}  // namespace memgrad::layers
