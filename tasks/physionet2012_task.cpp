// The `physionet2012` task: in-hospital mortality from the first 48 hours of an ICU stay
// (PhysioNet/CinC Challenge 2012; data and batches in physionet2012.hpp). Training batches are
// the training stays in a fresh seeded order every epoch; evaluation scores the validation and
// test stays of set-a and the held-out set-b with AUC-ROC and AUC-PR (average precision), with
// percentile bootstrap intervals on set-b; model selection keeps the epoch of best validation
// AUC-ROC.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "engine/error.hpp"
#include "engine/rng.hpp"
#include "tasks/epoch_order.hpp"
#include "tasks/metrics.hpp"
#include "tasks/physionet2012.hpp"
#include "tasks/task.hpp"

namespace memgrad {
namespace {

const nlohmann::json kDefaults = {{"data_dir", "../shared/data/physionet-challenge-2012"},
                                  {"hours", 48},
                                  {"bin_minutes", 60},
                                  {"valid_fraction", 0.1},
                                  {"test_fraction", 0.1},
                                  {"split_seed", 1},
                                  {"cv_folds", 0},
                                  {"cv_fold", 0},
                                  {"time_since_last", false},
                                  {"features", "summary"},
                                  {"bootstrap_resamples", 1000},
                                  {"bootstrap_seed", 1},
                                  {"seed", 1}};

constexpr uint64_t kOrderSalt = 0x9e7a'5012'0000'0002ULL;

int64_t whole(const nlohmann::json& s, const char* key, int64_t lo, int64_t hi) {
  return setting_int(s, "physionet2012", key, lo, hi);
}

// One split's labels and the model's scores (the logit of each stay), in the split's order.
struct Scored {
  std::vector<int> labels;
  std::vector<double> scores;
};

// The splits evaluate() reports, by their metrics.json keys.
constexpr const char* kSplits[] = {"valid", "test", "set_b"};

class PhysionetTask : public Task {
 public:
  explicit PhysionetTask(const nlohmann::json& user)
      : settings_(merge_task_settings("physionet2012", kDefaults, user)) {
    physionet::LoadOptions o;
    try {
      o.data_dir = settings_.at("data_dir").get<std::string>();
      o.hours = int(whole(settings_, "hours", 1, 48));
      o.bin_minutes = int(whole(settings_, "bin_minutes", 1, 48 * 60));
      o.valid_fraction = settings_.at("valid_fraction").get<double>();
      o.test_fraction = settings_.at("test_fraction").get<double>();
      o.split_seed = uint64_t(whole(settings_, "split_seed", 0, INT64_MAX));
      o.cv_folds = int(whole(settings_, "cv_folds", 0, 20));
      o.cv_fold = int(whole(settings_, "cv_fold", 0, 19));
      o.time_since_last = settings_.at("time_since_last").get<bool>();
      o.features = settings_.at("features").get<std::string>();
      resamples_ = int(whole(settings_, "bootstrap_resamples", 1, 1000000));
      bootstrap_seed_ = uint64_t(whole(settings_, "bootstrap_seed", 0, INT64_MAX));
      seed_ = uint64_t(whole(settings_, "seed", 0, INT64_MAX));
    } catch (const nlohmann::json::exception& e) {
      fail("physionet2012: bad setting type (", e.what(), ")");
    }
    data_ = physionet::load(o);
    report_load();
  }

  std::string name() const override { return "physionet2012"; }
  nlohmann::json config() const override { return settings_; }
  nlohmann::json model_dims() const override {
    return {{"input_size", data_.inputs},
            {"feature_size", data_.feature_size},
            {"output_size", 1},
            {"steps", data_.steps}};
  }
  int64_t steps_per_epoch(int64_t batch_size) const override {
    return std::max<int64_t>(1, int64_t(data_.train.size()) / std::max<int64_t>(1, batch_size));
  }
  // Epoch e visits the training stays in a permutation drawn from (seed, e); step k of it takes
  // the k-th block of batch_size stays (the last partial block is left out, a new order next
  // epoch).
  void train_batch(int64_t step, int64_t batch_size, DType dtype, Batch& batch) override {
    MG_CHECK(batch_size >= 1 && batch_size <= int64_t(data_.train.size()),
             "physionet2012: batch size must be in [1, ", data_.train.size(), "], got ",
             batch_size);
    physionet::fill_batch(data_,
                          order_.batch(data_.train, seed_ ^ kOrderSalt, step, batch_size,
                                       steps_per_epoch(batch_size)),
                          dtype, batch);
  }
  int64_t validation_batches(int64_t batch_size) const override {
    return (int64_t(data_.valid.size()) + batch_size - 1) / batch_size;
  }
  void validation_batch(int64_t index, int64_t batch_size, DType dtype, Batch& batch) override {
    const int64_t start = index * batch_size;
    const int64_t count = std::min<int64_t>(batch_size, int64_t(data_.valid.size()) - start);
    MG_CHECK(start >= 0 && count >= 1, "physionet2012: validation batch ", index, " out of range");
    physionet::fill_batch(data_, {data_.valid.data() + start, size_t(count)}, dtype, batch);
  }

