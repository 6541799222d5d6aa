// sparsemax (Martins and Astudillo, 2016): the Euclidean projection of each row of x onto the
// probability simplex, p = max(x - tau, 0) with tau chosen so that p sums to 1. Unlike softmax it
// gives exact zeros, so an attention over memory slots reads from only a few of them.
#pragma once
#include <memgrad/engine/tape.hpp>

namespace custom {

// x [..., N] -> [..., N], each row of the last axis projected onto the simplex.
memgrad::Var sparsemax(memgrad::Var x);

}  // namespace custom
