// The bAbI loader and the `babi` task (see tasks/babi.hpp and docs/babi.md).
#include "tasks/babi.hpp"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string_view>
#include <utility>

#include "engine/checksums.hpp"
#include "engine/error.hpp"
#include "engine/json_text.hpp"
#include "engine/quote.hpp"
#include "engine/utf8.hpp"
#include "tasks/babi_answers.hpp"
#include "tasks/babi_story.hpp"
#include "tasks/babi_view.hpp"
#include "tasks/metrics.hpp"
#include "tasks/task.hpp"

namespace memgrad::babi {
namespace {

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A positive integer written with digits only; -1 otherwise.
int64_t parse_id(const std::string& s) {
  if (s.empty() || s.size() > 9) return -1;
  int64_t v = 0;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return -1;
    v = v * 10 + (c - '0');
  }
  return v >= 1 ? v : -1;
}

// Lines of bAbI files are under 100 bytes; a longer one than this is not bAbI text (a binary or
// wrong file), and is rejected before it can take memory without bound.
constexpr std::streamsize kMaxLineBytes = 65536;

// Questions of a training file of n questions that train; the rest validate (the official split:
// the first floor(0.9 n) train).
int64_t train_count(int64_t n, double valid_fraction) {
  return int64_t(std::floor((1.0 - valid_fraction) * double(n) + 1e-9));
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t at = s.find(sep, start);
    out.push_back(s.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) break;
    start = at + 1;
  }
  return out;
}

}  // namespace

std::vector<std::string> tokenize(const std::string& text) {
  std::vector<std::string> out;
  std::string word;
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isspace(c) || std::ispunct(c)) {
      if (!word.empty()) out.push_back(std::move(word));
      word.clear();
    } else {
      word.push_back(char(std::tolower(c)));
    }
  }
  if (!word.empty()) out.push_back(std::move(word));
  return out;
}

RawFile read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  MG_CHECK(in.good(), path, ": cannot open (missing or unreadable file)");
  return read_stream(in, path);
}

