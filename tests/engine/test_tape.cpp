#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <sstream>
#include <string>
#include <vector>

#include "engine/alloc_counter.hpp"
#include "engine/gradcheck.hpp"
#include "engine/rng.hpp"
#include "engine/tape.hpp"
#include "ops/elementwise.hpp"
#include "ops/linalg.hpp"
#include "ops/reduce.hpp"
#include "ops/shape.hpp"

using namespace memgrad;

TEST_CASE("backward of y = x*x + x gives 2x + 1") {
  for (DType dt : {DType::f32, DType::f64}) {
    Tape tape;
    Var x = tape.input(Tensor::from(Shape{3}, dt, {1.0, -2.0, 0.5}), true);
    Var y = add(mul(x, x), x);
    tape.backward(y, Tensor::full(Shape{3}, dt, 1.0));
    const std::vector<double> g = x.grad().to_vector();
    CHECK(g[0] == doctest::Approx(3.0));
    CHECK(g[1] == doctest::Approx(-3.0));
    CHECK(g[2] == doctest::Approx(2.0));
  }
}

TEST_CASE("a parameter used twice gets one leaf and accumulates into Parameter::grad") {
  ParameterSet params(DType::f64);
  Parameter& w = params.add("w", Shape{2});
  w.value.copy_from(Tensor::from(Shape{2}, DType::f64, {2.0, 3.0}));
  Tape tape;
  Var a = tape.param(w);
  Var b = tape.param(w);
  CHECK(a.id == b.id);
  Var y = mul(a, b);  // w^2: d/dw = 2w
  tape.backward(y, Tensor::full(Shape{2}, DType::f64, 1.0));
  CHECK(w.grad.at(0) == doctest::Approx(4.0));
  CHECK(w.grad.at(1) == doctest::Approx(6.0));
  tape.flush_param_grads();  // a second flush must not add again
  CHECK(w.grad.at(0) == doctest::Approx(4.0));
  // A second step accumulates (the optimizer zeroes grads, not the tape).
  tape.reset();
  Var c = tape.param(w);
  tape.backward(mul(c, c), Tensor::full(Shape{2}, DType::f64, 1.0));
  CHECK(w.grad.at(0) == doctest::Approx(8.0));
}

TEST_CASE("no-grad scope records no backward and detach stops the gradient") {
  Tape tape;
  Var x = tape.input(Tensor::from(Shape{1}, DType::f64, {3.0}), true);
  {
    NoGradScope off(tape);
    Var y = mul(x, x);
    CHECK_FALSE(tape.requires_grad(y.id));
    CHECK((tape.node(y.id).backward == nullptr));
  }
  Var z = add(mul(x, detach(x)), x);  // d/dx = detach(x) + 1 = 4
  tape.backward(z);
  CHECK(x.grad().at(0) == doctest::Approx(4.0));
}

TEST_CASE("a steady-state step allocates nothing") {
  Tape tape;
  ParameterSet params(DType::f32);
  Parameter& w = params.add("w", Shape{4, 8});
  w.value.fill(0.1);
  const Tensor data = Tensor::full(Shape{4, 8}, DType::f32, 0.5);
  auto step = [&] {
    tape.reset();
    Var x = tape.input(data);
    Var h = tanh(mul(x, tape.param(w)));
    Var y = exp(scale(h, 0.5));
    tape.backward(y, data);
  };
  for (int i = 0; i < 3; ++i) step();
  const uint64_t before = heap_allocations();
  for (int i = 0; i < 5; ++i) step();
  CHECK(heap_allocations() - before == 0);
}

TEST_CASE("a slot that holds a leaf in one step and a computed node in the next stops allocating") {
  // Graphs whose shape varies (packed rows, batch shards) move leaves between positions. A leaf
  // shares its tensor's storage; the slot's own buffer must wait for the next computed node there.
  Tape tape;
  const Tensor data = Tensor::full(Shape{64}, DType::f32, 0.5);
  auto step = [&](bool leaf_first) {
    tape.reset();
    Var a = leaf_first ? tape.input(data) : tape.constant(Shape{64}, DType::f32, 2.0);
    Var b = leaf_first ? tape.constant(Shape{64}, DType::f32, 2.0) : tape.input(data);
    CHECK(mul(a, b).value().at(0) == doctest::Approx(1.0));
  };
  for (int i = 0; i < 4; ++i) step(i % 2 == 0);
  const uint64_t before = heap_allocations();
  for (int i = 0; i < 6; ++i) step(i % 2 == 0);
  CHECK(heap_allocations() - before == 0);
}

