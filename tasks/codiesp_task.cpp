// The `codiesp` task: ICD-10 coding of CodiEsp's clinical case reports as multi-label
// classification (data, labels and batches in codiesp.hpp). Training batches are the training
// documents in a fresh seeded order every epoch, each batch held longest first; with
// curriculum_start > 0 every document of epoch e (from 0) is cut to curriculum_start *
// curriculum_growth^e words (the GRNN paper's curriculum: 50, x1.35). Evaluation scores the test
// and dev documents with the metrics of the GRNN paper's tables (micro / macro AUC-ROC and AUC-PR,
// P@k, R@k) and F1 at probability 0.5; the model's predictions are logits [B, L]. Model
// selection keeps the epoch of best dev micro AUC-PR; each epoch's log line has dev P@5 too.
// `memgrad eval --scores` writes every test and dev note's logit per label (label_scores.hpp).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "engine/error.hpp"
#include "engine/quote.hpp"
#include "engine/rng.hpp"
#include "tasks/codiesp.hpp"
#include "tasks/icd_titles.hpp"
#include "tasks/label_scores.hpp"
#include "tasks/metrics.hpp"
#include "tasks/task.hpp"

namespace memgrad {
namespace {

const nlohmann::json kDefaults = {
    {"data_dir", "../shared/data/codiesp"},
    {"titles", "../shared/data/icd-code-tables/icd10cm-order-Jan-2021.csv.gz"},
    {"language", "en"},
    {"label_set", "top"},
    {"top_k", 50},
    {"min_docs", 5},
    {"categories", false},
    {"procedures", false},
    {"min_count", 2},
    {"stop_words", true},
    {"fold_numbers", true},
    {"keep_punctuation", false},
    {"max_length", 0},
    {"curriculum_start", 0},
    {"curriculum_growth", 1.35},
    {"train_fraction", 1.0},
    {"seed", 1}};

constexpr uint64_t kOrderSalt = 0xc0d1'e5b0'0000'0001ULL;

int64_t whole(const nlohmann::json& s, const char* key, int64_t lo, int64_t hi) {
  return setting_int(s, "codiesp", key, lo, hi);
}

struct Scored {
  metrics::LabelMatrix labels;
  metrics::ScoreMatrix logits;  // the model's, in the split's document order
  metrics::ScoreMatrix probs;   // their sigmoid
};

class CodiespTask : public Task {
 public:
  explicit CodiespTask(const nlohmann::json& user)
      : settings_(merge_task_settings("codiesp", kDefaults, user)) {
    codiesp::LoadOptions load;
    codiesp::LabelOptions labels;
    codiesp::EncodeOptions enc;
    try {
      load.data_dir = settings_.at("data_dir").get<std::string>();
      load.language = settings_.at("language").get<std::string>();
      load.procedures = settings_.at("procedures").get<bool>();
      labels.kind = settings_.at("label_set").get<std::string>();
      labels.top_k = whole(settings_, "top_k", 1, 1000000);
      labels.min_docs = whole(settings_, "min_docs", 1, 1000000);
      labels.categories = settings_.at("categories").get<bool>();
      labels.procedures = load.procedures;
      enc.min_count = whole(settings_, "min_count", 1, 1000000);
      enc.tokens.drop_stop_words = settings_.at("stop_words").get<bool>();
      enc.tokens.fold_numbers = settings_.at("fold_numbers").get<bool>();
      enc.tokens.keep_punctuation = settings_.at("keep_punctuation").get<bool>();
      max_length_ = whole(settings_, "max_length", 0, 1000000);
      curriculum_start_ = whole(settings_, "curriculum_start", 0, 1000000);
      growth_ = settings_.at("curriculum_growth").get<double>();
      fraction_ = settings_.at("train_fraction").get<double>();
      seed_ = uint64_t(whole(settings_, "seed", 0, INT64_MAX));
      titles_path_ = settings_.at("titles").get<std::string>();
    } catch (const nlohmann::json::exception& e) {
      fail("codiesp: bad setting type (", e.what(), ")");
    }
    MG_CHECK(growth_ >= 1 && growth_ <= 10, "codiesp: curriculum_growth must be in [1, 10], got ",
             growth_);
    MG_CHECK(fraction_ > 0 && fraction_ <= 1, "codiesp: train_fraction must be in (0, 1], got ",
             fraction_);
    corpus_ = codiesp::load(load);
    data_ = codiesp::encode(corpus_, codiesp::make_label_set(corpus_, labels), enc);
    // The first train_fraction of the training documents in a seeded order (data efficiency).
    const int64_t n = int64_t(corpus_.split("train").docs.size());
    train_.resize(size_t(n));
    for (int64_t i = 0; i < n; ++i) train_[size_t(i)] = i;
    if (fraction_ < 1) {
      shuffle(train_, Rng(seed_ ^ kOrderSalt, ~0ULL));
      train_.resize(size_t(std::max<int64_t>(1, int64_t(std::llround(fraction_ * double(n))))));
      std::sort(train_.begin(), train_.end());
    }
    std::error_code ec;
    if (!titles_path_.empty() && std::filesystem::exists(titles_path_, ec))
      titles_ = icd::read_icd10cm_titles(titles_path_);
    std::cerr << "codiesp: " << corpus_.root << ": " << data_.split("train").docs.size() << " / "
              << data_.split("dev").docs.size() << " / " << data_.split("test").docs.size()
              << " documents (train " << train_.size() << " used), " << data_.labels.codes.size()
              << " labels (" << labels.kind << "), vocabulary " << data_.vocab.size() << "\n";
  }

