// The Grounded RNN (`grnn`) and its bidirectional form (`bigrnn`) of Vani, Jernite & Sontag 2017
// for multi-label text classification (task codiesp). Words are embedded (E, trained from
// scratch, 192 dims) and read by the grounded GRU cell (grounded_gru.hpp: one dimension g_l per
// label plus 128 control dimensions, semi-diagonal updates). The prediction reads the grounded
// dimensions of the last state only (paper Eq. 6, as the reference code's biased sigmoid):
//     p_l = (g_{T,l} + 1) / 2,  squeezed to p (1 - 2e-6) + 1e-6 (the reference code's clamp)
//     logit_l = log p_l - log(1 - p_l) + b_l,  y~_l = sigmoid(logit_l)   (b init 0)
//     loss = mean over (document, label) of BCE(y~_l, y_l)
// so the model's predictions are logit_l and the task's sigmoid gives y~_l.
//
// bigrnn (paper section 3, "Bidirectional GRNN"): a standard GRU (rnn_cells.hpp, reverse_hidden
// units) reads each note right to left; its output at word t (having read words T..t) is
// concatenated to the embedding of word t as the grounded network's input.
//
// The curriculum on document length (start at 50 words, x1.35 per epoch, paper section 4) is the
// codiesp task's (settings curriculum_start, curriculum_growth), set for these models by their
// registration. Every row steps only over its own words (text_inputs.hpp). Inspection
// (`memgrad inspect`, batch of one): the grounded state g_t after every word, "t<t>/g".
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "models/layers/linear.hpp"
#include "models/layers/rnn_cells.hpp"
#include "models/model.hpp"
#include "models/text/grounded_gru.hpp"

namespace memgrad::text {

class Grnn : public Model {
 public:
  Grnn(const std::string& name, const nlohmann::json& config, DType dtype, uint64_t seed);
  std::string name() const override { return name_; }
  nlohmann::json config() const override { return config_; }
  ForwardResult forward(Tape& tape, const Batch& batch, const ForwardOptions& opts) override;
  bool supports_shards() const override { return true; }

 private:
  std::string name_;
  nlohmann::json config_;
  int64_t vocab_ = 0, labels_ = 0;
  double dropout_ = 0;                // on the looked-up embeddings, in training
  Parameter* embed_table_ = nullptr;  // [V, E]
  std::optional<GruCell> reverse_;    // bigrnn only
  std::optional<GroundedGruCell> cell_;
  Parameter* bias_ = nullptr;  // b_l of the biased sigmoid
};

}  // namespace memgrad::text
