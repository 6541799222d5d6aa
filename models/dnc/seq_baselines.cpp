// View-concatenated LSTM, Dual LSTM and WLAS (see seq_baselines.hpp).
#include "models/dnc/seq_baselines.hpp"

#include "models/dnc/two_view.hpp"
#include "models/layers/config.hpp"
#include "models/layers/lstm_runner.hpp"

#include "ops/ops.hpp"

namespace memgrad {
namespace {

const char* kind_name(SeqBaseline k) {
  switch (k) {
    case SeqBaseline::view_concat_lstm:
      return "lstm";
    case SeqBaseline::dual_lstm:
      return "dual-lstm";
    case SeqBaseline::wlas:
      return "wlas";
  }
  return "?";
}

nlohmann::json defaults(SeqBaseline k) {
  nlohmann::json d = {
      {"embedding", 64},          {"hidden", 128},     {"output", "sequence"},
      {"input_vocab", 51},        {"input_vocab2", 0}, {"output_vocab", 101},
      {"decoder_feedback", true}, {"pack_rows", true}, {"train_teacher_forcing", true},
      {"set_decoder", "step"}};
  if (k == SeqBaseline::view_concat_lstm) d["views"] = "both";  // or one view: dx, proc
  if (k == SeqBaseline::wlas) {
    d["attention_size"] = 128;
    d["attention_init_range"] = 0.0;    // 0: Glorot; r > 0: uniform(-r, r), the authors' r = 1
    d["attention_query"] = "hidden";    // or "cell_halves", as the authors' code
    d["context_in_output"] = true;      // false: as the authors' code
    d["attention_memory"] = "outputs";  // or "authors_reshape", as the authors' code
  }
  return d;
}

// The decoder's reader for WLAS: attention over each encoder's outputs, queried with the decoder's
// hidden state; context [ctx1; ctx2].
class AttentionReader : public layers::DecoderReader {
 public:
  // cell_halves: attention k's query is half k of the decoder's cell state (the DMNC authors'
  // WLAS); otherwise both attentions query with the decoder's hidden state.
  AttentionReader(const std::array<layers::Attention, 2>& att,
                  const std::array<layers::Attention::Memory, 2>& mem, int64_t width,
                  bool cell_halves, Trace* trace)
      : att_(att), mem_(mem), width_(width), cell_halves_(cell_halves), trace_(trace) {}
  int64_t width() const override { return width_; }
  Var read(Tape& tape, const LstmState& state) override {
    Var q[2] = {state.h, state.h};
    if (cell_halves_) {
      const int64_t half = state.c.dim(1) / 2;
      q[0] = slice(state.c, 1, 0, half);
      q[1] = slice(state.c, 1, half, half);
    }
    Var w[2];
    Var c0 = att_[0].attend(tape, mem_[0], q[0], trace_ ? &w[0] : nullptr);
    Var c1 = att_[1].attend(tape, mem_[1], q[1], trace_ ? &w[1] : nullptr);
    if (trace_) {
      const std::string p = "dec/t" + std::to_string(step_) + "/";
      trace_->record(p + "attention1", w[0].value());
      trace_->record(p + "attention2", w[1].value());
    }
    ++step_;
    return concat({c0, c1}, 1);
  }
  void take_rows(Tape&, Var rows) override {
    for (layers::Attention::Memory& m : mem_)
      m = {gather_rows(m.outputs, rows), gather_rows(m.keys, rows), gather_rows(m.mask, rows),
           gather_rows(m.bias, rows)};
  }
  void keep_leading(int64_t n) override {
    for (layers::Attention::Memory& m : mem_)
      m = {slice(m.outputs, 0, 0, n), slice(m.keys, 0, 0, n), slice(m.mask, 0, 0, n),
           slice(m.bias, 0, 0, n)};
  }

