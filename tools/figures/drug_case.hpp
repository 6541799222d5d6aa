// One admission of the `mimic-drugs` task as the figures see it: its diagnosis and procedure codes
// with their titles, the true drugs and the model's top drugs, read back from the task's lines
// (tasks/mimic_drugs_task.cpp, describe_example), and the DMNC paper's Table 4 (Le et al. 2018,
// section 4.2, "Case study") drawn from it as HTML for the page of the write-gate figures.
#pragma once
#include <string>
#include <vector>

#include "tools/figures/figure.hpp"

namespace memgrad::cli {

struct CodeLabel {
  std::string code;     // "4019", MIMIC-IV "9:4019", or "<unseen>" (the task lost the code)
  std::string title;    // "Hypertension NOS"; "" when the dictionary has none
  bool unseen = false;  // no training admission has the code (the model reads token 1 for it)
};
constexpr const char* kUnseenSuffix = " [unseen in training]";

struct DrugCase {
  std::vector<CodeLabel> diagnoses, procedures;  // SEQ_NUM order
  std::string diagnoses_note, procedures_note;   // count and where the titles came from
  std::string drugs;                             // the true drugs, named, "; "-separated
  std::string correct;                           // "3 of 5": true drugs among the top |Y|
  struct Top {
    std::string probability, drug;  // "0.913", "Docusate Sodium (DOCU100L)"
    bool true_drug = false;
  };
  std::vector<Top> top;  // the model's highest-scored drugs, best first
};

// The admission of `in` (task mimic-drugs); an Error naming `figure` when a line is missing or
// not in the task's form.
DrugCase read_drug_case(const FigureInput& in, const std::string& figure);

// The paper's Table 4 for this admission and model: diagnoses and procedures with titles, the true
// drugs, the model's top drugs with probabilities (true ones in bold and ticked), as an HTML
// fragment.
std::string drug_case_html(const FigureInput& in, const std::string& figure);

}  // namespace memgrad::cli
