// The `codiesp-kb` task: CodiEsp diagnosis coding (task `codiesp`, tasks/codiesp.hpp) with the
// C-MemNN paper's knowledge base of one page per label (tasks/clinical_kb.hpp) in every batch.
//
// It wraps a `codiesp` task built from the same settings (documents, label set, vocabulary,
// batching, metrics, model selection, inspection all its own) and adds the fields of a
// knowledge-base memory network (models/text/kb_batch.hpp) to each batch:
//   note       [B, V]  the note's word counts (its tokens, cut to max_length words, <pad> and
//                      <unk> left out): Φ(x) before the embedding;
//   kb_keys    [L, V]  label l's page, tokenised as the notes and cut to max_length words;
//   kb_values  [L, V]  label l's title.
// The defaults are the paper's: the 50 most common diagnoses, notes and pages cut to 600 words,
// stop-words dropped. metrics.json is codiesp's, with auc_macro / auc_micro (= auc_roc_macro /
// auc_roc_micro, the C-MemNN paper's names) and the knowledge base's coverage report.
#include <iostream>

#include "engine/error.hpp"
#include "tasks/clinical_kb.hpp"
#include "tasks/codiesp.hpp"
#include "tasks/task.hpp"

namespace memgrad {
namespace {

const char* kName = "codiesp-kb";

// The codiesp settings this task passes on (the others keep codiesp's defaults), with the
// paper's values, and the knowledge base's own (kKbKeys).
const nlohmann::json kDefaults = {
    {"data_dir", "../shared/data/codiesp"},
    {"titles", "../shared/data/icd-code-tables/icd10cm-order-Jan-2021.csv.gz"},
    {"language", "en"},
    {"top_k", 50},         // the 50 (or 100) most common diagnoses
    {"min_count", 2},      // vocabulary: training words seen twice ("20K", notes §2.1)
    {"stop_words", true},  // "after removing common stop-words"
    {"fold_numbers", true},
    {"max_length", 600},  // "we truncate both notes and wiki-pages to 600 words"
    {"seed", 1},
    {"kb_dir", "../shared/data/disease-ontology"},
    {"icd_dir", "../shared/data/icd-code-tables"},
    {"kb_variant", "paper"}};
const char* const kKbKeys[] = {"kb_dir", "icd_dir", "kb_variant"};

// Word counts of ids (without <pad> and <unk>), the first max_length ids only (0: all).
void add_counts(const std::vector<int64_t>& ids, int64_t max_length, std::vector<float>& row) {
  const size_t n = max_length > 0 ? std::min(ids.size(), size_t(max_length)) : ids.size();
  for (size_t i = 0; i < n; ++i)
    if (ids[i] > text::Vocabulary::kUnk) row[size_t(ids[i])] += 1;
}

class CodiespKbTask : public Task {
 public:
  explicit CodiespKbTask(const nlohmann::json& user)
      : settings_(merge_task_settings(kName, kDefaults, user)) {
    nlohmann::json inner = settings_;
    for (const char* k : kKbKeys) inner.erase(k);
    inner_ = create_task("codiesp", inner);
    max_length_ = settings_.at("max_length").get<int64_t>();
    const KbVariant variant = parse_kb_variant(settings_.at("kb_variant").get<std::string>());

    // The vocabulary and labels of the inner task: the same pure functions of the same settings.
    codiesp::LoadOptions load;
    load.data_dir = settings_.at("data_dir").get<std::string>();
    load.language = settings_.at("language").get<std::string>();
    codiesp::LabelOptions labels;
    labels.top_k = settings_.at("top_k").get<int64_t>();
    codiesp::EncodeOptions enc;
    enc.min_count = settings_.at("min_count").get<int64_t>();
    enc.tokens.drop_stop_words = settings_.at("stop_words").get<bool>();
    enc.tokens.fold_numbers = settings_.at("fold_numbers").get<bool>();
    const codiesp::Corpus corpus = codiesp::load(load);
    const codiesp::Encoded data =
        codiesp::encode(corpus, codiesp::make_label_set(corpus, labels), enc);
    vocab_ = data.vocab.size();
    labels_ = int64_t(data.labels.codes.size());
    MG_CHECK(labels_ == inner_->model_dims().at("labels").get<int64_t>(), kName,
             ": label sets differ from the codiesp task's");

    const KbSources sources = read_kb_sources(settings_.at("kb_dir").get<std::string>(),
                                              settings_.at("icd_dir").get<std::string>());
    pages_ = build_kb_pages(sources, data.labels.codes, variant);
    coverage_ = kb_coverage(pages_);
    keys_.assign(size_t(labels_ * vocab_), 0.0f);
    values_.assign(size_t(labels_ * vocab_), 0.0f);
    int64_t in_vocab = 0;
    for (int64_t l = 0; l < labels_; ++l) {
      const KbPage& p = pages_[size_t(l)];
      auto key = std::vector<float>(size_t(vocab_)), value = key;
      add_counts(data.vocab.encode(text::tokenize(p.key, enc.tokens)), max_length_, key);
      add_counts(data.vocab.encode(text::tokenize(p.value, enc.tokens)), 0, value);
      std::copy(key.begin(), key.end(), keys_.begin() + l * vocab_);
      std::copy(value.begin(), value.end(), values_.begin() + l * vocab_);
      for (const float c : key) in_vocab += int64_t(c);
    }
    page_words_in_vocab_ = double(in_vocab) / double(std::max<int64_t>(1, labels_));
    std::cerr << format_kb_coverage(coverage_,
                                    std::string(kName) + " (" + kb_variant_name(variant) + ")")
              << "  page words in the notes' vocabulary: " << page_words_in_vocab_
              << " per label\n";
  }

