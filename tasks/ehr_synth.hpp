// A synthetic electronic health record at MIMIC-III's scale, written as MIMIC-III CSV tables
// (ADMISSIONS, DIAGNOSES_ICD, PROCEDURES_ICD, PRESCRIPTIONS), so that the loader (mimic_ehr.hpp),
// not a shortcut, is what reads it; `memgrad ehr-gen` (tools/cmd_ehr_gen.cpp) runs it.
// docs/mimic.md has the rules, the sizes and the measured ceiling.
//
// Patients and admissions: `patients` patients, each with 1 + Geometric(extra_admission)
// admissions (mean 1.231 with the default 0.1877: DMNC Table 2's 42,586 admissions of 34,594
// patients), a year-2100..2199 first admission and 30..1000 days between admissions.
// Codes: diagnoses D<rank> (dx_codes of them) and procedures P<rank> (proc_codes) drawn
// Zipf(zipf_exponent) by rank, distinct within an admission, in drawn order as SEQ_NUM;
// 1 + Poisson(dx_mean - 1) diagnoses (at most 39) and 1 + Poisson(proc_mean - 1) procedures
// (at most 40) per admission.
//
// Drugs: `rule_drugs` drugs R<i> whose presence follows a planted rule, and `tail_drugs` rare ones
// T<i> (each in 0.1-0.5 % of admissions, independently: below every rule drug's 1 % floor, so the
// top-300 vocabulary is the rule drugs). Rule drug i has type i % 6:
//   0 dx        fires when a diagnosis of its set S (2 codes among the 400 most frequent) is there;
//   1 proc      a procedure of its set T (2 among the 200 most frequent);
//   2 and       a diagnosis of S (3 among the top 60) AND a procedure of T (2 among the top 30):
//               it needs both views (a bag of both views' codes ranks it: the rule is monotone);
//   3 priority  a diagnosis of S (3 among the top 200) among the admission's first 3 (SEQ_NUM);
//   4 history   a diagnosis of S (3 among the top 200) in an EARLIER admission of the patient
//               (not this one): only a model that remembers the patient's past can learn it;
//   5 base      no inputs: present with a fixed probability in [0.05, 0.6];
//     either    (option either_drugs: replaces base) a diagnosis of S (4 among ranks 4-20) OR a
//               procedure of T (3 among ranks 2-8) but NOT both (a drug replaced by another when
//               both occur). The codes are common, so "both" is about as frequent as "one of
//               them": the rule is not monotone in the codes, and a score adding a weight per
//               code ranks it far below the oracle. The sets, labels and prescription rows come
//               from a generator of their own, so only these drugs' rows differ from the tables
//               without the option.
// A fired rule gives the drug with probability 0.9, an unfired one with 0.01 (noise), so each
// drug's probability given the inputs (the oracle) is exactly 0.9, 0.01 or the base rate.
//
// Diagnoses that follow one two admissions earlier (option follow_pairs = K, default 0: none,
// and the tables are then exactly those without the option): K pairs (A_j, B_j), A_j among the 40
// most frequent diagnoses and B_j among ranks 200-399, all distinct; when admission a-2 of a
// patient has A_j, admission a gets B_j with probability 0.9 (after its drawn diagnoses, if not
// drawn already). The pairs and these draws use a generator of their own, so every other code,
// drug and time is the same as without the option. Only a model that remembers the admission
// before the previous one can predict B_j (mimic-progression with persistent memory); the
// pairs are in rules.json ("follow").
//
// Quirks as MIMIC has them: each drug of an admission is prescribed 1-3 times (rows), 1 % of
// prescription rows have no ROUTE, 0.1 % of admissions have an extra diagnosis row with neither
// SEQ_NUM nor code.
//
// Ceiling: the oracle's own metrics (AUC macro and micro, P@1/2/5) over the admissions of every
// sixth patient (a held-out-sized sample), and per rule type; written to ceiling.json with the
// rules (rules.json).
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace memgrad::ehr_synth {

struct Options {
  int64_t patients = 34594;
  double extra_admission = 0.1877;  // P(one more admission)
  int64_t dx_codes = 6461, proc_codes = 1881;
  int64_t rule_drugs = 300, tail_drugs = 500;
  double zipf_exponent = 1.0;
  double dx_mean = 11.0, proc_mean = 4.0;
  int64_t follow_pairs = 0;   // diagnosis pairs A -> B two admissions later
  bool either_drugs = false;  // the base drugs become "either" drugs (dx XOR proc)
  bool gzip = false;          // write .csv.gz instead of .csv
  uint64_t seed = 1;
};

struct Summary {
  int64_t patients = 0, admissions = 0;
  int64_t dx_rows = 0, proc_rows = 0, drug_rows = 0;
  nlohmann::json ceiling;  // as ceiling.json
  double seconds = 0;
};

// Writes the tables, rules.json and ceiling.json into `dir` (created; written as dir + ".partial"
// and renamed at the end, so a failed run leaves no half-written data set). An Error for bad
// options and for a `dir` that exists (unless overwrite).
Summary generate(const Options& options, const std::string& dir, bool overwrite = false);

// The follow pairs (trigger A, follows B: diagnosis codes as the tables write them, "D24") of the
// data set in `dir`, read from its rules.json; none when the file is absent (real MIMIC data) or
// has no "follow" entry. An Error naming the file when it is there but malformed.
struct FollowPair {
  std::string trigger, follows;
};
std::vector<FollowPair> read_follow_pairs(const std::string& dir);

// Each rule drug's code and rule type ("dx", "proc", "and", "priority", "history", "base",
// "either") of the
// data set in `dir`, from its rules.json ("drugs"); none when the file is absent. An Error naming
// the file when it is there but malformed.
struct DrugRuleType {
  std::string drug, type;
};
std::vector<DrugRuleType> read_drug_rules(const std::string& dir);

}  // namespace memgrad::ehr_synth
