// Knowledge-base batches (see kb_batch.hpp).
#include "models/text/kb_batch.hpp"

#include "engine/error.hpp"

namespace memgrad::text {

KbBatch read_kb_batch(const Batch& batch, const std::string& model, int64_t vocab, int64_t labels) {
  KbBatch in{&batch.get("note"), &batch.get("kb_keys"), &batch.get("kb_values"),
             &batch.get("labels")};
  auto check = [&](const char* field, const Tensor& t, int64_t rows, int64_t cols) {
    MG_CHECK(t.rank() == 2 && t.dim(0) == rows && t.dim(1) == cols, model, ": batch field '", field,
             "' has shape ", t.shape(), ", want [", rows, ", ", cols, "]");
  };
  MG_CHECK(in.note->rank() == 2, model, ": batch field 'note' has shape ", in.note->shape(),
           ", want [B, ", vocab, "]");
  in.b = in.note->dim(0);
  in.l = labels;
  check("note", *in.note, in.b, vocab);
  check("kb_keys", *in.keys, labels, vocab);
  check("kb_values", *in.values, labels, vocab);
  check("labels", *in.labels, in.b, labels);
  return in;
}

void make_kb_check_batch(Rng& rng, DType dtype, Batch& batch, int64_t B, int64_t L, int64_t V) {
  auto counts = [&](const char* name, int64_t rows) {
    Tensor& t = batch.field(name, Shape{rows, V}, dtype);
    for (int64_t r = 0; r < rows; ++r) {
      t.set(r * V + int64_t(rng.below(uint64_t(V))), 1.0);
      for (int64_t w = 0; w < V; ++w)
        if (rng.uniform() < 0.3) t.set(r * V + w, t.at(r * V + w) + 1.0);
    }
  };
  counts("note", B);
  counts("kb_keys", L);
  counts("kb_values", L);
  Tensor& y = batch.field("labels", Shape{B, L}, dtype);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t l = 0; l < L; ++l) y.set(b * L + l, double((b + l) % 2));
  batch.size = B;
}

}  // namespace memgrad::text
