// EntNet: the forward against the equations written out with loops, padding sentences, the nil
// rows, the gate trace, a tiny memorisation task and determinism. Its float64 gradient checks are
// test_model_registry's, as every model's.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "engine/optimizer.hpp"
#include "models/qa/entnet.hpp"
#include "ops/ops.hpp"

namespace entnet_tests {

using namespace memgrad;

namespace {

const ModelInfo& entnet_info() {
  for (const ModelInfo& m : all_models())
    if (m.name == "entnet") return m;
  FAIL("entnet is not registered");
  throw 0;
}

nlohmann::json tiny(const char* variant = "official") {
  for (nlohmann::json c : entnet_info().check_configs)
    if (c.at("variant") == variant) {
      c.erase("variant");
      return c;
    }
  FAIL("no check config ", variant);
  throw 0;
}

Batch check_batch(DType dtype = DType::f64) {
  Batch batch;
  Rng rng(11);
  entnet_info().check_batch(rng, dtype, batch);
  return batch;
}

std::vector<double> logits(EntNet& model, const Batch& batch, Trace* trace = nullptr) {
  Tape tape;
  ForwardOptions opts;
  opts.trace = trace;
  return model.forward(tape, batch, opts).predictions.value().to_vector();
}

using Vec = std::vector<double>;

double dot(const Vec& a, const Vec& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// The forward of models/qa/entnet.hpp with loops, sample by sample, padding sentences skipped.
std::vector<double> reference_logits(EntNet& model, const Batch& batch) {
  const nlohmann::json c = model.config();
  const int64_t d = c["embedding_dim"], vocab = c["vocab_size"], k = c["memory_slots"];
  const bool bias = c["gate_bias"];
  const char* out_slopes =
      c["shared_prelu"].get<bool>() ? "prelu" : "out_prelu";  // one set, or two
  ParameterSet& p = model.params();
  auto mat = [&](const char* name, int64_t r, int64_t col, int64_t cols) {
    return p.get(name).value.at(r * cols + col);
  };
  const Tensor &story = batch.get("story"), &mask = batch.get("memory_mask"),
               &query = batch.get("query");
  const int64_t b = story.dim(0), steps = story.dim(1), j = story.dim(2);
  auto prelu = [](double x, double a) { return x > 0 ? x : a * x; };
  auto encode = [&](const Tensor& ids, int64_t offset, const char* fmask) {
    Vec s(size_t(d), 0.0);
    for (int64_t w = 0; w < j; ++w) {
      const auto id = int64_t(ids.at(offset + w));
      for (int64_t x = 0; x < d; ++x) s[size_t(x)] += mat(fmask, w, x, d) * mat("E", id, x, d);
    }
    return s;
  };
  auto times = [&](const Vec& v, const char* name) {  // v [d] times a [d, d] matrix
    Vec out(size_t(d), 0.0);
    for (int64_t y = 0; y < d; ++y)
      for (int64_t x = 0; x < d; ++x) out[size_t(y)] += v[size_t(x)] * mat(name, x, y, d);
    return out;
  };
  std::vector<double> out;
  for (int64_t s = 0; s < b; ++s) {
    std::vector<Vec> keys, h;
    for (int64_t m = 0; m < k; ++m) {
      Vec key(size_t(d), 0.0);
      for (int64_t x = 0; x < d; ++x) key[size_t(x)] = mat("E", vocab + m, x, d);
      keys.push_back(key);
    }
    h = keys;
    for (int64_t t = 0; t < steps; ++t) {
      if (mask.at(s * steps + t) == 0) continue;
      const Vec st = encode(story, (s * steps + t) * j, "story_mask");
      const Vec sv = times(st, "V");
      for (int64_t m = 0; m < k; ++m) {
        const double g = 1 / (1 + std::exp(-(dot(st, h[size_t(m)]) + dot(st, keys[size_t(m)]) +
                                             (bias ? p.get("gate_bias").value.at(m) : 0.0))));
        const Vec hu = times(h[size_t(m)], "U"), kw = times(keys[size_t(m)], "W");
        Vec next(size_t(d), 0.0);
        for (int64_t x = 0; x < d; ++x) {
          const double pre =
              hu[size_t(x)] + p.get("U.b").value.at(x) + sv[size_t(x)] + kw[size_t(x)];
          next[size_t(x)] = h[size_t(m)][size_t(x)] + g * prelu(pre, p.get("prelu").value.at(x));
        }
        const double norm = std::sqrt(dot(next, next));
        for (double& v : next) v /= norm;
        h[size_t(m)] = next;
      }
    }
    const Vec q = encode(query, s * j, "query_mask");
    Vec score(size_t(k), 0.0);
    double mx = -1e300, z = 0;
    for (int64_t m = 0; m < k; ++m) mx = std::max(mx, score[size_t(m)] = dot(q, h[size_t(m)]));
    for (double& v : score) z += v = std::exp(v - mx);
    Vec read(size_t(d), 0.0);
    for (int64_t m = 0; m < k; ++m)
      for (int64_t x = 0; x < d; ++x)
        read[size_t(x)] += score[size_t(m)] / z * h[size_t(m)][size_t(x)];
    const Vec rh = times(read, "H");
    Vec y(size_t(d), 0.0);
    for (int64_t x = 0; x < d; ++x)
      y[size_t(x)] = prelu(q[size_t(x)] + rh[size_t(x)], p.get(out_slopes).value.at(x));
    for (int64_t v = 0; v < vocab; ++v) {
      double l = 0;
      for (int64_t x = 0; x < d; ++x) l += y[size_t(x)] * mat("R", x, v, vocab);
      out.push_back(l);
    }
  }
  return out;
}

// The batch with one more (padding) sentence slot per sample.
Batch with_extra_slot(const Batch& in) {
  Batch out;
  const Tensor& s = in.get("story");
  const int64_t b = s.dim(0), m = s.dim(1), j = s.dim(2);
  Tensor story = out.field("story", Shape{b, m + 1, j}, s.dtype());
  Tensor time = out.field("time", Shape{b, m + 1}, s.dtype());
  Tensor mask = out.field("memory_mask", Shape{b, m + 1}, s.dtype());
  for (int64_t x = 0; x < b; ++x)
    for (int64_t k = 0; k < m; ++k) {
      for (int64_t w = 0; w < j; ++w)
        story.set((x * (m + 1) + k) * j + w, s.at((x * m + k) * j + w));
      time.set(x * (m + 1) + k, in.get("time").at(x * m + k));
      mask.set(x * (m + 1) + k, in.get("memory_mask").at(x * m + k));
    }
  out.field("query", in.get("query").shape(), s.dtype()).copy_from(in.get("query"));
  out.field("answer", in.get("answer").shape(), s.dtype()).copy_from(in.get("answer"));
  out.size = in.size;
  return out;
}

}  // namespace

TEST_CASE("entnet: parameter count and the tied keys in E") {
  // Official bAbI sizes: V words + K keys rows of E, two masks J x d, U V W H d x d, U's bias,
  // one set of PReLU slopes (the official code's, shared by the candidate and the output), R d x V,
  // the gate bias K.
  const int64_t v = 20, j = 6, d = 100, k = 20;
  EntNet model(nlohmann::json::object(), DType::f32, 1);
  CHECK(model.params().count() == (v + k) * d + 2 * j * d + 4 * d * d + 2 * d + d * v + k);
  EntNet paper({{"gate_bias", false}}, DType::f32, 1);
  CHECK(paper.params().count() == model.params().count() - k);
  CHECK(model.params().get("E").value.shape() == Shape{v + k, d});
  EntNet two({{"shared_prelu", false}}, DType::f32, 1);  // a set of slopes each
  CHECK(two.params().count() == model.params().count() + d);
}

TEST_CASE("entnet: the story mask starts as the official code at N(0, init_std^2), or at ones") {
  auto stats = [](const Tensor& t) {  // mean and standard deviation of the entries
    const std::vector<double> v = t.to_vector();
    double sum = 0, sq = 0;
    for (double x : v) sum += x, sq += x * x;
    const double mean = sum / double(v.size());
    return std::pair{mean, std::sqrt(sq / double(v.size()) - mean * mean)};
  };
  const nlohmann::json big = {{"sentence_len", 12}, {"embedding_dim", 100}};
  nlohmann::json bag = big;
  bag["story_mask_init"] = "ones";
  EntNet ones(bag, DType::f64, 5);
  CHECK(stats(ones.params().get("story_mask").value) == std::pair{1.0, 0.0});
  nlohmann::json official = big;  // the default
  official["init_std"] = 0.2;
  EntNet drawn(official, DType::f64, 5);
  const auto [mean, sd] = stats(drawn.params().get("story_mask").value);
  CHECK(std::abs(mean) < 0.03);  // 1,200 draws: the mean's sd is 0.2 / sqrt(1200) = 0.006
  CHECK(sd == doctest::Approx(0.2).epsilon(0.1));
  CHECK(stats(drawn.params().get("query_mask").value) == std::pair{1.0, 0.0});  // the question's: 1
  CHECK_THROWS_WITH_AS(EntNet({{"story_mask_init", "zeros"}}, DType::f32, 1),
                       doctest::Contains("story_mask_init"), Error);
}

TEST_CASE("entnet: the forward matches the equations written out with loops") {
  for (const char* variant :
       {"official", "no-gate-bias", "mean-loss-official-slopes", "two-prelus"}) {
    CAPTURE(variant);
    EntNet model(tiny(variant), DType::f64, 7);
    const Batch batch = check_batch();
    const std::vector<double> got = logits(model, batch), want = reference_logits(model, batch);
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-9));
  }
}

