// tf-idf features of the training notes (see tfidf.hpp).
#include "models/text/tfidf.hpp"

#include <algorithm>

#include "engine/error.hpp"

namespace memgrad::text {

void SparseLines::add_line(std::span<const int32_t> idx, std::span<const double> val) {
  index.insert(index.end(), idx.begin(), idx.end());
  value.insert(value.end(), val.begin(), val.end());
  start.push_back(int64_t(index.size()));
  ++lines;
}

SparseLines SparseLines::transposed() const {
  SparseLines t;
  t.lines = width;
  t.width = lines;
  t.start.assign(size_t(width) + 1, 0);
  for (const int32_t j : index) ++t.start[size_t(j) + 1];
  for (int64_t j = 0; j < width; ++j) t.start[size_t(j) + 1] += t.start[size_t(j)];
  t.index.resize(index.size());
  t.value.resize(value.size());
  std::vector<int64_t> at(t.start.begin(), t.start.end() - 1);
  for (int64_t i = 0; i < lines; ++i)  // rows in order: each column's entries come out sorted
    for (int64_t k = start[size_t(i)]; k < start[size_t(i) + 1]; ++k) {
      const int64_t to = at[size_t(index[size_t(k)])]++;
      t.index[size_t(to)] = int32_t(i);
      t.value[size_t(to)] = value[size_t(k)];
    }
  return t;
}

NoteFields note_fields(const Batch& batch, const std::string& model, int64_t labels) {
  NoteFields f{batch.get("tokens"), batch.get("tokens_mask"), batch.get("labels")};
  MG_CHECK(f.ids.rank() == 2 && f.mask.shape() == f.ids.shape() && f.y.rank() == 2 &&
               f.y.dim(0) == f.ids.dim(0) && f.y.dim(1) == labels,
           model, ": batch fields tokens ", f.ids.shape(), ", tokens_mask ", f.mask.shape(),
           ", labels ", f.y.shape(), " (want [B, T], [B, T], [B, ", labels, "])");
  return f;
}

int32_t word_id(const Tensor& ids, int64_t at, int64_t vocab, const std::string& model, int64_t b,
                int64_t t) {
  const double id = ids.at(at);
  MG_CHECK(id >= 1 && id < double(vocab) && id == double(int64_t(id)), model, ": word id ", id,
           " at row ", b, ", step ", t, " is not in [1, ", vocab, ")");
  return int32_t(id);
}

std::vector<double> TfIdfData::label_column(int64_t label) const {
  std::vector<double> out(static_cast<size_t>(notes));
  for (int64_t i = 0; i < notes; ++i) out[size_t(i)] = y[size_t(i * labels + label)];
  return out;
}

void NoteCollector::add(const Batch& batch, const char* model) {
  const NoteFields f = note_fields(batch, model, labels_);
  const int64_t B = f.ids.dim(0), T = f.ids.dim(1);
  for (int64_t b = 0; b < B; ++b) {
    Note note;
    for (int64_t t = 0; t < T && f.mask.at(b * T + t) != 0; ++t)
      note.ids.push_back(word_id(f.ids, b * T + t, vocab_, model, b, t));
    MG_CHECK(!note.ids.empty(), model, ": row ", b, " of the batch has no words");
    std::sort(note.ids.begin(), note.ids.end());
    for (int64_t l = 0; l < labels_; ++l) note.y.push_back(f.y.at(b * labels_ + l) != 0 ? 1 : 0);
    notes_.push_back(std::move(note));
  }
}

TfIdfData NoteCollector::build(const std::vector<double>* idf) const {
  std::vector<const Note*> order;
  for (const Note& n : notes_) order.push_back(&n);
  std::sort(order.begin(), order.end(), [](const Note* a, const Note* b) { return *a < *b; });
  TfIdfData d;
  d.notes = int64_t(order.size());
  d.labels = labels_;
  std::vector<int64_t> df(size_t(vocab_), 0);
  for (const Note* n : order)
    for (size_t k = 0; k < n->ids.size(); ++k)
      if (k == 0 || n->ids[k] != n->ids[k - 1]) ++df[size_t(n->ids[k])];
  d.idf.resize(size_t(vocab_));
  for (int64_t w = 0; w < vocab_; ++w)
    d.idf[size_t(w)] = std::log((1.0 + double(d.notes)) / (1.0 + double(df[size_t(w)]))) + 1.0;
  if (idf) {
    MG_CHECK(int64_t(idf->size()) == vocab_, "tf-idf: ", idf->size(),
             " idf weights for a vocabulary of ", vocab_);
    d.idf = *idf;
  }
  d.rows.width = vocab_;
  std::vector<int32_t> idx;
  std::vector<double> val;
  for (const Note* n : order) {
    idx.clear();
    val.clear();
    for (size_t k = 0; k < n->ids.size();) {  // runs of one word id (the ids are sorted)
      size_t e = k;
      while (e < n->ids.size() && n->ids[e] == n->ids[k]) ++e;
      idx.push_back(n->ids[k]);
      val.push_back(tf_weight(double(e - k)) * d.idf[size_t(n->ids[k])]);
      k = e;
    }
    double sq = 0;
    for (const double v : val) sq += v * v;
    const double norm = std::sqrt(sq + kRowEps);
    for (double& v : val) v /= norm;
    d.rows.add_line(idx, val);
    for (const char c : n->y) d.y.push_back(double(c));
  }
  d.columns = d.rows.transposed();
  return d;
}

}  // namespace memgrad::text
