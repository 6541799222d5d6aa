// The AMN's inference measurements (the paper's Tables 2 and 4): for every question evaluated, the
// answer is decoded again outside the tape from the last k existing banks, k = 1 .. L, reading
// only those banks' entities (Eqs. 16-19 on gathered rows, so the work really shrinks with k),
// and the banks created, the entities examined, the answers right and the decode time are summed
// per k. `all` (k = L) is the training decode. Model::inference_stats reports them.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "engine/tensor.hpp"

namespace memgrad::qa::amn {

// The final state of one batch's forward, as values, and the decode's parameters.
struct FinalState {
  const Tensor &w, &s, &q, &banks, &exists, &answer;  // [B,V,d] [B,V] [B,d] [B,L,V] [B,L] [B]
  const Tensor &h, &out_prelu, &r;                    // [d,d] [d] [d,V]
  double temperature = 1.0;                           // e^{tau m}: tau (1 for "exp")
};

// bAbI's pass line, error in % (tasks/metrics.hpp's kBabiFailPercent; a model may not include a
// task).
constexpr double kPassLine = 5.0;

// The fewest last banks that pass the task: the first row of per_k (InferenceStats::json's,
// k = 1 .. L) whose error is at most pass_line (%; bAbI fails a task above it), as {"banks",
// "error", "entity_ratio", "speedup_read", "speedup_decode"} (speedups over the last row, all
// banks); null if none.
nlohmann::json passing_banks(const nlohmann::json& per_k, double pass_line);

class InferenceStats {
 public:
  void reset(int64_t banks);
  // Decodes every sample of `f` from the last k banks for k = 1 .. L (timed) and adds up the
  // figures. Reuses its buffers: no allocation once they have grown.
  void add(const FinalState& f);
  // {"questions", "banks_created" (mean), "entities" (mean distinct story entities |V|),
  //  "per_k": [{"k", "error", "entity_ratio" (mean entities read / |V|), "read_ms" (Eqs. 16-18),
  //  "decode_ms" (16-19), "banks_read" (mean)} ...], "required_banks", "speedup_read",
  //  "speedup_decode"}: required_banks is the smallest k whose error is within 1 point of the
  //  error with all banks (docs/amn.md, gap 10); the speedups are all banks' time over its.
  //  "passing": the smallest k whose error is at most kPassLine with its
  //  "error", "entity_ratio" and speedups, or null when no k passes (the planning notes' reading
  //  of "required": the banks needed to pass the task).
  nlohmann::json json() const;

 private:
  int64_t banks_ = 0, questions_ = 0;
  double created_ = 0, entities_ = 0;
  std::vector<double> right_, examined_, read_s_, decode_s_, banks_read_;
  std::vector<double> scores_, g_, y_, logits_;  // scratch
  std::vector<int32_t> members_;
};

}  // namespace memgrad::qa::amn
