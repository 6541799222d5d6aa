// The story view of bAbI: loader, batches and the task (see tasks/babi_story.hpp).
#include "tasks/babi_story.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>
#include <utility>

#include "engine/checksums.hpp"
#include "engine/error.hpp"
#include "engine/json_text.hpp"
#include "engine/quote.hpp"
#include "tasks/metrics.hpp"

namespace memgrad::babi {
namespace {

// Questions of a training file of n that train (the memory view's split: the first floor(0.9 n)).
int64_t train_count(int64_t n, double valid_fraction) {
  return int64_t(std::floor((1.0 - valid_fraction) * double(n) + 1e-9));
}

// A selected file read and checked as babi::load does (checksum, at least one question).
RawFile read_checked(const std::string& path, const std::string& top) {
  check_listed_sha256(path, top);
  RawFile f = read_file(path);
  MG_CHECK(!f.questions.empty(), f.path,
           ": no questions (no question line '<id> question?<TAB>answer<TAB>ids')");
  return f;
}

}  // namespace

std::vector<Story> encode_stories(const RawFile& f, int task, StoryData& d) {
  std::vector<Story> out;
  auto add = [&](int32_t word, int32_t answer) {
    d.words.push_back(word);
    d.answers.push_back(answer);
  };
  // Questions are in file order, so a story's questions are consecutive.
  for (size_t q = 0; q < f.questions.size();) {
    const int64_t s = f.questions[q].story;
    const auto& statements = f.stories[size_t(s)];
    Story story{.task = task, .begin = int64_t(d.words.size())};
    int64_t next = 0;  // statements emitted
    for (; q < f.questions.size() && f.questions[q].story == s; ++q) {
      const RawQuestion& rq = f.questions[q];
      for (; next < rq.statements; ++next)
        for (const std::string& w : statements[size_t(next)]) add(d.vocab.add(w), 0);
      for (const std::string& w : rq.words) add(d.vocab.add(w), 0);
      add(kSlotId, d.vocab.add(rq.answer));
      ++story.questions;
    }
    story.length = int64_t(d.words.size()) - story.begin;
    out.push_back(story);
  }
  return out;
}

StoryData load_stories(const LoadOptions& o) {
  MG_CHECK(!o.tasks.empty(), "babi: no task selected");
  MG_CHECK(o.set == "en" || o.set == "en-10k", "babi: babi_set must be \"en\" or \"en-10k\", got ",
           quote(o.set));
  MG_CHECK(o.valid_fraction >= 0 && o.valid_fraction < 1,
           "babi: the validation fraction must be in [0, 1)");
  StoryData d;
  d.set = o.set;
  d.tasks = o.tasks;
  MG_CHECK(d.vocab.add(kSlotWord) == kSlotId, "babi: the slot word must have id ", kSlotId);
  const std::string top = data_folder(o.data_dir);
  // Every file read before any is encoded, so that a bad one is reported before any work.
  std::vector<RawFile> train_files, test_files;
  for (int t : o.tasks) {
    // en-10k lacks task 3's training file: that task (only) trains on en's, as babi::load does;
    // any other missing file is an error.
    std::string set = o.set;
    if (o.set == "en-10k" && t == kTaskWithout10k &&
        !has_task_file(o.data_dir, o.set, t, "train")) {
      set = "en";
      d.train_from_en.push_back(t);
    }
    train_files.push_back(read_checked(task_file(o.data_dir, set, t, "train"), top));
  }
  for (int t : o.tasks)
    test_files.push_back(read_checked(task_file(o.data_dir, o.set, t, "test"), top));

  for (size_t i = 0; i < o.tasks.size(); ++i) {
    const RawFile& f = train_files[i];
    const auto n = int64_t(f.questions.size());
    const int64_t n_train = train_count(n, o.valid_fraction);
    std::vector<Story> stories = encode_stories(f, o.tasks[i], d);
    int64_t first_question = 0;
    for (const Story& s : stories) {
      (first_question < n_train ? d.train : d.valid).push_back(s);
      first_question += s.questions;
    }
    MG_CHECK(n_train >= 1 && !d.train.empty() && d.train.back().task == o.tasks[i], f.path,
             ": too few questions to train on: ", n, n == 1 ? " question" : " questions",
             " (the last ", o.valid_fraction * 100, "% of each training file validates)");
  }
  for (size_t i = 0; i < o.tasks.size(); ++i) {
    std::vector<Story> stories = encode_stories(test_files[i], o.tasks[i], d);
    d.test.insert(d.test.end(), stories.begin(), stories.end());
  }
  return d;
}

void fill_story_batch(const StoryData& d, const std::vector<Story>& stories,
                      std::span<const int64_t> indices, DType dtype, Batch& batch) {
  const auto b = int64_t(indices.size());
  MG_CHECK(b >= 1, "babi: empty batch");
  int64_t t_max = 1;
  for (int64_t i : indices) {
    MG_CHECK(i >= 0 && i < int64_t(stories.size()), "babi: story ", i, " out of range");
    t_max = std::max(t_max, stories[size_t(i)].length);
  }
  // Every field first: field() may move the others.
  for (const char* name : {"words", "words_mask", "answer_slots", "answers"})
    batch.field(name, Shape{b, t_max}, dtype);
  Tensor& words = batch.field("words", Shape{b, t_max}, dtype);
  Tensor& mask = batch.field("words_mask", Shape{b, t_max}, dtype);
  Tensor& slots = batch.field("answer_slots", Shape{b, t_max}, dtype);
  Tensor& answers = batch.field("answers", Shape{b, t_max}, dtype);
  for (int64_t s = 0; s < b; ++s) {
    const Story& story = stories[size_t(indices[size_t(s)])];
    for (int64_t t = 0; t < story.length; ++t) {
      const int64_t at = s * t_max + t;
      const int32_t answer = d.answers[size_t(story.begin + t)];
      words.set(at, d.words[size_t(story.begin + t)]);
      mask.set(at, 1);
      if (answer != 0) {
        slots.set(at, 1);
        answers.set(at, answer);
      }
    }
  }
  batch.size = b;
}

void plan_batches(const std::vector<Story>& stories, std::span<const int64_t> order,
                  int64_t max_stories, int64_t max_tokens, std::vector<int64_t>& starts) {
  starts.clear();
  int64_t count = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    // Sorted ascending: the new story is the batch's longest.
    const int64_t len = stories[size_t(order[k])].length;
    if (count == 0 || count == max_stories || (count + 1) * len > max_tokens) {
      starts.push_back(int64_t(k));
      count = 0;
    }
    ++count;
  }
  starts.push_back(int64_t(order.size()));
}

}  // namespace memgrad::babi

