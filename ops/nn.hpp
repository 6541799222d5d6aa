// Neural-network ops over the last axis: softmax, log-softmax, fused losses, L2 normalisation and
// norm, and a fused LSTM cell update.
// Leading dims are folded into rows; every row is independent (rows may run in parallel, with
// results that do not depend on the thread count).
#pragma once
#include "engine/tape.hpp"

namespace memgrad {

// Softmax over the last axis, stable (the row max is subtracted first); same shape as x.
Var softmax(Var x);

// log(softmax(x)) over the last axis, computed as x - max - log(sum(exp(x - max))); same shape as
// x.
Var log_softmax(Var x);

// Mean negative log-likelihood of the targets: logits [..., C] (rank 2 to 4: [N, C], [B, T, C]),
// targets [...] (logits' shape without its last dim) holding whole class numbers in [0, C), mask
// [...] of 0/1 or undefined (= all ones). Returns [1]:
//     sum_i mask_i * (-log softmax(logits_i)[target_i]) / sum_i mask_i.
// Targets and mask are data (no gradient). A masked position (mask 0) is skipped entirely: its
// logits and target are never read (a padding target such as -1 is allowed there), so it changes
// neither the loss nor any gradient. With no unmasked position the loss is 0 and its gradient 0.
Var cross_entropy(Var logits, Var targets, Var mask = Var{});

// Mean multi-label binary cross-entropy with logits: logits [..., L], targets of the same shape in
// [0, 1] (hard 0/1 labels or soft ones), mask undefined (= all ones), of the same shape as logits
// (per element) or of logits' shape without its last dim (per row: all L labels of a row). Returns
// [1]: the sum over unmasked elements of max(x, 0) - x t + log(1 + exp(-|x|)) divided by the number
// of unmasked elements (0, with gradient 0, when there is none). Masked elements are never read.
Var bce_with_logits(Var logits, Var targets, Var mask = Var{});

// L2 normalisation along the last axis: y = x / sqrt(sum(x^2) + eps), eps > 0 INSIDE the square
// root (as in DNC's reference), so a zero row maps to zero with a finite gradient 1/sqrt(eps).
Var normalize(Var x, double eps = 1e-6);

// The L2 norm along the last axis with eps > 0 inside the square root, keeping the axis:
// [..., W] -> [..., 1], y = sqrt(sum(x^2) + eps). One op for what sqrt(add_scalar(sum_axis(mul(x,
// x), -1, true), eps)) computes in four, reading x once forward and once backward (a DNC takes the
// norm of every memory row at every step).
Var l2_norm(Var x, double eps);

// One LSTM step after the gate products: gates [B, 4H] (pre-activations in the order i, f, g, o),
// c_prev [B, H] -> [B, 2H] holding [h | c] with
//     c = sigmoid(f) c_prev + sigmoid(i) tanh(g),   h = sigmoid(o) tanh(c).
// The same values as those ops one by one, in one op: the activations are computed once, saved,
// and the backward is one sweep (slice the result for h and c).
Var lstm_cell(Var gates, Var c_prev);

// Cosine similarity of every key with every memory row: keys [B, R, W], memory [B, N, W] ->
// [B, R, N], composed as bmm(normalize(keys, eps), normalize(memory, eps), false, true): the dot
// product over (sqrt(|k|^2 + eps) sqrt(|m|^2 + eps)). DNC's reference uses the same norms and also
// adds eps to their product, a relative difference of about eps / (|k| |m|).
Var cosine_similarity(Var keys, Var memory, double eps = 1e-6);

}  // namespace memgrad
