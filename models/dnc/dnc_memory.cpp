// The DNC memory access from primitive ops. Every formula below is the one of
// ../shared/golden/dnc/README.md (DeepMind's addressing.py / access.py, one write head); the golden
// vectors check values and gradients in tests/models/test_dnc_golden.cpp.
#include "models/dnc/dnc_memory.hpp"

#include <map>
#include <mutex>
#include <optional>
#include <utility>

#include "models/layers/rnn_cells.hpp"
#include "ops/ops.hpp"

namespace memgrad::dnc {
namespace {

std::string shape_str(Var v) { return v.defined() ? v.shape().str() : std::string("undefined"); }

// Throws unless v is defined with exactly `want`.
void expect(const char* fn, const char* name, Var v, const Shape& want) {
  MG_CHECK(v.defined() && v.shape() == want, "dnc::", fn, ": ", name, " must be ", want, ", got ",
           shape_str(v));
}

// The constant (1 - I) [N,N] mask that zeroes the link diagonal, cached per (N, dtype) so that a
// step allocates nothing for it.
Var offdiag_mask(Tape& tape, int64_t n, DType dtype) {
  static std::mutex mutex;
  static std::map<std::pair<int64_t, int>, Tensor> cache;
  Tensor t;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find({n, int(dtype)});
    if (it == cache.end()) {
      Tensor m = Tensor::full(Shape{n, n}, dtype, 1.0);
      for (int64_t i = 0; i < n; ++i) m.set(i * n + i, 0.0);
      it = cache.emplace(std::make_pair(n, int(dtype)), m).first;
    }
    t = it->second;
  }
  return tape.input(t, false);
}

Var one_minus(Var x) { return scale_shift(x, -1.0, 1.0); }
Var oneplus(Var x) { return add_scalar(softplus(x), 1.0); }

// |x|_e = sqrt(sum over the last axis of x^2 + eps), keeping the axis: [..., W] -> [..., 1].
Var eps_norm(Var x) { return l2_norm(x, kEpsilon); }

void record(Trace* trace, const std::string& prefix, const char* name, Var v) {
  if (!trace || !v.defined()) return;
  if (prefix.empty()) {
    trace->record(name, v);
  } else if (prefix.back() == '/') {
    trace->record(prefix + name, v);
  } else {
    trace->record(prefix + "/" + name, v);
  }
}

}  // namespace

int64_t interface_size(const MemoryConfig& cfg) {
  const int64_t R = cfg.read_heads, W = cfg.word;
  return R * W + 3 * W + 5 * R + 3;
}

Interface parse_interface(Var raw, const MemoryConfig& cfg) {
  const int64_t R = cfg.read_heads, W = cfg.word, S = interface_size(cfg);
  MG_CHECK(R >= 1 && W >= 1 && cfg.slots >= 1, "dnc::parse_interface: bad memory config (slots ",
           cfg.slots, ", word ", cfg.word, ", read heads ", cfg.read_heads, ")");
  MG_CHECK(raw.defined() && raw.shape().rank == 2 && raw.dim(1) == S,
           "dnc::parse_interface: the raw interface must be [B, ", S, "] for R = ", R, ", W = ", W,
           ", got ", shape_str(raw));
  const int64_t B = raw.dim(0);
  Temporaries temps(*raw.tape, raw);  // raw and the parts' pre-activations die here
  int64_t at = 0;
  auto take = [&](int64_t n) {
    Var v = slice(raw, 1, at, n);
    at += n;
    return v;
  };
  Interface f;
  f.read_keys = reshape(take(R * W), Shape{B, R, W});
  f.read_strengths = oneplus(take(R));
  f.write_key = take(W);
  f.write_strength = reshape(oneplus(take(1)), Shape{B});
  f.erase = sigmoid(take(W));
  f.write_vector = take(W);
  f.free_gates = sigmoid(take(R));
  f.alloc_gate = reshape(sigmoid(take(1)), Shape{B});
  f.write_gate = reshape(sigmoid(take(1)), Shape{B});
  f.read_modes = softmax(reshape(take(3 * R), Shape{B, R, 3}));
  MG_CHECK(at == S, "dnc::parse_interface: layout covers ", at, " of ", S, " columns");
  for (Var v : {f.read_keys, f.read_strengths, f.write_key, f.write_strength, f.erase,
                f.write_vector, f.free_gates, f.alloc_gate, f.write_gate, f.read_modes})
    temps.keep(v);
  return f;
}