RawFile read_stream(std::istream& in, const std::string& path) {
  RawFile file;
  file.path = path;
  std::string line;
  std::vector<char> buffer(size_t(kMaxLineBytes) + 1);
  int64_t line_no = 0, prev_id = 0;
  // Per line id of the current story: the statement index, or -1 for a question line.
  std::vector<int64_t> id_kind;
  while (true) {
    // A line of at most kMaxLineBytes bytes (NUL bytes included) without its '\n'.
    in.getline(buffer.data(), std::streamsize(buffer.size()));
    const std::streamsize got = in.gcount();
    if (in.bad() || (got == 0 && in.eof())) break;
    ++line_no;
    MG_CHECK(!in.fail(), path, ":", line_no, ": line longer than ", kMaxLineBytes,
             " bytes (not a bAbI text file?): ", quote({buffer.data(), size_t(got)}));
    line.assign(buffer.data(), size_t(in.eof() ? got : got - 1));  // without the '\n'
    auto bad = [&](const auto&... parts) { fail(path, ":", line_no, ": ", parts...); };
    // A last line without its '\n' is a file cut short: its last word may be half a word.
    if (in.eof())
      bad("the file ends inside this line (no newline after it: truncated?): ", quote(line));
    if (!line.empty() && line.back() == '\r') line.pop_back();
    // NUL, other control characters and non-UTF-8 bytes (Latin-1) would otherwise become tokens.
    if (const size_t at = first_non_text_byte(line); at != std::string::npos)
      bad(describe_non_text_byte(line, at), "; a bAbI file is UTF-8 text: ", quote(line));
    if (trim(line).empty()) continue;

    const size_t space = line.find_first_of(" \t");
    const std::string id_text = line.substr(0, space);
    const int64_t id = parse_id(id_text);
    if (id < 0) bad("bad line id ", quote(id_text), " (a line starts with a positive integer id)");
    if (id == 1) {
      file.stories.emplace_back();
      id_kind.assign(1, -1);  // index 0 unused
    } else if (id != prev_id + 1) {
      if (prev_id == 0) bad("bad line id ", id, ": the first line of a file must have id 1");
      bad("bad line id ", id, " after id ", prev_id, " (ids count up by one; 1 starts a story)");
    }
    prev_id = id;
    auto& story = file.stories.back();
    const std::string rest = space == std::string::npos ? std::string() : line.substr(space + 1);
    const std::vector<std::string> fields = split(rest, '\t');

    if (fields.size() == 1) {  // a statement
      if (rest.find('?') != std::string::npos)
        bad("question without a tab-separated answer (expected 'question?<TAB>answer<TAB>ids')");
      std::vector<std::string> words = tokenize(rest);
      if (words.empty()) bad("empty sentence");
      id_kind.push_back(int64_t(story.size()));
      story.push_back(std::move(words));
      continue;
    }
    // A question line.
    if (fields.size() > 3) bad("more than three tab-separated fields");
    const std::string question = trim(fields[0]);
    RawQuestion q;
    q.words = tokenize(question);
    if (question.find('?') == std::string::npos || q.words.empty())
      bad("answer with no question (the text before the tab must be a question ending in '?')");
    q.answer = lower(trim(fields[1]));
    if (q.answer.empty()) bad("empty answer");
    if (q.answer.find_first_of(" \t") != std::string::npos)
      bad("answer ", quote(q.answer), " is not one token (a list is written 'a,b')");
    if (fields.size() == 3) {
      std::istringstream ids(fields[2]);
      std::string s;
      while (ids >> s) {
        const int64_t fact = parse_id(s);
        if (fact < 0 || fact >= id || id_kind[size_t(fact)] < 0)
          bad("bad supporting fact id ", quote(s),
              " (it must name an earlier statement of the story)");
        q.supporting.push_back(int(id_kind[size_t(fact)]));
      }
    }
    q.story = int64_t(file.stories.size()) - 1;
    q.statements = int64_t(story.size());
    q.line = line_no;
    id_kind.push_back(-1);
    file.questions.push_back(std::move(q));
  }
  MG_CHECK(!in.bad(), path, ": read error");
  return file;
}

namespace {

// The files matching <dir>/qa<task>_*_<split>.txt, the pattern, and the folder's problem (empty
// when the folder exists).
struct Matches {
  std::vector<std::string> found;
  std::string pattern, problem;
};

Matches find_task_files(const std::string& data_dir, const std::string& set, int task,
                        const std::string& split) {
  namespace fs = std::filesystem;
  fs::path root = fs::path(data_dir) / kDataFolder;
  if (!fs::is_directory(root) && fs::is_directory(fs::path(data_dir) / set)) root = data_dir;
  const fs::path dir = root / set;
  const std::string prefix = "qa" + std::to_string(task) + "_", suffix = "_" + split + ".txt";
  Matches m;
  m.pattern = (dir / (prefix + "*" + suffix)).string();
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    m.problem = dir.string() + " is not a directory; --data DIR must hold " + kDataFolder;
    return m;
  }
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > prefix.size() + suffix.size() && name.starts_with(prefix) &&
        name.ends_with(suffix))
      m.found.push_back(entry.path().string());
  }
  return m;
}

}  // namespace

std::string task_file(const std::string& data_dir, const std::string& set, int task,
                      const std::string& split) {
  const Matches m = find_task_files(data_dir, set, task, split);
  MG_CHECK(m.problem.empty(), m.pattern, ": no such file (", m.problem, ")");
  MG_CHECK(!m.found.empty(), m.pattern, ": no such file");
  MG_CHECK(m.found.size() == 1, m.pattern, ": ", m.found.size(), " files match");
  return m.found[0];
}

bool has_task_file(const std::string& data_dir, const std::string& set, int task,
                   const std::string& split) {
  return find_task_files(data_dir, set, task, split).found.size() == 1;
}

