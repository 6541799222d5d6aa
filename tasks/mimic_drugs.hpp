// Drug prescription from an admission's diagnoses and procedures (DMNC paper, section 4.2): the
// data as the models see it. Built on mimic_ehr.hpp; the `mimic-drugs` Task is
// mimic_drugs_task.cpp; docs/mimic.md has the choices and the counts.
//
// Samples: the admissions that have diagnoses, procedures and drugs (the paper's admissions with
// all three views). Split by PATIENT (a patient's admissions all in one split), 2/3 : 1/6 : 1/6 of
// the patients who have such an admission, in a permutation drawn from split_seed. Vocabularies
// from the training admissions only: diagnosis and procedure tokens are the codes seen in
// training (token 0 = padding, 1 = a code never seen in training, 2.. = codes by training
// frequency, ties by code); labels are the `top_drugs` drugs prescribed in most training
// admissions (ties by code). An admission none of whose drugs is a label is dropped (its label set
// is empty: the paper drops label sets below the frequency cut), counted per split.
//
// Batch fields (model dtype, whole numbers; B admissions, L1/L2 the batch's longest views):
//   x1, x1_mask  [B, L1]  diagnosis tokens in SEQ_NUM order; mask 1 on real positions
//   x2, x2_mask  [B, L2]  procedure tokens in SEQ_NUM order
//   labels       [B, V]   multi-hot drug set over the V labels
#pragma once
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/batch.hpp"
#include "tasks/mimic_ehr.hpp"

namespace memgrad::mimic {

struct DrugOptions {
  LoadOptions load;
  int64_t top_drugs = 300;
  uint64_t split_seed = 1;
};

struct DrugSample {
  int32_t admission = 0;          // index into Ehr::admissions
  std::vector<int32_t> dx, proc;  // tokens (0 pad, 1 unseen, 2..)
  std::vector<int32_t> labels;    // label indices, ascending
};

struct DrugData {
  DrugOptions options;
  Ehr ehr;
  std::vector<int32_t> dx_vocab, proc_vocab;  // token t >= 2 -> code id at t - 2
  std::vector<int32_t> drug_vocab;            // label -> drug id
  std::vector<DrugSample> train, valid, test;
  int64_t patients[3] = {0, 0, 0};       // per split (train, valid, test)
  int64_t dropped_empty[3] = {0, 0, 0};  // admissions without a label drug, per split
  int64_t full_admissions = 0;           // with all three views
  double label_coverage = 0;  // share of training (admission, drug) pairs that are labels
  int64_t longest_dx = 1, longest_proc = 1;  // over every split

  int64_t dx_tokens() const { return 2 + int64_t(dx_vocab.size()); }
  int64_t proc_tokens() const { return 2 + int64_t(proc_vocab.size()); }
  int64_t labels() const { return int64_t(drug_vocab.size()); }
  // The code a token stands for ("<pad>", "<unseen>" for 0 and 1).
  std::string dx_name(int32_t token) const;
  std::string proc_name(int32_t token) const;
};

// Ids of `count` (frequency per id) with count > 0, most frequent first, ties by name; at most
// `limit` of them (all with limit < 0). Shared with mimic_progression.
std::vector<int32_t> by_frequency(const std::vector<int64_t>& count,
                                  const std::vector<std::string>& names, int64_t limit);
// code id -> token (1 = unseen) from a vocabulary (token t >= 2 is vocab[t - 2]).
std::vector<int32_t> token_of(const std::vector<int32_t>& vocab, size_t codes);

// Row `row` of a view's fields x, mask [B, L]: `tokens` at positions 0.., mask 1 there.
void put_view(Tensor& x, Tensor& mask, int64_t row, std::span<const int32_t> tokens);
// The first `count` positions of x, mask: real tokens cycling through 1 .. tokens - 1 (any real
// token costs a model the same), mask 1 (a largest batch).
void fill_view_cycling(Tensor& x, Tensor& mask, int64_t count, int64_t tokens);

// The paper's random patient split (2/3 : 1/6 : 1/6, "randomly divide the dataset"): `patients`
// shuffled by split_seed; of n, the sizes of train, valid, test; the split (0, 1, 2) of rank r.
void shuffle_patients(std::vector<const Patient*>& patients, uint64_t split_seed);
std::array<int64_t, 3> patient_split_sizes(int64_t n);
int patient_split(int64_t rank, int64_t n);

// Reads the tables and builds the splits and vocabularies. An Error for bad data (mimic::load),
// for top_drugs < 1, and when a split would be empty (fewer than 3 patients with full admissions).
DrugData make_drug_data(const DrugOptions& options);

// The samples `which` of `split` as a batch (every field zero-filled first, so padding is 0).
void fill_batch(const DrugData& data, const std::vector<DrugSample>& split,
                std::span<const int64_t> which, DType dtype, Batch& batch);
// `size` rows each as long as the longest admission of any split in both views, all labels
// on: no batch is larger in any field or in the work a model does on it.
void largest_batch(const DrugData& data, int64_t size, DType dtype, Batch& batch);

// Patient rows (the task's setting patient_rows, for a model that carries memory across a
// patient's admissions): the samples of `split` per patient, in time order (make_drug_data keeps
// a patient's samples together, oldest first), and how many each has.
std::vector<std::vector<int64_t>> samples_by_patient(const DrugData& data,
                                                     const std::vector<DrugSample>& split);
// Item k of the patients `rows` (indices into `patients`) as a batch of `batch` rows, row r
// patient rows[r]: fill_batch's fields plus labels_mask [B] (1 where the row has an item k) and
// patient_start [B] (1 on k = 0); rows without an item k (a shorter patient, or past the group)
// have empty views and labels_mask 0. Every field zero-filled first.
void fill_patient_step(const DrugData& data, const std::vector<DrugSample>& split,
                       const std::vector<std::vector<int64_t>>& patients,
                       std::span<const int64_t> rows, int64_t k, int64_t batch, DType dtype,
                       Batch& out);

}  // namespace memgrad::mimic
