// Batch shards (train setting "shards"): a sharded step is the whole batch's step up to rounding,
// and its results depend on the shard count, never on the thread count.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "engine/threads.hpp"
#include "tools/args.hpp"
#include "tools/trainer.hpp"

using namespace memgrad;
using namespace memgrad::cli;

namespace {

RunConfig tiny_config(const std::string& model, int64_t shards) {
  std::vector<std::string> words = {"--task",       "sum2seq", "--model",  model,
                                    "--embedding",  "4",       "--hidden", "6",
                                    "--batch",      "7",       "--lmax",   "5",
                                    "--iterations", "3",       "--dtype",  "float64",
                                    "--seed",       "3",       "--shards", std::to_string(shards)};
  if (model == "dnc" || model.rfind("dmnc", 0) == 0)
    for (const char* w : {"--word-size", "4", "--memory-slots", "5"}) words.push_back(w);
  if (model == "wlas")
    for (const char* w : {"--attention-size", "5"}) words.push_back(w);
  nlohmann::json flags;
  return parse_run_flags(words, nullptr, nullptr, &flags);
}

std::vector<double> flat_params(Trainer& t) {
  std::vector<double> v;
  ParameterSet& p = t.model().params();
  for (size_t i = 0; i < p.size(); ++i)
    for (double x : p[i].value.to_vector()) v.push_back(x);
  return v;
}

double rel(double a, double b) {
  return std::abs(a - b) / std::max({1.0, std::abs(a), std::abs(b)});
}

}  // namespace

TEST_CASE("shards: a sharded step has the whole batch's loss, gradient norm and update") {
  ThreadScope threads(1);
  for (const char* model : {"dmnc-late", "dmnc-early", "dnc", "wlas", "lstm", "dual-lstm"}) {
    for (int64_t shards : {2, 3}) {
      INFO(model, " shards ", shards);
      Trainer whole(tiny_config(model, 1)), split(tiny_config(model, shards));
      REQUIRE(split.shards() == shards);
      for (int64_t step = 0; step < 3; ++step) {
        const StepTiming a = whole.train_step(step), b = split.train_step(step);
        CHECK(rel(a.loss, b.loss) <= 1e-13);
        CHECK(rel(a.grad_norm, b.grad_norm) <= 1e-12);
      }
      const std::vector<double> pa = flat_params(whole), pb = flat_params(split);
      REQUIRE(pa.size() == pb.size());
      double worst = 0;
      for (size_t i = 0; i < pa.size(); ++i) worst = std::max(worst, rel(pa[i], pb[i]));
      CHECK(worst <= 1e-9);  // Adam divides by sqrt(v): rounding of tiny gradients shows here
      CHECK(split.tape_nodes() > whole.tape_nodes());  // one graph per shard
    }
  }
}

TEST_CASE("shards: results depend on the shard count, not on the thread count") {
  std::vector<double> losses[2];
  for (int threads : {1, 2}) {
    ThreadScope scope(threads);
    Trainer t(tiny_config("dmnc-late", 2));
    for (int64_t step = 0; step < 3; ++step) losses[threads - 1].push_back(t.train_step(step).loss);
  }
  CHECK(losses[0] == losses[1]);
}

TEST_CASE("shards: bad shard counts and unshardable models are errors") {
  CHECK_THROWS_WITH(Trainer(tiny_config("dmnc-late", 8)),
                    doctest::Contains("shards must be in [1, batch = 7], got 8"));
  RunConfig persistent = tiny_config("dmnc-late", 2);
  persistent.model_config["persistent_memory"] = true;
  CHECK_THROWS_WITH(Trainer{persistent}, doctest::Contains("cannot be trained in shards"));
  // Without shards: sum2seq's rows are not patients, so there is nothing to carry.
  persistent.train["shards"] = 1;
  CHECK_THROWS_WITH(Trainer{persistent},
                    doctest::Contains("task sum2seq's samples are independent"));
}
