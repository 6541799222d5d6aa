// Reductions: over all elements (to shape [1]) or over one axis. A negative axis counts from the
// end. Without keepdim the reduced axis is removed (a rank-1 input reduces to shape [1]); with
// keepdim it stays as a dim of size 1. Max routes its gradient to the first position holding the
// maximum (ties go to the lowest index).
#pragma once
#include "engine/tape.hpp"

namespace memgrad {

// Sum of all elements: any shape -> [1] (0 for an empty tensor).
Var sum(Var x);
// Mean of all elements: any non-empty shape -> [1].
Var mean(Var x);
// Largest element: any non-empty shape -> [1]; gradient to the first argmax.
Var max(Var x);
// Sum over one axis: [.., n, ..] -> [.., ..] ([.., 1, ..] with keepdim).
Var sum_axis(Var x, int axis, bool keepdim = false);
// Mean over one non-empty axis: [.., n, ..] -> [.., ..] ([.., 1, ..] with keepdim).
Var mean_axis(Var x, int axis, bool keepdim = false);
// Max over one non-empty axis, gradient to the first argmax of each slice (saved indices).
Var max_axis(Var x, int axis, bool keepdim = false);
// log(sum(exp(x))) over one non-empty axis, computed as m + log(sum(exp(x - m))) with m the max of
// the slice, so large inputs do not overflow. Gradient: softmax of the slice, exp(x - y).
Var logsumexp(Var x, int axis = -1, bool keepdim = false);

}  // namespace memgrad
