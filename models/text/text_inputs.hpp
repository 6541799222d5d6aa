// What every text model of the `codiesp` task (tasks/codiesp.hpp) shares: reading a batch's
// tokens, mask and labels with checks, holding the rows longest first (fill_batch makes them so;
// other batches are sorted here and the predictions put back in the batch's order), running a
// recurrent cell packed over each row's own words (layers::RetiringRows: no step computes a
// padding position), the per-word outputs of a reverse GRU aligned with the forward words, and the
// multi-label result (mean binary cross-entropy over the [B, L] logits).
#pragma once
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "engine/batch.hpp"
#include "engine/tape.hpp"
#include "models/layers/rnn_cells.hpp"
#include "models/model.hpp"

namespace memgrad::text {

// Model config keys the codiesp task fills (model_dims).
nlohmann::json task_dims();
// The recurrent models' training recipe (GRNN reference code, util/config.py: Adam 1e-3, batch
// 32, global-norm clip 5) and their task settings: the curriculum on document length of the
// paper's section 4 (50 words, x1.35 per epoch), "for the GRU baselines as well".
nlohmann::json recurrent_train_defaults();
nlohmann::json curriculum_settings();

struct TextInputs {
  Var ids;                           // [B, T] word ids, rows longest first
  Var labels;                        // [B, L] 0/1, same row order
  std::span<const int64_t> lengths;  // words per row (>= 1), non-increasing (tape scratch)
  Var mask;                          // [B, T] prefix masks, same order
  Var unsort;  // data [B]: row b of the batch is sorted row unsort[b]; undefined
               // when the batch was in order already
  int64_t batch = 0, steps = 0;
};

// Reads "tokens", "tokens_mask" and "labels" (tasks/codiesp.hpp); an Error names the model and
// the field for a missing field, a shape that does not match vocab / labels, an id out of range,
// a mask that is not a prefix, or an empty row.
TextInputs read_inputs(Tape& tape, const Batch& batch, const std::string& model, int64_t vocab,
                       int64_t labels);

// The word ids time-major, [T, B] data (row b's word t at [t, b]; padding 0), each row read
// forwards or, with `reversed`, backwards within its own length. Time-major so that a step's rows
// are one contiguous block of the projected inputs (a view: no per-step copy or gradient buffer
// the size of the whole sequence).
Var word_ids(Tape& tape, const TextInputs& in, bool reversed);

// The looked-up embeddings [T, B, E] of word_ids(tape, in, reversed), each element dropped with
// probability `dropout` in training (the "dropout" config key of the text models: what keeps the
// embedding table from memorising the 500 training notes, docs/results/codiesp.md).
Var embed_words(Tape& tape, Var table, const TextInputs& in, bool reversed, double dropout,
                bool training);

// Runs a GRU over xw [T, B, 3H] (its projected inputs, rows as in `in`), stepping only the rows
// still reading. Returns the final state of every row [B, H]; with `outputs`, also each step's
// state of the rows that stepped ([n_t, H], leading rows), in step order.
Var run_gru(Tape& tape, const GruCell& cell, Var xw, const TextInputs& in, int slot,
            std::vector<Var>* outputs = nullptr);

// The per-step outputs of a GRU that read the reversed rows (run_gru on word_ids(.., true)), put
// back in reading order: out[t, b] = the reverse GRU's state after it read words len_b - 1 .. t
// of row b (padding positions hold some output, never read). [T, B, H].
Var align_reversed(Tape& tape, const std::vector<Var>& outputs, const TextInputs& in);

// logits [B, L] in the sorted order -> the result: loss = mean BCE with the labels, predictions
// = the logits in the batch's order.
ForwardResult multilabel_result(const TextInputs& in, Var logits);

// "t<t><suffix>", a trace entry's name (appended piece by piece: g++ 12 warns falsely on
// "t" + std::to_string(t)).
std::string trace_name(int64_t t, const char* suffix);

// A random batch of the task's fields for gradient checks: `rows` documents of 1..max_len words
// from a vocabulary of `vocab`, `labels` labels; rows in random length order (so that the models'
// sorting is checked too).
void make_check_batch(Rng& rng, DType dtype, Batch& batch, int64_t rows, int64_t max_len,
                      int64_t vocab, int64_t labels);

}  // namespace memgrad::text
