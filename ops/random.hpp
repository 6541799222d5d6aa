// Stochastic ops. Each draws its noise from tape.noise_stream(), keyed by (seed, step, index of the
// stochastic op in this step), and saves it in the node's saved slot: rebuilding the same graph on
// a tape with the same seed and step replays identical noise (gradient checks, exact resume).
//
// Straight-through ops (gumbel_softmax with hard = true, bernoulli_st) have a piecewise-constant
// forward and a declared surrogate whose derivative the backward uses. Their `mode` argument:
//   StraightThrough::sample     the real op: forward is the sample (one-hot / 0-1), backward is the
//                               derivative of the surrogate.
//   StraightThrough::surrogate  for gradient checking: the forward returns the surrogate itself
//                               (y_soft / p) with the same noise, and the backward is the very same
//                               code as in sample mode (it never looks at the mode).
//   StraightThrough::most_likely  deterministic inference: the noise is fixed at its median
//                               (bernoulli_st: u = 0.5, so z = [p > 0.5]; gumbel_softmax: g = 0,
//                               so hard = one-hot(argmax logits)), the same backward again.
// The registered gradient checks run in surrogate mode, so finite differences of the forward
// measure the surrogate's derivative and are compared with the unchanged backward;
// tests/ops/test_random.cpp checks that sample mode gives bit-identical gradients for the same
// noise.
#pragma once
#include "engine/tape.hpp"

namespace memgrad {

enum class StraightThrough { sample, surrogate, most_likely };

// Inverted dropout: each element is zeroed with probability p and kept ones are scaled by
// 1 / (1 - p), so the expectation is x. Returns x itself when !training or p == 0 (no node, no
// noise drawn). p must be in [0, 1). Same shape as x; the backward multiplies by the saved mask.
Var dropout(Var x, double p, bool training);

// Gumbel-softmax along the last axis: y_soft = softmax((logits + g) / temperature), with
// g = -log(-log(u)), u uniform in (0, 1) clamped away from 0 and 1. hard = false returns y_soft.
// hard = true (straight-through) returns one-hot(argmax y_soft) (first index on ties) with the
// gradient of y_soft. temperature > 0. Same shape as logits.
Var gumbel_softmax(Var logits, double temperature, bool hard,
                   StraightThrough mode = StraightThrough::sample);

// Straight-through Bernoulli: forward samples z ~ Bernoulli(probs) elementwise (z = 1 when
// u < p, u uniform in [0, 1)), backward is the identity dL/dp = dL/dz (the declared surrogate
// z ~ p). probs in [0, 1]. Same shape as probs.
Var bernoulli_st(Var probs, StraightThrough mode = StraightThrough::sample);

}  // namespace memgrad