State initial_state(Tape& tape, int64_t batch, const MemoryConfig& cfg, DType dtype, double fill) {
  const int64_t B = batch, N = cfg.slots, W = cfg.word, R = cfg.read_heads;
  MG_CHECK(B >= 1 && N >= 1 && W >= 1 && R >= 1, "dnc::initial_state: bad sizes (batch ", B,
           ", slots ", N, ", word ", W, ", read heads ", R, ")");
  State s;
  s.memory = constant_leaf(tape, Shape{B, N, W}, dtype, fill);
  s.usage = constant_leaf(tape, Shape{B, N}, dtype, 0.0);
  s.link = constant_leaf(tape, Shape{B, N, N}, dtype, 0.0);
  s.precedence = s.usage;
  s.write_weights = constant_leaf(tape, Shape{B, N}, dtype, fill);
  s.read_weights = constant_leaf(tape, Shape{B, R, N}, dtype, fill);
  s.read_vectors = constant_leaf(tape, Shape{B, R, W}, dtype, fill);
  s.memory_norms = memory_norms(s.memory);
  return s;
}

// cos[b,r,i] = keys[b,r] . memory[b,i] / (|keys[b,r]|_e |memory[b,i]|_e + eps);
// weights[b,r,:] = softmax_i(strengths[b,r] * cos[b,r,i]).
Var memory_norms(Var memory) {
  MG_CHECK(memory.defined() && memory.shape().rank == 3, "dnc::memory_norms: memory must be ",
           "[B,N,W], got ", shape_str(memory));
  return reshape(eps_norm(memory), Shape{memory.dim(0), 1, memory.dim(1)});
}

Var content_weighting(Var memory, Var keys, Var strengths, Var norms) {
  MG_CHECK(memory.defined() && memory.shape().rank == 3, "dnc::content_weighting: memory must be ",
           "[B,N,W], got ", shape_str(memory));
  const int64_t B = memory.dim(0), N = memory.dim(1), W = memory.dim(2);
  MG_CHECK(keys.defined() && keys.shape().rank == 3 && keys.dim(0) == B && keys.dim(2) == W,
           "dnc::content_weighting: keys must be [", B, ",R,", W, "], got ", shape_str(keys));
  const int64_t R = keys.dim(1);
  expect("content_weighting", "strengths", strengths, Shape{B, R});
  Temporaries temps(*memory.tape);                     // dot and the scaled cosines die here
  Var dot = bmm(keys, memory, false, true);            // [B,R,N]
  if (!norms.defined()) norms = memory_norms(memory);  // [B,1,N]
  expect("content_weighting", "memory_norms", norms, Shape{B, 1, N});
  Var denom = add_scalar(mul(eps_norm(keys), norms), kEpsilon);  // [B,R,N]
  Var cos = div(dot, denom);
  return temps.keep(softmax(mul(cos, reshape(strengths, Shape{B, R, 1}))));
}

