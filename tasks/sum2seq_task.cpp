// The `sum2seq` task: training batches from the generator, test sets of 2,500 fresh samples at
// several Lmax, token accuracy through the metrics library.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "engine/json_text.hpp"
#include "engine/threads.hpp"
#include "tasks/metrics.hpp"
#include "tasks/sum2seq.hpp"
#include "tasks/task.hpp"

namespace memgrad {
namespace {

// Upper bounds catch typos before memory runs out (a step's tape grows with Lmax).
constexpr int64_t kMaxLmax = 1000;
constexpr int64_t kMaxTestSamples = 1000000;

// Setting `key` of s as a whole number in [1, max]; an Error names it otherwise.
int64_t bounded(const nlohmann::json& v, const char* key, int64_t max) {
  MG_CHECK(v.is_number_integer() && v.get<int64_t>() >= 1 && v.get<int64_t>() <= max,
           "sum2seq: ", key, " must be a whole number in [1, ", max, "], got ", dump_json(v));
  return v.get<int64_t>();
}
uint64_t seed(const nlohmann::json& v, const char* key) {
  MG_CHECK(v.is_number_integer() && v.get<int64_t>() >= 0, "sum2seq: ", key,
           " must be a whole number >= 0, got ", dump_json(v));
  return v.get<uint64_t>();
}
std::vector<int> lengths(const nlohmann::json& v) {
  MG_CHECK(v.is_array() && !v.empty(), "sum2seq: test_lmax must be a list of lengths, got ",
           dump_json(v));
  std::vector<int> out;
  for (const auto& l : v) out.push_back(int(bounded(l, "test_lmax values", kMaxLmax)));
  return out;
}

// Settings come merged over default_settings for a new run (end_marker: true); a run directory
// written before the end marker existed has no "end_marker" key and was trained without it.
class Sum2SeqTask : public Task {
 public:
  explicit Sum2SeqTask(const nlohmann::json& s)
      : settings_(s),
        seed_(seed(s.at("seed"), "seed")),
        test_seed_(seed(s.at("test_seed"), "test_seed")),
        format_{.lmax = int(bounded(s.at("lmax"), "lmax", kMaxLmax)),
                .end_marker = s.value("end_marker", false),
                .one_length_per_batch = s.value("one_length_per_batch", false)},
        test_samples_(bounded(s.at("test_samples"), "test_samples", kMaxTestSamples)),
        test_lmax_(lengths(s.at("test_lmax"))) {}

  std::string name() const override { return "sum2seq"; }
  nlohmann::json config() const override { return settings_; }
  nlohmann::json model_dims() const override {
    return {{"input_vocab", sum2seq::input_vocab(format_.end_marker)},
            {"output_vocab", sum2seq::kOutputVocab},
            {"output", "sequence"}};  // its targets are sequences, never label sets
  }
  int64_t steps_per_epoch(int64_t) const override { return 0; }
  void train_batch(int64_t step, int64_t batch_size, DType dtype, Batch& batch) override {
    sum2seq::train_batch(seed_, step, batch_size, format_, dtype, batch);
  }
  void largest_train_batch(int64_t batch_size, DType dtype, Batch& batch) override {
    sum2seq::longest_batch(batch_size, format_, dtype, batch);
  }