TEST_CASE("entnet: padding sentences change neither the loss nor a gradient") {
  EntNet model(tiny(), DType::f64, 3);
  const Batch batch = check_batch(), padded = with_extra_slot(batch);
  auto run = [&](const Batch& b) {
    model.params().zero_grad();
    Tape tape;
    ForwardResult r = model.forward(tape, b, ForwardOptions{});
    tape.backward(r.loss);
    std::vector<double> all = r.loss.value().to_vector();
    for (size_t i = 0; i < model.params().size(); ++i)
      for (double g : model.params()[i].grad.to_vector()) all.push_back(g);
    return all;
  };
  const std::vector<double> a = run(batch), b = run(padded);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) CHECK(a[i] == doctest::Approx(b[i]).epsilon(1e-12));
}

TEST_CASE("entnet: the nil word's row of E and column of R are zero and stay zero") {
  EntNet model(tiny(), DType::f64, 5);
  const nlohmann::json c = model.config();
  const int64_t d = c["embedding_dim"], v = c["vocab_size"];
  auto nil_norm = [&] {
    double s = 0;
    for (int64_t x = 0; x < d; ++x) {
      s += std::abs(model.params().get("E").value.at(x));
      s += std::abs(model.params().get("R").value.at(x * v));
    }
    return s;
  };
  CHECK(nil_norm() == 0);
  Adam adam(model.params(), 0.1);
  Tape tape;
  ForwardResult r = model.forward(tape, check_batch(), ForwardOptions{});
  tape.backward(r.loss);
  adam.step();
  CHECK(nil_norm() > 0);  // the update moved them (R's nil column gets the softmax's gradient)
  model.after_update();
  CHECK(nil_norm() == 0);
}