TEST_CASE("in-place parameter gradients: the flushed sums, the slots given back, no allocation") {
  // Two parameters; a step's graph moves them between positions (as varying lengths do), so a slot
  // that held Parameter::grad in one step holds a computed node's gradient in the next.
  ParameterSet params(DType::f64);
  Parameter& u = params.add("u", Shape{8});
  Parameter& v = params.add("v", Shape{8});
  for (int64_t i = 0; i < 8; ++i)
    u.value.set(i, 0.1 * double(i + 1)), v.value.set(i, 1.0 - 0.2 * double(i));
  const Tensor data = Tensor::full(Shape{8}, DType::f64, 0.5);
  auto step = [&](Tape& tape, bool u_first) {
    tape.reset();
    Var x =
        tape.input(data, true);  // so that the tanh nodes in the parameters' slots get gradients
    Var a = u_first ? tape.param(u) : tanh(x);
    Var b = tape.param(v);
    Var c = u_first ? tanh(x) : tape.param(u);
    Var y = add(mul(mul(a, b), c), mul(b, tape.param(u)));  // u used twice when u_first
    tape.backward(y, data);
  };
  auto grads = [&](bool in_place, int steps) {
    params.zero_grad();
    Tape tape;
    tape.set_param_grads_in_place(in_place);
    for (int i = 0; i < steps; ++i) step(tape, i % 2 == 0);
    std::vector<double> g = u.grad.to_vector(), gv = v.grad.to_vector();
    g.insert(g.end(), gv.begin(), gv.end());
    return g;
  };
  for (int steps : {1, 2, 5}) {
    const std::vector<double> flushed = grads(false, steps), direct = grads(true, steps);
    CAPTURE(steps);
    REQUIRE(flushed.size() == direct.size());
    for (size_t i = 0; i < flushed.size(); ++i)
      CHECK(direct[i] == doctest::Approx(flushed[i]).epsilon(1e-15));
    CHECK(flushed[0] != 0.0);
  }
  // The value of u.grad is not written through a slot that a computed node now holds: a step
  // without backward leaves it alone.
  params.zero_grad();
  Tape tape;
  tape.set_param_grads_in_place(true);
  step(tape, true);
  const std::vector<double> after_one = u.grad.to_vector();
  tape.reset();
  Var x = tape.input(data, true);
  Var w = tanh(tanh(tanh(x)));  // occupies the slots the parameters held
  tape.backward(w, data);
  CHECK(u.grad.to_vector() == after_one);
  for (int i = 0; i < 4; ++i) step(tape, i % 2 == 0);
  const uint64_t before = heap_allocations();
  for (int i = 0; i < 6; ++i) step(tape, i % 2 == 0);
  CHECK(heap_allocations() - before == 0);
}

