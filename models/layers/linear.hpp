// The two parameterised building blocks of the zoo: a linear layer and an embedding table.
//
// Initialisation (one place, so every model agrees):
//   - embeddings: uniform(-1, 1), as the DMNC authors' code initialises its embedding matrices;
//   - linear layers: Glorot-uniform weights, zero biases. Glorot scales with fan-in + fan-out, so a
//     layer reading [h; r] of width 2H + 2RW = 384 starts with unit-order pre-activations; the
//     authors' fixed N(0, 0.1) would give pre-activations of std ~2 at that width and saturate the
//     sigmoid gates of the interface at the start.
//   - LSTM cells: rnn_cells.hpp's Glorot over the fused matrix with forget bias 1.
#pragma once
#include <cstdint>
#include <string>

#include "engine/parameter.hpp"
#include "engine/rng.hpp"
#include "engine/tape.hpp"

namespace memgrad::layers {

// y = x W + b, W [in, out] Glorot-uniform, b [out] zero (optional). Parameters "<prefix>.w",
// "<prefix>.b".
class Linear {
 public:
  Linear() = default;
  Linear(ParameterSet& params, const std::string& prefix, int64_t in, int64_t out, Rng& rng,
         bool bias = true);
  // x [..., in] -> [..., out] (leading dims folded into one GEMM).
  Var operator()(Tape& tape, Var x) const;
  int64_t in() const { return in_; }
  int64_t out() const { return out_; }
  // The weight [in, out] and bias [out] on `tape` (the bias undefined without one).
  Var weight(Tape& tape) const { return tape.param(*w_); }
  Var bias(Tape& tape) const { return b_ ? tape.param(*b_) : Var{}; }
  // Sets bias entries [begin, begin + count) to value (an initialisation choice, e.g. a gate's
  // starting bias); the layer must have a bias.
  void init_bias(int64_t begin, int64_t count, double value);
  // Redraws the weights uniform(-limit, limit) instead of Glorot (an initialisation choice).
  void init_weights_uniform(double limit, Rng& rng);

 private:
  Parameter* w_ = nullptr;
  Parameter* b_ = nullptr;
  int64_t in_ = 0, out_ = 0;
};

// A lookup table [rows, dim], uniform(-1, 1). Parameter "<name>".
class Embedding {
 public:
  Embedding() = default;
  Embedding(ParameterSet& params, const std::string& name, int64_t rows, int64_t dim, Rng& rng);
  // ids of any shape S (rank <= 3, whole numbers in [0, rows)) -> [S..., dim].
  Var operator()(Tape& tape, Var ids) const { return lookup(table(tape), ids); }
  // The table [rows, dim] on `tape`, and a lookup in it or in any [rows, D] function of it: a
  // layer applied to the table's rows and then looked up costs V rows instead of one per token
  // (LstmCell::project_leading).
  Var table(Tape& tape) const { return tape.param(*table_); }
  Var lookup(Var table, Var ids) const;
  int64_t rows() const { return rows_; }
  int64_t dim() const { return dim_; }

 private:
  Parameter* table_ = nullptr;
  int64_t rows_ = 0, dim_ = 0;
};

}  // namespace memgrad::layers