TEST_CASE("entnet: the trace holds each slot's gate per sentence and the output attention") {
  EntNet model(tiny(), DType::f64, 9);
  const Batch batch = check_batch();
  Trace trace;
  const std::vector<double> traced = logits(model, batch, &trace);
  CHECK(traced == logits(model, batch));  // tracing changes nothing
  const int64_t steps = batch.get("story").dim(1), k = model.slots();
  REQUIRE(trace.entries.size() == size_t(steps + 1));
  for (int64_t t = 0; t < steps; ++t) {
    const auto& [name, value] = trace.entries[size_t(t)];
    std::string want = "t";  // (appended: g++ 12 warns falsely on "t" + std::to_string(t))
    want += std::to_string(t);
    want += "/gate";
    CHECK(name == want);
    CHECK(value.shape() == Shape{3, k});
    for (double g : value.to_vector()) CHECK((g > 0 && g < 1));
  }
  CHECK(trace.entries.back().first == "attention");
  const Tensor& p = trace.entries.back().second;
  REQUIRE(p.shape() == Shape{3, k});
  for (int64_t s = 0; s < 3; ++s) {
    double sum = 0;
    for (int64_t m = 0; m < k; ++m) sum += p.at(s * k + m);
    CHECK(sum == doctest::Approx(1.0));
  }
}