// usage = (u + (1 - u) sg(w)) * prod_r (1 - f_r * rw_r): every product is a product op, whose
// backward multiplies by the other factors (exact where a factor is 0).
Var usage_update(Var prev_usage, Var prev_write_weights, Var prev_read_weights, Var free_gates,
                 UsageGradient g) {
  MG_CHECK(prev_usage.defined() && prev_usage.shape().rank == 2,
           "dnc::usage_update: prev_usage must be [B,N], got ", shape_str(prev_usage));
  const int64_t B = prev_usage.dim(0), N = prev_usage.dim(1);
  expect("usage_update", "prev_write_weights", prev_write_weights, Shape{B, N});
  MG_CHECK(prev_read_weights.defined() && prev_read_weights.shape().rank == 3 &&
               prev_read_weights.dim(0) == B && prev_read_weights.dim(2) == N,
           "dnc::usage_update: prev_read_weights must be [", B, ",R,", N, "], got ",
           shape_str(prev_read_weights));
  const int64_t R = prev_read_weights.dim(1);
  expect("usage_update", "free_gates", free_gates, Shape{B, R});

  // DeepMind's Freeness: no gradient into the write weights (see UsageGradient).
  Var w =
      g == UsageGradient::through_write_weights ? prev_write_weights : detach(prev_write_weights);
  Var written = add(prev_usage, mul_complement(prev_usage, w));
  Var factors = one_minus(mul(reshape(free_gates, Shape{B, R, 1}), prev_read_weights));  // [B,R,N]
  Var psi;
  if (R == 1) {
    psi = reshape(factors, Shape{B, N});
  } else {
    // prod over heads = the exclusive cumulative product at position R of the factors followed
    // by any padding row (here a copy of head 0, whose gradient is then exactly 0).
    Var padded = concat({factors, slice(factors, 1, 0, 1)}, 1);  // [B,R+1,N]
    psi = reshape(slice(cumprod_exclusive(padded, 1), 1, R, 1), Shape{B, N});
  }
  return mul(written, psi);
}

AllocationResult allocation_with_order(Var usage) {
  MG_CHECK(usage.defined() && usage.shape().rank == 2, "dnc::allocation: usage must be [B,N], got ",
           shape_str(usage));
  Var clamped = scale_shift(usage, 1.0 - kEpsilon, kEpsilon);  // eps + (1 - eps) u
  Var order = argsort(clamped);              // free list, ascending, stable: a constant
  Var sorted = gather_last(clamped, order);  // gradient scattered back through the order
  Var sorted_alloc = mul_complement(sorted, cumprod_exclusive(sorted, -1));
  return {scatter_last(sorted_alloc, order), order};  // back in slot order
}

Var allocation(Var usage) { return allocation_with_order(usage).allocation; }

// write_weights = write_gate * (alloc_gate * allocation + (1 - alloc_gate) * content_weights)
Var write_weighting(Var allocation, Var content_weights, Var alloc_gate, Var write_gate) {
  MG_CHECK(allocation.defined() && allocation.shape().rank == 2,
           "dnc::write_weighting: allocation must be [B,N], got ", shape_str(allocation));
  const int64_t B = allocation.dim(0);
  expect("write_weighting", "content_weights", content_weights, allocation.shape());
  expect("write_weighting", "alloc_gate", alloc_gate, Shape{B});
  expect("write_weighting", "write_gate", write_gate, Shape{B});
  Var ga = reshape(alloc_gate, Shape{B, 1});
  Var gw = reshape(write_gate, Shape{B, 1});
  return mul(gw, add(mul(ga, allocation), mul_complement(ga, content_weights)));
}

// memory' = memory * (1 - w e^T) + w v^T
Var erase_and_write(Var memory, Var write_weights, Var erase, Var write_vector) {
  MG_CHECK(memory.defined() && memory.shape().rank == 3,
           "dnc::erase_and_write: memory must be [B,N,W], got ", shape_str(memory));
  const int64_t B = memory.dim(0), N = memory.dim(1), W = memory.dim(2);
  expect("erase_and_write", "write_weights", write_weights, Shape{B, N});
  expect("erase_and_write", "erase", erase, Shape{B, W});
  expect("erase_and_write", "write_vector", write_vector, Shape{B, W});
  // The erased memory and w v^T are dead once added: only the sum stays for backward (and the
  // erase product w e^T is never a value: mul_complement_outer recomputes it in backward).
  Temporaries temps(*memory.tape);
  Var kept = mul_complement_outer(write_weights, erase, memory);
  return temps.keep(add(kept, outer(write_weights, write_vector)));
}

