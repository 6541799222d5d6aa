// Shape ops: reshape, transpose, concat, slice, stack, and row gathers/scatters by index. Every op
// copies into its own output (no views). Index inputs are data: tensors of the same float dtype as
// the other input, holding whole numbers; they get no gradient and out-of-range or fractional
// values throw an Error naming the op, the position and the value.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <span>

#include "engine/tape.hpp"

namespace memgrad {

// The same elements (row-major order) in a new shape of the same numel.
Var reshape(Var x, Shape shape);
// Swaps the last two dims: [.., m, n] -> [.., n, m], rank 2 to 4.
Var transpose(Var x);
// Joins inputs along `axis` (negative counts from the end); all other dims must match.
Var concat(std::span<const Var> xs, int axis);
Var concat(std::initializer_list<Var> xs, int axis);
// x[.., start : start + length, ..] along `axis`.
Var slice(Var x, int axis, int64_t start, int64_t length);
// Stacks K inputs of one shape along a new axis at position `axis` (in [-(rank+1), rank]) of the
// result: K inputs of [a, b] with axis 1 give [a, K, b]. The result's rank must be at most 4.
Var stack(std::span<const Var> xs, int axis);
Var stack(std::initializer_list<Var> xs, int axis);
// Row lookup: table [V, D...] (rank 2 to 4), indices of any shape S with values in [0, V) ->
// [S..., D...] (rank at most 4), out[s] = table[indices[s]]: an embedding lookup for a [V, D]
// table, the rows of a batch for a [B, ...] state. Backward adds each row's gradient into its table
// row (repeated indices accumulate).
Var gather_rows(Var table, Var indices);
// base [B, ...] with some rows replaced: indices [n] strictly increasing in [0, B), rows [n, ...]
// -> out = base, out[indices[i]] = rows[i]. Backward: the replaced rows of base get no gradient,
// rows[i] gets out's gradient at row indices[i]. (Writing a step computed on a subset of the batch
// back into the batch's state.)
Var replace_rows(Var base, Var indices, Var rows);
// src [N, D], indices [N] with values in [0, num_rows) -> [num_rows, D], out[indices[i]] += src[i]
// (rows nobody points at are zero). Backward gathers.
Var scatter_add_rows(Var src, Var indices, int64_t num_rows);
// Per-sample selection along axis 1: x [B, N, ...] (rank 2 to 4), perm [B, K] with values in
// [0, N) -> [B, K, ...], out[b, k] = x[b, perm[b, k]]. Repeated indices accumulate in backward.
Var index_select(Var x, Var perm);

}  // namespace memgrad
