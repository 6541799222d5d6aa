// The gradient-check batch of the bAbI question-answering models: a tiny batch with the fields of
// the `babi` task (tasks/babi.hpp) and the config sizes that match it. A model that reads those
// fields registers (as models/qa/memn2n.cpp does)
//     .check_configs = {...each starting from qa::babi_check_dims()...},
//     .check_batch = qa::make_babi_check_batch
// so that every such model is checked on the same corner cases.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>

#include "engine/batch.hpp"
#include "engine/rng.hpp"

namespace memgrad::qa {

// The check batch's sizes: B questions, M memory slots of J words, word ids in [0, V) (0 = nil),
// temporal indices in [0, S] (S = memory_size).
constexpr int64_t kCheckQuestions = 3;   // B
constexpr int64_t kCheckMemories = 4;    // M
constexpr int64_t kCheckWords = 3;       // J (sentence_len)
constexpr int64_t kCheckVocab = 7;       // V (vocab_size, nil included)
constexpr int64_t kCheckMemorySize = 4;  // S (memory_size)

// The config keys the `babi` task sets for every model (its model_dims()), at the check batch's
// sizes: {"vocab_size": 7, "sentence_len": 3, "memory_size": 4}.
nlohmann::json babi_check_dims();

// Fills `batch` with B = 3 questions over M = 4 slots of J = 3 words (fields story [3, 4, 3],
// time [3, 4], memory_mask [3, 4], query [3, 3], answer [3], in `dtype`): the samples have 4, 2
// and 3 memories (empty slots in the last two), sentences of 1..3 words with nil padding, temporal
// indices with a gap (as random noise makes them: sample 3's are 4, 2, 1), a question with a nil
// word (sample 2), and answers in [1, V). The words come from `rng`.
void make_babi_check_batch(Rng& rng, DType dtype, Batch& batch);

// make_babi_check_batch's batch plus the fields of the memory-story view
// (tasks/babi_memory_story.hpp) over the same sentences, for a model that reads either layout (a
// config key chooses): questions [3, 3, 3], question_at [3, 3], answers [3, 3], question_mask
// [3, 3]. The stories' questions (at most Q = 3) sit after sentences {2, 4}, {2} and {1, 3, 3}
// (two questions at one position; stories of 4, 2 and 3 sentences padded to 4, question counts
// 2, 1 and 3 padded to 3; padding questions hold words and answers that must not count).
void make_babi_story_check_batch(Rng& rng, DType dtype, Batch& batch);

}  // namespace memgrad::qa