// ------------------------------------------------------------------------------------ the task
namespace memgrad::babi {
namespace {

// The task's randomness (story order within lengths, batch order per epoch), disjoint from other
// users of the run's seed.
constexpr uint64_t kStorySalt = 0xbab1'0000'5709'0001ULL;

// The fewest stories an evaluation batch may hold (see StoryTask::score).
constexpr int64_t kEvalStories = 32;

// Stories' batches: `order` sorted by length, cut at `starts`.
struct Plan {
  std::vector<int64_t> order, starts;
  int64_t batch_size = -1;  // the batch size the plan was cut for
  int64_t batches() const { return int64_t(starts.size()) - 1; }
};

class StoryTask : public Task {
 public:
  StoryTask(const nlohmann::json& settings, LoadOptions o, uint64_t seed, int64_t story_tokens)
      : settings_(settings), seed_(seed), story_tokens_(story_tokens) {
    data_ = load_stories(o);
  }

  std::string name() const override { return "babi"; }
  nlohmann::json config() const override { return settings_; }
  nlohmann::json model_dims() const override { return {{"vocab_size", data_.vocab.size()}}; }

  int64_t steps_per_epoch(int64_t batch_size) const override {
    // The cut depends only on the sorted lengths, so every epoch has as many batches.
    std::vector<int64_t> order(data_.train.size()), starts;
    for (size_t i = 0; i < order.size(); ++i) order[i] = int64_t(i);
    sort_by_length(data_.train, order, nullptr);
    plan_batches(data_.train, order, batch_size, story_tokens_, starts);
    return int64_t(starts.size()) - 1;
  }

