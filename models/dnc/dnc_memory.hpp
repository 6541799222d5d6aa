// The DNC memory access (Graves et al., Nature 2016), built only from primitive ops: every gradient
// comes from the ops' checked backward rules, none is written by hand here.
//
// Conventions follow ../shared/golden/dnc/README.md (DeepMind's reference, one write head):
//   - the sub-functions take transformed interface values (strengths after oneplus, gates after
//     sigmoid, read modes after softmax); parse_interface() applies the transforms;
//   - epsilon 1e-6 in the cosine norms, the cosine denominator and the usage clamp, nowhere else;
//   - read modes ordered (backward, content, forward);
//   - stop-gradient on the previous write weights in the usage update;
//   - allocation sorts clamped usage ascending, ties to the lower slot; gradient through the
//     sorted values, permutation constant; no division in any backward;
//   - the new link matrix has a zero diagonal.
// Shapes: B batch, N slots, W word size, R read heads.
#pragma once
#include <cstdint>

#include "engine/tape.hpp"
#include "models/model.hpp"

namespace memgrad::dnc {

constexpr double kEpsilon = 1e-6;

struct MemoryConfig {
  int64_t slots = 16;      // N
  int64_t word = 64;       // W
  int64_t read_heads = 1;  // R
};

// The recurrent state of one memory. All Vars live on the step's tape.
struct State {
  Var memory;         // [B,N,W]
  Var usage;          // [B,N]
  Var link;           // [B,N,N]
  Var precedence;     // [B,N]
  Var write_weights;  // [B,N]
  Var read_weights;   // [B,R,N]
  Var read_vectors;   // [B,R,W]
  // memory_norms(memory) [B,1,N], the slots' norms that content lookups divide by: computed once
  // per memory, when it is written, and shared by that step's read and the next step's write
  // lookup. Undefined means not computed yet (then a lookup computes it); whoever sets `memory`
  // sets this to its norms or leaves it undefined, never stale.
  Var memory_norms;
};

// The interface after its transforms.
struct Interface {
  Var read_keys;       // [B,R,W]
  Var read_strengths;  // [B,R]   oneplus (>= 1)
  Var write_key;       // [B,W]
  Var write_strength;  // [B]     oneplus
  Var erase;           // [B,W]   sigmoid
  Var write_vector;    // [B,W]
  Var free_gates;      // [B,R]   sigmoid
  Var alloc_gate;      // [B]     sigmoid
  Var write_gate;      // [B]     sigmoid
  Var read_modes;      // [B,R,3] softmax over (backward, content, forward)
};

// Width of the raw interface vector: R*W + 3W + 5R + 3.
int64_t interface_size(const MemoryConfig& cfg);
// Splits a raw interface [B, interface_size] and applies the transforms. Layout of a row, in order
// (offsets grow left to right):
//     read keys        R*W  head-major (head r's key is [r*W, (r+1)*W)), no transform
//     read strengths   R    oneplus(x) = 1 + softplus(x)
//     write key        W    no transform
//     write strength   1    oneplus
//     erase            W    sigmoid
//     write vector     W    no transform
//     free gates       R    sigmoid
//     alloc gate       1    sigmoid
//     write gate       1    sigmoid
//     read modes       3R   head-major, 3 per head in the order (backward, content, forward);
//                           softmax over each head's 3
// raw is consumed: on a tape that releases temporaries its memory is given back here, so it must
// not be an op's input again (such an op is refused with an error).
Interface parse_interface(Var raw, const MemoryConfig& cfg);

// The initial state for a batch of B: memory, weights and read vectors filled with `fill`
// (1e-6 by default, so cosines are defined), usage, precedence and link zero. Leaves on `tape`.
State initial_state(Tape& tape, int64_t batch, const MemoryConfig& cfg, DType dtype,
                    double fill = kEpsilon);

// ---- the sub-functions of one step, each matching a golden file (formulas as in its README)

// memory [B,N,W], keys [B,R,W], strengths [B,R] -> [B,R,N]:
//   cos[b,r,i] = k.m / (|k|_e |m|_e + eps), |x|_e = sqrt(sum x^2 + eps);
//   weights[b,r,:] = softmax_i(strengths[b,r] * cos[b,r,i]).
// Write content weights: one key, [B,1,W] and [B,1]. A memory read many times without being written
// (the write-protected decoder) passes its memory_norms once computed.
Var content_weighting(Var memory, Var keys, Var strengths, Var memory_norms = Var{});
// |memory[b,i]|_e as [B,1,N], the memory's factor of content_weighting's denominator.
Var memory_norms(Var memory);
// Whether the usage update passes gradient into the previous write weights w_{t-1}. DeepMind's code
// stops it (sg below; the golden values' convention and the default everywhere). The DNC paper's
// equation does not, nor does the DMNC authors' code, and a stopped gradient cannot be checked
// against finite differences of a whole model, so DMNC and the view-concatenated DNC keep it.
enum class UsageGradient { stopped_at_write_weights, through_write_weights };

// prev_usage [B,N], prev_write_weights [B,N], prev_read_weights [B,R,N], free_gates [B,R] -> [B,N]:
//   (u + (1 - u) sg(w)) * prod_r (1 - f_r rw_r)   (sg: stop-gradient unless through_write_weights)
Var usage_update(Var prev_usage, Var prev_write_weights, Var prev_read_weights, Var free_gates,
                 UsageGradient g = UsageGradient::stopped_at_write_weights);
// usage [B,N] -> [B,N]: uc = eps + (1 - eps) u sorted ascending (ties to the lower slot),
// allocation[phi_j] = (1 - uc[phi_j]) prod_{i<j} uc[phi_i].
Var allocation(Var usage);
// The same, also returning the free list: sort_order[b, j] = slot of rank j by clamped usage
// ascending (ties to the lower slot), whole numbers in usage's dtype, a constant (no gradient).
struct AllocationResult {
  Var allocation, sort_order;  // [B,N] each
};
AllocationResult allocation_with_order(Var usage);
// allocation, content_weights [B,N], alloc_gate, write_gate [B] -> [B,N]:
//   write_gate * (alloc_gate * allocation + (1 - alloc_gate) * content_weights)
Var write_weighting(Var allocation, Var content_weights, Var alloc_gate, Var write_gate);
// memory [B,N,W], write_weights [B,N], erase, write_vector [B,W] -> [B,N,W]:
//   memory * (1 - w e^T) + w v^T
Var erase_and_write(Var memory, Var write_weights, Var erase, Var write_vector);
struct LinkResult {
  Var link;        // [B,N,N], zero diagonal
  Var precedence;  // [B,N]
};
// link[i,j] = (1 - w_i - w_j) prev_link[i,j] + w_i prev_precedence[j] (i != j), link[i,i] = 0;
// precedence = (1 - sum_i w_i) prev_precedence + w.
LinkResult link_update(Var prev_link, Var prev_precedence, Var write_weights);
struct DirectionalResult {
  Var forward, backward;  // [B,R,N]
};
// forward[r,i] = sum_j link[i,j] prev_read_weights[r,j] (L w), backward = L^T w.
DirectionalResult directional_read(Var link, Var prev_read_weights);
struct ReadResult {
  Var read_weights;  // [B,R,N]
  Var read_vectors;  // [B,R,W]
};
// read_weights = modes[...,0] backward + modes[...,1] content + modes[...,2] forward;
// read_vectors = read_weights memory.
ReadResult read_weighting(Var content_weights, Var forward, Var backward, Var read_modes,
                          Var memory);

// One full step in DeepMind's order (see the golden README):
//   usage (previous write weights under stop-gradient, previous read weights, free gates)
//   -> allocation -> write content weights on the previous memory -> write weights
//   -> erase and write -> link and precedence -> read content weights on the new memory
//   -> forward/backward from the new link and the previous read weights -> read weights
//   -> read vectors.
// `write` false leaves memory, usage, link, precedence and write weights unchanged (the same Vars)
// and only reads, on the unchanged memory and link (a write-protected decoder); the interface's
// write fields are then ignored. prev.read_vectors is not read (it is the controller's input).
// With a trace, records "write_gate" [B], "alloc_gate" [B], "free_gates" [B,R], "usage" [B,N],
// "write_weights" [B,N], "read_weights" [B,R,N] and "read_modes" [B,R,3] named prefix + "/" + name
// (just the name when prefix is empty; no extra "/" when prefix already ends with one), in both
// modes (with write false: the gates as given, the unchanged usage and write weights).
State step(const State& prev, const Interface& iface, bool write = true, Trace* trace = nullptr,
           const std::string& prefix = "",
           UsageGradient g = UsageGradient::stopped_at_write_weights);

// The intermediates of one step, for inspection and tests. With write = false, allocation,
// sort_order and write_content_weights stay undefined.
struct StepDetail {
  Var allocation;             // [B,N]
  Var sort_order;             // [B,N] free list (see allocation_with_order)
  Var write_content_weights;  // [B,N]
  Var read_content_weights;   // [B,R,N]
  Var forward, backward;      // [B,R,N]
};
// step() that also fills `detail`.
State step_with_detail(const State& prev, const Interface& iface, StepDetail& detail,
                       bool write = true, Trace* trace = nullptr, const std::string& prefix = "",
                       UsageGradient g = UsageGradient::stopped_at_write_weights);

// The write half of step(): usage (freeing the slots that `freed_reads` [B,R,N], the previous
// read weights on this memory, point at), allocation, write weighting, erase and write, link and
// precedence. Returns prev with those five fields replaced (read weights and vectors as in prev).
// step() calls it with prev.read_weights; DMNC's early fusion with the block of its read weights
// that falls on this memory. Fills allocation, sort_order and write_content_weights of `detail`.
State write_step(const State& prev, const Interface& iface, Var freed_reads, StepDetail& detail,
                 UsageGradient g = UsageGradient::stopped_at_write_weights);

}  // namespace memgrad::dnc