// link[i,j] = ((1 - w_i - w_j) prev_link[i,j] + w_i p_j) * (i != j);  p' = (1 - sum w) p + w
LinkResult link_update(Var prev_link, Var prev_precedence, Var write_weights) {
  MG_CHECK(write_weights.defined() && write_weights.shape().rank == 2,
           "dnc::link_update: write_weights must be [B,N], got ", shape_str(write_weights));
  const int64_t B = write_weights.dim(0), N = write_weights.dim(1);
  expect("link_update", "prev_link", prev_link, Shape{B, N, N});
  expect("link_update", "prev_precedence", prev_precedence, Shape{B, N});
  Temporaries temps(*write_weights.tape);  // the [B,N,N] terms die once summed
  Var wi = reshape(write_weights, Shape{B, N, 1});
  Var wj = reshape(write_weights, Shape{B, 1, N});
  Var kept = mul_complement(add(wi, wj), prev_link);
  Var link = add(kept, outer(write_weights, prev_precedence));
  link = mul(link, offdiag_mask(*write_weights.tape, N, write_weights.dtype()));
  Var written = sum_axis(write_weights, -1, /*keepdim=*/true);  // [B,1]
  Var precedence = add(mul_complement(written, prev_precedence), write_weights);
  return {temps.keep(link), temps.keep(precedence)};
}

// forward = w L^T (forward[i] = sum_j L[i,j] w[j]), backward = w L (backward[i] = sum_j L[j,i]
// w[j])
DirectionalResult directional_read(Var link, Var prev_read_weights) {
  MG_CHECK(link.defined() && link.shape().rank == 3 && link.dim(1) == link.dim(2),
           "dnc::directional_read: link must be [B,N,N], got ", shape_str(link));
  const int64_t B = link.dim(0), N = link.dim(1);
  MG_CHECK(prev_read_weights.defined() && prev_read_weights.shape().rank == 3 &&
               prev_read_weights.dim(0) == B && prev_read_weights.dim(2) == N,
           "dnc::directional_read: prev_read_weights must be [", B, ",R,", N, "], got ",
           shape_str(prev_read_weights));
  return {bmm(prev_read_weights, link, false, true), bmm(prev_read_weights, link)};
}

// read_weights = modes[0] * backward + modes[1] * content + modes[2] * forward;
// read_vectors = read_weights memory.
ReadResult read_weighting(Var content_weights, Var forward, Var backward, Var read_modes,
                          Var memory) {
  MG_CHECK(content_weights.defined() && content_weights.shape().rank == 3,
           "dnc::read_weighting: content_weights must be [B,R,N], got ",
           shape_str(content_weights));
  const Shape& s = content_weights.shape();
  const int64_t B = s[0], R = s[1], N = s[2];
  expect("read_weighting", "forward", forward, s);
  expect("read_weighting", "backward", backward, s);
  expect("read_weighting", "read_modes", read_modes, Shape{B, R, 3});
  MG_CHECK(memory.defined() && memory.shape().rank == 3 && memory.dim(0) == B && memory.dim(1) == N,
           "dnc::read_weighting: memory must be [", B, ",", N, ",W], got ", shape_str(memory));
  Var backward_part = mul(slice(read_modes, 2, 0, 1), backward);
  Var content_part = mul(slice(read_modes, 2, 1, 1), content_weights);
  Var forward_part = mul(slice(read_modes, 2, 2, 1), forward);
  Var weights = add(add(backward_part, content_part), forward_part);
  return {weights, bmm(weights, memory)};
}

