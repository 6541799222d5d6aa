// Matrix products. Every product goes through memgrad::gemm / gemm_batched (engine/blas.hpp), in
// the forward and in the backward, except outer (k = 1), which is plain loops.
#pragma once
#include "engine/tape.hpp"

namespace memgrad {

// a [..., n, k] (rank 2 to 4) times b [k, m] -> [..., n, m]. The leading dims of a are folded into
// rows, so [B, T, k] x [k, m] is one [B*T, k] x [k, m] product, and the gradient of b (a weight)
// over the whole batch is one product a^T g.
Var matmul(Var a, Var b);

// c + a b in one node: a and b as in matmul, c of the product's shape [..., n, m] or a bias [m]
// added to every row. The product accumulates onto c inside gemm (beta = 1), so a linear layer
// x W + b, or an LSTM's gates x W_x + b + h W_h, costs no separate add node and no extra pass.
Var addmm(Var c, Var a, Var b);

// Batched product: out[i] = op(a[i]) op(b[i]) for i in [0, B), where op(x) is x or x^T as the flags
// say. a is [B, n, k] ([B, k, n] with trans_a), b is [B, k, m] ([B, m, k] with trans_b); out is
// [B, n, m]. Keys against memory rows, [B, R, W] x [B, N, W]^T -> [B, R, N], is
// bmm(keys, memory, false, true).
Var bmm(Var a, Var b, bool trans_a = false, bool trans_b = false);

// Batched outer product: out[i, p, q] = a[i, p] * b[i, q]; a [B, n], b [B, m] -> [B, n, m].
Var outer(Var a, Var b);

// (1 - a b^T) * x per batch row: out[i, p, q] = (1 - a[i, p] b[i, q]) x[i, p, q]; a [B, n],
// b [B, m], x [B, n, m]. The value of mul_complement(outer(a, b), x) without the outer product as
// a node of its own, which that product's backward would keep (the DNC's erase: a the write
// weights, b the erase vector, x the memory).
Var mul_complement_outer(Var a, Var b, Var x);

}  // namespace memgrad