TEST_CASE("moving gradients (add, reshape) and views (reshape, leading rows): same gradients") {
  // x -> reshape -> add with a reshaped parameter -> tanh -> add to itself via other paths; the
  // leaves' and the parameter's gradients with and without moving, over steps that reuse slots,
  // and no allocation in steady state.
  ParameterSet params(DType::f64);
  Parameter& w = params.add("w", Shape{6});
  for (int64_t i = 0; i < 6; ++i) w.value.set(i, 0.3 * double(i) - 0.7);
  const Tensor data = Tensor::from(Shape{2, 3}, DType::f64, {0.1, -0.2, 0.3, 0.5, -0.4, 0.2});
  const Tensor up = Tensor::from(Shape{3, 2}, DType::f64, {1, -2, 3, 0.5, -1, 2});
  auto step = [&](Tape& tape, std::vector<double>* x_grad) {
    tape.reset();
    Var x = tape.input(data, true);
    Var a = add(reshape(x, Shape{3, 2}), reshape(tape.param(w), Shape{3, 2}));
    Var b = tanh(a);
    Var ba = add(b, a);
    Var y = add(ba, reshape(mul(x, x), Shape{3, 2}));  // a reaches y two ways
    // ... and a third, through a view of its leading rows (and a copy of the last one, made
    // first, so that the view's gradient is made before a has one: it is then a's).
    Var last = slice(a, 0, 2, 1);
    y = add(y, concat({tanh(slice(a, 0, 0, 2)), last}, 0));
    tape.backward(y, up);
    if (x_grad) *x_grad = x.grad().to_vector();
    return tape.has_grad(ba.id);  // false once its gradient moved on to b
  };
  std::vector<double> want_x, want_w, got_x;
  {
    params.zero_grad();
    Tape tape;
    CHECK(step(tape, &want_x));
    want_w = w.grad.to_vector();
  }
  params.zero_grad();
  Tape tape;
  tape.set_move_grads(true);
  for (int i = 0; i < 3; ++i) CHECK_FALSE(step(tape, &got_x));
  for (size_t i = 0; i < want_x.size(); ++i) CHECK(got_x[i] == doctest::Approx(want_x[i]));
  for (int64_t i = 0; i < 6; ++i) CHECK(w.grad.at(i) == doctest::Approx(3 * want_w[size_t(i)]));
  const uint64_t before = heap_allocations();
  for (int i = 0; i < 5; ++i) step(tape, nullptr);
  CHECK(heap_allocations() - before == 0);
  // A second backward on a moving tape before reset() is refused (it would add into moved
  // buffers again).
  {
    Tape once;
    once.set_move_grads(true);
    Var v = once.input(data, true);
    Var out = sum(add(v, v));
    once.backward(out);
    CHECK_THROWS_WITH_AS(once.backward(out), doctest::Contains("call reset() before the next"),
                         Error);
  }
  // Without moving (the default) every node keeps its gradient: an intermediate one is readable.
  Tape keep;
  Var x = keep.input(data, true);
  Var r = reshape(x, Shape{6});
  keep.backward(sum(r));
  CHECK(r.grad().to_vector() == std::vector<double>(6, 1.0));
  CHECK(x.grad().to_vector() == std::vector<double>(6, 1.0));
}

TEST_CASE("the allocation counter counts") {
  const uint64_t before = heap_allocations();
  std::vector<int> v(1000, 7);
  CHECK(heap_allocations() - before >= 1);
  CHECK(v[999] == 7);
}

TEST_CASE("a tape value held by the caller is not overwritten by the next step") {
  Tape tape;
  const Tensor one = Tensor::full(Shape{2}, DType::f64, 1.0);
  Var y = scale(tape.input(one), 2.0);
  Tensor kept = y.value();  // shares the slot's storage
  tape.reset();
  scale(tape.input(one), 5.0);
  CHECK(kept.at(0) == doctest::Approx(2.0));
}

TEST_CASE("a tape value held past the tape's destruction keeps its values") {
  Tensor kept;
  {
    Tape tape;
    Var y = scale(tape.input(Tensor::full(Shape{3}, DType::f64, 1.0)), 4.0);
    kept = y.value();
  }
  Tape other;  // reuses the freed memory, most likely
  scale(other.input(Tensor::full(Shape{3}, DType::f64, 1.0)), -7.0);
  CHECK(kept.to_vector() == std::vector<double>(3, 4.0));
}

TEST_CASE("nodes that change places between steps do not allocate once the bytes fit") {
  // With varying lengths a step's nodes move: node i is a large product in one step and a small
  // slice in the next. A step allocates only when it needs more bytes (or nodes) in all than the
  // tape has held, however its shapes are arranged: here 30 steps of random arrangements after
  // one step of the largest total.
  Tape tape;
  tape.set_move_grads(true);
  const Tensor big = Tensor::full(Shape{64, 64}, DType::f32, 0.01);
  const Tensor small = Tensor::full(Shape{4, 64}, DType::f32, 0.02);
  Rng rng(3, 0);
  auto step = [&](int n_big, int n_small) {
    tape.reset();
    Var acc = tape.input(small, true);
    // The order of big and small products is random: the same node index holds either.
    int left_big = n_big, left_small = n_small;
    while (left_big + left_small > 0) {
      const bool take_big = left_small == 0 || (left_big > 0 && rng.below(2) == 0);
      Var x = tape.input(take_big ? big : small, true);
      Var y = tanh(matmul(x, tape.input(big)));  // [rows, 64]
      acc = add(acc, slice(y, 0, 0, 4));
      (take_big ? left_big : left_small) -= 1;
    }
    tape.backward(sum(acc));
  };
  step(8, 8);    // the largest step: 8 large products
  tape.reset();  // joins the chunks the arena grew in that step into one
  const uint64_t before = heap_allocations();
  for (int i = 0; i < 30; ++i) {
    const int n_big = int(rng.below(9));
    step(n_big, 8 + int(rng.below(9)) - n_big);  // at most 8 large, at most 16 products in all
  }
  CHECK(heap_allocations() - before == 0);
  CHECK(tape.arena_high_water() <= tape.arena_capacity());
}

