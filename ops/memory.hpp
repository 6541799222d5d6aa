// Memory-addressing helpers: exclusive cumulative product, stable sort along the last axis, and
// gather/scatter along the last axis. Together they compute a DNC allocation weighting: sort the
// usage, take the exclusive cumulative product in sorted order, then put the result back in memory
// order with scatter_last (or gather_last with the inverse permutation).
//
// Indices travel as tensors of the same float dtype as the values, holding whole numbers.
#pragma once
#include "engine/tape.hpp"

namespace memgrad {

// out[..., i] = prod_{j<i} x[..., j] along `axis` (negative counts from the end); out[..., 0] = 1.
// Same shape as x. The backward never divides by x: exact zeros (and ones) in x get exact
// gradients, from prefix products and a reverse sweep of suffix sums.
Var cumprod_exclusive(Var x, int axis = -1);

// The values of x sorted along the last axis (ascending, or descending), same shape as x. The sort
// is stable: equal values keep their index order. The permutation is saved and the gradient is
// scattered back to the original positions. x must not contain NaN.
Var sort(Var x, bool descending = false);

// The permutation sort() applies: out[..., k] is the index in x of the k-th sorted value (same
// shape as x, whole numbers in x's dtype; stable). It carries no gradient: the node is recorded
// with the leaf OpDef "argsort" and no backward, like detach(), so it is a constant on the tape,
// needs no gradient-check case, and reuses its tape slot (no allocation in steady state).
Var argsort(Var x, bool descending = false);

// out[..., k] = x[..., idx[..., k]] along the last axis. x is [..., n], idx is [..., m] with the
// same leading dims and whole numbers in [0, n) (data, not differentiated); out is [..., m].
// Indices may repeat: the backward scatter-adds.
Var gather_last(Var x, Var idx);

// The inverse placement: out[..., idx[..., k]] = src[..., k]. idx has src's shape and each of its
// rows must be a permutation of 0..n-1 (data, not differentiated). out has src's shape; the
// backward gathers. scatter_last(sort(x), argsort(x)) == x.
Var scatter_last(Var src, Var idx);

}  // namespace memgrad