  std::string name() const override { return "codiesp"; }
  nlohmann::json config() const override { return settings_; }
  nlohmann::json model_dims() const override {
    return {{"input_vocab", data_.vocab.size()},
            {"labels", int64_t(data_.labels.codes.size())},
            {"output", "multilabel"}};
  }
  int64_t steps_per_epoch(int64_t batch_size) const override {
    return std::max<int64_t>(1, int64_t(train_.size()) / std::max<int64_t>(1, batch_size));
  }

  // The curriculum's cap on the words of a training document in epoch e (0: none).
  int64_t train_length(int64_t epoch) const {
    if (curriculum_start_ == 0) return max_length_;
    const double cap =
        double(curriculum_start_) * std::pow(growth_, double(std::min<int64_t>(epoch, 200)));
    const int64_t c = cap > 1e9 ? int64_t(1e9) : int64_t(cap);
    return max_length_ > 0 ? std::min(c, max_length_) : c;
  }

  void train_batch(int64_t step, int64_t batch_size, DType dtype, Batch& batch) override {
    MG_CHECK(batch_size >= 1 && batch_size <= int64_t(train_.size()),
             "codiesp: batch size must be in [1, ", train_.size(), "], got ", batch_size);
    const int64_t per_epoch = steps_per_epoch(batch_size), epoch = step / per_epoch;
    if (epoch != order_epoch_ || order_.size() != train_.size()) {
      order_ = train_;
      shuffle(order_, Rng(seed_ ^ kOrderSalt, uint64_t(epoch)));
      order_epoch_ = epoch;
    }
    const int64_t start = (step % per_epoch) * batch_size;
    codiesp::fill_batch(data_.split("train"), labels(), {order_.data() + start, size_t(batch_size)},
                        train_length(epoch), dtype, batch);
  }
  // The batch_size longest training documents at full length.
  void largest_train_batch(int64_t batch_size, DType dtype, Batch& batch) override {
    std::vector<int64_t> rows = train_;
    const auto& docs = data_.split("train").docs;
    std::stable_sort(rows.begin(), rows.end(), [&](int64_t a, int64_t b) {
      return docs[size_t(a)].ids.size() > docs[size_t(b)].ids.size();
    });
    rows.resize(size_t(std::min<int64_t>(batch_size, int64_t(rows.size()))));
    codiesp::fill_batch(data_.split("train"), labels(), rows, max_length_, dtype, batch);
  }
  int64_t validation_batches(int64_t batch_size) const override {
    return (int64_t(data_.split("dev").docs.size()) + batch_size - 1) / batch_size;
  }
  void validation_batch(int64_t index, int64_t batch_size, DType dtype, Batch& batch) override {
    const std::vector<int64_t>& order = by_length("dev");
    const int64_t start = index * batch_size;
    const int64_t count = std::min<int64_t>(batch_size, int64_t(order.size()) - start);
    MG_CHECK(start >= 0 && count >= 1, "codiesp: validation batch ", index, " out of range");
    codiesp::fill_batch(data_.split("dev"), labels(), {order.data() + start, size_t(count)},
                        max_length_, dtype, batch);
  }