TEST_CASE("shape errors name the op and the shapes") {
  Tape tape;
  Var a = tape.input(Tensor::zeros(Shape{2, 3}, DType::f32));
  Var b = tape.input(Tensor::zeros(Shape{4}, DType::f32));
  CHECK_THROWS_WITH_AS(add(a, b), doctest::Contains("add: shapes [2,3] and [4] do not broadcast"),
                       Error);
  Var c = tape.input(Tensor::zeros(Shape{2, 3}, DType::f64));
  CHECK_THROWS_WITH_AS(mul(a, c), doctest::Contains("mul: dtypes differ"), Error);
}

TEST_CASE("anomaly mode names the first op that made a NaN, forward and backward") {
  Tape tape;
  tape.set_detect_anomaly(true);
  Var x = tape.input(Tensor::from(Shape{2}, DType::f64, {1.0, -1.0}), true);
  Var l = log(x);  // log(-1) = NaN, detected when the next op is recorded
  CHECK_THROWS_WITH_AS(exp(l), doctest::Contains("op 'log'"), Error);

  Tape tape2;
  tape2.set_detect_anomaly(true);
  Var z = tape2.input(Tensor::from(Shape{1}, DType::f64, {0.0}), true);
  Var s = sqrt(z);  // value 0 is fine; its derivative 1/(2*0) is not
  CHECK_THROWS_WITH_AS(tape2.backward(s), doctest::Contains("backward of op 'sqrt'"), Error);
}

TEST_CASE("the gradient checker catches a wrong backward") {
  // A deliberately wrong op: y = x^2 with backward 3x (should be 2x). An op with a backward is
  // never a leaf, so the registry sees it: it has no case, and ops_without_grad_case() names it
  // (which fails `every registered op has a gradient-check case` in any binary that defines it).
  static const OpDef kWrongSquare{"test_wrong_square"};
  const std::vector<std::string> missing = ops_without_grad_case();
  CHECK(std::find(missing.begin(), missing.end(), "test_wrong_square") != missing.end());
  auto wrong_square = [](Var x) {
    Var y = x.tape->record(kWrongSquare, x.shape(), x.dtype(), {x}, [](Tape& t, NodeId id) {
      const NodeId in = t.input_id(id, 0);
      for (int64_t i = 0; i < t.value(in).numel(); ++i)
        t.grad(in).set(i, t.grad(in).at(i) + t.grad(id).at(i) * 3.0 * t.value(in).at(i));
    });
    for (int64_t i = 0; i < x.value().numel(); ++i)
      x.tape->value(y.id).set(i, x.value().at(i) * x.value().at(i));
    return y;
  };
  Rng rng(7);
  const std::vector<GradInput> inputs{{random_tensor(rng, Shape{3}, 0.5, 1.0)}};
  GradCheckResult bad = check_gradients(
      "wrong", inputs, [&](Tape&, std::span<const Var> v) { return wrong_square(v[0]); });
  CHECK_FALSE(bad.passed);
  CHECK(bad.max_rel_err > 0.1);
  GradCheckResult good = check_gradients(
      "right", inputs, [](Tape&, std::span<const Var> v) { return mul(v[0], v[0]); });
  CHECK(good.passed);
  CHECK(good.max_rel_err < 1e-6);
}

