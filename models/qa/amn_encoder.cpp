// The AMN encoder (§4.1, Eqs. 1-4); see models/qa/amn.hpp.
#include "models/qa/amn_steps.hpp"
#include "ops/ops.hpp"

namespace memgrad::qa::amn {
namespace {

const char kOutputs = 0;  // keys of the step outputs' and the segment ends' scratch lists
const char kEnds = 0;

// w_i = GRU(u_i, w_{i-1}) over J words of N rows, w_0 = 0; a nil word leaves the state and
// outputs zero. xw [N, J, 3d] (inputs already projected), live [N, J, 1]. Returns the outputs
// [N, J, d] and the state after every `every` words [N, J / every, d] (every = J: the last).
std::pair<Var, Var> run(Tape& tape, const GruCell& gru, Var xw, Var live, int64_t every) {
  const int64_t n = xw.shape()[0], j = xw.shape()[1], d = gru.hidden();
  Var h = gru.zero_state(tape, n, xw.dtype());
  std::vector<Var>& outs = tape.var_scratch(&kOutputs);
  std::vector<Var>& ends = tape.var_scratch(&kEnds);
  outs.clear();
  ends.clear();
  for (int64_t w = 0; w < j; ++w) {
    const Var on = reshape(slice(live, 1, w, 1), Shape{n, 1});
    const Var fresh = gru.step_projected(tape, reshape(slice(xw, 1, w, 1), Shape{n, 3 * d}), h);
    h = where(on, fresh, h);
    outs.push_back(mul(fresh, on));
    if ((w + 1) % every == 0) ends.push_back(h);
  }
  // One end (every = J, the sentence-by-sentence default): the last state as it is, no copy.
  return {stack(outs, 1), ends.size() == 1 ? reshape(h, Shape{n, 1, d}) : stack(ends, 1)};
}

}  // namespace

Encoded encode(Tape& tape, const GruCell& gru, Var table, Var story_ids, Var query_ids,
               const Structures& st, const EncoderOptions& options) {
  const int64_t b = story_ids.shape()[0], t = story_ids.shape()[1], j = story_ids.shape()[2];
  const int64_t d = gru.hidden();
  // (1) u_i = EMBED(w_i);  (2) w_i = GRU(u_i, w_{i-1}): every sentence from a zero state at once
  // ([B T, J] rows of J words), or with carry_state each story as one run over its T J words
  // ([B, T J]), w_N of sentence t being the state after its last word (gap 14).
  const bool carry = options.carry_state;
  const int64_t rows = carry ? b : b * t, steps = carry ? t * j : j;
  const Var u = dropout(gather_rows(table, reshape(story_ids, Shape{rows, steps})), options.dropout,
                        options.training);
  auto [words, ends] =
      run(tape, gru, gru.project_inputs(u), reshape(st.word_live, Shape{rows, steps, 1}), j);
  // (3) D[id] += w_i happens sentence by sentence in the model (it needs the words of sentence t).
  // (4) w_j = GRU(u_j, w_{j-1}) over the question, the same GRU, from zero, no accumulation.
  const Var uq = dropout(gather_rows(table, query_ids), options.dropout, options.training);
  const Var question =
      run(tape, gru, gru.project_inputs(uq), st.query_live, query_ids.shape()[1]).second;
  return {reshape(words, Shape{b, t, j, d}), reshape(ends, Shape{b, t, d}),
          reshape(question, Shape{b, d})};
}

}  // namespace memgrad::qa::amn