 private:
  const std::array<layers::Attention, 2>& att_;
  std::array<layers::Attention::Memory, 2> mem_;  // own copy: take_rows shrinks it
  int64_t width_;
  bool cell_halves_;
  Trace* trace_;
  int64_t step_ = 0;
};

}  // namespace

std::string SeqBaselineModel::name() const { return kind_name(kind_); }

SeqBaselineModel::SeqBaselineModel(SeqBaseline kind, const nlohmann::json& config, DType dtype,
                                   uint64_t seed)
    : Model(dtype), kind_(kind) {
  const std::string model = name();
  config_ = layers::merge_config(model, defaults(kind), config);
  const int64_t E = layers::config_int(config_, model, "embedding");
  const int64_t H = hidden_ = layers::config_int(config_, model, "hidden");
  const int64_t v1 = layers::config_int(config_, model, "input_vocab");
  const int64_t v2 = layers::config_int(config_, model, "input_vocab2", 0);
  layers::DecoderSpec spec = layers::decoder_spec(config_, model);
  pack_rows_ = spec.pack_rows;  // the encoders pack as the decoder does
  Rng rng(seed);
  if (kind == SeqBaseline::view_concat_lstm) use_ = dnc::views_read(config_, model);
  // A view the model does not read has no embedding (no parameter that no gradient reaches).
  if (use_[0]) embed_[0] = layers::Embedding(params_, "enc1.embedding", v1, E, rng);
  if (use_[1]) embed_[1] = layers::Embedding(params_, "enc2.embedding", v2 == 0 ? v1 : v2, E, rng);
  if (kind == SeqBaseline::view_concat_lstm) {
    cell_.emplace_back(params_, "enc.lstm", E, H, rng);
    spec.hidden = H;
  } else {
    cell_.reserve(2);
    cell_.emplace_back(params_, "enc1.lstm", E, H, rng);
    cell_.emplace_back(params_, "enc2.lstm", E, H, rng);
    spec.hidden = 2 * H;
  }
  if (kind == SeqBaseline::wlas) {
    const int64_t A = layers::config_int(config_, model, "attention_size");
    const double init = config_.at("attention_init_range").get<double>();
    MG_CHECK(init >= 0, model, ": attention_init_range must be >= 0, got ", init);
    const std::string query = config_.at("attention_query").get<std::string>();
    MG_CHECK(query == "hidden" || query == "cell_halves", model,
             ": config key 'attention_query' must be \"hidden\" or \"cell_halves\", got \"", query,
             "\"");
    query_cell_halves_ = query == "cell_halves";
    const std::string memory = config_.at("attention_memory").get<std::string>();
    MG_CHECK(memory == "outputs" || memory == "authors_reshape", model,
             ": config key 'attention_memory' must be \"outputs\" or \"authors_reshape\", got \"",
             memory, "\"");
    authors_memory_ = memory == "authors_reshape";
    const int64_t Q = query_cell_halves_ ? H : 2 * H;
    attention_[0] = layers::Attention(params_, "dec.attention1", H, Q, A, rng, init);
    attention_[1] = layers::Attention(params_, "dec.attention2", H, Q, A, rng, init);
    spec.context = 2 * H;
    spec.context_in_output = config_.at("context_in_output").get<bool>();
  }
  decoder_ = layers::Decoder(params_, "dec", spec, rng);
}

ForwardResult SeqBaselineModel::forward(Tape& tape, const Batch& batch,
                                        const ForwardOptions& opts) {
  const dnc::Views views = dnc::read_views(tape, batch, name());
  const int64_t B = views.batch;
  const DType dtype = views.x[0].dtype();
  const bool pack = pack_rows_ && !opts.trace;

  if (kind_ == SeqBaseline::view_concat_lstm) {  // one LSTM reads view 1's tokens, then view 2's
    const LstmCell& cell = cell_.front();
    LstmState s = cell.zero_state(tape, B, dtype);
    for (int i = 0; i < 2; ++i)
      if (use_[size_t(i)])
        s = layers::run_lstm(
            tape, layers::TokenLstm(tape, embed_[size_t(i)], cell, views.x[i].shape().numel()),
            views.x[i], views.mask[i], s, 0.0, pack);
    return decoder_.run(tape, batch, opts, name(), s, Var{}, nullptr);
  }

  const bool attend = kind_ == SeqBaseline::wlas;
  // The encoders' outputs, in the tape's scratch (reused from step to step, never shared).
  static const char kOutputs[2] = {0, 0};
  std::array<std::vector<Var>*, 2> outputs = {&tape.var_scratch(&kOutputs[0]),
                                              &tape.var_scratch(&kOutputs[1])};
  LstmState final_state[2];
  for (int i = 0; i < 2; ++i) {
    outputs[size_t(i)]->clear();
    const LstmCell& cell = cell_[size_t(i)];
    final_state[i] = layers::run_lstm(
        tape, layers::TokenLstm(tape, embed_[size_t(i)], cell, views.x[i].shape().numel()),
        views.x[i], views.mask[i], cell.zero_state(tape, B, dtype), 0.0, pack,
        attend ? outputs[size_t(i)] : nullptr, authors_memory_);
  }
  const LstmState h0 = layers::concat_states(final_state[0], final_state[1]);
  if (!attend) return decoder_.run(tape, batch, opts, name(), h0, Var{}, nullptr);

  std::array<layers::Attention::Memory, 2> mem;
  for (int i = 0; i < 2; ++i) {
    const std::vector<Var>& out = *outputs[size_t(i)];
    if (authors_memory_) {  // the authors' buffer: time-major cell states read as batch-major
      const Shape shape{B, int64_t(out.size()), hidden_};
      mem[size_t(i)] = attention_[size_t(i)].prepare(tape, reshape(stack(out, 0), shape),
                                                     tape.constant(Shape{B, shape[1]}, dtype, 1.0));
    } else {
      mem[size_t(i)] = attention_[size_t(i)].prepare(tape, stack(out, 1), views.mask[i]);
    }
  }
  AttentionReader reader(attention_, mem, 2 * hidden_, query_cell_halves_, opts.trace);
  Var context0 = reader.read(tape, h0);
  return decoder_.run(tape, batch, opts, name(), h0, context0, &reader);
}

// ==================================================================================== registry

namespace {

nlohmann::json tiny(SeqBaseline k, const std::string& variant, bool set) {
  nlohmann::json c = {{"variant", variant},
                      {"embedding", 3},
                      {"hidden", 4},
                      {"input_vocab", 7},
                      {"output_vocab", 9}};
  if (k == SeqBaseline::wlas) c["attention_size"] = 3;
  if (set) c["output"] = "set";
  return c;
}

void register_baseline(SeqBaseline k, const char* summary) {
  std::vector<nlohmann::json> checks = {tiny(k, "sequence", false), tiny(k, "set", true)};
  nlohmann::json set_read = tiny(k, "set-read", true);  // one read with h0, no decoder step
  set_read["set_decoder"] = "read";
  checks.push_back(set_read);
  // Settings of documented runs: trained on the decoder's own predictions (README, the table with
  // --train-teacher-forcing false), and every sample stepped at every position (--pack-rows false).
  nlohmann::json free_running = tiny(k, "sequence-free-running", false);
  free_running["train_teacher_forcing"] = false;
  checks.push_back(free_running);
  nlohmann::json unpacked = tiny(k, "sequence-unpacked", false);
  unpacked["pack_rows"] = false;
  checks.push_back(unpacked);
  if (k == SeqBaseline::view_concat_lstm) {  // the single-view rows of DMNC Table 3
    nlohmann::json one = tiny(k, "set-proc-only", true);
    one["views"] = "proc";
    checks.push_back(one);
  }
  if (k == SeqBaseline::wlas) {  // the authors' decoder: cell-state queries, no context in output
    // and a constant decoder input (docs/sum2seq.md, runs/s4/wlas-authors-decoder)
    nlohmann::json c = tiny(k, "sequence-authors-decoder", false);
    c["attention_query"] = "cell_halves";
    c["context_in_output"] = false;
    c["decoder_feedback"] = false;
    checks.push_back(c);
    c["variant"] = "sequence-authors-wlas";  // and their batch-scrambled attention buffer
    c["attention_memory"] = "authors_reshape";
    checks.push_back(c);
  }
  register_model(
      {.name = kind_name(k),
       .summary = summary,
       .create = [k](const nlohmann::json& c, DType d,
                     uint64_t s) { return std::make_unique<SeqBaselineModel>(k, c, d, s); },
       .default_config = defaults(k),
       .train_defaults = dnc::dmnc_paper_recipe(),
       .check_configs = checks,
       .check_batch = [](Rng& rng, DType dtype,
                         Batch& batch) { dnc::make_check_batch(rng, dtype, batch, 7, 9); },
       .config_before = layers::decoder_config_before()});
}

const bool kRegistered = [] {
  register_baseline(SeqBaseline::view_concat_lstm,
                    "view-concatenated LSTM: one LSTM reads view 1 then view 2, then an LSTM "
                    "decoder (DMNC paper, Table 1 baseline)");
  register_baseline(SeqBaseline::dual_lstm,
                    "Dual LSTM: one LSTM encoder per view, final states into the decoder, no "
                    "attention (DMNC paper, Table 1 baseline)");
  register_baseline(SeqBaseline::wlas,
                    "WLAS: one LSTM encoder per view and a decoder attending over both encoders' "
                    "outputs (Chung et al. 2017; DMNC paper, Table 1 baseline)");
  return true;
}();

}  // namespace
}  // namespace memgrad