  nlohmann::json evaluate(const Predictor& predict, int64_t batch_size, DType dtype) override {
    nlohmann::json per_sample = nlohmann::json::object(), pooled = nlohmann::json::object();
    for (int lmax : test_lmax_) {
      Batch all;
      sum2seq::Format f = format_;
      f.lmax = lmax;
      sum2seq::test_batch(test_seed_, f, test_samples_, dtype, all);
      // The batches are predicted in parallel (each its own tape), and their results joined in
      // batch order: the same numbers on any thread count.
      struct Scored {
        std::vector<int> pred, target;
        std::vector<uint8_t> mask;
        std::vector<double> sample_accuracy;  // of the samples with a target, in order
      };
      const int64_t batches = (test_samples_ + batch_size - 1) / batch_size;
      std::vector<Scored> scored(static_cast<size_t>(batches));
      parallel_for_each(batches, [&](int64_t index) {
        const int64_t start = index * batch_size, n = std::min(batch_size, test_samples_ - start);
        Batch part;
        slice_batch(all, start, n, part);
        const Tensor scores = predict(part);
        const Tensor& y = part.get("y");
        const Tensor& mask = part.get("y_mask");
        MG_CHECK(scores.rank() == 3 && scores.dim(0) == n && scores.dim(1) == y.dim(1),
                 "sum2seq: predictions of shape ", scores.shape(), " for targets ", y.shape());
        const int64_t len = y.dim(1), classes = scores.dim(2);
        const std::vector<double> s = scores.to_vector();
        Scored& out = scored[static_cast<size_t>(index)];
        for (int64_t b = 0; b < n; ++b) {
          std::vector<int> pred, target;
          std::vector<uint8_t> m;
          for (int64_t t = 0; t < len; ++t) {
            const int64_t at = b * len + t;
            std::vector<double> row(s.begin() + at * classes, s.begin() + (at + 1) * classes);
            pred.push_back(metrics::argmax(row));
            target.push_back(int(y.at(at)));
            m.push_back(mask.at(at) != 0 ? 1 : 0);
          }
          if (auto acc = metrics::accuracy(pred, target, m)) out.sample_accuracy.push_back(*acc);
          out.pred.insert(out.pred.end(), pred.begin(), pred.end());
          out.target.insert(out.target.end(), target.begin(), target.end());
          out.mask.insert(out.mask.end(), m.begin(), m.end());
        }
      });
      std::vector<int> flat_pred, flat_target;
      std::vector<uint8_t> flat_mask;
      double sample_sum = 0;
      int64_t samples = 0;
      for (const Scored& b : scored) {
        for (double acc : b.sample_accuracy) sample_sum += acc;
        samples += int64_t(b.sample_accuracy.size());
        flat_pred.insert(flat_pred.end(), b.pred.begin(), b.pred.end());
        flat_target.insert(flat_target.end(), b.target.begin(), b.target.end());
        flat_mask.insert(flat_mask.end(), b.mask.begin(), b.mask.end());
      }
      const std::string key = std::to_string(lmax);
      per_sample[key] = samples ? sample_sum / double(samples) : 0.0;
      pooled[key] = metrics::accuracy(flat_pred, flat_target, flat_mask).value_or(0.0);
    }
    return {{"accuracy", per_sample},
            {"token_accuracy_pooled", pooled},
            {"test_samples", test_samples_},
            {"definition",
             "accuracy: per sample, correct output tokens / output length, averaged over samples; "
             "token_accuracy_pooled: all correct tokens / all tokens"}};
  }

  std::string format_metrics(const nlohmann::json& m) const override {
    std::ostringstream out;
    out << "sum2seq test accuracy (%), " << test_samples_ << " samples per Lmax\n";
    for (int lmax : test_lmax_) {
      const std::string key = std::to_string(lmax);
      char line[96];
      std::snprintf(line, sizeof line, "  Lmax %-3d  %6.2f   (pooled tokens %6.2f)\n", lmax,
                    100 * m["accuracy"][key].get<double>(),
                    100 * m["token_accuracy_pooled"][key].get<double>());
      out << line;
    }
    return out.str();
  }