TEST_CASE("a leaf recorded with a backward, and an op name defined twice, are refused") {
  // Leaves need no gradient check (ops_without_grad_case skips them), so a leaf may not carry a
  // backward: its gradient would escape every check.
  const OpDef* leaf = nullptr;
  const OpDef* op = nullptr;
  for (const OpDef* d : all_ops()) (d->leaf ? leaf : op) = d;
  REQUIRE(leaf != nullptr);
  REQUIRE(op != nullptr);
  Tape tape;
  Var x = tape.input(Tensor::zeros(Shape{2}, DType::f64), true);
  const BackwardFn backward = [](Tape&, NodeId) {};
  const std::string refused = std::string("op '") + leaf->name + "' is a leaf";
  CHECK_THROWS_WITH_AS(tape.record(*leaf, x.shape(), x.dtype(), {x}, backward),
                       doctest::Contains(refused.c_str()), Error);
  CHECK_THROWS_WITH_AS(tape.record_view(*leaf, x, Shape{2}, backward),
                       doctest::Contains(refused.c_str()), Error);
  CHECK_NOTHROW(tape.record(*leaf, x.shape(), x.dtype(), {x}, nullptr));  // without: a constant

  // A second op of a registered name (a leaf or not) is refused and not registered.
  const size_t registered = all_ops().size();
  const std::string twice = std::string("op '") + op->name + "' is defined twice";
  CHECK_THROWS_WITH_AS(OpDef(op->name), doctest::Contains(twice.c_str()), Error);
  CHECK_THROWS_WITH_AS(OpDef(leaf->name, true), doctest::Contains("is defined twice"), Error);
  CHECK(all_ops().size() == registered);
}

TEST_CASE("print shows one line per node with op names and gradient norms") {
  Tape tape;
  Var x = tape.input(Tensor::full(Shape{2}, DType::f64, 1.0), true);
  Var y = tanh(x);
  tape.backward(y, Tensor::full(Shape{2}, DType::f64, 1.0));
  std::ostringstream out;
  tape.print(out);
  const std::string text = out.str();
  CHECK(text.find("input") != std::string::npos);
  CHECK(text.find("tanh") != std::string::npos);
  CHECK(std::count(text.begin(), text.end(), '\n') == 3);  // header + 2 nodes
}

TEST_CASE("noise streams replay for the same seed and step and differ otherwise") {
  auto draws = [](uint64_t seed, uint64_t step) {
    Tape t(seed);
    t.set_step(step);
    const uint64_t first = t.noise_stream().next_u64();   // first stochastic op of the step
    const uint64_t second = t.noise_stream().next_u64();  // second one
    t.reset();
    t.set_step(step);
    const uint64_t replay = t.noise_stream().next_u64();  // reset replays from the first op
    return std::array<uint64_t, 3>{first, second, replay};
  };
  const auto a = draws(42, 3), b = draws(42, 3);
  CHECK(a == b);
  CHECK(a[0] == a[2]);
  CHECK(a[0] != a[1]);
  CHECK(draws(42, 4)[0] != a[0]);
  CHECK(draws(43, 3)[0] != a[0]);
}

TEST_CASE("the op profile counts each op's nodes and backward runs, and stops when taken off") {
  Tape tape;
  OpProfile profile;
  tape.set_profile(&profile);
  for (int step = 0; step < 2; ++step) {
    tape.reset();
    Var x = tape.input(Tensor::from(Shape{3}, DType::f64, {1.0, -2.0, 0.5}), true);
    Var y = add(mul(x, x), mul(x, x));
    tape.backward(y, Tensor::full(Shape{3}, DType::f64, 1.0));
  }
  tape.set_profile(nullptr);
  tape.reset();
  Var x = tape.input(Tensor::from(Shape{1}, DType::f64, {1.0}), true);
  tape.backward(mul(x, x), Tensor::full(Shape{1}, DType::f64, 1.0));  // not profiled

  const std::vector<OpProfile::Entry> rows = profile.sorted();
  auto find = [&](const std::string& name) {
    for (const OpProfile::Entry& e : rows)
      if (e.op->name == name) return e;
    FAIL("no profile entry for ", name);
    return OpProfile::Entry{};
  };
  const OpProfile::Entry mul_e = find("mul"), add_e = find("add");  // the last step's not in
  CHECK(mul_e.forward_count == 4);
  CHECK(mul_e.backward_count == 4);
  CHECK(add_e.forward_count == 2);
  CHECK(add_e.backward_count == 2);
  // Value bytes: two profiled steps, each with two [3] float64 muls and one add (the arena's
  // buffers are what the values take, not their rounded size).
  CHECK(mul_e.value_bytes == 4 * 3 * 8.0);
  CHECK(add_e.value_bytes == 2 * 3 * 8.0);
  for (const OpProfile::Entry& e : rows) CHECK((e.forward_ms >= 0 && e.backward_ms >= 0));
  for (size_t i = 1; i < rows.size(); ++i)
    CHECK(rows[i - 1].forward_ms + rows[i - 1].backward_ms >=
          rows[i].forward_ms + rows[i].backward_ms);
}