std::string data_folder(const std::string& data_dir) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(data_dir).lexically_normal();
  std::error_code ec;
  if (!fs::is_directory(dir / kDataFolder, ec) && dir.filename() == kDataFolder)
    return dir.parent_path().string();
  return dir.string();
}

std::vector<int> parse_task_list(const std::string& spec_in) {
  const std::string spec = lower(trim(spec_in));
  std::vector<int> tasks;
  if (spec == "all") {
    for (int t = 1; t <= kNumTasks; ++t) tasks.push_back(t);
    return tasks;
  }
  auto number = [&](const std::string& s) {
    const int64_t v = parse_id(trim(s));
    MG_CHECK(v >= 1 && v <= kNumTasks, "babi: bad task ", quote(spec_in),
             " (expected 1..20, \"all\", or a list such as \"1,2,4-20\")");
    return int(v);
  };
  for (const std::string& part : split(spec, ',')) {
    const size_t dash = part.find('-');
    if (dash == std::string::npos) {
      tasks.push_back(number(part));
    } else {
      const int a = number(part.substr(0, dash)), b = number(part.substr(dash + 1));
      MG_CHECK(a <= b, "babi: bad task range ", quote(part), " in ", quote(spec_in));
      for (int t = a; t <= b; ++t) tasks.push_back(t);
    }
  }
  std::sort(tasks.begin(), tasks.end());
  tasks.erase(std::unique(tasks.begin(), tasks.end()), tasks.end());
  return tasks;
}

Vocabulary::Vocabulary() { add("<nil>"); }

std::string Vocabulary::answer(int id) const {
  return id >= 0 && id < size() ? word(id) : "class " + std::to_string(id);
}

int Vocabulary::add(const std::string& word) {
  auto [it, inserted] = ids_.emplace(word, int(words_.size()));
  if (inserted) words_.push_back(word);
  return it->second;
}

int Vocabulary::find(const std::string& word) const {
  auto it = ids_.find(word);
  return it == ids_.end() ? -1 : it->second;
}

