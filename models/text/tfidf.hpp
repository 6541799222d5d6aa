// tf-idf features of notes for the linear baselines of task codiesp (l1-logreg, linear-svm): the
// training notes, gathered from the task's batches, as sparse rows and columns for the solvers.
//     tf(w, d) = 1 + log count(w, d)           (sublinear term frequency; padding never counts)
//     idf(w)   = log((1 + n) / (1 + df(w))) + 1 (df: training notes holding w; n: training notes)
//     x_d      = (tf(., d) idf) / sqrt(|tf(., d) idf|^2 + eps)   (unit rows; eps = kRowEps)
// The vocabulary is the task's (training notes only); idf is counted on the training notes only.
// The same row formula runs on the tape in the models' forward (tfidf_linear.cpp), in the float
// type of the run; here it is in double for the solvers.
#pragma once
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/batch.hpp"

namespace memgrad::text {

inline constexpr double kRowEps = 1e-12;  // inside the row norm's square root (as ops::normalize)

// Compressed sparse rows (or columns: the transpose's rows): entries start[i] .. start[i+1] - 1
// of line i, with their column (row) indices in increasing order.
struct SparseLines {
  int64_t lines = 0, width = 0;
  std::vector<int64_t> start{0};
  std::vector<int32_t> index;
  std::vector<double> value;
  void add_line(std::span<const int32_t> idx, std::span<const double> val);
  SparseLines transposed() const;
};

// A batch's fields tokens, tokens_mask and labels, checked: an Error names the model and the
// shapes when they do not fit [B, T], [B, T], [B, labels].
struct NoteFields {
  const Tensor &ids, &mask, &y;
};
NoteFields note_fields(const Batch& batch, const std::string& model, int64_t labels);
// The word id at ids[at] (row b, step t of a masked position): an Error unless in [1, vocab).
int32_t word_id(const Tensor& ids, int64_t at, int64_t vocab, const std::string& model, int64_t b,
                int64_t t);

// The training notes as the solvers see them: x (rows: notes, unit tf-idf rows), its columns,
// and the labels y[d * L + l] in {0, 1}.
struct TfIdfData {
  int64_t notes = 0, labels = 0;
  SparseLines rows, columns;
  std::vector<double> y;
  std::vector<double> idf;                                // [V]
  std::vector<double> label_column(int64_t label) const;  // y of one label, [notes]
};

// Gathers notes from batches of the task (fields tokens, tokens_mask, labels) and builds the
// features. The notes are put in a canonical order (by word ids, then labels) first, so that the
// features do not depend on the batches' order: a resumed run solves the same problems.
class NoteCollector {
 public:
  NoteCollector(int64_t vocab, int64_t labels) : vocab_(vocab), labels_(labels) {}
  void add(const Batch& batch, const char* model);  // an Error names the model and the field
  int64_t size() const { return int64_t(notes_.size()); }
  // With `idf`, the features use it (the dev notes take the training notes' idf); without, the
  // idf is counted on these notes.
  TfIdfData build(const std::vector<double>* idf = nullptr) const;
  void clear() { notes_.clear(); }

 private:
  struct Note {
    std::vector<int32_t> ids;
    std::vector<char> y;
    bool operator<(const Note& o) const { return ids != o.ids ? ids < o.ids : y < o.y; }
  };
  int64_t vocab_, labels_;
  std::vector<Note> notes_;
};

// The term weight of a word seen `count` (>= 1) times in a note.
inline double tf_weight(double count) { return 1.0 + std::log(count); }

}  // namespace memgrad::text
