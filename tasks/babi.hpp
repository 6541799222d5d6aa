// bAbI question answering (Weston et al. 2015, "Towards AI-Complete Question Answering", v1.2):
// the loader of the text format as distributed and the batches every QA model reads. The `babi`
// Task (tasks/babi.cpp) is built on it; docs/babi.md has the recipe and the deviations.
//
// File format (tasks_1-20_v1-2/{en,en-10k}/qaN_<name>_{train,test}.txt): one line per sentence,
//     <id> <sentence>                                   a statement
//     <id> <question>?<TAB><answer><TAB><ids>           a question, its answer, supporting facts
// ids count up from 1 within a story; id 1 starts a new story. Questions are not statements: they
// never enter the memory (as in the official MemN2N code). An answer is one token even when it is
// a list ("apple,football", task 8) or a direction pair ("n,w", task 19).
//
// Tokens: lower-cased, split on white space, punctuation split off words and dropped ("kitchen."
// -> "kitchen", "Mary?" -> "mary"; '.' and '?' are the only punctuation bAbI has). The official
// code drops the final '.'/'?' the same way.
//
// Vocabulary: one per loaded selection of tasks, over the train and test files of every selected
// task (the official code's choice: per task for single-task runs, over all 20 tasks for joint
// runs). Id 0 is the nil word (padding); words get ids in order of first appearance (the train
// files, tasks in increasing order, then the test files). Answers are words of the same
// vocabulary.
//
// Views (task setting `babi_view`, tasks/babi_view.hpp): how the `babi` task makes batches of the
// loaded questions. "memory" (the default) gives the fields below; "words" (tasks/babi_words.hpp)
// gives one word sequence per question (story prefix, then the question) for sequence models.
//
// Batch fields of the memory view (float dtype of the model, whole numbers; B samples, M = the most
// memories any sample of the batch has, at least 1; J = sentence_len, fixed for the dataset):
//   story        [B, M, J]  word ids of the memories, oldest first, 0 = nil (padding words and
//                           empty memory slots); the last `memory_size` statements before the
//                           question
//   time         [B, M]     temporal index of each memory: 1 = the most recent statement, counting
//                           up towards the oldest; 0 on empty slots. At training time with random
//                           noise (RN) the indices have random gaps (see fill_batch); never above
//                           Data::memory_size.
//   memory_mask  [B, M]     1 on real memories, 0 on empty slots
//   query        [B, J]     word ids of the question, 0 = nil
//   answer       [B]        word id of the answer
#pragma once
#include <cstdint>
#include <istream>
#include <map>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/batch.hpp"
#include "engine/rng.hpp"

namespace memgrad::babi {

constexpr int kNumTasks = 20;
constexpr const char* kDataFolder = "tasks_1-20_v1-2";
// The task whose en-10k training file the distributed copies lack (SOURCE.md): trained on en's.
constexpr int kTaskWithout10k = 3;

// Lower-cases `text`, splits it on white space and splits punctuation off words, dropping it.
std::vector<std::string> tokenize(const std::string& text);

// ---- the text format, as read (strings) -----------------------------------------------------

struct RawQuestion {
  std::vector<std::string> words;  // tokens of the question
  std::string answer;              // lower-cased, one token ("a,b" stays one)
  std::vector<int> supporting;     // supporting facts as indices into the story's statements
  int64_t story = 0;               // index into RawFile::stories
  int64_t statements = 0;          // statements of the story before the question
  int64_t line = 0;                // 1-based line number in the file
};

struct RawFile {
  std::string path;
  std::vector<std::vector<std::vector<std::string>>> stories;  // story -> statement -> tokens
  std::vector<RawQuestion> questions;                          // in file order
};

// Reads one bAbI file. Throws memgrad::Error "path:line: problem" for a line without an id or
// with an id that is not a positive integer or does not follow the previous one (the first line
// must be 1), an empty sentence, a question without a tab-separated answer, an answer with no
// question (a tab on a line whose text is not a question), an empty answer, more than three
// tab-separated fields, a supporting-fact id that does not name an earlier statement of the
// story, a line longer than 64 KiB (bAbI lines are under 100 bytes), a byte that is not text
// (NUL or another control character but tab, or a byte that is not valid UTF-8 such as Latin-1;
// engine/utf8.hpp), and a last line without its newline (a file cut short: its last word could
// be half a word); "path: cannot open" for a missing or unreadable file. Blank lines are skipped,
// and a '\r' before the newline. File text in a message is quote()d (engine/quote.hpp). A file
// with no questions is read without error (load() rejects it).
RawFile read_file(const std::string& path);
// The same for text already open; `path` names it in messages.
RawFile read_stream(std::istream& in, const std::string& path);

// The file of one task: <data_dir>/tasks_1-20_v1-2/<set>/qa<task>_*_<split>.txt (data_dir may
// also be the tasks_1-20_v1-2 folder itself). Throws an Error naming the pattern it looked for.
std::string task_file(const std::string& data_dir, const std::string& set, int task,
                      const std::string& split);
// Whether task_file() would find exactly one file.
bool has_task_file(const std::string& data_dir, const std::string& set, int task,
                   const std::string& split);

// The folder that holds tasks_1-20_v1-2 (and SHA256SUMS.txt): data_dir, or its parent when
// data_dir is the tasks_1-20_v1-2 folder itself.
std::string data_folder(const std::string& data_dir);

// Task numbers from "1".."20", "all", or a list such as "1,2,4-20". Throws an Error otherwise.
std::vector<int> parse_task_list(const std::string& spec);

// ---- encoded data ---------------------------------------------------------------------------

class Vocabulary {
 public:
  Vocabulary();                             // holds the nil word "<nil>" at id 0
  int add(const std::string& word);         // the word's id, added if new
  int find(const std::string& word) const;  // -1 when absent
  const std::string& word(int id) const { return words_[size_t(id)]; }
  // A model's answer (an argmax over its scores) as a word, or "class N" for a score column
  // beyond the vocabulary (a model with more outputs than words).
  std::string answer(int id) const;
  int size() const { return int(words_.size()); }

