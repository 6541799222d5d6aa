// Disease progression data (see mimic_progression.hpp).
#include "tasks/mimic_progression.hpp"

#include <algorithm>
#include <unordered_map>

#include "engine/error.hpp"
#include "tasks/csv_stream.hpp"
#include "tasks/mimic_drugs.hpp"

namespace memgrad::mimic {
namespace {

// ICD-9 code -> its first ICD-10 target in a GEM table (columns icd_9, icd_10).
std::unordered_map<std::string, std::string> read_gem(const std::string& path) {
  CsvReader csv(path);
  const size_t from = csv.column("icd_9"), to = csv.column("icd_10");
  std::unordered_map<std::string, std::string> map;
  while (csv.next())
    if (!csv.field(from).empty() && !csv.field(to).empty())
      map.emplace(csv.field(from), csv.field(to));  // the first target is kept
  return map;
}

}  // namespace

std::string icd_category(const std::string& token) {
  const size_t colon = token.find(':');
  const size_t start = colon == std::string::npos ? 0 : colon + 1;
  const size_t length =
      start < token.size() && token[start] == 'E' && token.substr(0, start) != "10:"
          ? 4
          : 3;  // ICD-9 E codes: E + three digits
  return token.substr(0, std::min(token.size(), start + length));
}

std::string ProgressionData::label_name(int32_t label) const {
  return dx_units[size_t(label_vocab[size_t(label)])];
}

ProgressionData make_progression_data(const ProgressionOptions& o) {
  MG_CHECK(o.top_dx >= 0, "mimic-progression: top_dx must be 0 (all) or more, got ", o.top_dx);
  ProgressionData d;
  d.options = o;
  d.ehr = load(o.load);
  const Ehr& ehr = d.ehr;
  // Diagnosis units: the codes themselves or their categories.
  std::unordered_map<std::string, std::string> gem;
  if (!o.icd9_to_10.empty()) gem = read_gem(o.icd9_to_10);
  std::unordered_map<std::string, int32_t> unit_id;
  for (std::string code : ehr.dx_codes) {
    if (!gem.empty() && code.rfind("10:", 0) != 0) {  // ICD-9: "9:4019" (MIMIC-IV) or "4019"
      const auto it = gem.find(code.rfind("9:", 0) == 0 ? code.substr(2) : code);
      if (it != gem.end())
        code = std::string("10:").append(it->second), ++d.icd9_mapped;
      else
        ++d.icd9_unmapped;
    }
    const std::string unit = o.categories ? icd_category(code) : code;
    const auto [it, added] = unit_id.emplace(unit, int32_t(d.dx_units.size()));
    if (added) d.dx_units.push_back(unit);
    d.dx_unit_of.push_back(it->second);
  }
  // An admission's diagnoses as distinct units, first occurrence (priority) order.
  auto units = [&](const Admission& x) {
    std::vector<int32_t> u;
    for (int32_t c : x.dx) {
      const int32_t id = d.dx_unit_of[size_t(c)];
      if (std::find(u.begin(), u.end(), id) == u.end()) u.push_back(id);
    }
    return u;
  };
  std::vector<const Patient*> patients;
  for (const Patient& p : ehr.patients) {
    const auto n = std::count_if(p.admissions.begin(), p.admissions.end(),
                                 [&](int32_t a) { return !ehr.admissions[size_t(a)].dx.empty(); });
    if (n >= 2) patients.push_back(&p);
  }
  const int64_t n = int64_t(patients.size());
  d.eligible_patients = n;
  MG_CHECK(n >= 3, "mimic-progression: ", o.load.data_dir, ": ", n,
           " patients have two or more admissions with diagnoses; the three splits need at "
           "least 3");
  shuffle_patients(patients, o.split_seed);
  const int64_t n_train = patient_split_sizes(n)[0];
  auto with_dx = [&](const Patient& p) {
    std::vector<int32_t> a;
    for (int32_t i : p.admissions)
      if (!ehr.admissions[size_t(i)].dx.empty()) a.push_back(i);
    return a;
  };

  // Vocabularies from the training patients: inputs over their input admissions, labels over their
  // target admissions.
  std::vector<int64_t> dx_count(d.dx_units.size()), proc_count(ehr.proc_codes.size()),
      label_count(d.dx_units.size());
  int64_t train_steps = 0;
  for (int64_t r = 0; r < n_train; ++r) {
    const std::vector<int32_t> adm = with_dx(*patients[size_t(r)]);
    for (size_t k = 0; k + 1 < adm.size(); ++k) {
      const Admission& x = ehr.admissions[size_t(adm[k])];
      for (int32_t u : units(x)) ++dx_count[size_t(u)];
      for (int32_t c : x.proc) ++proc_count[size_t(c)];
      for (int32_t u : units(ehr.admissions[size_t(adm[k + 1])])) ++label_count[size_t(u)];
      ++train_steps;
    }
  }
  d.dx_vocab = by_frequency(dx_count, d.dx_units, -1);
  d.proc_vocab = by_frequency(proc_count, ehr.proc_codes, -1);
  d.label_vocab = by_frequency(label_count, d.dx_units, o.top_dx > 0 ? o.top_dx : -1);
  for (int32_t u : d.label_vocab)
    d.label_frequency.push_back(double(label_count[size_t(u)]) / double(train_steps));

  const std::vector<int32_t> dx_token = token_of(d.dx_vocab, d.dx_units.size()),
                             proc_token = token_of(d.proc_vocab, ehr.proc_codes.size());
  std::vector<int32_t> label_of(d.dx_units.size(), -1);
  for (size_t i = 0; i < d.label_vocab.size(); ++i) label_of[size_t(d.label_vocab[i])] = int32_t(i);
  auto as_labels = [&](const std::vector<int32_t>& u) {
    std::vector<int32_t> l;
    for (int32_t id : u)
      if (label_of[size_t(id)] >= 0) l.push_back(label_of[size_t(id)]);
    std::sort(l.begin(), l.end());
    return l;
  };

  std::vector<ProgressionPatient>* splits[3] = {&d.train, &d.valid, &d.test};
  for (int64_t r = 0; r < n; ++r) {
    const int s = patient_split(r, n);
    const std::vector<int32_t> adm = with_dx(*patients[size_t(r)]);
    ProgressionPatient p;
    p.subject = patients[size_t(r)]->subject;
    for (size_t k = 0; k + 1 < adm.size(); ++k) {
      const Admission& x = ehr.admissions[size_t(adm[k])];
      ProgressionStep step;
      step.admission = adm[k];
      if (k > 0)
        step.gap_days =
            double(x.admit_time - ehr.admissions[size_t(adm[k - 1])].admit_time) / 86400.0;
      const std::vector<int32_t> here = units(x);
      for (int32_t u : here) step.dx.push_back(dx_token[size_t(u)]);
      for (int32_t c : x.proc) step.proc.push_back(proc_token[size_t(c)]);
      step.dx_labels = as_labels(here);
      step.labels = as_labels(units(ehr.admissions[size_t(adm[k + 1])]));
      if (step.labels.empty()) ++d.unscored[s];
      d.longest_dx = std::max(d.longest_dx, int64_t(step.dx.size()));
      d.longest_proc = std::max(d.longest_proc, int64_t(step.proc.size()));
      p.steps.push_back(std::move(step));
    }
    splits[s]->push_back(std::move(p));
  }
  return d;
}

namespace {

struct Fields {
  Tensor &x1, &m1, &x2, &m2, &labels, &scored, &start, &gap;
};
Fields make_fields(int64_t b, int64_t l1, int64_t l2, int64_t v, DType dtype, Batch& batch) {
  // Create every field first: a new field may move the others (references into the batch).
  const std::pair<const char*, Shape> shapes[] = {
      {"x1", Shape{b, l1}},        {"x1_mask", Shape{b, l1}}, {"x2", Shape{b, l2}},
      {"x2_mask", Shape{b, l2}},   {"labels", Shape{b, v}},   {"labels_mask", Shape{b}},
      {"patient_start", Shape{b}}, {"gap_days", Shape{b}}};
  for (const auto& [name, shape] : shapes) batch.field(name, shape, dtype);
  auto f = [&](int i) -> Tensor& { return batch.field(shapes[i].first, shapes[i].second, dtype); };
  return {f(0), f(1), f(2), f(3), f(4), f(5), f(6), f(7)};
}

}  // namespace

void fill_step(const ProgressionData& data, const std::vector<ProgressionPatient>& split,
               std::span<const int64_t> rows, int64_t k, int64_t batch, DType dtype, Batch& out) {
  int64_t longest = 0;
  for (int64_t p : rows) longest = std::max(longest, int64_t(split[size_t(p)].steps.size()));
  MG_CHECK(int64_t(rows.size()) <= batch && k >= 0 && k < longest, "mimic-progression: step ", k,
           " of a group of ", rows.size(), " patients and ", longest, " steps in a batch of ",
           batch);
  int64_t l1 = 1, l2 = 1;
  for (int64_t p : rows) {
    const auto& steps = split[size_t(p)].steps;
    if (k >= int64_t(steps.size())) continue;
    l1 = std::max(l1, int64_t(steps[size_t(k)].dx.size()));
    l2 = std::max(l2, int64_t(steps[size_t(k)].proc.size()));
  }
  const int64_t v = data.labels();
  const Fields f = make_fields(batch, l1, l2, v, dtype, out);
  for (int64_t r = 0; r < batch; ++r) {
    if (k == 0) f.start.set(r, 1);
    if (r >= int64_t(rows.size())) continue;
    const auto& steps = split[size_t(rows[size_t(r)])].steps;
    if (k >= int64_t(steps.size())) continue;
    const ProgressionStep& s = steps[size_t(k)];
    put_view(f.x1, f.m1, r, s.dx);
    put_view(f.x2, f.m2, r, s.proc);
    for (int32_t label : s.labels) f.labels.set(r * v + label, 1);
    if (!s.labels.empty()) f.scored.set(r, 1);
    f.gap.set(r, s.gap_days);
  }
  out.size = batch;
}

void largest_step(const ProgressionData& data, int64_t size, DType dtype, Batch& batch) {
  MG_CHECK(size >= 1, "mimic-progression: batch size must be at least 1, got ", size);
  const int64_t l1 = data.longest_dx, l2 = data.longest_proc, v = data.labels();
  const Fields f = make_fields(size, l1, l2, v, dtype, batch);
  // With two rows or more the last is a patient without this step (views masked): a model that
  // packs the stepping rows then packs at every position, the most a step records (dmnc-early's
  // take and put).
  const int64_t full = size >= 2 ? size - 1 : size;
  fill_view_cycling(f.x1, f.m1, full * l1, data.dx_tokens());
  fill_view_cycling(f.x2, f.m2, full * l2, data.proc_tokens());
  for (int64_t i = 0; i < size * v; ++i) f.labels.set(i, 1);
  for (int64_t r = 0; r < size; ++r) f.scored.set(r, r < full ? 1 : 0), f.start.set(r, 1);
  batch.size = size;
}

}  // namespace memgrad::mimic