  // Epoch e = step / batches: the stories in length order (random among equal lengths), cut into
  // batches, the batches in a random order; all from Rng(seed, e), a pure function of the step.
  void train_batch(int64_t step, int64_t batch_size, DType dtype, Batch& batch) override {
    if (train_plan_.order.empty() || plan_batch_size_ != batch_size) {
      plan_batch_size_ = batch_size;
      plan_epoch_ = -1;
      train_plan_.order.resize(data_.train.size());
      train_plan_.starts.reserve(data_.train.size() + 1);
      keys_.resize(data_.train.size());
      batch_order_.reserve(data_.train.size());
    }
    const int64_t per_epoch = steps_per_epoch_cached(batch_size);
    const int64_t epoch = step / per_epoch;
    if (epoch != plan_epoch_) {
      Rng rng(seed_ ^ kStorySalt, uint64_t(epoch));
      for (size_t i = 0; i < train_plan_.order.size(); ++i) train_plan_.order[i] = int64_t(i);
      for (auto& k : keys_) k = rng.next_u64();
      sort_by_length(data_.train, train_plan_.order, &keys_);
      plan_batches(data_.train, train_plan_.order, batch_size, story_tokens_, train_plan_.starts);
      batch_order_.resize(size_t(train_plan_.batches()));
      for (size_t i = 0; i < batch_order_.size(); ++i) batch_order_[i] = int64_t(i);
      for (size_t i = batch_order_.size(); i > 1; --i)
        std::swap(batch_order_[i - 1], batch_order_[size_t(rng.below(i))]);
      plan_epoch_ = epoch;
    }
    const int64_t k = batch_order_[size_t(step % per_epoch)];
    const auto first = train_plan_.order.begin() + train_plan_.starts[size_t(k)];
    const auto last = train_plan_.order.begin() + train_plan_.starts[size_t(k) + 1];
    fill_story_batch(data_, data_.train, std::span<const int64_t>(&*first, size_t(last - first)),
                     dtype, batch);
  }

  // As many copies of the longest story as make at least the most padded positions any batch can
  // have (min(batch, ceil(story_tokens / longest)) stories of the longest length).
  void largest_train_batch(int64_t batch_size, DType dtype, Batch& batch) override {
    const auto longest =
        std::max_element(data_.train.begin(), data_.train.end(),
                         [](const Story& a, const Story& b) { return a.length < b.length; });
    const int64_t length = longest->length;
    const int64_t copies =
        std::max<int64_t>(1, std::min(batch_size, (story_tokens_ + length - 1) / length));
    indices_.assign(size_t(copies), int64_t(longest - data_.train.begin()));
    fill_story_batch(data_, data_.train, indices_, dtype, batch);
  }

  int64_t validation_batches(int64_t batch_size) const override {
    return eval_plan(data_.valid, batch_size, valid_plan_).batches();
  }
  void validation_batch(int64_t index, int64_t batch_size, DType dtype, Batch& batch) override {
    const Plan& p = eval_plan(data_.valid, batch_size, valid_plan_);
    fill_story_batch(data_, data_.valid, batch_span(p, index), dtype, batch);
  }

  // Test metrics, and the same errors on the validation stories (for the learning curve and model
  // selection). The training stories are not scored: at 10k that is a whole epoch's forward pass.
  nlohmann::json evaluate(const Predictor& predict, int64_t batch_size, DType dtype) override {
    const std::map<int, metrics::TaskCount> counts =
        score(predict, data_.test, batch_size, dtype, test_plan_);
    const metrics::BabiSummary sum = metrics::summarize_babi(counts);
    nlohmann::json m = summary_json(sum, "");
    m["per_task_error"] = m["task_errors"];
    nlohmann::json failed = nlohmann::json::array(), train_sets = nlohmann::json::object();
    for (const auto& [task, err] : sum.task_error_percent)
      if (err > metrics::kBabiFailPercent) failed.push_back(task);
    m["failed_task_ids"] = failed;
    for (int task : data_.train_from_en) train_sets[std::to_string(task)] = "en";
    m["babi_set"] = data_.set;
    m["babi_view"] = "story";
    m["train_sets"] = train_sets;
    // The same over the tasks trained on babi_set's own files (the 19 complete tasks of en-10k).
    if (!data_.train_from_en.empty()) {
      std::map<int, metrics::TaskCount> complete;
      for (const auto& [task, c] : counts)
        if (std::find(data_.train_from_en.begin(), data_.train_from_en.end(), task) ==
            data_.train_from_en.end())
          complete[task] = c;
      if (!complete.empty()) {
        const metrics::BabiSummary c = metrics::summarize_babi(complete);
        m["mean_error_complete_tasks"] = c.mean_error;
        m["failed_tasks_complete_tasks"] = c.failed_tasks;
      }
    }
    nlohmann::json questions = nlohmann::json::object();
    for (const Story& s : data_.test) {
      const std::string key = std::to_string(s.task);
      questions[key] = questions.value(key, 0) + s.questions;
    }
    m["test_questions"] = questions;
    m["definition"] =
        "task_errors (= per_task_error): percent of test questions answered wrongly (argmax "
        "over the scores at the question's answer slot), per task; mean_error: unweighted mean "
        "over tasks; failed_tasks: how many tasks have error > 5%, failed_task_ids: which; "
        "valid_: the same on the validation stories; train_sets: tasks trained on another "
        "set's file than babi_set (en-10k lacks task 3's); *_complete_tasks: mean and failed "
        "count over the other tasks";
    if (!data_.valid.empty()) {
      const metrics::BabiSummary v =
          metrics::summarize_babi(score(predict, data_.valid, batch_size, dtype, valid_plan_));
      m.update(summary_json(v, "valid_"));
    }
    return m;
  }

