// The `story` view of bAbI (task setting babi_view = "story"): one sample per story, read as one
// word sequence, as the DNC paper feeds bAbI to its controller (Graves et al. 2016, Methods
// "bAbI"; ../shared/design/reference-notes.md section 1.2). Each question is followed by an
// answer slot, the word '-' (its own vocabulary id, 1), where the model answers; answers are never
// inputs. docs/dnc-babi.md has the recipe and the run.
//
// Sequence of a story, in line order: the words of every statement, and for every question its
// words and then the slot '-'. Statements after a story's last question are dropped (nothing is
// asked about them; bAbI stories end with a question).
//
// Batch fields (float dtype of the model, whole numbers; B stories, T = the longest in the batch):
//   words         [B, T]  word ids, 0 = nil after the story's end
//   words_mask    [B, T]  1 on the story's words (slots included), 0 on padding
//   answer_slots  [B, T]  1 at answer slots, 0 elsewhere
//   answers       [B, T]  the answer's word id at slots, 0 elsewhere
// Predictions are [B, T, C] scores at every position; a question is scored at its slot.
//
// Batching: a batch holds stories of similar length, at most `batch` of them and, when it holds
// more than one, at most `story_tokens` padded positions (B * T): the DNC's link matrix is N x N
// per sample and step, so the work and the tape grow with B * T (P1 section 3.6). A story longer
// than story_tokens forms a batch of its own.
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "engine/batch.hpp"
#include "tasks/babi.hpp"
#include "tasks/task.hpp"

namespace memgrad::babi {

// The answer-slot word and its vocabulary id.
constexpr const char* kSlotWord = "-";
constexpr int kSlotId = 1;

struct Story {
  int task = 0;        // 1..20
  int64_t begin = 0;   // first position in StoryData::words / answers
  int64_t length = 0;  // positions, slots included
  int32_t questions = 0;
};

struct StoryData {
  std::string set;
  std::vector<int> tasks;
  Vocabulary vocab;  // nil (0), the slot '-' (1), then words and answers by first appearance
  // Every story's positions, concatenated: the word id, and the answer id at slots (0 elsewhere).
  std::vector<int32_t> words, answers;
  std::vector<Story> train, valid, test;
  // Tasks of an en-10k selection whose training file is missing in en-10k (qa3 in our copy,
  // see the data's SOURCE.md) and that train on the `en` file (1k) instead.
  std::vector<int> train_from_en;
};

// Appends the stories of one read file (questions become '-' slots, answers are never inputs);
// the words enter `data.vocab` in line order. Returns the stories.
std::vector<Story> encode_stories(const RawFile& file, int task, StoryData& data);

// Loads the train and test files of the selected tasks as stories. A training file's stories are
// split in file order: a story validates when its first question is among the last
// valid_fraction of the file's questions (the memory view's split, at story boundaries).
// options.memory_size is not used. For en-10k, a task without its training file there trains on
// the `en` one (train_from_en). Errors as babi::load: a missing file, a file without questions,
// a checksum that differs, a malformed line (path:line).
StoryData load_stories(const LoadOptions& options);

// Fills `batch` with the stories `stories[indices[i]]` (fields above).
void fill_story_batch(const StoryData& data, const std::vector<Story>& stories,
                      std::span<const int64_t> indices, DType dtype, Batch& batch);

// Splits `order` (indices into stories, sorted by length ascending) into batches of at most
// max_stories stories and, with more than one, at most max_tokens padded positions. Returns the
// start of each batch in `order` and order.size() last (reusing `starts`).
void plan_batches(const std::vector<Story>& stories, std::span<const int64_t> order,
                  int64_t max_stories, int64_t max_tokens, std::vector<int64_t>& starts);

// The `babi` task with babi_view "story" (tasks/babi.cpp dispatches on the setting).
std::unique_ptr<Task> make_story_task(const nlohmann::json& settings);

}  // namespace memgrad::babi