TEST_CASE("entnet: config and batch errors name the key or field") {
  CHECK_THROWS_WITH_AS(EntNet({{"memory_slots", 0}}, DType::f32, 1),
                       doctest::Contains("memory_slots"), Error);
  CHECK_THROWS_WITH_AS(EntNet({{"loss", "max"}}, DType::f32, 1), doctest::Contains("loss"), Error);
  CHECK_THROWS_WITH_AS(EntNet({{"slots", 3}}, DType::f32, 1), doctest::Contains("slots"), Error);
  EntNet model(tiny(), DType::f64, 1);
  Batch bad = check_batch();
  Tensor query = bad.get("query");  // shares the batch's storage
  query.set(0, 7);                  // vocab 7: ids 0..6; 7 would be the first key's row
  CHECK_THROWS_WITH_AS(logits(model, bad), doctest::Contains("'query' holds 7"), Error);
}

namespace {

// A tiny memorisation task: 32 questions over random stories of 2-5 sentences (vocab 12), each
// answer a random word of its story.
Batch memorisation_batch() {
  const int64_t b = 32, steps = 5, j = 3, vocab = 12;
  Batch batch;
  Rng rng(21);
  Tensor& story = batch.field("story", Shape{b, steps, j}, DType::f32);
  batch.field("time", Shape{b, steps}, DType::f32);
  Tensor& mask = batch.field("memory_mask", Shape{b, steps}, DType::f32);
  Tensor& query = batch.field("query", Shape{b, j}, DType::f32);
  Tensor& answer = batch.field("answer", Shape{b}, DType::f32);
  for (int64_t s = 0; s < b; ++s) {
    const int64_t n = 2 + int64_t(rng.below(4));
    for (int64_t t = 0; t < n; ++t) {
      mask.set(s * steps + t, 1);
      for (int64_t w = 0; w < j; ++w)
        story.set((s * steps + t) * j + w, double(1 + rng.below(uint64_t(vocab - 1))));
    }
    for (int64_t w = 0; w < j; ++w)
      query.set(s * j + w, double(1 + rng.below(uint64_t(vocab - 1))));
    answer.set(s, story.at((s * steps + int64_t(rng.below(uint64_t(n)))) * j + 1));
  }
  batch.size = b;
  return batch;
}

// Trains on the batch with the official recipe's optimizer (Adam 0.01, global-norm clip 40);
// returns the losses and the final training error.
std::pair<std::vector<double>, double> memorise(uint64_t seed, int iterations) {
  const Batch batch = memorisation_batch();
  EntNet model({{"vocab_size", 12}, {"sentence_len", 3}, {"embedding_dim", 20}}, DType::f32, seed);
  Adam adam(model.params(), 0.01);
  std::vector<double> losses;
  Tape tape;
  for (int i = 0; i < iterations; ++i) {
    tape.reset();
    ForwardResult r = model.forward(tape, batch, ForwardOptions{});
    losses.push_back(r.loss.value().at(0));
    tape.backward(r.loss);
    clip_grad_norm(model.params(), 40.0);
    adam.step();
    model.params().zero_grad();
    model.after_update();
  }
  tape.reset();
  ForwardResult r = model.forward(tape, batch, ForwardOptions{});
  const Tensor& out = r.predictions.value();
  int wrong = 0;
  for (int64_t s = 0; s < 32; ++s) {
    int64_t best = 0;
    for (int64_t v = 1; v < 12; ++v)
      if (out.at(s * 12 + v) > out.at(s * 12 + best)) best = v;
    wrong += best != int64_t(batch.get("answer").at(s));
  }
  return {losses, double(wrong) / 32};
}

}  // namespace

TEST_CASE("entnet: memorises a tiny task to 0 % training error; same seed, same losses") {
  const auto [losses, error] = memorise(3, 150);
  CHECK(error == 0.0);
  CHECK(losses.back() < 0.05 * losses.front());
  const auto [again, error_again] = memorise(3, 150);
  CHECK(again == losses);  // bit for bit
  const auto [other, error_other] = memorise(4, 150);
  CHECK(other != losses);
}

}  // namespace entnet_tests