  nlohmann::json evaluate(const Predictor& predict, int64_t batch_size, DType dtype) override {
    nlohmann::json m = report(score(predict, "test", batch_size, dtype), true);
    m["dev"] = report(score(predict, "dev", batch_size, dtype), false);
    m["label_set"] = settings_.at("label_set");
    m["definition"] =
        "test documents (dev under \"dev\"); auc_roc / auc_pr: area under the ROC curve and "
        "average precision, micro over all (document, label) pairs, macro unweighted over labels "
        "with a positive (and, for ROC, a negative) in the split; p_at_k / r_at_k: precision and "
        "recall of each document's k highest-scoring labels, averaged over documents; f1 and "
        "hamming_loss at probability 0.5 (sigmoid of the model's logits); per_label: each test "
        "label's code, training documents (as the label set counted them), test positives, "
        "auc_pr and auc_roc (null where undefined), in label order";
    return m;
  }

  // Every test note's, then every dev note's, logit per label (the splits evaluate() reports).
  std::string scores_csv(const Predictor& predict, int64_t batch_size, DType dtype) override {
    std::vector<LabelScoreSplit> splits;
    for (const char* split : {"test", "dev"}) {
      Scored s = score(predict, split, batch_size, dtype);
      LabelScoreSplit out{.name = split, .codes = data_.labels.codes};
      for (const codiesp::Document& d : corpus_.split(split).docs) out.records.push_back(d.id);
      out.gold = std::move(s.labels);
      out.scores = std::move(s.logits);
      out.first_line.assign(out.records.size(), 0);
      splits.push_back(std::move(out));
    }
    return label_scores_csv(splits);
  }

  std::string format_metrics(const nlohmann::json& m) const override {
    std::ostringstream out;
    char line[200];
    out << "CodiEsp ICD-10 coding, " << m.value("labels", 0) << " labels ("
        << m.value("label_set", std::string()) << ")\n"
        << "  split  AUC-ROC micro/macro  AUC-PR micro/macro    P@8    R@8  F1 micro\n";
    for (const auto& [name, j] : {std::pair{"test", &m}, std::pair{"dev", &m.at("dev")}}) {
      const nlohmann::json* split = j;  // (clang 14 cannot capture a structured binding)
      auto g = [&](const char* k) { return split->value(k, std::nan("")); };
      std::snprintf(line, sizeof line,
                    "  %-5s    %6.4f / %6.4f     %6.4f / %6.4f   %6.4f %6.4f  %6.4f\n", name,
                    g("auc_roc_micro"), g("auc_roc_macro"), g("auc_pr_micro"), g("auc_pr_macro"),
                    g("p_at_8"), g("r_at_8"), g("f1_micro"));
      out << line;
    }
    out << selected_line(m);
    return out.str();
  }

  std::optional<double> selection_score(const Predictor& predict, int64_t batch_size,
                                        DType dtype) override {
    const Scored s = score(predict, "dev", batch_size, dtype);
    return metrics::evaluate_multilabel(s.labels, s.probs, 0.5, {8}).ap_micro;
  }
  std::string selection_metric() const override { return "dev_auc_pr_micro"; }
  // The selection score and dev P@5 (the C-MemNN paper's Fig. 3 plots validation P@5 per epoch),
  // from one pass over dev.
  nlohmann::json epoch_scores(const Predictor& predict, int64_t batch_size, DType dtype) override {
    const Scored s = score(predict, "dev", batch_size, dtype);
    const metrics::MultiLabelReport r = metrics::evaluate_multilabel(s.labels, s.probs, 0.5, {5});
    auto opt = [](const std::optional<double>& v) {
      return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
    };
    return {{selection_metric(), opt(r.ap_micro)}, {"dev_p_at_5", opt(r.at_k[0].precision)}};
  }