Data load(const LoadOptions& o) {
  MG_CHECK(!o.tasks.empty(), "babi: no task selected");
  MG_CHECK(o.set == "en" || o.set == "en-10k", "babi: babi_set must be \"en\" or \"en-10k\", got ",
           quote(o.set));
  MG_CHECK(o.memory_size >= 1, "babi: memory_size must be at least 1, got ", o.memory_size);
  MG_CHECK(o.valid_fraction >= 0 && o.valid_fraction < 1,
           "babi: the validation fraction must be in [0, 1)");
  Data d;
  d.data_dir = o.data_dir;
  d.set = o.set;
  d.tasks = o.tasks;
  // Read every file first, so that a missing or unusable one is reported before any work.
  const std::string top = data_folder(o.data_dir);
  // en-10k lacks task 3's training file: that task trains on en's (1k), said in train_sets.
  for (int t : o.tasks)
    if (o.set == "en-10k" && t == kTaskWithout10k && !has_task_file(o.data_dir, o.set, t, "train"))
      d.train_sets[t] = "en";
  auto read = [&](int task, const std::string& split) {
    const auto other = d.train_sets.find(task);
    const std::string& set =
        split == "train" && other != d.train_sets.end() ? other->second : o.set;
    const std::string path = task_file(o.data_dir, set, task, split);
    check_listed_sha256(path, top);
    RawFile f = read_file(path);
    if (f.questions.empty()) {
      size_t statements = 0;
      for (const auto& story : f.stories) statements += story.size();
      if (statements == 0) fail(f.path, ": no questions (the file is empty)");
      fail(f.path, ": no questions (", statements,
           statements == 1 ? " statement in " : " statements in ", f.stories.size(),
           f.stories.size() == 1 ? " story" : " stories",
           ", but no question line '<id> question?<TAB>answer<TAB>ids')");
    }
    if (split == "train") {
      const auto n = int64_t(f.questions.size());
      const int64_t n_train = train_count(n, o.valid_fraction);
      if (n_train < 1) {
        int64_t need = n + 1;  // the fewest questions that leave one to train on
        while (train_count(need, o.valid_fraction) < 1) ++need;
        fail(f.path, ": too few questions to train on: ", n, n == 1 ? " question" : " questions",
             ", split ", n_train, " train / ", n - n_train, " validation (the last ",
             o.valid_fraction * 100, "% of each training file validates); at least ", need,
             " are needed");
      }
    }
    return f;
  };
  std::vector<RawFile> train_files, test_files;
  for (int t : o.tasks) train_files.push_back(read(t, "train"));
  for (int t : o.tasks) test_files.push_back(read(t, "test"));

  auto add_sentence = [&](const std::vector<std::string>& words) {
    for (const std::string& w : words) d.tokens.push_back(d.vocab.add(w));
    d.offsets.push_back(int64_t(d.tokens.size()));
    d.sentence_len = std::max<int>(d.sentence_len, int(words.size()));
    return int64_t(d.offsets.size()) - 2;
  };
  int longest_train_window = 0;
  int64_t stories_before = 0;  // stories of the files encoded so far (Example::story)
  auto encode = [&](const RawFile& f, int task, std::vector<Example>& out) {
    // Vocabulary in line order: the statements before each question, the question, its answer.
    std::vector<int64_t> seen(f.stories.size(), 0);
    auto add_words = [&](const std::vector<std::string>& ws) {
      for (const std::string& w : ws) d.vocab.add(w);
    };
    for (const RawQuestion& q : f.questions) {
      auto& s = seen[size_t(q.story)];
      for (; s < q.statements; ++s) add_words(f.stories[size_t(q.story)][size_t(s)]);
      add_words(q.words);
      d.vocab.add(q.answer);
    }
    // Statements of a story are consecutive in Data::sentences, so a window is a range.
    const auto file = int32_t(d.files.size());
    d.files.push_back(f.path);
    std::vector<int64_t> story_start(f.stories.size());
    for (size_t s = 0; s < f.stories.size(); ++s) {
      story_start[s] = int64_t(d.offsets.size()) - 1;
      for (const auto& words : f.stories[s]) add_sentence(words);
    }
    for (const RawQuestion& q : f.questions) {
      Example e;
      e.task = task;
      e.count = int32_t(std::min<int64_t>(q.statements, o.memory_size));
      e.first = story_start[size_t(q.story)] + q.statements - e.count;
      e.query = add_sentence(q.words);
      e.answer = d.vocab.find(q.answer);
      e.story = stories_before + q.story;
      e.story_first = story_start[size_t(q.story)];
      e.before = int32_t(q.statements);
      e.file = file;
      e.line = int32_t(q.line);
      out.push_back(e);
    }
    stories_before += int64_t(f.stories.size());
  };
  for (size_t i = 0; i < o.tasks.size(); ++i) {
    std::vector<Example> all;
    encode(train_files[i], o.tasks[i], all);
    for (const Example& e : all)
      longest_train_window = std::max<int>(longest_train_window, e.count);
    const int64_t n_train = train_count(int64_t(all.size()), o.valid_fraction);
    d.train.insert(d.train.end(), all.begin(), all.begin() + n_train);
    d.valid.insert(d.valid.end(), all.begin() + n_train, all.end());
  }
  for (size_t i = 0; i < o.tasks.size(); ++i) encode(test_files[i], o.tasks[i], d.test);
  d.sentence_len = std::max(d.sentence_len, 1);
  // The official config.sz = min(50, the longest training story): every question (validation
  // and test ones too) sees at most that many of the last statements before it.
  d.memory_size = std::max(1, std::min(o.memory_size, longest_train_window));
  for (auto* set : {&d.train, &d.valid, &d.test})
    for (Example& e : *set)
      if (e.count > d.memory_size) {
        e.first += e.count - d.memory_size;
        e.count = d.memory_size;
      }
  return d;
}

void check_random_time(double random_time) {
  MG_CHECK(random_time >= 0 && random_time <= kMaxRandomTime,
           "babi: random_time (--random-time) must be in [0, ", kMaxRandomTime, "], got ",
           random_time,
           " (a fraction: random noise adds up to ceil(random_time * n) blank temporal slots "
           "among a story's n memories; 0 = off, official and default 0.1)");
}

