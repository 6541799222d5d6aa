// Additive attention of a query over one encoder's masked outputs.
#pragma once
#include <cstdint>
#include <string>

#include "engine/parameter.hpp"
#include "engine/rng.hpp"
#include "engine/tape.hpp"
#include "models/layers/linear.hpp"

namespace memgrad::layers {

// Additive (Bahdanau) attention of a query over one encoder's outputs, masked:
//     e_j = v^T tanh(W_k o_j + W_q q + b),  a = softmax over the view's events,  ctx = sum_j a_j
//     o_j.
// Positions where the view has no event get weight exactly 0 (an empty view gives ctx = 0).
// Parameters "<prefix>.key.w" [H, A], "<prefix>.query.w"/".b" [Q, A], "<prefix>.score.w" [A, 1].
class Attention {
 public:
  Attention() = default;
  // Weights Glorot-uniform, or uniform(-init_range, init_range) when init_range > 0 (the DMNC
  // authors' WLAS draws its attention weights from uniform(-1, 1)).
  Attention(ParameterSet& params, const std::string& prefix, int64_t value_size, int64_t query_size,
            int64_t attention_size, Rng& rng, double init_range = 0.0);
  // Precomputes W_k o_j for outputs [B, T, H] and the mask's additive bias.
  struct Memory {
    Var outputs, keys, mask, bias;  // [B,T,H], [B,T,A], [B,T], [B,T]
  };
  Memory prepare(Tape& tape, Var outputs, Var mask) const;
  // query [B, Q] -> context [B, H]; with `weights`, stores the attention weights [B, T].
  Var attend(Tape& tape, const Memory& mem, Var query, Var* weights = nullptr) const;

 private:
  Linear key_, query_, score_;
};

}  // namespace memgrad::layers