  nlohmann::json evaluate(const Predictor& predict, int64_t batch_size, DType dtype) override {
    nlohmann::json m = {
        {"definition",
         "auc_roc: area under the ROC curve of the model's score (its logit) for in-hospital "
         "death; auc_pr: average precision (scikit-learn's average_precision_score); valid and "
         "test: the validation and test stays of set-a (split by record, stratified, "
         "split_seed; with cv_folds, valid is fold cv_fold of the pooled training and validation "
         "stays); set_b: the held-out set-b, with 95% percentile bootstrap intervals "
         "(bootstrap_resamples resamples of its stays, bootstrap_seed)"}};
    for (const char* key : kSplits) {
      const std::vector<int64_t>* split = &split_of(key);
      const Scored s = score(predict, *split, batch_size, dtype);
      nlohmann::json j = {{"stays", s.labels.size()},
                          {"deaths", std::count(s.labels.begin(), s.labels.end(), 1)},
                          {"auc_roc", metrics::auc_roc(s.labels, s.scores).value_or(NAN)},
                          {"auc_pr", metrics::average_precision(s.labels, s.scores).value_or(NAN)}};
      if (split == &data_.set_b) {
        for (const auto& [name, fn] : {std::pair{"auc_roc", &metrics::auc_roc},
                                       std::pair{"auc_pr", &metrics::average_precision}}) {
          const metrics::BootstrapInterval ci =
              metrics::bootstrap_interval(s.labels, s.scores, fn, resamples_, bootstrap_seed_);
          j[std::string(name) + "_ci95"] = {ci.low, ci.high};
        }
        j["bootstrap_resamples"] = resamples_;
      }
      m[key] = j;
    }
    return m;
  }

  // The stays of evaluate()'s splits in its order, each with its RecordID.
  std::vector<ExampleScore> example_scores(const Predictor& predict, int64_t batch_size,
                                           DType dtype) override {
    std::vector<ExampleScore> out;
    for (const char* key : kSplits) {
      const std::vector<int64_t>& split = split_of(key);
      const Scored s = score(predict, split, batch_size, dtype);
      for (size_t i = 0; i < split.size(); ++i)
        out.push_back({.record_id = std::to_string(data_.records[size_t(split[i])]->id),
                       .split = key,
                       .label = s.labels[i],
                       .score = s.scores[i]});
    }
    return out;
  }

  std::string format_metrics(const nlohmann::json& m) const override {
    std::ostringstream out;
    out << "PhysioNet 2012 in-hospital mortality\n"
        << "  split    stays  deaths  AUC-ROC  AUC-PR\n";
    char line[160];
    for (const char* key : kSplits) {
      const nlohmann::json& j = m.at(key);
      std::snprintf(line, sizeof line, "  %-7s %6lld %7lld  %7.4f  %6.4f", key,
                    j.at("stays").get<long long>(), j.at("deaths").get<long long>(),
                    j.at("auc_roc").get<double>(), j.at("auc_pr").get<double>());
      out << line;
      if (j.contains("auc_roc_ci95")) {
        std::snprintf(line, sizeof line, "  (95%% CI %.4f-%.4f / %.4f-%.4f)",
                      j["auc_roc_ci95"][0].get<double>(), j["auc_roc_ci95"][1].get<double>(),
                      j["auc_pr_ci95"][0].get<double>(), j["auc_pr_ci95"][1].get<double>());
        out << line;
      }
      out << "\n";
    }
    out << selected_line(m);
    return out.str();
  }