  std::string format_metrics(const nlohmann::json& m) const override {
    std::ostringstream out;
    const nlohmann::json& errors = m.at("task_errors");
    out << "bAbI " << data_.set << " (story view) test error (%), " << errors.size()
        << (errors.size() == 1 ? " task" : " tasks") << " (failed: error > 5%)\n";
    out << "  task  error\n";
    char line[96];
    std::map<int, double> by_task;
    for (const auto& [task, err] : errors.items()) by_task[std::stoi(task)] = err.get<double>();
    for (const auto& [task, err] : by_task) {
      const bool en = std::find(data_.train_from_en.begin(), data_.train_from_en.end(), task) !=
                      data_.train_from_en.end();
      std::snprintf(line, sizeof line, "  %4d  %5.1f%s%s\n", task, err, err > 5.0 ? "  failed" : "",
                    en ? "  (trained on the 1k file)" : "");
      out << line;
    }
    std::snprintf(line, sizeof line, "  mean  %5.1f   failed %d of %zu\n",
                  m.at("mean_error").get<double>(), m.at("failed_tasks").get<int>(), errors.size());
    out << line;
    if (m.contains("valid_mean_error")) {
      std::snprintf(line, sizeof line, "  validation %5.1f\n",
                    m.at("valid_mean_error").get<double>());
      out << line;
    }
    return out.str();
  }

  int64_t test_examples() const override { return int64_t(data_.test.size()); }
  void test_example(int64_t index, DType dtype, Batch& batch) override {
    MG_CHECK(index >= 0 && index < test_examples(), "babi: test story ", index, " out of range (",
             test_examples(), " test stories)");
    indices_.assign(1, index);
    fill_story_batch(data_, data_.test, indices_, dtype, batch);
  }
  // The story's words, and at each slot the answer and the model's.
  Lines describe_example(const Batch& batch, const Tensor& predictions) const override {
    const Tensor& words = batch.get("words");
    const int64_t T = words.dim(1);
    MG_CHECK(batch.size == 1 && predictions.rank() == 3 && predictions.dim(1) == T,
             "babi: predictions of shape ", predictions.shape(), " for a story of ", T, " words");
    const int64_t C = predictions.dim(2);
    const std::vector<double> scores = predictions.to_vector();
    Lines lines;
    std::string text;
    int question = 0;
    for (int64_t t = 0; t < T; ++t) {
      const int id = int(words.at(t));
      if (id <= 0) continue;
      if (id != kSlotId) {
        text += (text.empty() ? "" : " ") + data_.vocab.word(id);
        continue;
      }
      const int answer = int(batch.get("answers").at(t));
      const std::vector<double> row(scores.begin() + t * C, scores.begin() + (t + 1) * C);
      const int predicted = metrics::argmax(row);
      lines.emplace_back("text", text);
      text.clear();
      lines.emplace_back("question " + std::to_string(++question),
                         "answer " + data_.vocab.word(answer) + ", predicted " +
                             data_.vocab.answer(predicted) +
                             (predicted == answer ? " (correct)" : " (wrong)"));
    }
    return lines;
  }

 private:
  // Sorts `order` by story length ascending; ties by `keys` (random) when given, else by index.
  static void sort_by_length(const std::vector<Story>& stories, std::vector<int64_t>& order,
                             const std::vector<uint64_t>* keys) {
    std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      const int64_t la = stories[size_t(a)].length, lb = stories[size_t(b)].length;
      if (la != lb) return la < lb;
      if (keys) return (*keys)[size_t(a)] < (*keys)[size_t(b)];
      return a < b;
    });
  }
  int64_t steps_per_epoch_cached(int64_t batch_size) {
    if (per_epoch_batch_size_ != batch_size) {
      per_epoch_ = steps_per_epoch(batch_size);
      per_epoch_batch_size_ = batch_size;
    }
    return per_epoch_;
  }
  // Evaluation batches of `stories` in length order (cached per batch size).
  const Plan& eval_plan(const std::vector<Story>& stories, int64_t batch_size, Plan& plan) const {
    if (plan.batch_size != batch_size) {
      plan.order.resize(stories.size());
      for (size_t i = 0; i < plan.order.size(); ++i) plan.order[i] = int64_t(i);
      sort_by_length(stories, plan.order, nullptr);
      plan_batches(stories, plan.order, batch_size, story_tokens_, plan.starts);
      plan.batch_size = batch_size;
    }
    return plan;
  }
  static std::span<const int64_t> batch_span(const Plan& p, int64_t k) {
    MG_CHECK(k >= 0 && k < p.batches(), "babi: batch ", k, " out of range (", p.batches(), ")");
    const int64_t a = p.starts[size_t(k)], b = p.starts[size_t(k) + 1];
    return {p.order.data() + a, size_t(b - a)};
  }

