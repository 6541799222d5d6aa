// Elementwise ops. Binary ops broadcast numpy-style (a row bias [D] against [N,D], a column scale
// [N,1] against [N,D], ...); see ops/broadcast.hpp.
#pragma once
#include "engine/tape.hpp"

namespace memgrad {

Var add(Var a, Var b);
Var sub(Var a, Var b);
Var mul(Var a, Var b);
Var div(Var a, Var b);
// (1 - a) * b, broadcasting as mul: what a gate a in [0, 1] leaves of b (the DNC's erase, retention
// and allocation factors), one node instead of scale_shift(a, -1, 1) and mul.
Var mul_complement(Var a, Var b);
// Parametric ReLU: x where x > 0, slope * x otherwise; slope broadcasts against x.
Var prelu(Var x, Var slope);

Var neg(Var x);
Var exp(Var x);
Var log(Var x);
Var sqrt(Var x);
Var pow(Var x, double exponent);  // x must be > 0 unless the exponent is a whole number
Var sigmoid(Var x);
Var tanh(Var x);
Var relu(Var x);
Var softplus(Var x);                     // log(1 + e^x), computed without overflow
Var clamp(Var x, double lo, double hi);  // gradient 1 strictly inside (lo, hi), 0 outside
Var scale(Var x, double factor);         // factor * x
Var add_scalar(Var x, double c);         // x + c
// factor * x + shift in one node (1 - x is scale_shift(x, -1, 1)).
Var scale_shift(Var x, double factor, double shift);
// where(mask, a, b): a where mask != 0, else b. mask is data (no gradient); all three broadcast
// to a's shape, which the output takes.
Var where(Var mask, Var a, Var b);

inline Var operator+(Var a, Var b) { return add(a, b); }
inline Var operator-(Var a, Var b) { return sub(a, b); }
inline Var operator*(Var a, Var b) { return mul(a, b); }
inline Var operator/(Var a, Var b) { return div(a, b); }
inline Var operator-(Var a) { return neg(a); }

}  // namespace memgrad
