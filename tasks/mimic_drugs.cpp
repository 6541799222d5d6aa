// Drug prescription data (see mimic_drugs.hpp).
#include "tasks/mimic_drugs.hpp"

#include <algorithm>
#include <cmath>

#include "engine/error.hpp"
#include "engine/rng.hpp"

namespace memgrad::mimic {
namespace {

constexpr uint64_t kSplitSalt = 0x3d1c'0000'0000'0019ULL;

std::string name_of(int32_t token, const std::vector<int32_t>& vocab,
                    const std::vector<std::string>& codes) {
  if (token == 0) return "<pad>";
  if (token == 1 || token - 2 >= int32_t(vocab.size())) return "<unseen>";
  return codes[size_t(vocab[size_t(token - 2)])];
}

}  // namespace

std::vector<int32_t> by_frequency(const std::vector<int64_t>& count,
                                  const std::vector<std::string>& names, int64_t limit) {
  std::vector<int32_t> ids;
  for (int32_t i = 0; i < int32_t(count.size()); ++i)
    if (count[size_t(i)] > 0) ids.push_back(i);
  std::sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) {
    return count[size_t(a)] != count[size_t(b)] ? count[size_t(a)] > count[size_t(b)]
                                                : names[size_t(a)] < names[size_t(b)];
  });
  if (limit >= 0 && int64_t(ids.size()) > limit) ids.resize(size_t(limit));
  return ids;
}

std::vector<int32_t> token_of(const std::vector<int32_t>& vocab, size_t codes) {
  std::vector<int32_t> t(codes, 1);
  for (size_t i = 0; i < vocab.size(); ++i) t[size_t(vocab[i])] = int32_t(i + 2);
  return t;
}

void put_view(Tensor& x, Tensor& mask, int64_t row, std::span<const int32_t> tokens) {
  const int64_t l = x.dim(1);
  for (size_t t = 0; t < tokens.size(); ++t) {
    x.set(row * l + int64_t(t), tokens[t]);
    mask.set(row * l + int64_t(t), 1);
  }
}

void fill_view_cycling(Tensor& x, Tensor& mask, int64_t count, int64_t tokens) {
  for (int64_t i = 0; i < count; ++i) x.set(i, 1 + i % (tokens - 1)), mask.set(i, 1);
}

void shuffle_patients(std::vector<const Patient*>& patients, uint64_t split_seed) {
  Rng rng(split_seed ^ kSplitSalt, 0);
  for (int64_t k = int64_t(patients.size()) - 1; k > 0; --k)
    std::swap(patients[size_t(k)], patients[size_t(rng.below(uint64_t(k + 1)))]);
}

std::array<int64_t, 3> patient_split_sizes(int64_t n) {
  const int64_t n_test = std::max<int64_t>(1, int64_t(std::llround(double(n) / 6)));
  return {n - 2 * n_test, n_test, n_test};
}

int patient_split(int64_t rank, int64_t n) {
  const std::array<int64_t, 3> size = patient_split_sizes(n);
  return rank < size[0] ? 0 : rank < size[0] + size[1] ? 1 : 2;
}

std::string DrugData::dx_name(int32_t t) const { return name_of(t, dx_vocab, ehr.dx_codes); }
std::string DrugData::proc_name(int32_t t) const { return name_of(t, proc_vocab, ehr.proc_codes); }