  // Answer counts per task over the slots of `stories`, in batches of at least kEvalStories
  // stories (under the token cap): a forward pass alone, so a training batch of 1 (the paper's)
  // need not make evaluation a story at a time; the counts do not depend on the batch.
  std::map<int, metrics::TaskCount> score(const Predictor& predict,
                                          const std::vector<Story>& stories, int64_t batch_size,
                                          DType dtype, Plan& plan) {
    std::map<int, metrics::TaskCount> counts;
    Batch batch;
    const Plan& p = eval_plan(stories, std::max(batch_size, kEvalStories), plan);
    for (int64_t k = 0; k < p.batches(); ++k) {
      const std::span<const int64_t> idx = batch_span(p, k);
      fill_story_batch(data_, stories, idx, dtype, batch);
      const Tensor scores = predict(batch);
      const int64_t T = batch.get("words").dim(1);
      MG_CHECK(scores.rank() == 3 && scores.dim(0) == int64_t(idx.size()) && scores.dim(1) == T,
               "babi: predictions must be [", idx.size(), ", ", T, ", classes], got ",
               scores.shape());
      const int64_t C = scores.dim(2);
      const std::vector<double> s = scores.to_vector();
      for (size_t i = 0; i < idx.size(); ++i) {
        const Story& story = stories[size_t(idx[i])];
        metrics::TaskCount& c = counts[story.task];
        for (int64_t t = 0; t < story.length; ++t) {
          const int32_t answer = data_.answers[size_t(story.begin + t)];
          if (answer == 0) continue;
          const auto row = s.begin() + (int64_t(i) * T + t) * C;
          ++c.total;
          if (metrics::argmax(std::vector<double>(row, row + C)) == answer) ++c.correct;
        }
      }
    }
    return counts;
  }

  static nlohmann::json summary_json(const metrics::BabiSummary& s, const std::string& prefix) {
    nlohmann::json e = nlohmann::json::object();
    for (const auto& [task, err] : s.task_error_percent) e[std::to_string(task)] = err;
    return {{prefix + "task_errors", e},
            {prefix + "mean_error", s.mean_error},
            {prefix + "failed_tasks", s.failed_tasks}};
  }

  nlohmann::json settings_;
  StoryData data_;
  uint64_t seed_;
  int64_t story_tokens_;
  Plan train_plan_;
  int64_t plan_batch_size_ = -1, plan_epoch_ = -1;
  int64_t per_epoch_ = 0, per_epoch_batch_size_ = -1;
  std::vector<uint64_t> keys_;
  std::vector<int64_t> batch_order_, indices_;
  mutable Plan test_plan_, valid_plan_;
};

}  // namespace

std::unique_ptr<Task> make_story_task(const nlohmann::json& s) {
  LoadOptions o;
  uint64_t seed = 1;
  int64_t story_tokens = 0;
  try {
    o.data_dir = s.at("data_dir").get<std::string>();
    o.set = s.at("babi_set").get<std::string>();
    const nlohmann::json& task = s.at("babi_task");
    o.tasks = parse_task_list(task.is_number_integer() ? std::to_string(task.get<int64_t>())
                                                       : task.get<std::string>());
    const nlohmann::json& sd = s.at("seed");
    MG_CHECK(sd.is_number_integer() && sd.get<int64_t>() >= 0,
             "babi: seed must be a whole number >= 0, got ", quote(dump_json(sd)));
    seed = sd.get<uint64_t>();
    const nlohmann::json& cap = s.at("story_tokens");
    MG_CHECK(cap.is_number_integer() && cap.get<int64_t>() >= 1 &&
                 cap.get<int64_t>() <= (int64_t(1) << 30),
             "babi: story_tokens must be a whole number in [1, 2^30], got ", quote(dump_json(cap)));
    story_tokens = cap.get<int64_t>();
  } catch (const nlohmann::json::exception& e) {
    fail("babi: bad setting type (", e.what(), ")");
  }
  return std::make_unique<StoryTask>(s, o, seed, story_tokens);
}

}  // namespace memgrad::babi