  std::optional<double> selection_score(const Predictor& predict, int64_t batch_size,
                                        DType dtype) override {
    const Scored s = score(predict, data_.valid, batch_size, dtype);
    return metrics::auc_roc(s.labels, s.scores);
  }
  std::string selection_metric() const override { return "valid_auc_roc"; }

  // Inspection numbers set-b's stays (the held-out set) by RecordID order; --input takes a
  // RecordID of either set.
  int64_t test_examples() const override { return int64_t(data_.set_b.size()); }
  void test_example(int64_t index, DType dtype, Batch& batch) override {
    MG_CHECK(index >= 0 && index < test_examples(), "physionet2012: set-b stay ", index,
             " out of range (", test_examples(), " stays)");
    const int64_t i = data_.set_b[size_t(index)];
    physionet::fill_batch(data_, {&i, 1}, dtype, batch);
  }
  void text_example(const std::string& text, DType dtype, Batch& batch) override {
    int64_t id = -1;
    try {
      size_t used = 0;
      id = std::stoll(text, &used);
      if (used != text.size()) id = -1;
    } catch (const std::exception&) {
    }
    for (int64_t i = 0; i < int64_t(data_.records.size()); ++i)
      if (data_.records[size_t(i)]->id == id) {
        physionet::fill_batch(data_, {&i, 1}, dtype, batch);
        return;
      }
    fail("physionet2012: no stay with RecordID '", text,
         "' (give a RecordID of set-a or set-b, e.g. ", data_.records.front()->id, ")");
  }
  // The stay (set, split, descriptors, outcome), the model's probability, and each variable's
  // hourly values (the last valid value of each bin, "." for none).
  Lines describe_example(const Batch& batch, const Tensor& predictions) const override {
    MG_CHECK(predictions.numel() == 1, "physionet2012: predictions of shape ", predictions.shape(),
             " for a batch of ", batch.size);
    const int64_t index = stay_of(batch);
    const physionet::Record& r = *data_.records[size_t(index)];
    const auto id = r.id;
    const physionet::Outcome& o = *data_.outcomes[size_t(index)];
    Lines lines;
    lines.emplace_back("record", std::to_string(id) + " (" + where(index) + ")");
    std::string desc;
    for (int d = 0; d < physionet::kNumDescriptors; ++d) {
      const double v = r.descriptor[size_t(d)];
      char buf[64];
      const char* sep = desc.empty() ? "" : ", ";
      const char* name = physionet::kDescriptors[size_t(d)].name;
      if (std::isnan(v))
        std::snprintf(buf, sizeof buf, "%s%s ?", sep, name);
      else
        std::snprintf(buf, sizeof buf, "%s%s %g", sep, name, v);
      desc += buf;
    }
    lines.emplace_back("descriptors", desc);
    lines.emplace_back("in-hospital death", std::to_string(o.death));
    const double logit = predictions.at(0);
    char p[64];
    std::snprintf(p, sizeof p, "%.4f (logit %.3f)", 1 / (1 + std::exp(-logit)), logit);
    lines.emplace_back("predicted probability", p);
    std::vector<float> bins;
    physionet::bin_last_values(r, data_.options.hours, data_.options.bin_minutes, bins);
    for (int v = 0; v < physionet::kNumSeries; ++v) {
      std::string row;
      bool any = false;
      for (int64_t t = 0; t < data_.steps; ++t) {
        const float x = bins[size_t(t * physionet::kNumSeries + v)];
        char buf[32];
        std::snprintf(buf, sizeof buf, "%g", double(x));
        if (t > 0) row += ' ';
        row += std::isnan(x) ? "." : buf;
        any = any || !std::isnan(x);
      }
      if (any)
        lines.emplace_back(std::string(physionet::kSeries[size_t(v)].name) + " by " +
                               std::to_string(data_.options.bin_minutes) + " min",
                           row);
    }
    return lines;
  }

  // The series variables measured in each bin of the stay, with the bin's last valid value.
  StepObservations step_observations(const Batch& batch) const override {
    const physionet::Record& r = *data_.records[size_t(stay_of(batch))];
    std::vector<float> bins;
    physionet::bin_last_values(r, data_.options.hours, data_.options.bin_minutes, bins);
    StepObservations out;
    out.step_name = data_.options.bin_minutes == 60
                        ? "hour"
                        : std::to_string(data_.options.bin_minutes) + "-minute bin";
    out.steps.resize(size_t(data_.steps));
    for (int64_t t = 0; t < data_.steps; ++t)
      for (int v = 0; v < physionet::kNumSeries; ++v)
        if (const float x = bins[size_t(t * physionet::kNumSeries + v)]; !std::isnan(x))
          out.steps[size_t(t)].emplace_back(physionet::kSeries[size_t(v)].name, double(x));
    return out;
  }

