// layers::RetiringRows: a state kept at the rows that still step, set aside as samples' views end
// and put back in the batch's order at the end. Values and gradients against loops, the identity
// when no row ends, and the masks it refuses.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "engine/error.hpp"
#include "models/layers/row_packing.hpp"
#include "ops/ops.hpp"

using namespace memgrad;

namespace {

// mask [B, T] with row b's events at steps 0 .. lengths[b] - 1.
Tensor prefix_mask(const std::vector<int64_t>& lengths, int64_t T) {
  const int64_t B = int64_t(lengths.size());
  Tensor m = Tensor::zeros(Shape{B, T}, DType::f64);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < lengths[size_t(b)]; ++t) m.set(b * T + t, 1.0);
  return m;
}

Tensor formula(const Shape& s, double phase) {
  Tensor x = Tensor::zeros(s, DType::f64);
  for (int64_t i = 0; i < x.numel(); ++i) x.set(i, std::sin(0.9 * double(i) + phase));
  return x;
}

}  // namespace

TEST_CASE("RetiringRows: each row steps while its view has events; values and gradients") {
  // Two fields, a [B, 2] and b [B, 2, 3]; a step maps a -> 2a + 1 + x_t (x_t the step's input,
  // taken for the stepping rows) and b -> 3b. Row lengths 4, 0, 2, 1, 4, 3 in a batch of T = 4.
  const std::vector<int64_t> len = {4, 0, 2, 1, 4, 3};
  const int64_t B = int64_t(len.size()), T = 4;
  Tape tape;
  const Var mask = tape.input(prefix_mask(len, T));
  Var a = tape.input(formula(Shape{B, 2}, 0.1), true),
      b = tape.input(formula(Shape{B, 2, 3}, 0.2), true);
  const Var a0 = a, b0 = b;
  const Var x = tape.input(formula(Shape{B, T, 2}, 0.3), true);
  layers::RetiringRows rows(mask, 0);
  Var* fields[2] = {&a, &b};
  std::vector<int64_t> stepping;
  for (int64_t t = 0; t < T; ++t) {
    const int64_t n = rows.begin_step(t, fields);
    int64_t want = 0;
    for (int64_t l : len) want += l > t ? 1 : 0;
    CHECK(n == want);
    if (n == 0) continue;
    CHECK(a.dim(0) == n);
    CHECK(b.dim(0) == n);
    const Var xt = rows.take(reshape(slice(x, 1, t, 1), Shape{B, 2}));
    a = add(scale_shift(a, 2.0, 1.0), xt);
    b = scale_shift(b, 3.0, 0.0);
  }
  rows.finish(fields);
  REQUIRE(a.shape() == Shape({B, 2}));
  REQUIRE(b.shape() == Shape({B, 2, 3}));
  for (int64_t r = 0; r < B; ++r) {
    const int64_t L = len[size_t(r)];
    for (int64_t j = 0; j < 2; ++j) {
      double want = a0.value().at(r * 2 + j);
      for (int64_t t = 0; t < L; ++t) want = 2 * want + 1 + x.value().at((r * T + t) * 2 + j);
      CHECK(a.value().at(r * 2 + j) == doctest::Approx(want).epsilon(1e-14));
    }
    for (int64_t j = 0; j < 6; ++j)
      CHECK(b.value().at(r * 6 + j) ==
            doctest::Approx(b0.value().at(r * 6 + j) * std::pow(3.0, double(L))).epsilon(1e-14));
  }
  // loss = sum(a * wa) + sum(b * wb): d/da0 = 2^L wa, d/db0 = 3^L wb, d/dx_t = 2^(L-1-t) wa (t <
  // L).
  const Var wa = tape.input(formula(Shape{B, 2}, 0.4)),
            wb = tape.input(formula(Shape{B, 2, 3}, 0.5));
  tape.backward(add(sum(mul(a, wa)), sum(mul(b, wb))));
  for (int64_t r = 0; r < B; ++r) {
    const int64_t L = len[size_t(r)];
    for (int64_t j = 0; j < 2; ++j) {
      const double w = wa.value().at(r * 2 + j);
      CHECK(tape.grad(a0.id).at(r * 2 + j) == doctest::Approx(std::pow(2.0, double(L)) * w));
      for (int64_t t = 0; t < T; ++t)
        CHECK(tape.grad(x.id).at((r * T + t) * 2 + j) ==
              doctest::Approx(t < L ? std::pow(2.0, double(L - 1 - t)) * w : 0.0));
    }
    for (int64_t j = 0; j < 6; ++j)
      CHECK(tape.grad(b0.id).at(r * 6 + j) ==
            doctest::Approx(std::pow(3.0, double(L)) * wb.value().at(r * 6 + j)));
  }
}

TEST_CASE("RetiringRows: no row ends before the last step, so nothing is copied") {
  Tape tape;
  const Var mask = tape.input(prefix_mask({3, 3, 3}, 3));
  Var a = tape.input(formula(Shape{3, 2}, 0.1), true);
  layers::RetiringRows rows(mask, 1);
  Var* fields[1] = {&a};
  for (int64_t t = 0; t < 3; ++t) {
    CHECK(rows.begin_step(t, fields) == 3);
    const Var full = tape.input(formula(Shape{3, 2}, double(t)));
    CHECK(rows.take(full).id == full.id);  // all rows, in order: the same node
    a = scale_shift(a, 2.0, 0.0);
  }
  const NodeId last = a.id;
  rows.finish(fields);
  CHECK(a.id == last);
}

TEST_CASE("RetiringRows: masks whose events are not a prefix are refused") {
  Tape tape;
  Tensor m = prefix_mask({2, 1}, 3);
  CHECK(layers::RetiringRows::prefix_events(m));
  m.set(1 * 3 + 2, 1.0);  // row 1: events at steps 0 and 2, none at 1
  CHECK_FALSE(layers::RetiringRows::prefix_events(m));
  const Var mask = tape.input(m);
  CHECK_THROWS_WITH_AS(layers::RetiringRows(mask, 0),
                       doctest::Contains("each row's events a prefix of its steps"), Error);
  CHECK_THROWS_WITH_AS(layers::RetiringRows(tape.input(prefix_mask({1}, 1)), 4),
                       doctest::Contains("slot 4 must be 0-3"), Error);
}