void fill_batch(const Data& data, const std::vector<Example>& examples,
                std::span<const int64_t> indices, Rng* noise, double random_time, DType dtype,
                Batch& batch) {
  if (noise) check_random_time(random_time);
  const auto b = int64_t(indices.size());
  MG_CHECK(b >= 1, "babi: empty batch");
  int64_t m = 1;
  for (int64_t i : indices) {
    MG_CHECK(i >= 0 && i < int64_t(examples.size()), "babi: example ", i, " out of range");
    m = std::max<int64_t>(m, examples[size_t(i)].count);
  }
  const int64_t j = data.sentence_len;
  Tensor& story = batch.field("story", Shape{b, m, j}, dtype);
  Tensor& time = batch.field("time", Shape{b, m}, dtype);
  Tensor& mask = batch.field("memory_mask", Shape{b, m}, dtype);
  Tensor& query = batch.field("query", Shape{b, j}, dtype);
  Tensor& answer = batch.field("answer", Shape{b}, dtype);
  // Scratch reused across calls (per thread), with room for the most a story of m statements can
  // need (its positions spread over up to ceil(random_time n) blanks), so that once a batch of the
  // longest stories has been made, none allocates here.
  thread_local std::vector<int64_t> perm, times;
  perm.reserve(size_t(m + int64_t(std::ceil(random_time * double(m)))));
  times.reserve(size_t(m));
  for (int64_t s = 0; s < b; ++s) {
    const Example& e = examples[size_t(indices[size_t(s)])];
    const int64_t n = e.count;
    times.assign(size_t(n), 0);
    if (noise && random_time > 0 && n > 0) {
      const auto max_blank = int64_t(std::ceil(random_time * double(n)));
      const int64_t total = n + int64_t(noise->below(uint64_t(max_blank + 1)));
      perm.resize(size_t(total));
      for (int64_t k = 0; k < total; ++k) perm[size_t(k)] = k + 1;
      for (int64_t k = total - 1; k > 0; --k)
        std::swap(perm[size_t(k)], perm[size_t(noise->below(uint64_t(k + 1)))]);
      for (int64_t k = 0; k < n; ++k)
        times[size_t(k)] = std::min<int64_t>(perm[size_t(k)], data.memory_size);
      std::sort(times.begin(), times.end(), std::greater<>());
    } else {
      for (int64_t k = 0; k < n; ++k) times[size_t(k)] = n - k;
    }
    for (int64_t k = 0; k < n; ++k) {
      const auto words = data.sentence(e.first + k);
      for (size_t w = 0; w < words.size(); ++w) story.set((s * m + k) * j + int64_t(w), words[w]);
      time.set(s * m + k, double(times[size_t(k)]));
      mask.set(s * m + k, 1);
    }
    const auto q = data.sentence(e.query);
    for (size_t w = 0; w < q.size(); ++w) query.set(s * j + int64_t(w), q[w]);
    answer.set(s, e.answer);
  }
  batch.size = b;
}

}  // namespace memgrad::babi

