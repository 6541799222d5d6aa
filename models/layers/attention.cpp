#include "models/layers/attention.hpp"

#include "ops/ops.hpp"

namespace memgrad::layers {

Attention::Attention(ParameterSet& params, const std::string& prefix, int64_t value_size,
                     int64_t query_size, int64_t attention_size, Rng& rng, double init_range)
    : key_(params, prefix + ".key", value_size, attention_size, rng, /*bias=*/false),
      query_(params, prefix + ".query", query_size, attention_size, rng),
      score_(params, prefix + ".score", attention_size, 1, rng, /*bias=*/false) {
  if (init_range > 0)
    for (Linear* l : {&key_, &query_, &score_}) l->init_weights_uniform(init_range, rng);
}

Attention::Memory Attention::prepare(Tape& tape, Var outputs, Var mask) const {
  Memory m;
  m.outputs = outputs;
  m.keys = key_(tape, outputs);
  m.mask = mask;
  // 0 on events, -1e9 elsewhere: exp underflows to exactly 0 in float32 and float64.
  m.bias = scale_shift(mask, 1e9, -1e9);
  return m;
}

Var Attention::attend(Tape& tape, const Memory& mem, Var query, Var* weights) const {
  const int64_t B = mem.outputs.dim(0), T = mem.outputs.dim(1), H = mem.outputs.dim(2);
  const int64_t A = key_.out();
  Var q = reshape(query_(tape, query), Shape{B, 1, A});
  Var e = reshape(score_(tape, tanh(add(mem.keys, q))), Shape{B, T});
  Var a = mul(softmax(add(e, mem.bias)), mem.mask);  // an empty view: all weights 0
  if (weights) *weights = a;
  return reshape(bmm(reshape(a, Shape{B, 1, T}), mem.outputs), Shape{B, H});
}

}  // namespace memgrad::layers
