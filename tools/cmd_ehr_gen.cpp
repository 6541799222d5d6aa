// memgrad ehr-gen: writes the synthetic MIMIC-format EHR (tasks/ehr_synth.hpp) into a folder that
// `memgrad train --task mimic-drugs --data DIR` reads as it reads MIMIC-III.
#include <cstdio>

#include "engine/json_text.hpp"
#include "engine/quote.hpp"
#include "tasks/ehr_synth.hpp"
#include "tools/args.hpp"
#include "tools/commands.hpp"

namespace memgrad::cli {

namespace {

constexpr const char* kHelp =
    R"(usage: memgrad ehr-gen --out DIR [--patients 34594] [--seed 1] [--gzip] [--overwrite]
                      [--dx-codes 6461] [--proc-codes 1881] [--rule-drugs 300] [--tail-drugs 500]
                      [--extra-admission 0.1877] [--dx-mean 11] [--proc-mean 4] [--zipf 1.0]
                      [--follow-pairs 0] [--either-drugs]

A synthetic electronic health record at MIMIC-III's scale (DMNC paper Table 2: 34,594 patients,
about 42,600 admissions, 6,461 diagnosis and 1,881 procedure codes, top 300 drugs) written as the
MIMIC-III tables ADMISSIONS, DIAGNOSES_ICD, PROCEDURES_ICD and PRESCRIPTIONS (.csv, or .csv.gz
with --gzip), with planted rules tying drugs to diagnoses, procedures, both (cross-view), the
first three diagnoses, and the patient's earlier admissions; rules.json lists them and
ceiling.json holds the oracle's metrics (the best any model can score). --follow-pairs K plants
K diagnosis pairs A -> B: B follows A two admissions later (for mimic-progression with persistent
memory). --either-drugs turns the 50 base-rate drugs into "either" drugs: given for a diagnosis of
their set or a procedure of their set but not both, a cross-view rule that no bag-of-codes score
adding a weight per code can rank (only their rows differ). docs/mimic.md has the rules. The folder is written as DIR.partial and renamed when complete.
)";

}  // namespace

int cmd_ehr_gen(const Words& words) {
  const Args args(words, {"help", "gzip", "overwrite", "either-drugs"},
                  {"out", "patients", "seed", "dx-codes", "proc-codes", "rule-drugs", "tail-drugs",
                   "extra-admission", "dx-mean", "proc-mean", "zipf", "follow-pairs", "threads"});
  if (args.has("help")) {
    std::fputs(kHelp, stdout);
    return 0;
  }
  if (!args.positional().empty())
    throw UsageError("unexpected argument " + quote(args.positional()[0]) + " (see --help)");
  const auto out = args.get("out");
  if (!out) throw UsageError("ehr-gen: --out DIR is required (see --help)");
  threads_option(args);
  ehr_synth::Options o;
  o.patients = args.get_int("patients", long(o.patients));
  o.seed = uint64_t(args.get_int("seed", long(o.seed)));
  o.dx_codes = args.get_int("dx-codes", long(o.dx_codes));
  o.proc_codes = args.get_int("proc-codes", long(o.proc_codes));
  o.rule_drugs = args.get_int("rule-drugs", long(o.rule_drugs));
  o.tail_drugs = args.get_int("tail-drugs", long(o.tail_drugs));
  o.extra_admission = args.get_double("extra-admission", o.extra_admission);
  o.dx_mean = args.get_double("dx-mean", o.dx_mean);
  o.proc_mean = args.get_double("proc-mean", o.proc_mean);
  o.zipf_exponent = args.get_double("zipf", o.zipf_exponent);
  o.follow_pairs = args.get_int("follow-pairs", long(o.follow_pairs));
  o.gzip = args.has("gzip");
  o.either_drugs = args.has("either-drugs");
  const ehr_synth::Summary s = ehr_synth::generate(o, *out, args.has("overwrite"));
  std::printf(
      "ehr-gen: %s: %lld patients, %lld admissions, %lld diagnosis rows, %lld procedure "
      "rows, %lld prescription rows in %.1f s\n",
      out->c_str(), (long long)s.patients, (long long)s.admissions, (long long)s.dx_rows,
      (long long)s.proc_rows, (long long)s.drug_rows, s.seconds);
  std::printf("ehr-gen: ceiling (oracle): %s\n", dump_json(s.ceiling).c_str());
  return 0;
}

}  // namespace memgrad::cli