  int64_t test_examples() const override { return int64_t(data_.split("test").docs.size()); }
  void test_example(int64_t index, DType dtype, Batch& batch) override {
    MG_CHECK(index >= 0 && index < test_examples(), "codiesp: test document ", index,
             " out of range (", test_examples(), " documents)");
    one(index, "test", dtype, batch);
  }
  // A document by its articleID, from any split.
  void text_example(const std::string& text, DType dtype, Batch& batch) override {
    for (const codiesp::Split& s : corpus_.splits)
      for (size_t i = 0; i < s.docs.size(); ++i)
        if (s.docs[i].id == text) return one(int64_t(i), s.name, dtype, batch);
    fail("codiesp: no document ", quote(text), " (give an articleID, e.g. ",
         corpus_.split("test").docs.front().id, ")");
  }
  Lines describe_example(const Batch& batch, const Tensor& predictions) const override {
    const int64_t L = labels();
    MG_CHECK(batch.size == 1 && predictions.numel() == L, "codiesp: predictions of shape ",
             predictions.shape(), " for a batch of ", batch.size, " and ", L, " labels");
    const auto [split, index] = example_of(batch);
    const codiesp::Document& d = corpus_.split(split).docs[size_t(index)];
    Lines lines;
    lines.emplace_back("document", d.id + " (" + split + ", " + d.path + ")");
    std::string gold;
    for (int64_t l : data_.split(split).docs[size_t(index)].labels)
      gold += (gold.empty() ? "" : "; ") + label_name(l);
    lines.emplace_back("gold labels", gold.empty() ? "(none in the label set)" : gold);
    std::vector<double> s = predictions.to_vector();
    const std::vector<int> top = metrics::top_k(s, 10);
    for (size_t r = 0; r < top.size(); ++r) {
      char p[64];
      std::snprintf(p, sizeof p, "%.4f", 1 / (1 + std::exp(-s[size_t(top[r])])));
      const auto& gold_ids = data_.split(split).docs[size_t(index)].labels;
      const bool hit =
          std::binary_search(gold_ids.begin(), gold_ids.end(), int64_t(top[size_t(r)]));
      lines.emplace_back("predicted " + std::to_string(r + 1),
                         std::string(p) + "  " + label_name(top[r]) + (hit ? "  (gold)" : ""));
    }
    // The labels' positions in the model's outputs, for figures (grnn-fig4 picks their rows).
    std::string gold_index, top_index;
    for (int64_t l : data_.split(split).docs[size_t(index)].labels)
      gold_index += (gold_index.empty() ? "" : " ") + std::to_string(l);
    for (const int l : top) top_index += (top_index.empty() ? "" : " ") + std::to_string(l);
    lines.emplace_back("gold label indices", gold_index);
    lines.emplace_back("predicted label indices", top_index);
    return lines;
  }
  // The words the model read, one per step.
  StepObservations step_observations(const Batch& batch) const override {
    StepObservations out;
    out.step_name = "word";
    const Tensor& tokens = batch.get("tokens");
    const Tensor& mask = batch.get("tokens_mask");
    for (int64_t t = 0; t < tokens.dim(1); ++t)
      if (mask.at(t) != 0) out.steps.push_back({{data_.vocab.word(int64_t(tokens.at(t))), 1.0}});
    return out;
  }

  // The label's code and, when the titles file was read, its short title.
  std::string label_name(int64_t l) const {
    const std::string& code = data_.labels.codes[size_t(l)];
    const auto it = titles_.find(code);
    return it == titles_.end() ? code : code + " " + it->second.short_title;
  }

 private:
  int64_t labels() const { return int64_t(data_.labels.codes.size()); }

  static void shuffle(std::vector<int64_t>& v, Rng rng) {
    for (int64_t k = int64_t(v.size()) - 1; k > 0; --k)
      std::swap(v[size_t(k)], v[size_t(rng.below(uint64_t(k + 1)))]);
  }

  // A split's documents longest first (evaluation batches of similar lengths).
  const std::vector<int64_t>& by_length(const std::string& split) {
    std::vector<int64_t>& order = by_length_[split];
    if (order.empty()) {
      const auto& docs = data_.split(split).docs;
      for (int64_t i = 0; i < int64_t(docs.size()); ++i) order.push_back(i);
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        return docs[size_t(a)].ids.size() > docs[size_t(b)].ids.size();
      });
    }
    return order;
  }

  void one(int64_t index, const std::string& split, DType dtype, Batch& batch) {
    codiesp::fill_batch(data_.split(split), labels(), {&index, 1}, max_length_, dtype, batch);
    Tensor& s = batch.field("split_index", Shape{1}, dtype);
    for (size_t i = 0; i < std::size(codiesp::kSplits); ++i)
      if (split == codiesp::kSplits[i]) s.set(0, double(i));
  }
  std::pair<std::string, int64_t> example_of(const Batch& batch) const {
    MG_CHECK(batch.size == 1, "codiesp: a single document was expected, got a batch of ",
             batch.size);
    const size_t s = batch.has("split_index") ? size_t(batch.get("split_index").at(0)) : 2;
    MG_CHECK(s < std::size(codiesp::kSplits), "codiesp: bad split index in the batch");
    return {codiesp::kSplits[s], int64_t(batch.get("doc_index").at(0))};
  }