// ------------------------------------------------------------------------------------ the task
namespace memgrad {
namespace {

const nlohmann::json kDefaults = {{"data_dir", "../shared/data/babi"},
                                  {"babi_task", "1"},
                                  {"babi_set", "en"},
                                  {"babi_view", "memory"},
                                  {"select_epoch", "auto"},
                                  {"memory_size", 50},
                                  {"random_time", 0.1},
                                  {"seed", 1},
                                  {"story_tokens", 800}};  // the story view's cap (babi_story.hpp)

// Streams of the task's randomness, disjoint from other users of the run's seed.
constexpr uint64_t kTrainSalt = 0xbab1'0000'7a11'0001ULL;

std::string task_spec(const nlohmann::json& v) {
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  MG_CHECK(v.is_string(),
           "babi: babi_task must be 1..20, \"all\" or a list such as \"1,2,4-20\", got ",
           quote(dump_json(v)));
  return v.get<std::string>();
}

using babi::Split;

class BabiTask : public Task {
 public:
  explicit BabiTask(const nlohmann::json& user)
      : settings_(merge_task_settings("babi", kDefaults, user)) {
    babi::LoadOptions o;
    std::string view, select;
    try {
      o.data_dir = settings_.at("data_dir").get<std::string>();
      o.set = settings_.at("babi_set").get<std::string>();
      o.tasks = babi::parse_task_list(task_spec(settings_.at("babi_task")));
      const nlohmann::json& memory_size = settings_.at("memory_size");
      MG_CHECK(memory_size.is_number_integer() && memory_size.get<int64_t>() >= 1 &&
                   memory_size.get<int64_t>() <= INT_MAX,
               "babi: memory_size must be a whole number in [1, ", INT_MAX, "], got ",
               quote(dump_json(memory_size)));
      o.memory_size = int(memory_size.get<int64_t>());
      random_time_ = settings_.at("random_time").get<double>();
      const nlohmann::json& seed = settings_.at("seed");
      MG_CHECK(seed.is_number_integer() && seed.get<int64_t>() >= 0,
               "babi: seed must be a whole number >= 0, got ", quote(dump_json(seed)));
      seed_ = seed.get<uint64_t>();
      view = settings_.at("babi_view").get<std::string>();
      select = settings_.at("select_epoch").get<std::string>();
    } catch (const nlohmann::json::exception& e) {
      fail("babi: bad setting type (", e.what(), ")");
    }
    MG_CHECK(select == "auto" || select == "valid" || select == "last",
             "babi: select_epoch must be \"auto\", \"valid\" or \"last\", got ", quote(select));
    // auto: the memory views keep the last epoch (the official MemN2N and EntNet recipes); the
    // other views' models select their best epoch on the validation questions.
    select_ = select == "valid" || (select == "auto" && view != "memory" && view != "memory-story");
    babi::check_random_time(random_time_);
    data_ = babi::load(o);
    MG_CHECK(!data_.train.empty(), "babi: no training questions");
    view_ = babi::make_view(view, data_, random_time_);
    for (const auto& [task, set] : data_.train_sets)
      std::cerr << "babi: " << data_.set << " has no training file for task " << task << "; task "
                << task << " trains on the " << set << " file ("
                << babi::task_file(o.data_dir, set, task, "train")
                << "), marked in metrics.json (train_sets)\n";
  }

  std::string name() const override { return "babi"; }
  nlohmann::json config() const override { return settings_; }
  nlohmann::json model_dims() const override { return view_->model_dims(); }
  int64_t steps_per_epoch(int64_t batch_size) const override {
    return std::max<int64_t>(1, view_->questions(Split::train) / std::max<int64_t>(1, batch_size));
  }
  // Sampled with replacement, as the official code does; RN from the same stream. A batch holds
  // the view's samples_per_batch (batch_size questions, or stories of about as many).
  void train_batch(int64_t step, int64_t batch_size, DType dtype, Batch& batch) override {
    Rng rng(seed_ ^ kTrainSalt, uint64_t(step));
    indices_.resize(size_t(view_->samples_per_batch(batch_size)));
    const auto n = uint64_t(view_->samples(Split::train));
    for (auto& i : indices_) i = int64_t(rng.below(n));
    view_->fill(Split::train, indices_, &rng, dtype, batch);
  }
  // The view's largest training samples (sampling with replacement can draw the largest every
  // time).
  void largest_train_batch(int64_t batch_size, DType dtype, Batch& batch) override {
    view_->largest_train_indices(view_->samples_per_batch(batch_size), indices_);
    view_->fill(Split::train, indices_, nullptr, dtype, batch);
  }
  int64_t validation_batches(int64_t batch_size) const override {
    return (view_->samples(Split::valid) + batch_size - 1) / batch_size;
  }
  void validation_batch(int64_t index, int64_t batch_size, DType dtype, Batch& batch) override {
    range(index * batch_size,
          std::min<int64_t>(batch_size, view_->samples(Split::valid) - index * batch_size));
    view_->fill(Split::valid, indices_, nullptr, dtype, batch);
  }

