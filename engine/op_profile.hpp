// Time per op kind over a run of the tape: where a training step spends its time, op by op
// (`memgrad bench --profile`). Off unless a Tape is given one (Tape::set_profile), so a normal step
// pays one branch per node.
//
// Forward time of a node is measured from its record() to the next node's record(): an op records
// its node first and then computes the value, so that interval is the op's own work plus whatever
// model code runs before the next op (slicing arguments, building the next call). Backward time is
// each node's backward function, timed alone. Value bytes are the bytes of the values an op's nodes
// take in the tape's arena (views take none): what the step's forward values are made of, the
// largest part of the arena's high water.
#pragma once
#include <chrono>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "engine/op_def.hpp"

namespace memgrad {

class OpProfile {
 public:
  using Clock = std::chrono::steady_clock;
  struct Entry {
    const OpDef* op = nullptr;
    int64_t forward_count = 0;   // nodes recorded
    int64_t backward_count = 0;  // backward functions run
    double forward_ms = 0.0;
    double backward_ms = 0.0;
    double value_bytes = 0.0;
  };

  void add_forward(const OpDef* op, double ms);
  void add_value_bytes(const OpDef* op, double bytes);
  void add_backward(const OpDef* op, double ms);
  void clear() { by_op_.clear(); }
  // Every op seen, most expensive (forward + backward) first.
  std::vector<Entry> sorted() const;

 private:
  std::unordered_map<const OpDef*, Entry> by_op_;
};

inline double ms_between(OpProfile::Clock::time_point a, OpProfile::Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace memgrad