  Scored score(const Predictor& predict, const std::string& split, int64_t batch_size,
               DType dtype) {
    const std::vector<int64_t>& order = by_length(split);
    const codiesp::EncodedSplit& docs = data_.split(split);
    const int64_t n = int64_t(order.size()), L = labels();
    Scored s;
    s.labels.assign(size_t(n), std::vector<int>(size_t(L), 0));
    s.probs.assign(size_t(n), std::vector<double>(size_t(L), 0.0));
    s.logits = s.probs;
    Batch batch;
    for (int64_t start = 0; start < n; start += batch_size) {
      const int64_t count = std::min(batch_size, n - start);
      codiesp::fill_batch(docs, L, {order.data() + start, size_t(count)}, max_length_, dtype,
                          batch);
      const Tensor scores = predict(batch);
      MG_CHECK(scores.rank() == 2 && scores.dim(0) == count && scores.dim(1) == L,
               "codiesp: predictions must be logits [", count, ", ", L, "], got ", scores.shape());
      const Tensor& index = batch.get("doc_index");
      for (int64_t b = 0; b < count; ++b) {
        const auto doc = size_t(index.at(b));
        for (int64_t l = 0; l < L; ++l) {
          const double z = scores.at(b * L + l);
          MG_CHECK(std::isfinite(z), "codiesp: the model's score for document ",
                   corpus_.split(split).docs[doc].id, ", label ", data_.labels.codes[size_t(l)],
                   " is not finite (", z, ")");
          s.logits[doc][size_t(l)] = z;
          s.probs[doc][size_t(l)] = 1 / (1 + std::exp(-z));
        }
        for (int64_t l : docs.docs[doc].labels) s.labels[doc][size_t(l)] = 1;
      }
    }
    return s;
  }

  // The split's metrics; with per_label, each label's AUC-PR and AUC-ROC beside its training
  // frequency too (the GRNN paper's Fig. 3 left: tools/figures/grnn_fig3.cpp).
  nlohmann::json report(const Scored& s, bool per_label) const {
    const int64_t L = labels();
    std::vector<int> ks = {5, 8};
    if (L >= 40) ks.push_back(40);
    const metrics::MultiLabelReport r = metrics::evaluate_multilabel(s.labels, s.probs, 0.5, ks);
    auto opt = [](const std::optional<double>& v) {
      return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
    };
    nlohmann::json j = {{"documents", r.samples},
                        {"labels", r.labels},
                        {"auc_roc_micro", opt(r.auc_micro)},
                        {"auc_roc_macro", opt(r.auc_macro)},
                        {"auc_pr_micro", opt(r.ap_micro)},
                        {"auc_pr_macro", opt(r.ap_macro)},
                        {"auc_roc_macro_skipped_labels", r.auc_skipped_labels.size()},
                        {"auc_pr_macro_skipped_labels", r.ap_skipped_labels.size()},
                        {"f1_micro", r.f1_micro},
                        {"f1_macro", r.f1_macro},
                        {"hamming_loss", r.hamming_loss}};
    for (const metrics::AtK& a : r.at_k) {
      j["p_at_" + std::to_string(a.k)] = opt(a.precision);
      j["r_at_" + std::to_string(a.k)] = opt(a.recall);
    }
    if (per_label) {
      nlohmann::json& p = j["per_label"];
      p["code"] = data_.labels.codes;
      p["train_docs"] = data_.labels.train_docs;
      std::vector<int64_t> positives(size_t(L), 0);
      for (const std::vector<int>& doc : s.labels)
        for (int64_t l = 0; l < L; ++l) positives[size_t(l)] += doc[size_t(l)];
      p["positives"] = positives;
      p["auc_pr"] = nlohmann::json::array();
      p["auc_roc"] = nlohmann::json::array();
      for (int64_t l = 0; l < L; ++l) {
        p["auc_pr"].push_back(opt(r.ap_per_label[size_t(l)]));
        p["auc_roc"].push_back(opt(r.auc_per_label[size_t(l)]));
      }
    }
    return j;
  }

  nlohmann::json settings_;
  codiesp::Corpus corpus_;
  codiesp::Encoded data_;
  std::map<std::string, icd::Title> titles_;
  std::string titles_path_;
  int64_t max_length_ = 0, curriculum_start_ = 0;
  double growth_ = 1.35, fraction_ = 1;
  uint64_t seed_ = 1;
  std::vector<int64_t> train_, order_;
  int64_t order_epoch_ = -1;
  std::map<std::string, std::vector<int64_t>> by_length_;
};

const bool kRegistered = [] {
  register_task({.name = "codiesp",
                 .summary =
                     "CodiEsp clinical case reports -> ICD-10-CM codes, multi-label (official "
                     "train / dev / test; label sets top-k, min_docs, extended), read from "
                     "data_dir ({split}/text_files_en, {split}D.tsv)",
                 .create = [](const nlohmann::json& s) { return std::make_unique<CodiespTask>(s); },
                 .default_settings = kDefaults});
  return true;
}();

}  // namespace
}  // namespace memgrad