 private:
  std::vector<std::string> words_;
  std::unordered_map<std::string, int> ids_;
};

// One question: its memories are `count` consecutive statements of Data::sentences starting at
// `first` (the last Data::memory_size statements of its story before it).
struct Example {
  int task = 0;        // 1..20
  int64_t first = 0;   // index of the oldest memory in Data::sentences
  int32_t count = 0;   // number of memories, 0..memory_size
  int64_t query = 0;   // index of the question in Data::sentences
  int32_t answer = 0;  // word id
  // The whole story, for views that read more than the window (one sample per story): its id
  // (unique over the loaded files; the questions of one story share it and are consecutive, though
  // the train/validation split may fall inside a story), the index of its first statement in
  // Data::sentences, and how many of its statements come before the question (the window is the
  // last `count` of them).
  int64_t story = 0;
  int64_t story_first = 0;
  int32_t before = 0;
  // Where the question was read: Data::files[file], 1-based line (memgrad eval --scores).
  int32_t file = 0;
  int32_t line = 0;
};

struct Data {
  std::string data_dir, set;
  std::vector<int> tasks;
  // Tasks whose training file came from another set than `set`, and that set: en-10k has no
  // task 3 training file (../shared/data/babi/SOURCE.md), so task 3 trains on en's (1k). Said in
  // the log and in metrics.json ("train_sets"), never silently.
  std::map<int, std::string> train_sets;
  Vocabulary vocab;
  // Every statement and question of the loaded files as word ids (CSR: sentence i is
  // tokens[offsets[i] .. offsets[i + 1])).
  std::vector<int32_t> tokens;
  std::vector<int64_t> offsets{0};
  std::vector<Example> train, valid, test;  // valid: the last 10% of each training file
  std::vector<std::string> files;           // the files read, as Example::file indexes them
  int sentence_len = 0;  // J: the longest statement or question of the loaded files
  // Memory slots (and temporal indices) a model needs: min(the memory_size setting, the longest
  // story prefix of the training files), as the official config.sz. Every question's window
  // (validation and test too) holds at most this many statements.
  int memory_size = 0;

  std::span<const int32_t> sentence(int64_t i) const {
    return {tokens.data() + offsets[size_t(i)],
            size_t(offsets[size_t(i) + 1] - offsets[size_t(i)])};
  }
};

struct LoadOptions {
  std::string data_dir = "../shared/data/babi";
  std::string set = "en";  // "en" (1k training questions per task) or "en-10k"
  std::vector<int> tasks = {1};
  int memory_size = 50;  // memories per question: the last memory_size statements
  double valid_fraction = 0.1;
};

// Loads the train and test files of the selected tasks. With set "en-10k", a task 3 whose en-10k
// training file is absent (as in our copy) trains on the "en" file instead (Data::train_sets); any
// other missing file is an Error. Each training file's questions are
// split in file order: the first floor(0.9 n) train, the rest validation (as the official
// single-task code does). Throws an Error naming the file for a file (train or test) without
// questions, and for a training file whose split leaves no training question (fewer than 2 at
// valid_fraction 0.1). When the data folder (data_folder) has a SHA256SUMS.txt, as
// ../shared/data/babi does, each file read must match its line there (engine/checksums.hpp); an
// Error names a file that differs or is not listed.
Data load(const LoadOptions& options);

// Fills `batch` with the examples `examples[indices[i]]`. With `noise` (training with random
// noise, RN), the temporal indices of a sample with n memories get random gaps as in the official
// code: draw nblank uniformly from {0, ..., ceil(random_time * n)}, take a random permutation of
// 1..n+nblank, clip its values to memory_size, keep the first n and sort them in descending
// order (oldest memory first). Without noise the indices are exact: n, n-1, ..., 1. With noise,
// random_time must be in [0, kMaxRandomTime] (check_random_time).
void fill_batch(const Data& data, const std::vector<Example>& examples,
                std::span<const int64_t> indices, Rng* noise, double random_time, DType dtype,
                Batch& batch);

// Random noise adds up to ceil(random_time * n) blank slots among n memories: random_time is a
// fraction (official and default 0.1, the paper's "10% empty memories"). Above 1 more than half
// the time slots would be blanks; unbounded, it would make fill_batch's permutation as large as
// the value asks (1e9: gigabytes per sample).
constexpr double kMaxRandomTime = 1.0;

// Throws an Error naming the setting unless 0 <= random_time <= kMaxRandomTime (NaN fails).
void check_random_time(double random_time);

}  // namespace memgrad::babi