DrugData make_drug_data(const DrugOptions& o) {
  MG_CHECK(o.top_drugs >= 1, "mimic-drugs: top_drugs must be at least 1, got ", o.top_drugs);
  DrugData d;
  d.options = o;
  d.ehr = load(o.load);
  const Ehr& ehr = d.ehr;
  auto full = [&](int32_t a) {
    const Admission& x = ehr.admissions[size_t(a)];
    return !x.dx.empty() && !x.proc.empty() && !x.drugs.empty();
  };
  // Patients with a full admission, in Ehr order (by first admission), then shuffled.
  std::vector<const Patient*> patients;
  for (const Patient& p : ehr.patients) {
    const auto n = std::count_if(p.admissions.begin(), p.admissions.end(), full);
    d.full_admissions += n;
    if (n > 0) patients.push_back(&p);
  }
  const int64_t n = int64_t(patients.size());
  MG_CHECK(n >= 3, "mimic-drugs: ", o.load.data_dir, ": ", n,
           " patients have an admission with diagnoses, procedures and drugs; the three splits "
           "need at least 3");
  shuffle_patients(patients, o.split_seed);
  const int64_t n_train = patient_split_sizes(n)[0];
  auto split_of = [&](int64_t rank) { return patient_split(rank, n); };

  // Vocabularies from the training patients' full admissions.
  std::vector<int64_t> dx_count(ehr.dx_codes.size()), proc_count(ehr.proc_codes.size()),
      drug_count(ehr.drug_codes.size());
  int64_t pairs = 0;
  for (int64_t r = 0; r < n_train; ++r)
    for (int32_t a : patients[size_t(r)]->admissions) {
      if (!full(a)) continue;
      const Admission& x = ehr.admissions[size_t(a)];
      for (int32_t c : x.dx) ++dx_count[size_t(c)];
      for (int32_t c : x.proc) ++proc_count[size_t(c)];
      for (int32_t c : x.drugs) ++drug_count[size_t(c)];
      pairs += int64_t(x.drugs.size());
    }
  d.dx_vocab = by_frequency(dx_count, ehr.dx_codes, -1);
  d.proc_vocab = by_frequency(proc_count, ehr.proc_codes, -1);
  d.drug_vocab = by_frequency(drug_count, ehr.drug_codes, o.top_drugs);
  int64_t covered = 0;
  for (int32_t id : d.drug_vocab) covered += drug_count[size_t(id)];
  d.label_coverage = pairs > 0 ? double(covered) / double(pairs) : 0;

  const std::vector<int32_t> dx_token = token_of(d.dx_vocab, ehr.dx_codes.size()),
                             proc_token = token_of(d.proc_vocab, ehr.proc_codes.size());
  std::vector<int32_t> label_of(ehr.drug_codes.size(), -1);
  for (size_t i = 0; i < d.drug_vocab.size(); ++i) label_of[size_t(d.drug_vocab[i])] = int32_t(i);

  std::vector<DrugSample>* splits[3] = {&d.train, &d.valid, &d.test};
  for (int64_t r = 0; r < n; ++r) {
    const int s = split_of(r);
    ++d.patients[s];
    for (int32_t a : patients[size_t(r)]->admissions) {
      if (!full(a)) continue;
      const Admission& x = ehr.admissions[size_t(a)];
      DrugSample sample;
      sample.admission = a;
      for (int32_t c : x.drugs)
        if (label_of[size_t(c)] >= 0) sample.labels.push_back(label_of[size_t(c)]);
      if (sample.labels.empty()) {
        ++d.dropped_empty[s];
        continue;
      }
      std::sort(sample.labels.begin(), sample.labels.end());
      for (int32_t c : x.dx) sample.dx.push_back(dx_token[size_t(c)]);
      for (int32_t c : x.proc) sample.proc.push_back(proc_token[size_t(c)]);
      d.longest_dx = std::max(d.longest_dx, int64_t(sample.dx.size()));
      d.longest_proc = std::max(d.longest_proc, int64_t(sample.proc.size()));
      splits[s]->push_back(std::move(sample));
    }
  }
  MG_CHECK(!d.train.empty() && !d.valid.empty() && !d.test.empty(),
           "mimic-drugs: ", o.load.data_dir, ": a split has no admission with a label drug (train ",
           d.train.size(), ", valid ", d.valid.size(), ", test ", d.test.size(), ")");
  return d;
}

namespace {

struct Fields {
  Tensor &x1, &m1, &x2, &m2, &labels;
};
Fields make_fields(int64_t b, int64_t l1, int64_t l2, int64_t v, DType dtype, Batch& batch) {
  // Create every field first: a new field may move the others (references into the batch).
  batch.field("x1", Shape{b, l1}, dtype);
  batch.field("x1_mask", Shape{b, l1}, dtype);
  batch.field("x2", Shape{b, l2}, dtype);
  batch.field("x2_mask", Shape{b, l2}, dtype);
  batch.field("labels", Shape{b, v}, dtype);
  return {batch.field("x1", Shape{b, l1}, dtype), batch.field("x1_mask", Shape{b, l1}, dtype),
          batch.field("x2", Shape{b, l2}, dtype), batch.field("x2_mask", Shape{b, l2}, dtype),
          batch.field("labels", Shape{b, v}, dtype)};
}

}  // namespace

