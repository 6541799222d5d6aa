// Disease progression from a patient's admissions in time order (DMNC paper, section 4.3, Table 5):
// the data as the models see it. Built on mimic_ehr.hpp; the `mimic-progression` Task is
// mimic_progression_task.cpp; docs/mimic.md has the choices and the counts.
//
// Patients: those with at least two admissions that have diagnoses (the paper removes patients
// with fewer than 2 admissions), their admissions with diagnoses in time order. Each admission a
// but the last is one step: its two views in (diagnoses and procedures, each in SEQ_NUM order; the
// procedures may be empty), the diagnoses of admission a+1 out as a set. Split by PATIENT,
// 2/3 : 1/6 : 1/6, in a permutation drawn from split_seed. Vocabularies from the training patients
// only: input tokens as mimic-drugs (0 padding, 1 unseen, 2.. by training frequency); labels are
// the `top_dx` diagnoses (0 = all) most frequent among the training steps' targets. A step whose
// next admission has no label diagnosis is still an input (the patient's history) but not scored.
//
// Diagnoses are full codes or, with `categories`, ICD categories: the first three characters
// (ICD-9 E codes four: E849); MIMIC-IV keeps the version ("9:401", "10:I10"), so ICD-9 and
// ICD-10 categories of the demo's mixed admissions stay two vocabularies, unless `icd9_to_10`
// maps ICD-9 codes to ICD-10 first (tokens "10:<code>"; an ICD-9 code the table lacks is kept).
//
// Batches ("steps" layout): row r of a batch is one patient; a group of B patients is stepped
// admission by admission in lock-step, so batch k of a group holds each row's step k. Fields
// (model dtype; L1/L2 the batch's longest views, V labels):
//   x1, x1_mask [B, L1], x2, x2_mask [B, L2]  the views of each row's admission k
//   labels [B, V]        multi-hot diagnoses of admission k+1
//   labels_mask [B]      1 when the row's step is scored (a patient with no step k: 0, all views
//                        masked, so a persistent memory keeps the row's content)
//   patient_start [B]    1 on a group's first step: a persistent memory starts the row afresh
//   gap_days [B]         days since the patient's previous admission (0 on the first; DeepCare's
//                        time decay)
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/batch.hpp"
#include "tasks/mimic_ehr.hpp"

namespace memgrad::mimic {

struct ProgressionOptions {
  LoadOptions load;
  bool categories = true;  // diagnoses as ICD categories (inputs and labels)
  // A CMS General Equivalence Mapping table (CSV with columns icd_9, icd_10, undotted codes, e.g.
  // ../shared/data/icd-code-tables/icd_cm_9_to_10_mapping.csv.gz): when set, every ICD-9
  // diagnosis is replaced by its first ICD-10 target before categories are taken, so that
  // MIMIC-IV's mixed admissions speak one version (the planning notes' choice). "" = off.
  std::string icd9_to_10;
  int64_t top_dx = 0;  // label vocabulary size, 0 = every training target diagnosis
  uint64_t split_seed = 1;
};

struct ProgressionStep {
  int32_t admission = 0;           // index into Ehr::admissions (admission a)
  std::vector<int32_t> dx, proc;   // input tokens (0 pad, 1 unseen, 2..)
  std::vector<int32_t> dx_labels;  // admission a's own diagnoses as label indices (history)
  std::vector<int32_t> labels;     // admission a+1's diagnoses as label indices, ascending
  double gap_days = 0;             // days from admission a-1 to a (0 for the first)
};

struct ProgressionPatient {
  int64_t subject = 0;
  std::vector<ProgressionStep> steps;  // admissions 1 .. n-1
};

struct ProgressionData {
  ProgressionOptions options;
  Ehr ehr;
  std::vector<std::string> dx_units;          // diagnosis unit id -> name (code or category)
  std::vector<int32_t> dx_unit_of;            // Ehr dx code id -> unit id
  std::vector<int32_t> dx_vocab, proc_vocab;  // token t >= 2 -> unit / code id at t - 2
  std::vector<int32_t> label_vocab;           // label -> unit id
  std::vector<double> label_frequency;        // share of training steps whose target has it
  std::vector<ProgressionPatient> train, valid, test;
  int64_t eligible_patients = 0;               // with >= 2 admissions with diagnoses
  int64_t icd9_mapped = 0, icd9_unmapped = 0;  // distinct ICD-9 codes (icd9_to_10 only)
  int64_t unscored[3] = {0, 0, 0};             // steps without a label diagnosis, per split
  int64_t longest_dx = 1, longest_proc = 1;    // over every split

  int64_t dx_tokens() const { return 2 + int64_t(dx_vocab.size()); }
  int64_t proc_tokens() const { return 2 + int64_t(proc_vocab.size()); }
  int64_t labels() const { return int64_t(label_vocab.size()); }
  std::string label_name(int32_t label) const;
};

// The ICD category of a diagnosis token as load() writes it ("4019" -> "401", "E8490" -> "E849",
// "9:4019" -> "9:401", "10:I110" -> "10:I11").
std::string icd_category(const std::string& token);

// Reads the tables and builds the splits and vocabularies. An Error for bad data (mimic::load),
// top_dx < 0, and when a split would be empty (fewer than 3 eligible patients).
ProgressionData make_progression_data(const ProgressionOptions& options);

// Step `k` of the group of patients `rows` (indices into `split`) as a batch of `batch` rows
// (rows past the group's patients, and patients with fewer steps, masked). Every field zero-filled
// first; no allocation once the batch has its fields.
void fill_step(const ProgressionData& data, const std::vector<ProgressionPatient>& split,
               std::span<const int64_t> rows, int64_t k, int64_t batch, DType dtype,
               Batch& batch_out);
// `size` rows, all but the last (a patient without this step, masked) as long as the longest
// admission of any split in both views, scored with every label on: no batch is larger in any
// field or in the work a model records for it.
void largest_step(const ProgressionData& data, int64_t size, DType dtype, Batch& batch);

}  // namespace memgrad::mimic