  std::string name() const override { return kName; }
  nlohmann::json config() const override { return settings_; }
  nlohmann::json model_dims() const override {
    return {{"vocab_size", vocab_}, {"labels", labels_}};
  }
  int64_t steps_per_epoch(int64_t batch_size) const override {
    return inner_->steps_per_epoch(batch_size);
  }
  void train_batch(int64_t step, int64_t batch_size, DType dtype, Batch& batch) override {
    inner_->train_batch(step, batch_size, dtype, batch);
    add_kb(dtype, batch);
  }
  void largest_train_batch(int64_t batch_size, DType dtype, Batch& batch) override {
    inner_->largest_train_batch(batch_size, dtype, batch);
    add_kb(dtype, batch);
  }
  int64_t validation_batches(int64_t batch_size) const override {
    return inner_->validation_batches(batch_size);
  }
  void validation_batch(int64_t index, int64_t batch_size, DType dtype, Batch& batch) override {
    inner_->validation_batch(index, batch_size, dtype, batch);
    add_kb(dtype, batch);
  }
  nlohmann::json evaluate(const Predictor& predict, int64_t batch_size, DType dtype) override {
    nlohmann::json m = inner_->evaluate(with_kb(predict, dtype), batch_size, dtype);
    for (nlohmann::json* j : {&m, &m.at("dev")}) {
      (*j)["auc_macro"] = j->at("auc_roc_macro");
      (*j)["auc_micro"] = j->at("auc_roc_micro");
    }
    const KbCoverage& c = coverage_;
    m["kb_coverage"] = {{"variant", settings_.at("kb_variant")},
                        {"labels", c.labels},
                        {"with_title", c.with_title},
                        {"with_ontology_term", c.with_term},
                        {"with_definition", c.with_definition},
                        {"without_entry", c.without_entry},
                        {"by_route", c.by_route},
                        {"page_words_median", c.median_words},
                        {"page_words_mean", c.mean_words},
                        {"page_words_max", c.max_words},
                        {"page_words_in_vocabulary_mean", page_words_in_vocab_},
                        {"mean_words_by_source", c.mean_words_by_source},
                        {"labels_with_source", c.labels_with_source}};
    return m;
  }
  std::string scores_csv(const Predictor& predict, int64_t batch_size, DType dtype) override {
    return inner_->scores_csv(with_kb(predict, dtype), batch_size, dtype);
  }
  std::string format_metrics(const nlohmann::json& m) const override {
    std::string s = inner_->format_metrics(m);
    char line[160];
    std::snprintf(line, sizeof line, "  test AUC macro %.4f, P@5 %.4f, hamming loss %.4f\n",
                  m.value("auc_macro", 0.0), m.value("p_at_5", 0.0), m.value("hamming_loss", 0.0));
    return s + line;
  }
  std::optional<double> selection_score(const Predictor& predict, int64_t batch_size,
                                        DType dtype) override {
    return inner_->selection_score(with_kb(predict, dtype), batch_size, dtype);
  }
  std::string selection_metric() const override { return inner_->selection_metric(); }
  nlohmann::json epoch_scores(const Predictor& predict, int64_t batch_size, DType dtype) override {
    return inner_->epoch_scores(with_kb(predict, dtype), batch_size, dtype);
  }
  int64_t test_examples() const override { return inner_->test_examples(); }
  void test_example(int64_t index, DType dtype, Batch& batch) override {
    inner_->test_example(index, dtype, batch);
    add_kb(dtype, batch);
  }
  void text_example(const std::string& text, DType dtype, Batch& batch) override {
    inner_->text_example(text, dtype, batch);
    add_kb(dtype, batch);
  }
  Lines describe_example(const Batch& batch, const Tensor& predictions) const override {
    Lines lines = inner_->describe_example(batch, predictions);
    for (int64_t l = 0; l < labels_; ++l) {
      const KbPage& p = pages_[size_t(l)];
      std::string names;
      for (const std::string& n : p.term_names) names += (names.empty() ? "" : "; ") + n;
      lines.emplace_back("kb entry " + std::to_string(l),
                         p.code + " " + p.value + (names.empty() ? "" : " [DO: " + names + "]"));
    }
    return lines;
  }

