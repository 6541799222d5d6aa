// Shape ops (ops/shape.hpp): hand-computed forward values in float32 and float64, accumulation of
// gradients through repeated indices, round trips (concat/slice, stack/slice), the adjoint relation
// between gather_rows and scatter_add_rows, error messages, and the registered gradient checks.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "engine/alloc_counter.hpp"
#include "engine/gradcheck.hpp"
#include "engine/threads.hpp"
#include "ops/ops.hpp"
#include "tests/test_util.hpp"

using namespace memgrad;
using namespace memgrad::test;

namespace {

void expect_values(const Tensor& t, const std::vector<double>& want) {
  const std::vector<double> got = t.to_vector();
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element ", i);
    CHECK(got[i] == want[i]);  // shape ops only move values: exact
  }
}

// 0, 1, 2, ... in the given shape.
Tensor iota(const Shape& s, DType d, double first = 0.0) {
  std::vector<double> v(size_t(s.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = first + double(i);
  return Tensor::from(s, d, v);
}

}  // namespace

TEST_CASE("shape: reshape views the elements in row-major order") {
  for (DType d : test::kBoth) {
    CAPTURE(dtype_name(d));
    Tape tape;
    Var x = tape.input(iota(Shape{2, 3}, d), true);
    Var y = reshape(x, Shape{3, 1, 2});
    CHECK(y.shape() == Shape{3, 1, 2});
    CHECK(y.dtype() == d);
    expect_values(y.value(), {0, 1, 2, 3, 4, 5});
    CHECK(y.value().shares_storage_with(x.value()));  // a view: no copy
    tape.backward(y, iota(Shape{3, 1, 2}, d));
    CHECK(x.grad().shape() == Shape{2, 3});
    expect_values(x.grad(), {0, 1, 2, 3, 4, 5});
    CHECK_THROWS_WITH_AS(reshape(x, Shape{4}),
                         "reshape: cannot reshape [2,3] (6 elements) into [4] (4 elements)", Error);
  }
}

TEST_CASE("shape: transpose swaps the last two dims") {
  for (DType d : test::kBoth) {
    CAPTURE(dtype_name(d));
    Tape tape;
    Var x = tape.input(iota(Shape{2, 3}, d));  // [[0,1,2],[3,4,5]]
    Var t = transpose(x);
    CHECK(t.shape() == Shape{3, 2});
    expect_values(t.value(), {0, 3, 1, 4, 2, 5});
    Var b = tape.input(iota(Shape{2, 1, 2, 2}, d));  // two batches of [[0,1],[2,3]] + 4b
    Var bt = transpose(b);
    CHECK(bt.shape() == Shape{2, 1, 2, 2});
    expect_values(bt.value(), {0, 2, 1, 3, 4, 6, 5, 7});
    // Transposing twice is the identity.
    expect_values(transpose(t).value(), x.value().to_vector());
    Var r1 = tape.input(iota(Shape{3}, d));
    CHECK_THROWS_WITH_AS(transpose(r1), "transpose: needs rank 2 to 4, got shape [3]", Error);
  }
}

TEST_CASE("shape: concat along each axis") {
  for (DType d : test::kBoth) {
    CAPTURE(dtype_name(d));
    Tape tape;
    Var a = tape.input(iota(Shape{2, 2}, d));                    // [[0,1],[2,3]]
    Var b = tape.input(Tensor::from(Shape{2, 1}, d, {10, 11}));  // [[10],[11]]
    Var c = tape.input(Tensor::from(Shape{1, 2}, d, {20, 21}));  // [[20,21]]
    Var ab = concat({a, b}, 1);
    CHECK(ab.shape() == Shape{2, 3});
    expect_values(ab.value(), {0, 1, 10, 2, 3, 11});
    Var ac = concat({a, c, a}, 0);
    CHECK(ac.shape() == Shape{5, 2});
    expect_values(ac.value(), {0, 1, 2, 3, 20, 21, 0, 1, 2, 3});
    const std::vector<Var> list = {b, a};
    expect_values(concat(list, -1).value(), {10, 0, 1, 11, 2, 3});
    CHECK_THROWS_WITH_AS(concat({a, b}, 0),
                         "concat: input 1 of shape [2,1] differs from input 0 of shape [2,2] in "
                         "dim 1 (only axis 0 may differ)",
                         Error);
    CHECK_THROWS_WITH_AS(concat({a, b}, 2), "concat: axis 2 out of range for shape [2,2]", Error);
    CHECK_THROWS_WITH_AS(concat(std::span<const Var>(), 0), "concat: no inputs", Error);
  }
}

TEST_CASE("shape: concat gradients go back to each input, twice for a repeated input") {
  Tape tape;
  Var a = tape.input(iota(Shape{1, 2}, DType::f64), true);
  Var b = tape.input(iota(Shape{1, 1}, DType::f64), true);
  Var y = concat({a, b, a}, 1);
  tape.backward(y, Tensor::from(Shape{1, 5}, DType::f64, {1, 2, 3, 4, 5}));
  expect_values(a.grad(), {1 + 4, 2 + 5});
  expect_values(b.grad(), {3});
}

TEST_CASE("shape: slice takes a range along one axis") {
  for (DType d : test::kBoth) {
    CAPTURE(dtype_name(d));
    Tape tape;
    Var x = tape.input(iota(Shape{3, 4}, d), true);
    Var s = slice(x, 1, 1, 2);
    CHECK(s.shape() == Shape{3, 2});
    expect_values(s.value(), {1, 2, 5, 6, 9, 10});
    Var r = slice(x, -2, 2, 1);
    CHECK(r.shape() == Shape{1, 4});
    expect_values(r.value(), {8, 9, 10, 11});
    tape.backward(s, Tensor::full(Shape{3, 2}, d, 1));
    expect_values(x.grad(), {0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0});
    CHECK_THROWS_WITH_AS(slice(x, 1, 3, 2),
                         "slice: range [3, 5) out of bounds for axis 1 (size 4) of shape [3,4]",
                         Error);
    CHECK_THROWS_WITH_AS(slice(x, 0, -1, 1),
                         "slice: range [-1, 0) out of bounds for axis 0 (size 3) of shape [3,4]",
                         Error);
  }
}

TEST_CASE("shape: a slice of leading rows is a view, with the same gradients") {
  for (DType d : test::kBoth) {
    CAPTURE(dtype_name(d));
    Tape tape;
    Var x = tape.input(iota(Shape{3, 2, 2}, d), true);
    Var lead = slice(x, 0, 0, 2);   // rows 0-1: the buffer's first 8 elements
    Var inner = slice(x, 1, 0, 1);  // not contiguous: a copy
    CHECK(lead.value().shares_storage_with(x.value()));
    CHECK_FALSE(inner.value().shares_storage_with(x.value()));
    expect_values(lead.value(), {0, 1, 2, 3, 4, 5, 6, 7});
    tape.backward(add(sum(lead), sum(inner)));
    expect_values(x.grad(), {2, 2, 1, 1, 2, 2, 1, 1, 1, 1, 0, 0});
  }
}

TEST_CASE("shape: concat then slice gives back the inputs") {
  Tape tape;
  Var a = tape.input(iota(Shape{2, 3, 2}, DType::f32));
  Var b = tape.input(Tensor::full(Shape{2, 1, 2}, DType::f32, -7));
  Var y = concat({a, b}, 1);
  CHECK(y.shape() == Shape{2, 4, 2});
  expect_values(slice(y, 1, 0, 3).value(), a.value().to_vector());
  expect_values(slice(y, 1, 3, 1).value(), b.value().to_vector());
}

TEST_CASE("shape: stack inserts a new axis") {
  for (DType d : test::kBoth) {
    CAPTURE(dtype_name(d));
    Tape tape;
    Var a = tape.input(iota(Shape{2, 2}, d));                            // [[0,1],[2,3]]
    Var b = tape.input(Tensor::from(Shape{2, 2}, d, {10, 11, 12, 13}));  // [[10,11],[12,13]]
    Var s0 = stack({a, b}, 0);
    CHECK(s0.shape() == Shape{2, 2, 2});
    expect_values(s0.value(), {0, 1, 2, 3, 10, 11, 12, 13});
    Var s1 = stack({a, b}, 1);
    CHECK(s1.shape() == Shape{2, 2, 2});
    expect_values(s1.value(), {0, 1, 10, 11, 2, 3, 12, 13});
    Var s2 = stack({a, b, a}, -1);
    CHECK(s2.shape() == Shape{2, 2, 3});
    expect_values(s2.value(), {0, 10, 0, 1, 11, 1, 2, 12, 2, 3, 13, 3});
    // Slicing index k of the new axis (and dropping it) gives input k back.
    expect_values(reshape(slice(s2, 2, 1, 1), Shape{2, 2}).value(), b.value().to_vector());

    Var c = tape.input(iota(Shape{2, 3}, d));
    CHECK_THROWS_WITH_AS(
        stack({a, c}, 0),
        "stack: input 1 has shape [2,3] but input 0 has shape [2,2] (all must match)", Error);
    CHECK_THROWS_WITH_AS(stack({a, b}, 3),
                         "stack: axis 3 out of range for stacking inputs of shape [2,2] (valid: -3 "
                         "to 2)",
                         Error);
    Var r4 = tape.input(iota(Shape{1, 1, 1, 2}, d));
    CHECK_THROWS_WITH_AS(stack({r4, r4}, 0),
                         "stack: inputs of shape [1,1,1,2] would give a result of rank 5 (the "
                         "maximum is 4)",
                         Error);
  }
}

TEST_CASE("shape: stack gradients") {
  Tape tape;
  Var a = tape.input(iota(Shape{2}, DType::f64), true);
  Var b = tape.input(iota(Shape{2}, DType::f64), true);
  Var y = stack({a, b, a}, 1);  // [2, 3]
  tape.backward(y, Tensor::from(Shape{2, 3}, DType::f64, {1, 2, 3, 4, 5, 6}));
  expect_values(a.grad(), {1 + 3, 4 + 6});
  expect_values(b.grad(), {2, 5});
}

TEST_CASE("shape: gather_rows looks up rows and accumulates repeated ones") {
  for (DType d : test::kBoth) {
    CAPTURE(dtype_name(d));
    Tape tape;
    Var table = tape.input(iota(Shape{4, 2}, d), true);  // row r = [2r, 2r+1]
    Var idx = tape.input(Tensor::from(Shape{2, 2}, d, {3, 0, 3, 1}));
    Var y = gather_rows(table, idx);
    CHECK(y.shape() == Shape{2, 2, 2});
    expect_values(y.value(), {6, 7, 0, 1, 6, 7, 2, 3});
    tape.backward(y, iota(Shape{2, 2, 2}, d));
    // Row 3 gets the gradients of lookups 0 and 2: [0,1] + [4,5]; row 2 is never looked up.
    expect_values(table.grad(), {2, 3, 6, 7, 0, 0, 4, 6});
    CHECK(!idx.grad().defined());

    Var frac = tape.input(Tensor::from(Shape{3}, d, {0, 2.5, 1}));
    CHECK_THROWS_WITH_AS(gather_rows(table, frac),
                         "gather_rows: index at position 1 (of shape [3]) is 2.5, not a whole "
                         "number in [0, 4)",
                         Error);
    Var high = tape.input(Tensor::from(Shape{2}, d, {1, 4}));
    CHECK_THROWS_WITH_AS(gather_rows(table, high),
                         "gather_rows: index at position 1 (of shape [2]) is 4, not a whole number "
                         "in [0, 4)",
                         Error);
    Var neg = tape.input(Tensor::from(Shape{1}, d, {-1}));
    CHECK_THROWS_WITH_AS(
        gather_rows(table, neg),
        "gather_rows: index at position 0 (of shape [1]) is -1, not a whole number "
        "in [0, 4)",
        Error);
  }
  Tape tape;
  Var table = tape.input(iota(Shape{4, 2}, DType::f32));
  Var idx64 = tape.input(Tensor::from(Shape{1}, DType::f64, {0}));
  CHECK_THROWS_WITH_AS(gather_rows(table, idx64),
                       "gather_rows: table is float32 but indices is float64 (indices travel in "
                       "the data's dtype)",
                       Error);
  Var idx = tape.input(Tensor::from(Shape{1}, DType::f32, {0}));
  Var flat = tape.input(iota(Shape{8}, DType::f32));
  CHECK_THROWS_WITH_AS(gather_rows(flat, idx),
                       "gather_rows: the table must be [V, D, ...] (rank 2 to 4), got shape [8]",
                       Error);
  Var cube = tape.input(iota(Shape{2, 2, 2}, DType::f32));
  Var idx3 = tape.input(Tensor::from(Shape{1, 1, 1}, DType::f32, {0}));
  CHECK_THROWS_WITH_AS(gather_rows(cube, idx3),
                       "gather_rows: indices of shape [1,1,1] and a table of shape [2,2,2] "
                       "give a result of rank 5 (at most 4)",
                       Error);
}

TEST_CASE("shape: gather_rows takes whole rows of a rank-3 state") {
  for (DType d : test::kBoth) {
    CAPTURE(dtype_name(d));
    Tape tape;
    Var state = tape.input(iota(Shape{3, 2, 2}, d), true);  // row b = [4b .. 4b+3]
    Var idx = tape.input(Tensor::from(Shape{2}, d, {2, 0}));
    Var y = gather_rows(state, idx);
    CHECK(y.shape() == Shape{2, 2, 2});
    expect_values(y.value(), {8, 9, 10, 11, 0, 1, 2, 3});
    tape.backward(y, iota(Shape{2, 2, 2}, d));
    expect_values(state.grad(), {4, 5, 6, 7, 0, 0, 0, 0, 0, 1, 2, 3});
  }
}

TEST_CASE("shape: replace_rows writes rows back and routes their gradients") {
  for (DType d : test::kBoth) {
    CAPTURE(dtype_name(d));
    Tape tape;
    Var base = tape.input(iota(Shape{4, 2}, d), true);  // [[0,1],[2,3],[4,5],[6,7]]
    Var idx = tape.input(Tensor::from(Shape{2}, d, {1, 3}));
    Var rows = tape.input(Tensor::from(Shape{2, 2}, d, {-1, -2, -3, -4}), true);
    Var y = replace_rows(base, idx, rows);
    CHECK(y.shape() == Shape{4, 2});
    expect_values(y.value(), {0, 1, -1, -2, 4, 5, -3, -4});
    tape.backward(y, iota(Shape{4, 2}, d, 1.0));  // upstream 1 .. 8
    // Replaced rows 1 and 3 of base get nothing; rows[i] gets row idx[i] of the upstream.
    expect_values(base.grad(), {1, 2, 0, 0, 5, 6, 0, 0});
    expect_values(rows.grad(), {3, 4, 7, 8});
    CHECK(!idx.grad().defined());

    Var unsorted = tape.input(Tensor::from(Shape{2}, d, {3, 1}));
    CHECK_THROWS_WITH_AS(replace_rows(base, unsorted, rows),
                         "replace_rows: indices must be strictly increasing, but position 1 holds "
                         "1 after 3",
                         Error);
    Var out_of_range = tape.input(Tensor::from(Shape{2}, d, {1, 4}));
    CHECK_THROWS_WITH_AS(replace_rows(base, out_of_range, rows),
                         "replace_rows: index at position 1 (of shape [2]) is 4, not a whole "
                         "number in [0, 4)",
                         Error);
    Var wide = tape.input(Tensor::zeros(Shape{2, 3}, d));
    CHECK_THROWS_WITH_AS(replace_rows(base, idx, wide),
                         "replace_rows: rows of shape [2,3] must be [2,2] for base of shape [4,2]",
                         Error);
  }
}

TEST_CASE("shape: scatter_add_rows sums rows into their targets") {
  for (DType d : test::kBoth) {
    CAPTURE(dtype_name(d));
    Tape tape;
    Var src = tape.input(iota(Shape{3, 2}, d), true);  // [[0,1],[2,3],[4,5]]
    Var idx = tape.input(Tensor::from(Shape{3}, d, {2, 0, 2}));
    Var y = scatter_add_rows(src, idx, 4);
    CHECK(y.shape() == Shape{4, 2});
    expect_values(y.value(), {2, 3, 0, 0, 4, 6, 0, 0});
    tape.backward(y, iota(Shape{4, 2}, d));
    expect_values(src.grad(), {4, 5, 0, 1, 4, 5});
    CHECK_THROWS_WITH_AS(scatter_add_rows(src, idx, 2),
                         "scatter_add_rows: index at position 0 (of shape [3]) is 2, not a whole "
                         "number in [0, 2)",
                         Error);
    Var short_idx = tape.input(Tensor::from(Shape{2}, d, {0, 1}));
    CHECK_THROWS_WITH_AS(
        scatter_add_rows(src, short_idx, 4),
        "scatter_add_rows: indices of shape [2] must be [N] for src of shape [3,2]", Error);
  }
}

TEST_CASE("shape: gather_rows and scatter_add_rows are adjoint") {
  // <gather(T, i), S> == <T, scatter(S, i)> for any T [V, D], S [N, D].
  Rng rng(7);
  Tensor t = random_tensor(rng, Shape{5, 3});
  Tensor s = random_tensor(rng, Shape{8, 3});
  Tensor i = Tensor::from(Shape{8}, DType::f64, {4, 0, 4, 2, 2, 2, 1, 4});
  Tape tape;
  const Tensor g = gather_rows(tape.input(t), tape.input(i)).value();
  const Tensor sc = scatter_add_rows(tape.input(s), tape.input(i), 5).value();
  double lhs = 0, rhs = 0;
  for (int64_t k = 0; k < g.numel(); ++k) lhs += g.at(k) * s.at(k);
  for (int64_t k = 0; k < t.numel(); ++k) rhs += t.at(k) * sc.at(k);
  CHECK(lhs == doctest::Approx(rhs).epsilon(1e-12));
}

TEST_CASE("shape: index_select picks per-sample entries along axis 1") {
  for (DType d : test::kBoth) {
    CAPTURE(dtype_name(d));
    Tape tape;
    Var x = tape.input(iota(Shape{2, 3, 2}, d), true);  // x[b, n] = [6b + 2n, 6b + 2n + 1]
    Var perm = tape.input(Tensor::from(Shape{2, 4}, d, {2, 0, 1, 0, 1, 1, 1, 2}));
    Var y = index_select(x, perm);
    CHECK(y.shape() == Shape{2, 4, 2});
    expect_values(y.value(), {4, 5, 0, 1, 2, 3, 0, 1, 8, 9, 8, 9, 8, 9, 10, 11});
    tape.backward(y, Tensor::full(Shape{2, 4, 2}, d, 1));
    // Counts of each n per sample: b0 -> {0: 2, 1: 1, 2: 1}, b1 -> {0: 0, 1: 3, 2: 1}.
    expect_values(x.grad(), {2, 2, 1, 1, 1, 1, 0, 0, 3, 3, 1, 1});

    Var bad = tape.input(Tensor::from(Shape{2, 1}, d, {0, 3}));
    CHECK_THROWS_WITH_AS(index_select(x, bad),
                         "index_select: perm entry at position 1 (of shape [2,1]) is 3, not a "
                         "whole number in [0, 3)",
                         Error);
    Var wrong_batch = tape.input(Tensor::from(Shape{3, 1}, d, {0, 0, 0}));
    CHECK_THROWS_WITH_AS(index_select(x, wrong_batch),
                         "index_select: perm of shape [3,1] must be [B, K] with B = 2 for x of "
                         "shape [2,3,2]",
                         Error);
  }
}

TEST_CASE("shape: index_select with a permutation moves every element once") {
  Tape tape;
  Var x = tape.input(iota(Shape{1, 4}, DType::f64), true);
  Var perm = tape.input(Tensor::from(Shape{1, 4}, DType::f64, {3, 1, 0, 2}));
  Var y = index_select(x, perm);
  expect_values(y.value(), {3, 1, 0, 2});
  tape.backward(y, Tensor::from(Shape{1, 4}, DType::f64, {10, 20, 30, 40}));
  expect_values(x.grad(), {30, 20, 40, 10});  // the inverse permutation of the upstream
}

TEST_CASE("shape: a repeated step allocates nothing") {
  ThreadScope one_thread(1);
  Tape tape;
  Tensor table = iota(Shape{6, 3}, DType::f32);
  Tensor idx = Tensor::from(Shape{2, 3}, DType::f32, {0, 5, 5, 2, 1, 0});
  Tensor perm = Tensor::from(Shape{2, 3}, DType::f32, {2, 1, 0, 0, 0, 2});
  // scatter_add_rows needs an index of [8] (the rows of w).
  Tensor sidx = Tensor::from(Shape{8}, DType::f32, {0, 1, 2, 3, 4, 5, 0, 1});
  auto step = [&] {
    tape.reset();
    Var t = tape.input(table, true);
    Var i = tape.input(idx), p = tape.input(perm), si = tape.input(sidx);
    Var e = gather_rows(t, i);
    Var z = index_select(transpose(e), p);
    Var w = concat({reshape(z, Shape{6, 3}), slice(t, 0, 1, 2)}, 0);
    Var s = stack({w, w}, 1);
    Var back = scatter_add_rows(reshape(slice(s, 1, 0, 1), Shape{8, 3}), si, 6);
    tape.backward(back, table);  // table has back's shape [6, 3]
  };
  step();
  step();
  const uint64_t before = heap_allocations();
  step();
  CHECK(heap_allocations() == before);
}

TEST_CASE("shape: registered gradient checks pass") {
  check_registered_cases({"reshape", "transpose", "concat", "slice", "stack", "gather_rows",
                          "scatter_add_rows", "index_select"},
                         3);
}