  // Samples are numbered through the test sets in test_lmax order: index i is sample
  // i % test_samples of the set at test_lmax[i / test_samples].
  int64_t test_examples() const override { return test_samples_ * int64_t(test_lmax_.size()); }
  void test_example(int64_t index, DType dtype, Batch& batch) override {
    MG_CHECK(index >= 0 && index < test_examples(), "sum2seq: test sample ", index,
             " out of range (", test_examples(), " samples: ", test_samples_, " per Lmax of ",
             test_lmax_.size(), ")");
    sum2seq::Format f = format_;
    f.lmax = test_lmax_[size_t(index / test_samples_)];
    Batch all;
    sum2seq::test_batch(test_seed_, f, test_samples_, dtype, all);
    slice_batch(all, index % test_samples_, 1, batch);
  }
  // The two views, numbers in [1, 50] separated by spaces, commas or tabs, the views by '/'.
  void text_example(const std::string& text, DType dtype, Batch& batch) override {
    std::vector<int> views[2];
    int view = 0;
    std::string token;
    auto flush = [&] {
      if (token.empty()) return;
      char* end = nullptr;
      const long v = std::strtol(token.c_str(), &end, 10);
      MG_CHECK(*end == 0 && v >= 1 && v <= sum2seq::kMaxToken, "sum2seq sample \"", text, "\": '",
               token, "' is not a number in [1, ", sum2seq::kMaxToken, "]");
      views[view].push_back(int(v));
      token.clear();
    };
    for (char ch : text) {
      if (ch == '/') {
        flush();
        MG_CHECK(view == 0, "sum2seq sample \"", text, "\": more than two views (one '/')");
        view = 1;
      } else if (ch == ' ' || ch == ',' || ch == '\t') {
        flush();
      } else {
        token += ch;
      }
    }
    flush();
    MG_CHECK(view == 1, "sum2seq sample \"", text, "\": needs two views separated by '/'");
    sum2seq::sample_batch(views[0], views[1], format_, dtype, batch);
  }
  Lines describe_example(const Batch& batch, const Tensor& predictions) const override {
    const Tensor& y = batch.get("y");
    const Tensor& ym = batch.get("y_mask");
    const int64_t len = y.dim(1);
    MG_CHECK(batch.size == 1 && predictions.rank() == 3 && predictions.dim(1) == len,
             "sum2seq: predictions of shape ", predictions.shape(), " for a batch of ", batch.size,
             " with targets ", y.shape());
    auto append = [](std::string& out, int v) {  // space-separated numbers
      if (!out.empty()) out += ' ';
      out += std::to_string(v);
    };
    auto view = [&](const char* name) {
      const Tensor& x = batch.get(name);
      const Tensor& m = batch.get(std::string(name) + "_mask");
      std::string out;
      for (int64_t i = 0; i < x.dim(1); ++i)
        if (m.at(i) != 0 && x.at(i) != sum2seq::kEndToken) append(out, int(x.at(i)));
      return out;
    };
    std::string target, predicted;
    int64_t correct = 0, total = 0;
    const std::vector<double> s = predictions.to_vector();
    const int64_t classes = predictions.dim(2);
    for (int64_t t = 0; t < len; ++t) {
      if (ym.at(t) == 0) continue;
      const std::vector<double> row(s.begin() + t * classes, s.begin() + (t + 1) * classes);
      const int p = metrics::argmax(row), want = int(y.at(t));
      append(target, want);
      append(predicted, p);
      correct += p == want ? 1 : 0;
      ++total;
    }
    return {{"x1", view("x1")},
            {"x2", view("x2")},
            {"target", target + "   (y_i = x1_i + x2_{L+1-i})"},
            {"predicted", predicted},
            {"correct", std::to_string(correct) + " of " + std::to_string(total)}};
  }

 private:
  // Copies samples [start, start+n) of every field of `all` into `part`, trimming each field's
  // padding to the longest sample of the part by its own mask ("x1" and "x1_mask" by "x1_mask").
  static void slice_batch(const Batch& all, int64_t start, int64_t n, Batch& part) {
    for (const auto& [name, t] : all.fields()) {
      const bool is_mask = name.size() > 5 && name.compare(name.size() - 5, 5, "_mask") == 0;
      const Tensor& mask = all.get(is_mask ? name : name + "_mask");
      const int64_t width = t.dim(1);
      int64_t longest = 1;
      for (int64_t b = start; b < start + n; ++b)
        for (int64_t i = 0; i < width; ++i)
          if (mask.at(b * width + i) != 0) longest = std::max(longest, i + 1);
      Tensor& dst = part.field(name, Shape{n, longest}, t.dtype());
      for (int64_t b = 0; b < n; ++b)
        for (int64_t i = 0; i < longest; ++i)
          dst.set(b * longest + i, t.at((start + b) * width + i));
    }
    part.size = n;
  }

  nlohmann::json settings_;
  uint64_t seed_;       // training data (the run's seed unless set)
  uint64_t test_seed_;  // test sets: fixed, so runs with different seeds compare on the same data
  sum2seq::Format format_;
  int64_t test_samples_;
  std::vector<int> test_lmax_;
};

const bool kRegistered = [] {
  register_task({.name = "sum2seq",
                 .summary = "sum of two sequences (DMNC paper, section 4.1), generated in code",
                 .create = [](const nlohmann::json& s) { return std::make_unique<Sum2SeqTask>(s); },
                 .default_settings = {{"seed", 1},
                                      {"test_seed", 2024},
                                      {"lmax", 10},
                                      {"end_marker", true},
                                      {"one_length_per_batch", false},
                                      {"test_lmax", {10, 15, 20}},
                                      {"test_samples", 2500}}});
  return true;
}();

}  // namespace
}  // namespace memgrad