State step_with_detail(const State& prev, const Interface& iface, StepDetail& detail, bool write,
                       Trace* trace, const std::string& prefix, UsageGradient g) {
  MG_CHECK(prev.memory.defined() && prev.memory.shape().rank == 3,
           "dnc::step: prev.memory must be [B,N,W], got ", shape_str(prev.memory));
  MG_CHECK(prev.read_weights.defined() && prev.read_weights.shape().rank == 3,
           "dnc::step: prev.read_weights must be [B,R,N], got ", shape_str(prev.read_weights));
  const int64_t B = prev.memory.dim(0), N = prev.memory.dim(1), W = prev.memory.dim(2);
  const int64_t R = prev.read_weights.dim(1);
  expect("step", "prev.read_weights", prev.read_weights, Shape{B, R, N});
  expect("step", "iface.read_keys", iface.read_keys, Shape{B, R, W});
  expect("step", "iface.read_strengths", iface.read_strengths, Shape{B, R});
  expect("step", "iface.read_modes", iface.read_modes, Shape{B, R, 3});
  if (write) {
    expect("step", "iface.write_key", iface.write_key, Shape{B, W});
    expect("step", "iface.write_strength", iface.write_strength, Shape{B});
  }

  detail = StepDetail{};
  Tape& tape = *prev.memory.tape;
  const TapeScope memory_scope(tape, "memory");  // the parts below: memgrad inspect --tape
  State next = write ? write_step(prev, iface, prev.read_weights, detail, g) : prev;
  const TapeScope read_scope(tape, "read");
  detail.read_content_weights =
      content_weighting(next.memory, iface.read_keys, iface.read_strengths, next.memory_norms);
  const DirectionalResult dir = directional_read(next.link, prev.read_weights);
  detail.forward = dir.forward;
  detail.backward = dir.backward;
  const ReadResult read = read_weighting(detail.read_content_weights, dir.forward, dir.backward,
                                         iface.read_modes, next.memory);
  next.read_weights = read.read_weights;
  next.read_vectors = read.read_vectors;

  if (trace) {
    record(trace, prefix, "write_gate", iface.write_gate);
    record(trace, prefix, "alloc_gate", iface.alloc_gate);
    record(trace, prefix, "free_gates", iface.free_gates);
    record(trace, prefix, "usage", next.usage);
    record(trace, prefix, "write_weights", next.write_weights);
    record(trace, prefix, "read_weights", next.read_weights);
    record(trace, prefix, "read_modes", iface.read_modes);
  }
  return next;
}

State write_step(const State& prev, const Interface& iface, Var freed_reads, StepDetail& detail,
                 UsageGradient g) {
  const int64_t B = prev.memory.dim(0), N = prev.memory.dim(1), W = prev.memory.dim(2);
  State next = prev;
  Tape& tape = *prev.memory.tape;
  // Each part under a name of its own in memgrad inspect's tape drawing ("memory/allocation").
  std::optional<TapeScope> part(std::in_place, tape, "usage");
  next.usage = usage_update(prev.usage, prev.write_weights, freed_reads, iface.free_gates, g);
  part.emplace(tape, "allocation");
  const AllocationResult alloc = allocation_with_order(next.usage);
  detail.allocation = alloc.allocation;
  detail.sort_order = alloc.sort_order;
  part.emplace(tape, "write_content");
  detail.write_content_weights =
      reshape(content_weighting(prev.memory, reshape(iface.write_key, Shape{B, 1, W}),
                                reshape(iface.write_strength, Shape{B, 1}), prev.memory_norms),
              Shape{B, N});
  part.emplace(tape, "write");
  next.write_weights = write_weighting(alloc.allocation, detail.write_content_weights,
                                       iface.alloc_gate, iface.write_gate);
  next.memory = erase_and_write(prev.memory, next.write_weights, iface.erase, iface.write_vector);
  next.memory_norms = memory_norms(next.memory);
  part.emplace(tape, "link");
  const LinkResult link = link_update(prev.link, prev.precedence, next.write_weights);
  next.link = link.link;
  next.precedence = link.precedence;
  return next;
}

State step(const State& prev, const Interface& iface, bool write, Trace* trace,
           const std::string& prefix, UsageGradient g) {
  StepDetail detail;
  return step_with_detail(prev, iface, detail, write, trace, prefix, g);
}

}  // namespace memgrad::dnc