  const physionet::Data& data() const { return data_; }

 private:
  // The index of a batch of one's stay in data_.records.
  int64_t stay_of(const Batch& batch) const {
    MG_CHECK(batch.size == 1, "physionet2012: a single stay was expected, got a batch of ",
             batch.size);
    const auto id = int64_t(batch.get("record_id").at(0));
    for (int64_t i = 0; i < int64_t(data_.records.size()); ++i)
      if (data_.records[size_t(i)]->id == id) return i;
    fail("physionet2012: the batch's RecordID ", id, " is not in the data");
  }

  const std::vector<int64_t>& split_of(const std::string& key) const {
    return key == "valid" ? data_.valid : key == "test" ? data_.test : data_.set_b;
  }

  std::string where(int64_t index) const {
    if (index >= data_.set_b_begin) return "set-b, held out";
    for (const auto& [name, split] :
         {std::pair{"train", &data_.train}, std::pair{"valid", &data_.valid},
          std::pair{"test", &data_.test}})
      if (std::binary_search(split->begin(), split->end(), index))
        return std::string("set-a, ") + name;
    return "set-a";
  }

  Scored score(const Predictor& predict, const std::vector<int64_t>& split, int64_t batch_size,
               DType dtype) const {
    Scored s;
    Batch batch;
    const auto n = int64_t(split.size());
    for (int64_t start = 0; start < n; start += batch_size) {
      const int64_t count = std::min(batch_size, n - start);
      physionet::fill_batch(data_, {split.data() + start, size_t(count)}, dtype, batch);
      const Tensor scores = predict(batch);
      MG_CHECK(scores.numel() == count && scores.dim(0) == count,
               "physionet2012: predictions must be one logit per stay, [", count, ", 1], got ",
               scores.shape());
      for (int64_t i = 0; i < count; ++i) {
        s.scores.push_back(scores.at(i));
        s.labels.push_back(data_.outcomes[size_t(split[size_t(start + i)])]->death);
        MG_CHECK(std::isfinite(s.scores.back()), "physionet2012: the model's score for stay ",
                 data_.records[size_t(split[size_t(start + i)])]->id, " is not finite (",
                 s.scores.back(), ")");
      }
    }
    return s;
  }

  void report_load() const {
    auto deaths = [&](const std::vector<int64_t>& split) {
      int64_t k = 0;
      for (int64_t i : split) k += data_.outcomes[size_t(i)]->death;
      return k;
    };
    std::ostringstream out;
    out << "physionet2012: " << data_.options.data_dir << ": set-a " << data_.set_b_begin
        << " stays (train " << data_.train.size() << ", " << deaths(data_.train)
        << " deaths; valid " << data_.valid.size() << ", " << deaths(data_.valid) << "; test "
        << data_.test.size() << ", " << deaths(data_.test) << "), set-b " << data_.set_b.size()
        << " (" << deaths(data_.set_b) << " deaths); read in " << data_.parse_seconds
        << " s, prepared in " << data_.prepare_seconds << " s; " << data_.steps << " steps x "
        << data_.inputs << " inputs, " << data_.feature_size << " features\n"
        << "physionet2012: set-a quirks: " << data_.quirks_a.summary()
        << "physionet2012: set-b quirks: " << data_.quirks_b.summary();
    std::cerr << out.str();
  }

  nlohmann::json settings_;
  physionet::Data data_;
  int resamples_ = 1000;
  uint64_t bootstrap_seed_ = 1, seed_ = 1;
  EpochOrder order_;
};

const bool kRegistered = [] {
  register_task(
      {.name = "physionet2012",
       .summary = "PhysioNet/CinC Challenge 2012 in-hospital mortality from the first "
                  "48 h (set-a split train/valid/test, set-b held out), read from "
                  "data_dir (set-a/, set-b.tar.gz, Outcomes-a/b.txt)",
       .create = [](const nlohmann::json& s) { return std::make_unique<PhysionetTask>(s); },
       .default_settings = kDefaults});
  return true;
}();

}  // namespace
}  // namespace memgrad
