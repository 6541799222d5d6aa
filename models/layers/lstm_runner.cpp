#include "models/layers/lstm_runner.hpp"

#include <array>

#include "models/layers/row_packing.hpp"
#include "ops/ops.hpp"

namespace memgrad::layers {

LstmState clip_state(const LstmState& s, double clip) {
  if (clip <= 0) return s;
  return {s.h, clamp(s.c, -clip, clip)};
}

LstmState concat_states(const LstmState& a, const LstmState& b) {
  return {concat({a.h, b.h}, 1), concat({a.c, b.c}, 1)};
}

TokenLstm::TokenLstm(Tape& tape, const Embedding& embed, const LstmCell& cell, int64_t tokens)
    : embed_(embed),
      cell_(cell),
      split_(cell.split_input(tape, embed.dim())),
      projected_(tokens < 0 || embed.rows() <= tokens) {
  table_ = projected_ ? cell.project_leading(split_, embed.table(tape)) : embed.table(tape);
}

TokenLstm::~TokenLstm() {
  if (projected_) table_.tape->release_value(table_);
}

LstmState TokenLstm::step(Tape& tape, Var ids, Var rest, const LstmState& prev) const {
  MG_CHECK(ids.defined() && (ids.shape().rank == 1 || (ids.shape().rank == 2 && ids.dim(1) == 1)),
           "TokenLstm '", cell_.prefix(), "': ids must be [n] or [n, 1], got ",
           ids.defined() ? ids.shape().str() : "undefined");
  if (ids.shape().rank == 2) ids = reshape(ids, Shape{ids.dim(0)});
  Temporaries temps(tape);  // the looked-up rows and the projected input die with the step
  const Var rows = embed_.lookup(table_, ids);
  const LstmState next = cell_.step_split(
      tape, split_, projected_ ? rows : cell_.project_leading(split_, rows), rest, prev);
  return {temps.keep(next.h), temps.keep(next.c)};
}

LstmState run_lstm(Tape& tape, const TokenLstm& lstm, Var ids, Var mask, LstmState state,
                   double clip, bool pack, std::vector<Var>* outputs, bool output_cells) {
  MG_CHECK(ids.defined() && ids.shape().rank == 2, "run_lstm: ids must be [B, T], got ",
           ids.defined() ? ids.shape().str() : std::string("undefined"));
  const int64_t T = ids.dim(1);
  auto ids_at = [&](int64_t t) { return slice(ids, 1, t, 1); };  // [B, 1]
  if (pack && !outputs && T > 0 && RetiringRows::prefix_events(mask.value())) {
    // Only the final state is wanted: keep just the rows that still step.
    RetiringRows rows(mask, 2);
    const std::array<Var*, 2> fields = state_fields(state);
    for (int64_t t = 0; t < T; ++t) {
      if (rows.begin_step(t, fields) == 0) break;
      state = clip_state(lstm.step(tape, rows.take(ids_at(t)), Var{}, state), clip);
    }
    rows.finish(fields);
    return state;
  }
  for (int64_t t = 0; t < T; ++t) {
    const StepMask m(mask, t);
    if (m.any()) {
      if (pack) {
        const LstmState next = lstm.step(tape, m.take(ids_at(t)), Var{}, m.take(state));
        state = m.put(state, clip_state(next, clip));
      } else {
        state = m.blend(clip_state(lstm.step(tape, ids_at(t), Var{}, state), clip), state);
      }
    }
    if (outputs) outputs->push_back(output_cells ? state.c : state.h);
  }
  return state;
}

}  // namespace memgrad::layers
