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
};

// The interface after its transforms.
struct Interface {
  Var read_keys;        // [B,R,W]
  Var read_strengths;   // [B,R]   oneplus (>= 1)
  Var write_key;        // [B,W]
  Var write_strength;   // [B]     oneplus
  Var erase;            // [B,W]   sigmoid
  Var write_vector;     // [B,W]
  Var free_gates;       // [B,R]   sigmoid
  Var alloc_gate;       // [B]     sigmoid
  Var write_gate;       // [B]     sigmoid
  Var read_modes;       // [B,R,3] softmax over (backward, content, forward)
};

// Width of the raw interface vector: R*W + 3W + 5R + 3.
int64_t interface_size(const MemoryConfig& cfg);
// Splits a raw interface [B, interface_size] and applies the transforms (oneplus = 1 + softplus).
Interface parse_interface(Var raw, const MemoryConfig& cfg);

// The initial state for a batch of B: memory, weights and read vectors filled with `fill`
// (1e-6 by default, so cosines are defined), usage, precedence and link zero. Leaves on `tape`.
State initial_state(Tape& tape, int64_t batch, const MemoryConfig& cfg, DType dtype,
                    double fill = kEpsilon);

// ---- the sub-functions of one step, each matching a golden file
Var content_weighting(Var memory, Var keys, Var strengths);  // -> [B,R,N]
Var usage_update(Var prev_usage, Var prev_write_weights, Var prev_read_weights, Var free_gates);
Var allocation(Var usage);  // -> [B,N]
Var write_weighting(Var allocation, Var content_weights, Var alloc_gate, Var write_gate);
Var erase_and_write(Var memory, Var write_weights, Var erase, Var write_vector);
struct LinkResult {
  Var link, precedence;
};
LinkResult link_update(Var prev_link, Var prev_precedence, Var write_weights);
struct DirectionalResult {
  Var forward, backward;  // [B,R,N]
};
DirectionalResult directional_read(Var link, Var prev_read_weights);
struct ReadResult {
  Var read_weights, read_vectors;
};
ReadResult read_weighting(Var content_weights, Var forward, Var backward, Var read_modes,
                          Var memory);

// One full step in DeepMind's order (see the golden README). `write` false leaves memory, usage,
// link, precedence and write weights unchanged and only reads (a write-protected decoder).
// With a trace, records the gates, weightings and usage under `prefix`.
State step(const State& prev, const Interface& iface, bool write = true, Trace* trace = nullptr,
           const std::string& prefix = "");

}  // namespace memgrad::dnc