 private:
  // The note's counts from the batch's tokens, and the pages.
  void add_kb(DType dtype, Batch& batch) const {
    const Tensor& tokens = batch.get("tokens");
    const Tensor& mask = batch.get("tokens_mask");
    const int64_t b = tokens.dim(0), t = tokens.dim(1);
    Tensor& note = batch.field("note", Shape{b, vocab_}, dtype);
    for (int64_t r = 0; r < b; ++r)
      for (int64_t j = 0; j < t; ++j) {
        const int64_t id = int64_t(tokens.at(r * t + j));
        if (mask.at(r * t + j) != 0 && id > text::Vocabulary::kUnk)
          note.set(r * vocab_ + id, note.at(r * vocab_ + id) + 1.0);
      }
    Tensor& keys = batch.field("kb_keys", Shape{labels_, vocab_}, dtype);
    Tensor& values = batch.field("kb_values", Shape{labels_, vocab_}, dtype);
    for (int64_t i = 0; i < labels_ * vocab_; ++i) {
      if (keys_[size_t(i)] != 0) keys.set(i, keys_[size_t(i)]);
      if (values_[size_t(i)] != 0) values.set(i, values_[size_t(i)]);
    }
  }
  Predictor with_kb(const Predictor& predict, DType dtype) const {
    return [this, &predict, dtype](const Batch& in) {
      Batch batch;
      for (const auto& [name, t] : in.fields()) {
        Tensor& f = batch.field(name, t.shape(), t.dtype());
        f.copy_from(t);
      }
      batch.size = in.size;
      add_kb(dtype, batch);
      return predict(batch);
    };
  }

  nlohmann::json settings_;
  std::unique_ptr<Task> inner_;
  int64_t max_length_ = 0, vocab_ = 0, labels_ = 0;
  std::vector<KbPage> pages_;
  KbCoverage coverage_;
  std::vector<float> keys_, values_;  // [L, V] counts
  double page_words_in_vocab_ = 0;
};

const bool kRegistered = [] {
  register_task(
      {.name = kName,
       .summary = "CodiEsp diagnosis coding with a knowledge base of one Disease "
                  "Ontology / ICD-10 page per label (C-MemNN paper's memory; kb_dir, "
                  "icd_dir, kb_variant paper|k1|k2|k3)",
       .create = [](const nlohmann::json& s) { return std::make_unique<CodiespKbTask>(s); },
       .default_settings = kDefaults});
  return true;
}();

}  // namespace
}  // namespace memgrad
