// The AMN encoder (§4.1, Eqs. 1-4); see models/qa/amn.hpp.
#include "models/qa/amn_steps.hpp"
#include "ops/ops.hpp"

namespace memgrad::qa::amn {
namespace {

const char kOutputs = 0;  // key of the step outputs' scratch list

// w_i = GRU(u_i, w_{i-1}) over J words of N rows, w_0 = 0; a nil word leaves the state and
// outputs zero. xw [N, J, 3d] (inputs already projected), live [N, J, 1]. Returns the outputs
// [N, J, d] and the last state [N, d].
std::pair<Var, Var> run(Tape& tape, const GruCell& gru, Var xw, Var live) {
  const int64_t n = xw.shape()[0], j = xw.shape()[1], d = gru.hidden();
  Var h = gru.zero_state(tape, n, xw.dtype());
  std::vector<Var>& outs = tape.var_scratch(&kOutputs);
  outs.clear();
  for (int64_t w = 0; w < j; ++w) {
    const Var on = reshape(slice(live, 1, w, 1), Shape{n, 1});
    const Var fresh = gru.step_projected(tape, reshape(slice(xw, 1, w, 1), Shape{n, 3 * d}), h);
    h = where(on, fresh, h);
    outs.push_back(mul(fresh, on));
  }
  return {stack(outs, 1), h};
}

}  // namespace

Encoded encode(Tape& tape, const GruCell& gru, Var table, Var story_ids, Var query_ids,
               const Structures& st) {
  const int64_t b = story_ids.shape()[0], t = story_ids.shape()[1], j = story_ids.shape()[2];
  const int64_t d = gru.hidden();
  // (1) u_i = EMBED(w_i);  (2) w_i = GRU(u_i, w_{i-1}) for every sentence at once: [B T, J, d].
  const Var u = gather_rows(table, reshape(story_ids, Shape{b * t, j}));
  auto [words, last] =
      run(tape, gru, gru.project_inputs(u), reshape(st.word_live, Shape{b * t, j, 1}));
  // (3) D[id] += w_i happens sentence by sentence in the model (it needs the words of sentence t).
  // (4) w_j = GRU(u_j, w_{j-1}) over the question, the same GRU, no accumulation.
  const Var uq = gather_rows(table, query_ids);
  const Var question = run(tape, gru, gru.project_inputs(uq), st.query_live).second;
  return {reshape(words, Shape{b, t, j, d}), reshape(last, Shape{b, t, d}), question};
}

}  // namespace memgrad::qa::amn
