#include "models/layers/decoder.hpp"

#include "models/layers/batch_fields.hpp"
#include "models/layers/config.hpp"
#include "models/layers/lstm_runner.hpp"
#include "models/layers/row_packing.hpp"
#include "ops/ops.hpp"

namespace memgrad::layers {

DecoderSpec decoder_spec(const nlohmann::json& cfg, const std::string& model) {
  const std::string out = cfg.at("output").get<std::string>();
  MG_CHECK(out == "sequence" || out == "set", model,
           ": config key 'output' must be \"sequence\" or \"set\", got \"", out, "\"");
  DecoderSpec spec;
  spec.output_vocab = config_int(cfg, model, "output_vocab");
  spec.embedding = config_int(cfg, model, "embedding");
  spec.sequence = out == "sequence";
  const std::string set_decoder = cfg.at("set_decoder").get<std::string>();
  MG_CHECK(set_decoder == "read" || set_decoder == "step", model,
           ": config key 'set_decoder' must be \"read\" or \"step\", got \"", set_decoder, "\"");
  spec.set_step = !spec.sequence && set_decoder == "step";
  spec.feedback = cfg.at("decoder_feedback").get<bool>();
  spec.train_teacher_forcing = cfg.at("train_teacher_forcing").get<bool>();
  spec.pack_rows = cfg.at("pack_rows").get<bool>();
  return spec;
}

nlohmann::json decoder_config_before() { return {{"set_decoder", "read"}}; }

Decoder::Decoder(ParameterSet& params, const std::string& prefix, const DecoderSpec& spec, Rng& rng)
    : spec_(spec) {
  if (spec.sequence || spec.set_step) {
    const int64_t rows = spec.sequence ? spec.output_vocab + 1 : 1;  // a set step reads GO only
    embedding_ = Embedding(params, prefix + ".embedding", rows, spec.embedding, rng);
    cell_.emplace_back(params, prefix + ".lstm", spec.embedding + spec.context, spec.hidden, rng);
  }
  const bool context_out = spec.context > 0 && (spec.context_in_output || !spec.sequence);
  out_ = Linear(params, prefix + ".out", spec.hidden + (context_out ? spec.context : 0),
                spec.output_vocab, rng);
}

ForwardResult Decoder::run(Tape& tape, const Batch& batch, const ForwardOptions& opts,
                           const std::string& model, const LstmState& init, Var context0,
                           DecoderReader* reader) const {
  MG_CHECK(
      (reader != nullptr) == (spec_.context > 0) && (!reader || reader->width() == spec_.context),
      model, ": decoder context width ", spec_.context, " does not match its reader");
  if (spec_.sequence) return run_sequence(tape, batch, opts, model, init, context0, reader);
  const int64_t B = init.h.dim(0);
  const Tensor& labels = field(batch, model, "labels", 2);
  expect_shape(model, "labels", labels, Shape{B, spec_.output_vocab});
  LstmState state = init;
  if (spec_.set_step) {  // one decoder step on [GO; context0], as the DMNC authors' code
    const TapeScope decoder(tape, "dec");
    const TokenLstm lstm(tape, embedding_, cell_.front());
    const Var go = constant_leaf(tape, Shape{B}, init.h.dtype(), 0.0);  // row 0 of a 1-row table
    state = clip_state(lstm.step(tape, go, reader ? context0 : Var{}, init), spec_.clip);
  }
  Var features = state.h;
  if (reader) features = concat({state.h, reader->read(tape, state)}, 1);
  ForwardResult r;
  r.predictions = out_(tape, features);  // [B, V]
  if (batch.has("labels_mask")) {        // rows without a target (a patient with no step here)
    const Tensor& scored = batch.get("labels_mask");
    expect_shape(model, "labels_mask", scored, Shape{B});
    r.loss = bce_with_logits(r.predictions, tape.input(labels), tape.input(scored));
  } else {
    r.loss = bce_with_logits(r.predictions, tape.input(labels));
  }
  return r;
}

ForwardResult Decoder::run_sequence(Tape& tape, const Batch& batch, const ForwardOptions& opts,
                                    const std::string& model, const LstmState& init, Var context0,
                                    DecoderReader* reader) const {
  const int64_t B = init.h.dim(0), V = spec_.output_vocab;
  const Tensor& y = field(batch, model, "y", 2);
  const Tensor& y_mask = field(batch, model, "y_mask", 2);
  MG_CHECK(y.dim(0) == B, model, ": batch field 'y' has ", y.dim(0), " samples, the views ", B);
  expect_shape(model, "y_mask", y_mask, y.shape());
  const int64_t L = y.dim(1);
  MG_CHECK(L >= 1, model, ": batch field 'y' has no positions");
  const LstmCell& cell = cell_.front();
  const DType dtype = y.dtype();
  Var yv = tape.input(y), ymv = tape.input(y_mask);
  const bool pack = spec_.pack_rows && !opts.trace;
  const TapeScope decoder(tape, "dec");  // memgrad inspect --tape draws it as a part

  // The tape's scratch (no allocation in steady state, none shared between concurrent tapes).
  // lengths: each sample's output length (L without packing); live: the samples still decoding,
  // whose rows every step computes (row j is sample live[j]); positions: b*L + t of each computed
  // row; step_ids: the live samples' input ids of a step; hs, cs: each step's hidden state and
  // context.
  static const char kLengths = 0, kLive = 0, kPositions = 0, kStepIds = 0, kHs = 0, kCs = 0;
  std::vector<int64_t>&lengths = tape.index_scratch(&kLengths), &live = tape.index_scratch(&kLive),
  &positions = tape.index_scratch(&kPositions), &step_ids = tape.index_scratch(&kStepIds);
  std::vector<Var>&hs = tape.var_scratch(&kHs), &cs = tape.var_scratch(&kCs);
  lengths.assign(size_t(B), L);
  if (pack)
    for (int64_t b = 0; b < B; ++b) {
      int64_t len = L;
      while (len > 0 && y_mask.at(b * L + len - 1) == 0) --len;
      lengths[size_t(b)] = len;
    }
  live.clear();
  for (int64_t b = 0; b < B; ++b) live.push_back(b);
  positions.clear();

  LstmState state = init;
  Var context = context0;
  if (pack) {
    // The samples longest first, so that those still decoding at any step are the leading rows:
    // dropping the others is a view.
    if (longest_first(lengths, live)) {
      Var order = index_leaf(tape, live, dtype);
      state = {gather_rows(state.h, order), gather_rows(state.c, order)};
      if (reader) {
        context = gather_rows(context, order);
        reader->take_rows(tape, order);
      }
    }
  }
  // Drops the samples that end before step t (the trailing rows) from the state, the context and
  // the reader.
  auto drop_ended = [&](int64_t t) {
    size_t n = live.size();
    while (n > 0 && lengths[size_t(live[n - 1])] <= t) --n;
    if (n == live.size()) return;
    live.resize(n);
    if (n == 0) return;
    state = {slice(state.h, 0, 0, int64_t(n)), slice(state.c, 0, 0, int64_t(n))};
    if (reader) {
      context = slice(context, 0, 0, int64_t(n));
      reader->keep_leading(int64_t(n));
    }
  };
  // Step t from the live samples' input ids at t (step_ids, read from ids [B, L]) and context.
  const TokenLstm lstm(tape, embedding_, cell);
  auto step = [&](const Tensor& ids, int64_t t) {
    const TapeScope step_scope(tape, "t", t);
    step_ids.clear();
    for (int64_t b : live) step_ids.push_back(int64_t(ids.at(b * L + t)));
    Var x = index_leaf(tape, step_ids, dtype);
    state = clip_state(lstm.step(tape, x, reader ? context : Var{}, state), spec_.clip);
    if (reader) context = reader->read(tape, state);
  };
  const bool context_out = reader && spec_.context_in_output;
  auto features = [&](Var h, Var ctx) { return context_out ? concat({h, ctx}, -1) : h; };
  // Packed logits [sum_t n_t, V], step by step, -> [B, L, V]: row j goes to position positions[j]
  // = b*L + t; positions never computed are zero (and masked). No step at all: all zero.
  auto unpack = [&](Var packed) {
    if (!packed.defined()) return constant_leaf(tape, Shape{B, L, V}, dtype, 0.0);
    return reshape(scatter_add_rows(packed, index_leaf(tape, positions, dtype), B * L),
                   Shape{B, L, V});
  };

  hs.clear();
  cs.clear();
  Var logits;
  if (opts.teacher_forcing && (spec_.train_teacher_forcing || !opts.training)) {
    // Inputs y*_{t-1}: GO, then the targets (padding multiplied to class 0, a valid row); GO at
    // every step without feedback.
    Var go = constant_leaf(tape, Shape{B, 1}, dtype, double(V));
    Var ids = !spec_.feedback ? constant_leaf(tape, Shape{B, L}, dtype, double(V))
              : L == 1        ? go
                              : concat({go, slice(mul(yv, ymv), 1, 0, L - 1)}, 1);
    for (int64_t t = 0; t < L; ++t) {
      if (pack) drop_ended(t);
      if (live.empty()) break;
      step(ids.value(), t);
      if (reader) cs.push_back(context);
      hs.push_back(state.h);
      for (int64_t b : live) positions.push_back(b * L + t);
    }
    // The steps' outputs gathered into one product; the pieces die once joined.
    Temporaries temps(tape);
    if (!pack)
      logits = out_(tape, features(stack(hs, 1), context_out ? stack(cs, 1) : Var{}));  // [B,L,V]
    else
      logits = unpack(
          hs.empty() ? Var{}
                     : out_(tape, features(concat(hs, 0), context_out ? concat(cs, 0) : Var{})));
    temps.keep(logits);
  } else {
    // Greedy decoding: ids[b, t] holds y*_{t-1}, the argmax of step t-1's logits computed on
    // values (no gradient), written before step t reads it.
    Tensor ids = Tensor::full(Shape{B, L}, dtype, double(V));
    for (int64_t t = 0; t < L; ++t) {
      if (pack) drop_ended(t);
      if (live.empty()) break;
      step(ids, t);
      Var lt = out_(tape, features(state.h, context));  // [n, V]
      hs.push_back(lt);
      for (int64_t b : live) positions.push_back(b * L + t);
      if (t + 1 == L || !spec_.feedback) continue;
      const Tensor& v = lt.value();
      for (size_t j = 0; j < live.size(); ++j) {
        const int64_t row = int64_t(j);
        int64_t best = 0;
        double best_v = v.at(row * V);
        for (int64_t c = 1; c < V; ++c) {
          const double sc = v.at(row * V + c);
          if (sc > best_v) best_v = sc, best = c;
        }
        ids.set(live[j] * L + t + 1, double(best));
      }
    }
    logits = !pack ? stack(hs, 1) : unpack(hs.empty() ? Var{} : concat(hs, 0));
  }
  ForwardResult r;
  r.predictions = logits;
  r.loss = cross_entropy(logits, yv, ymv);
  for (int64_t i = 0; i < y_mask.numel(); ++i) r.loss_terms += y_mask.at(i);  // its denominator
  return r;
}

}  // namespace memgrad::layers