  // Test metrics, and the same errors on the training and validation questions (exact temporal
  // indices, no noise) for model selection: the official code keeps the run with the lowest
  // training error; tools/babi_table.sh --runs K selects on either, never on the test error.
  nlohmann::json evaluate(const Predictor& predict, int64_t batch_size, DType dtype) override {
    babi::TaskCounts counts = score(predict, Split::test, batch_size, dtype);
    const metrics::BabiSummary sum = metrics::summarize_babi(counts);
    nlohmann::json errors = nlohmann::json::object(), questions = nlohmann::json::object();
    nlohmann::json failed = nlohmann::json::array();
    for (const auto& [task, err] : sum.task_error_percent) {
      errors[std::to_string(task)] = err;
      if (err > metrics::kBabiFailPercent) failed.push_back(task);
    }
    for (const auto& [task, c] : counts) questions[std::to_string(task)] = c.total;
    nlohmann::json train_sets = nlohmann::json::object();
    for (const auto& [task, set] : data_.train_sets) train_sets[std::to_string(task)] = set;
    nlohmann::json m = {
        {"task_errors", errors},
        {"per_task_error", errors},
        {"mean_error", sum.mean_error},
        {"failed_tasks", sum.failed_tasks},
        {"failed_task_ids", failed},
        {"test_questions", questions},
        {"babi_set", data_.set},
        {"train_sets", train_sets},
        {"definition",
         "task_errors (= per_task_error): percent of test questions answered wrongly (argmax "
         "over the answer scores), per task; mean_error: unweighted mean over tasks; "
         "failed_tasks: how many tasks have error > 5%, failed_task_ids: which; train_/valid_: "
         "the same on the training and validation questions (for model selection); train_sets: "
         "tasks trained on another set's file than babi_set (en-10k lacks task 3's)"}};
    for (const auto& [prefix, split] :
         {std::pair{"train_", Split::train}, {"valid_", Split::valid}}) {
      if (view_->samples(split) == 0) continue;
      const metrics::BabiSummary s =
          metrics::summarize_babi(score(predict, split, batch_size, dtype));
      nlohmann::json e = nlohmann::json::object();
      for (const auto& [task, err] : s.task_error_percent) e[std::to_string(task)] = err;
      m[std::string(prefix) + "task_errors"] = e;
      m[std::string(prefix) + "mean_error"] = s.mean_error;
    }
    return m;
  }

  // `memgrad eval --scores FILE`: every question's answer, test then validation then training
  // (tasks/babi_answers.hpp).
  std::string scores_csv(const Predictor& predict, int64_t batch_size, DType dtype) override {
    std::vector<babi::SplitAnswers> splits;
    for (const auto& [name, split] :
         {std::pair{"test", Split::test}, {"valid", Split::valid}, {"train", Split::train}}) {
      if (view_->samples(split) == 0) continue;
      babi::SplitAnswers& s = splits.emplace_back(babi::SplitAnswers{name, split, {}});
      score(predict, split, batch_size, dtype, &s.answered);
    }
    return babi::answers_csv(data_, splits);
  }

  // With select_epoch valid (auto for the views other than memory): the validation accuracy,
  // 100 - the mean validation error over tasks (%).
  std::optional<double> selection_score(const Predictor& predict, int64_t batch_size,
                                        DType dtype) override {
    if (!select_ || view_->samples(Split::valid) == 0) return std::nullopt;
    return 100.0 -
           metrics::summarize_babi(score(predict, Split::valid, batch_size, dtype)).mean_error;
  }
  std::string selection_metric() const override { return select_ ? "valid_accuracy" : ""; }