void fill_batch(const DrugData& data, const std::vector<DrugSample>& split,
                std::span<const int64_t> which, DType dtype, Batch& batch) {
  const int64_t b = int64_t(which.size());
  MG_CHECK(b >= 1, "mimic-drugs: an empty batch");
  int64_t l1 = 1, l2 = 1;
  for (int64_t i : which) {
    MG_CHECK(i >= 0 && i < int64_t(split.size()), "mimic-drugs: sample ", i, " out of range (",
             split.size(), ")");
    l1 = std::max(l1, int64_t(split[size_t(i)].dx.size()));
    l2 = std::max(l2, int64_t(split[size_t(i)].proc.size()));
  }
  const int64_t v = data.labels();
  const Fields f = make_fields(b, l1, l2, v, dtype, batch);
  for (int64_t r = 0; r < b; ++r) {
    const DrugSample& s = split[size_t(which[size_t(r)])];
    put_view(f.x1, f.m1, r, s.dx);
    put_view(f.x2, f.m2, r, s.proc);
    for (int32_t label : s.labels) f.labels.set(r * v + label, 1);
  }
  batch.size = b;
}

void largest_batch(const DrugData& data, int64_t size, DType dtype, Batch& batch) {
  MG_CHECK(size >= 1, "mimic-drugs: batch size must be at least 1, got ", size);
  const int64_t l1 = data.longest_dx, l2 = data.longest_proc, v = data.labels();
  const Fields f = make_fields(size, l1, l2, v, dtype, batch);
  fill_view_cycling(f.x1, f.m1, size * l1, data.dx_tokens());
  fill_view_cycling(f.x2, f.m2, size * l2, data.proc_tokens());
  for (int64_t i = 0; i < size * v; ++i) f.labels.set(i, 1);
  batch.size = size;
}

std::vector<std::vector<int64_t>> samples_by_patient(const DrugData& data,
                                                     const std::vector<DrugSample>& split) {
  std::vector<std::vector<int64_t>> patients;
  int64_t subject = -1;
  for (size_t i = 0; i < split.size(); ++i) {
    const int64_t s = data.ehr.admissions[size_t(split[i].admission)].subject;
    if (patients.empty() || s != subject) patients.emplace_back();
    patients.back().push_back(int64_t(i));
    subject = s;
  }
  return patients;
}

void fill_patient_step(const DrugData& data, const std::vector<DrugSample>& split,
                       const std::vector<std::vector<int64_t>>& patients,
                       std::span<const int64_t> rows, int64_t k, int64_t batch, DType dtype,
                       Batch& out) {
  MG_CHECK(int64_t(rows.size()) <= batch, "mimic-drugs: ", rows.size(), " patients for ", batch,
           " rows");
  auto item = [&](size_t r) -> const DrugSample* {
    const std::vector<int64_t>& p = patients[size_t(rows[r])];
    return k < int64_t(p.size()) ? &split[size_t(p[size_t(k)])] : nullptr;
  };
  int64_t l1 = 1, l2 = 1;
  for (size_t r = 0; r < rows.size(); ++r)
    if (const DrugSample* s = item(r)) {
      l1 = std::max(l1, int64_t(s->dx.size()));
      l2 = std::max(l2, int64_t(s->proc.size()));
    }
  const int64_t v = data.labels();
  const Fields f = make_fields(batch, l1, l2, v, dtype, out);
  Tensor& scored = out.field("labels_mask", Shape{batch}, dtype);
  Tensor& start = out.field("patient_start", Shape{batch}, dtype);
  for (size_t r = 0; r < rows.size(); ++r) {
    if (k == 0) start.set(int64_t(r), 1);
    const DrugSample* s = item(r);
    if (!s) continue;
    put_view(f.x1, f.m1, int64_t(r), s->dx);
    put_view(f.x2, f.m2, int64_t(r), s->proc);
    for (int32_t label : s->labels) f.labels.set(int64_t(r) * v + label, 1);
    scored.set(int64_t(r), 1);
  }
  out.size = batch;
}

}  // namespace memgrad::mimic