  std::string format_metrics(const nlohmann::json& m) const override {
    std::ostringstream out;
    const nlohmann::json& errors = m.at("task_errors");
    out << "bAbI " << data_.set << " test error (%), " << errors.size()
        << (errors.size() == 1 ? " task" : " tasks") << " (failed: error > 5%)\n";
    out << "  task  error\n";
    char line[96];
    std::map<int, double> by_task;  // numeric order (JSON objects sort keys as text)
    for (const auto& [task, err] : errors.items()) by_task[std::stoi(task)] = err.get<double>();
    const nlohmann::json other = m.value("train_sets", nlohmann::json::object());
    for (const auto& [task, err] : by_task) {
      const std::string key = std::to_string(task);
      const std::string note =
          other.contains(key) ? "  (trained on " + other.at(key).get<std::string>() + ")" : "";
      std::snprintf(line, sizeof line, "  %4d  %5.1f%s%s\n", task, err, err > 5.0 ? "  failed" : "",
                    note.c_str());
      out << line;
    }
    std::snprintf(line, sizeof line, "  mean  %5.1f   failed %d of %zu\n",
                  m.at("mean_error").get<double>(), m.at("failed_tasks").get<int>(), errors.size());
    out << line;
    if (m.contains("train_mean_error") && m.contains("valid_mean_error")) {
      std::snprintf(line, sizeof line, "  training questions %5.1f, validation %5.1f\n",
                    m.at("train_mean_error").get<double>(), m.at("valid_mean_error").get<double>());
      out << line;
    }
    return out.str();
  }

  int64_t test_examples() const override { return view_->samples(Split::test); }
  void test_example(int64_t index, DType dtype, Batch& batch) override {
    MG_CHECK(index >= 0 && index < test_examples(), "babi: test sample ", index, " out of range (",
             test_examples(), " test samples)");
    range(index, 1);
    view_->fill(Split::test, indices_, nullptr, dtype, batch);
  }
  Lines describe_example(const Batch& batch, const Tensor& predictions) const override {
    return view_->describe(batch, predictions);
  }

  const babi::Data& data() const { return data_; }

 private:
  // Answer counts per task of a split's samples (no noise); with `answered`, every question's
  // answer too.
  babi::TaskCounts score(const Predictor& predict, Split split, int64_t batch_size, DType dtype,
                         std::vector<babi::Answered>* answered = nullptr) {
    babi::TaskCounts counts;
    Batch batch;
    const int64_t n = view_->samples(split);
    for (int64_t start = 0; start < n; start += batch_size) {
      range(start, std::min(batch_size, n - start));
      view_->fill(split, indices_, nullptr, dtype, batch);
      view_->score(split, indices_, predict(batch), counts, answered);
    }
    return counts;
  }

  void range(int64_t start, int64_t count) {
    indices_.resize(size_t(std::max<int64_t>(count, 0)));
    for (int64_t i = 0; i < count; ++i) indices_[size_t(i)] = start + i;
  }

  nlohmann::json settings_;
  babi::Data data_;
  std::unique_ptr<babi::View> view_;  // reads data_
  double random_time_ = 0.1;
  uint64_t seed_ = 1;
  bool select_ = false;
  std::vector<int64_t> indices_;
};

const bool kRegistered = [] {
  register_task({.name = "babi",
                 .summary =
                     "bAbI question answering v1.2 (20 tasks, en 1k / en-10k), read from "
                     "data_dir/tasks_1-20_v1-2; views: memory (MemN2N), memory-story (EntNet "
                     "per story), words (sequence models), story (whole stories, the DNC)",
                 .create = [](const nlohmann::json& s) -> std::unique_ptr<Task> {
                   // The story view samples whole stories, not questions: a task of its own
                   // (tasks/babi_story.hpp); the question views are BabiTask's (babi_view.hpp).
                   const nlohmann::json merged = merge_task_settings("babi", kDefaults, s);
                   if (merged.at("babi_view") == "story") return babi::make_story_task(merged);
                   return std::make_unique<BabiTask>(s);
                 },
                 .default_settings = kDefaults});
  return true;
}();

}  // namespace
}  // namespace memgrad
