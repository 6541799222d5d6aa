// DMNC (late and early fusion) and the view-concatenated DNC; the design is documented in dmnc.hpp.
#include "models/dnc/dmnc.hpp"

#include "models/layers/config.hpp"
#include "models/layers/memory_reader.hpp"

#include <algorithm>
#include <optional>

#include "ops/ops.hpp"

namespace memgrad {
namespace {

using layers::StepMask;

// The fields of an encoder state that persist across admissions, in Carried's order, as pointers
// (Var* or const Var*, as `e` is), so that reading and replacing them share one list.
template <class State>
auto persisting_field_ptrs(State& e) {
  auto& m = e.memory;
  return std::array{&m.memory,        &m.usage,        &m.link,         &m.precedence,
                    &m.write_weights, &m.read_weights, &m.read_vectors, &e.cache};
}
std::array<Var, 8> persisting_fields(const Dmnc::EncoderState& e) {
  std::array<Var, 8> out;
  const auto ptrs = persisting_field_ptrs(e);
  for (size_t k = 0; k < 8; ++k) out[k] = *ptrs[k];
  return out;
}

// The DNC paper's usage gradient, not DeepMind's stop-gradient (dmnc.hpp, "Usage gradient").
constexpr dnc::UsageGradient kUsageGradient = dnc::UsageGradient::through_write_weights;

nlohmann::json memory_defaults(int64_t slots) {
  return {{"embedding", 64},
          {"hidden", 128},
          {"word_size", 64},
          {"memory_slots", slots},
          {"read_heads", 1},
          {"output", "sequence"},
          {"input_vocab", 51},
          {"input_vocab2", 0},
          {"output_vocab", 101},
          {"clip_controller", 20.0},
          {"decoder_feedback", true},
          {"pack_rows", true},
          {"train_teacher_forcing", true},
          {"set_decoder", "step"}};  // set output: "step" or "read" (layers/decoder.hpp)
}

// The view-concatenated DNC: twice DMNC's slots (section 4.2), and it may read one view alone.
nlohmann::json view_concat_defaults() {
  nlohmann::json d = memory_defaults(32);
  d["views"] = "both";  // or one view: dx, proc (dnc::views_read)
  return d;
}

nlohmann::json dmnc_defaults(Fusion f) {
  nlohmann::json d = memory_defaults(16);
  d["cache"] = f == Fusion::early;
  // Initial bias of the cache gate: -3 starts it writing through (g ~ 0.05); with 0 (g ~ 1/2) early
  // fusion learned far slower (docs/sum2seq.md).
  d["cache_gate_bias"] = -3.0;
  d["persistent_memory"] = false;
  return d;
}

dnc::MemoryConfig read_memory_config(const nlohmann::json& cfg, const std::string& model) {
  dnc::MemoryConfig m;
  m.slots = layers::config_int(cfg, model, "memory_slots");
  m.word = layers::config_int(cfg, model, "word_size");
  m.read_heads = layers::config_int(cfg, model, "read_heads");
  return m;
}

double clip_value(const nlohmann::json& cfg, const std::string& model) {
  const double c = cfg.at("clip_controller").get<double>();
  MG_CHECK(c >= 0, model, ": config key 'clip_controller' must be >= 0 (0 = off), got ", c);
  return c;
}

int64_t second_vocab(const nlohmann::json& cfg, const std::string& model) {
  const int64_t v2 = layers::config_int(cfg, model, "input_vocab2", 0);
  return v2 == 0 ? layers::config_int(cfg, model, "input_vocab") : v2;
}

// The write function's DNC block (erase, write vector, write key, write strength, free gates,
// allocation and write gates: 3W + R + 3); the cache gate's W units follow it when the cache is on.
int64_t write_block_size(const dnc::MemoryConfig& m) { return 3 * m.word + m.read_heads + 3; }

// Writes row `row` of dst [B, ...] from src [1, ...].
void copy_row(Tensor& dst, int64_t row, const Tensor& src) {
  const int64_t per = src.numel();
  MG_CHECK(dst.numel() == per * dst.dim(0), "copy_row: shapes ", dst.shape(), " and ", src.shape());
  for (int64_t j = 0; j < per; ++j) dst.set(row * per + j, src.at(j));
}

void record(Trace* trace, const std::string& prefix, const char* name, Var v) {
  if (trace && v.defined()) trace->record(prefix + name, v);
}

// A DNC encoder's state tensors (controller, memory, and the cache when there is one), for
// layers::RetiringRows.
struct StateFields {
  std::array<Var*, 11> ptr;
  size_t count = 0;
  operator std::span<Var* const>() const { return {ptr.data(), count}; }
};
StateFields state_fields(LstmState& controller, dnc::State& memory, Var* cache = nullptr) {
  StateFields f;
  for (Var* v : layers::state_fields(controller)) f.ptr[f.count++] = v;
  for (Var* v : layers::state_fields(memory)) f.ptr[f.count++] = v;
  if (cache && cache->defined()) f.ptr[f.count++] = cache;
  return f;
}
template <class EncoderState>  // Dmnc::EncoderState, private to Dmnc
StateFields state_fields(EncoderState& e) {
  return state_fields(e.controller, e.memory, &e.cache);
}

}  // namespace

// ============================================================================================ DMNC

Dmnc::Dmnc(Fusion fusion, const nlohmann::json& config, DType dtype, uint64_t seed)
    : Model(dtype), fusion_(fusion) {
  const std::string model = name();
  config_ = layers::merge_config(model, dmnc_defaults(fusion), config);
  mem_ = read_memory_config(config_, model);
  embedding_ = layers::config_int(config_, model, "embedding");
  hidden_ = layers::config_int(config_, model, "hidden");
  cache_ = config_.at("cache").get<bool>();
  persistent_ = config_.at("persistent_memory").get<bool>();
  pack_rows_ = config_.at("pack_rows").get<bool>();
  clip_ = clip_value(config_, model);
  const int64_t vocab[2] = {layers::config_int(config_, model, "input_vocab"),
                            second_vocab(config_, model)};
  const int64_t E = embedding_, H = hidden_, W = mem_.word, R = mem_.read_heads;

  Rng rng(seed);
  const int64_t write_block = write_block_size(mem_);
  const int64_t write_size = write_block + (cache_ ? W : 0);
  const int64_t read_size = layers::read_interface_size(mem_);
  cell_.reserve(2);
  for (int i = 0; i < 2; ++i) {
    const std::string p = "enc" + std::to_string(i + 1);
    embed_[size_t(i)] = layers::Embedding(params_, p + ".embedding", vocab[i], E, rng);
    cell_.emplace_back(params_, p + ".lstm", E + R * W, H, rng);
    write_[size_t(i)] = layers::Linear(params_, p + ".write", H, write_size, rng);
    if (cache_)
      write_[size_t(i)].init_bias(write_block, W, config_.at("cache_gate_bias").get<double>());
    if (fusion_ == Fusion::late)
      read_[size_t(i)] = layers::Linear(params_, p + ".read", H, read_size, rng);
  }
  if (fusion_ == Fusion::early) {  // Eq. 7-8: one read function for both encoders
    read_[0] = layers::Linear(params_, "enc.read", H, read_size, rng);
    read_[1] = read_[0];
  }
  dec_read_ = layers::Linear(params_, "dec.read", H, read_size, rng);
  layers::DecoderSpec spec = layers::decoder_spec(config_, model);
  spec.hidden = 2 * H;
  spec.context = 2 * R * W;
  spec.clip = clip_;
  decoder_ = layers::Decoder(params_, "dec", spec, rng);
}

void Dmnc::set_persistent_memory(bool on) {
  persistent_ = on;
  config_["persistent_memory"] = on;
  if (!on) carried_.reset(), spare_.reset(), carried_valid_ = false;
}

void Dmnc::clear_memory() { carried_valid_ = false; }

Dmnc::EncoderState Dmnc::initial_state(Tape& tape, int64_t batch, DType dtype) const {
  EncoderState e;
  e.controller = cell_[0].zero_state(tape, batch, dtype);
  e.memory = dnc::initial_state(tape, batch, mem_, dtype);
  if (fusion_ == Fusion::early)  // read weights over [M1; M2], the same fill
    e.memory.read_weights =
        constant_leaf(tape, Shape{batch, mem_.read_heads, 2 * mem_.slots}, dtype, dnc::kEpsilon);
  if (cache_) e.cache = constant_leaf(tape, Shape{batch, mem_.word}, dtype, 0.0);
  return e;
}

void Dmnc::clear_memory(int64_t row) {
  if (!carried_valid_) return;
  const int64_t B = carried_->enc[0][0].dim(0);
  MG_CHECK(row >= 0 && row < B, name(), ": clear_memory: row ", row, " out of range for ", B,
           " carried rows");
  Tape scratch;
  const EncoderState init = initial_state(scratch, 1, carried_->enc[0][0].dtype());
  const std::array<Var, 8> fresh = persisting_fields(init);
  for (auto& enc : carried_->enc)
    for (size_t k = 0; k < 8; ++k)
      if (enc[k].defined()) copy_row(enc[k], row, fresh[k].value());
}

Dmnc::EncoderState Dmnc::carried_state(Tape& tape, int i) const {
  const auto& c = carried_->enc[size_t(i)];
  EncoderState e;
  e.memory.memory = tape.input(c[0]);
  e.memory.usage = tape.input(c[1]);
  e.memory.link = tape.input(c[2]);
  e.memory.precedence = tape.input(c[3]);
  e.memory.write_weights = tape.input(c[4]);
  e.memory.read_weights = tape.input(c[5]);
  e.memory.read_vectors = tape.input(c[6]);
  e.memory.memory_norms = dnc::memory_norms(e.memory.memory);
  if (cache_) e.cache = tape.input(c[7]);
  return e;
}

void Dmnc::store_carried(const Encoded& e, bool in_place) {
  // Values only (detached). Written into the spare buffers when they have the shapes: the current
  // carried tensors are this forward's tape leaves (read by its backward), so they are not
  // overwritten, and steady-state steps allocate nothing. A forward that continued the graph read
  // no carried values, but the spare ones may be the leaves of an earlier forward on its tape,
  // whose backward is still to come: it writes the current buffers instead.
  auto fits = [&](const Carried& c) {
    for (size_t i = 0; i < 2; ++i) {
      const std::array<Var, 8> vars = persisting_fields(e.enc[i]);
      for (size_t k = 0; k < 8; ++k)
        if (vars[k].defined() != c.enc[i][k].defined() ||
            (vars[k].defined() &&
             (vars[k].shape() != c.enc[i][k].shape() || vars[k].dtype() != c.enc[i][k].dtype())))
          return false;
    }
    return true;
  };
  std::optional<Carried>& target = in_place ? carried_ : spare_;
  const bool reuse = target && fits(*target);
  Carried c = reuse ? std::move(*target) : Carried{};
  for (size_t i = 0; i < 2; ++i) {
    const std::array<Var, 8> vars = persisting_fields(e.enc[i]);
    for (size_t k = 0; k < 8; ++k)
      if (vars[k].defined()) {
        if (reuse)
          c.enc[i][k].copy_from(vars[k].value());
        else
          c.enc[i][k] = vars[k].value().clone();
      }
  }
  if (!in_place) spare_ = std::move(carried_);
  carried_ = std::move(c);
  carried_valid_ = true;
}

Dmnc::Encoded Dmnc::continued_state(Tape& tape, const Batch& batch, int64_t rows,
                                    DType dtype) const {
  MG_CHECK(graph_carry_.enc[0].memory.memory.tape == &tape, name(),
           ": a forward that continues the graph needs a previous forward on the same tape");
  MG_CHECK(graph_carry_.enc[0].memory.memory.dim(0) == rows, name(), ": the previous forward had ",
           graph_carry_.enc[0].memory.memory.dim(0), " rows but this batch has ", rows,
           " (one patient per row)");
  Encoded from = graph_carry_;
  if (!batch.has("patient_start")) return from;
  const Tensor& start = batch.get("patient_start");
  int64_t starting = 0;
  for (int64_t r = 0; r < rows; ++r) starting += start.at(r) != 0;
  if (starting == 0) return from;
  // Some rows start a new patient: where(start, initial, carried) per row, field by field.
  const EncoderState init = initial_state(tape, rows, dtype);
  const std::array<Var, 8> fresh = persisting_fields(init);
  const Var start_rows = tape.input(start);
  for (EncoderState& e : from.enc) {
    const std::array<Var*, 8> fields = persisting_field_ptrs(e);
    for (size_t k = 0; k < 8; ++k) {
      if (!fields[k]->defined()) continue;
      Shape per_row = fields[k]->shape();  // [B, 1, ...]: broadcast over the row's elements
      for (int d = 1; d < per_row.rank; ++d) per_row[d] = 1;
      *fields[k] = where(reshape(start_rows, per_row), fresh[k], *fields[k]);
    }
    e.memory.memory_norms = dnc::memory_norms(e.memory.memory);
  }
  return from;
}

void Dmnc::start_patients(const Batch& batch, int64_t rows) {
  if (!persistent_ || !carried_valid_ || !batch.has("patient_start")) return;
  const Tensor& start = batch.get("patient_start");
  MG_CHECK(start.shape() == Shape{rows}, name(), ": batch field 'patient_start' has shape ",
           start.shape(), ", expected [", rows, "]");
  int64_t starting = 0;
  for (int64_t r = 0; r < rows; ++r) starting += start.at(r) != 0;
  if (starting == rows)
    clear_memory();
  else
    for (int64_t r = 0; r < rows; ++r)
      if (start.at(r) != 0) clear_memory(r);
}

dnc::State Dmnc::early_memory_step(int i, const std::array<EncoderState, 2>& s,
                                   const dnc::Interface& iface, Trace* trace,
                                   const std::string& prefix) const {
  const dnc::State& prev = s[size_t(i)].memory;
  const dnc::State& other = s[size_t(1 - i)].memory;
  const int64_t N = mem_.slots;
  Tape& tape = *prev.memory.tape;
  const TapeScope memory_scope(tape, "memory");  // memgrad inspect --tape
  // The previous read weights over [M1; M2], split into the two memories' blocks.
  const Var block[2] = {slice(prev.read_weights, 2, 0, N), slice(prev.read_weights, 2, N, N)};

  // Write: encoder i writes its own memory M_i (Eq. 11), with M_i's usage, allocation and link;
  // its free gates act on its previous read weights on M_i's block.
  dnc::StepDetail detail;
  dnc::State next = dnc::write_step(prev, iface, block[i], detail, kUsageGradient);

  // Read (Eq. 7-8): the shared address space [M1; M2], with M_i just written and the other memory
  // as its encoder last left it; temporal links block-diagonal.
  const TapeScope read_scope(tape, "read");
  Var mems[2], links[2];
  mems[i] = next.memory;
  links[i] = next.link;
  mems[1 - i] = other.memory;
  links[1 - i] = other.link;
  Var space = concat({mems[0], mems[1]}, 1);  // [B, 2N, W]
  // The slots' norms of [M1; M2]: M_i's from its write, the other's as its state carries them.
  Var norms[2];
  norms[i] = next.memory_norms;
  norms[1 - i] =
      other.memory_norms.defined() ? other.memory_norms : dnc::memory_norms(other.memory);
  Var content_r = dnc::content_weighting(space, iface.read_keys, iface.read_strengths,
                                         concat({norms[0], norms[1]}, 2));  // [B,R,2N]
  const dnc::DirectionalResult d0 = dnc::directional_read(links[0], block[0]);
  const dnc::DirectionalResult d1 = dnc::directional_read(links[1], block[1]);
  const dnc::ReadResult read =
      dnc::read_weighting(content_r, concat({d0.forward, d1.forward}, 2),
                          concat({d0.backward, d1.backward}, 2), iface.read_modes, space);
  next.read_weights = read.read_weights;
  next.read_vectors = read.read_vectors;
  if (trace) {
    record(trace, prefix, "write_gate", iface.write_gate);
    record(trace, prefix, "alloc_gate", iface.alloc_gate);
    record(trace, prefix, "free_gates", iface.free_gates);
    record(trace, prefix, "read_modes", iface.read_modes);
  }
  return next;
}

Dmnc::EncoderPass::EncoderPass(Tape& tape, const Dmnc& model, int i, int64_t tokens)
    : lstm(tape, model.embed_[size_t(i)], model.cell_[size_t(i)], tokens) {
  const dnc::MemoryConfig& m = model.mem_;
  const int64_t R = m.read_heads, read_head = R * m.word + R, block = write_block_size(m);
  // The interface: the read function (shared in early fusion) and encoder i's write function.
  const layers::Linear &rd = model.read_[size_t(i)], &wr = model.write_[size_t(i)];
  auto columns = [&](Var r, Var w) {  // the last axis: columns of a weight, entries of a bias
    const int ax = r.shape().rank - 1;
    Var parts[4] = {slice(r, ax, 0, read_head), slice(w, ax, 0, block),
                    slice(r, ax, read_head, 3 * R),
                    model.cache_ ? slice(w, ax, block, m.word) : Var{}};
    return concat(std::span<const Var>(parts, model.cache_ ? 4 : 3), ax);
  };
  interface_w = columns(rd.weight(tape), wr.weight(tape));
  interface_b = columns(rd.bias(tape), wr.bias(tape));
}

Dmnc::EncoderState Dmnc::advance(Tape& tape, int i, const EncoderPass& pass, Var ids,
                                 const std::array<EncoderState, 2>& s, Trace* trace,
                                 const std::string& prefix) const {
  const EncoderState& me = s[size_t(i)];
  const int64_t B = ids.dim(0), W = mem_.word, R = mem_.read_heads;
  std::optional<TapeScope> part(std::in_place, tape, "controller");  // memgrad inspect --tape
  // Eq. 3-4: the controller reads [x_t ; r_{t-1}].
  Var reads = reshape(me.memory.read_vectors, Shape{B, R * W});
  const LstmState ctrl = layers::clip_state(pass.lstm.step(tape, ids, reads, me.controller), clip_);
  const int64_t S = dnc::interface_size(mem_);
  part.emplace(tape, "interface");
  Var out = addmm(pass.interface_b, ctrl.h, pass.interface_w);  // [B, S] (+ the cache gate's W)
  dnc::Interface iface = dnc::parse_interface(cache_ ? slice(out, 1, 0, S) : out, mem_);
  Var cache;
  if (cache_) {  // Eq. 9-10: c_t = g c_{t-1} + (1 - g) v_t; Eq. 11 writes c_t
    Var g = sigmoid(slice(out, 1, S, W));
    cache = add(iface.write_vector, mul(g, sub(me.cache, iface.write_vector)));
    iface.write_vector = cache;
    record(trace, prefix, "cache_gate", g);
  }
  part.reset();  // the memory step names its own parts
  EncoderState next;
  next.controller = ctrl;
  next.memory = fusion_ == Fusion::late
                    ? dnc::step(me.memory, iface, true, trace, prefix, kUsageGradient)
                    : early_memory_step(i, s, iface, trace, prefix);
  next.cache = cache;
  return next;
}

void Dmnc::encoder_step(Tape& tape, int i, const EncoderPass& pass, Var ids,
                        std::array<EncoderState, 2>& s, const StepMask& mask, Trace* trace,
                        const std::string& prefix) const {
  EncoderState& me = s[size_t(i)];
  if (!pack_rows_ || trace) {  // every sample steps; those without an event keep their state
    const EncoderState next = advance(tape, i, pass, ids, s, trace, prefix);
    me.controller = mask.blend(next.controller, me.controller);
    me.memory = mask.blend(next.memory, me.memory);
    if (cache_) me.cache = mask.blend(next.cache, me.cache);
    return;
  }
  // Packed (StepMask): only the samples with an event step. Early fusion's reads also address the
  // other encoder's memory, so its rows of that memory come along.
  std::array<EncoderState, 2> sub;
  sub[size_t(i)] = {mask.take(me.controller), mask.take(me.memory),
                    cache_ ? mask.take(me.cache) : Var{}};
  if (fusion_ == Fusion::early) {
    const dnc::State& other = s[size_t(1 - i)].memory;
    sub[size_t(1 - i)].memory.memory = mask.take(other.memory);
    if (other.memory_norms.defined())
      sub[size_t(1 - i)].memory.memory_norms = mask.take(other.memory_norms);
    sub[size_t(1 - i)].memory.link = mask.take(other.link);
  }
  const EncoderState next = advance(tape, i, pass, mask.take(ids), sub, trace, prefix);
  me.controller = mask.put(me.controller, next.controller);
  me.memory = mask.put(me.memory, next.memory);
  if (cache_) me.cache = mask.put(me.cache, next.cache);
}

Dmnc::Encoded Dmnc::encode(Tape& tape, const dnc::Views& views, Trace* trace,
                           const Encoded* start) const {
  const int64_t B = views.batch;
  const DType dtype = views.x[0].dtype();
  Encoded out;
  auto& s = out.enc;
  for (int i = 0; i < 2; ++i) {
    if (start) {
      s[size_t(i)] = start->enc[size_t(i)];
      s[size_t(i)].controller = cell_[size_t(i)].zero_state(tape, B, dtype);
    } else if (persistent_ && carried_valid_) {
      MG_CHECK(carried_->enc[0][0].dim(0) == B, name(), ": the carried memory has ",
               carried_->enc[0][0].dim(0), " rows but the batch has ", B,
               " samples (one patient per row; clear_memory() to start over)");
      MG_CHECK(carried_->enc[0][0].dtype() == dtype, name(), ": the carried memory is ",
               dtype_name(carried_->enc[0][0].dtype()), " but the batch is ", dtype_name(dtype),
               " (clear_memory() to start over)");
      s[size_t(i)] = carried_state(tape, i);
      s[size_t(i)].controller = cell_[size_t(i)].zero_state(tape, B, dtype);
    } else {
      s[size_t(i)] = initial_state(tape, B, dtype);
    }
  }
  // What each encoder's steps share in this pass; its step t reads the token ids of its view at t
  // [B, 1].
  std::optional<EncoderPass> pass[2];
  for (int i = 0; i < 2; ++i)
    if (views.length[i] > 0) pass[i].emplace(tape, *this, i, views.x[i].shape().numel());
  auto ids_at = [&](int i, int64_t t) { return slice(views.x[i], 1, t, 1); };
  const int64_t T = std::max(views.length[0], views.length[1]);
  // Late fusion's encoders never look at each other's state, so with packing each can keep only
  // the rows that still step (layers::RetiringRows) when its view is a padded batch.
  std::optional<layers::RetiringRows> rows[2];
  if (fusion_ == Fusion::late && pack_rows_ && !trace)
    for (int i = 0; i < 2; ++i)
      if (views.length[i] > 0 && layers::RetiringRows::prefix_events(views.mask[i].value()))
        rows[i].emplace(views.mask[i], i);
  std::string prefix;
  for (int64_t t = 0; t < T; ++t) {
    for (int i = 0; i < 2; ++i) {  // Algorithm 1: encoder 1's step, then encoder 2's
      if (t >= views.length[i]) continue;
      if (rows[i]) {
        if (rows[i]->begin_step(t, state_fields(s[size_t(i)])) > 0)
          s[size_t(i)] =
              advance(tape, i, *pass[i], rows[i]->take(ids_at(i, t)), s, nullptr, prefix);
        continue;
      }
      const TapeScope encoder(tape, i == 0 ? "enc1" : "enc2"), step(tape, "t", t);
      const StepMask mask(views.mask[i], t);
      if (trace) prefix = "enc" + std::to_string(i + 1) + "/t" + std::to_string(t) + "/";
      if (mask.any()) encoder_step(tape, i, *pass[i], ids_at(i, t), s, mask, trace, prefix);
      if (trace) {  // the state after the step, padding samples kept
        const EncoderState& e = s[size_t(i)];
        const std::string p = prefix + "state/";
        record(trace, p, "h", e.controller.h);
        record(trace, p, "c", e.controller.c);
        record(trace, p, "memory", e.memory.memory);
        record(trace, p, "usage", e.memory.usage);
        record(trace, p, "link", e.memory.link);
        record(trace, p, "write_weights", e.memory.write_weights);
        record(trace, p, "read_weights", e.memory.read_weights);
        record(trace, p, "read_vectors", e.memory.read_vectors);
        record(trace, p, "cache", e.cache);
      }
    }
  }
  for (int i = 0; i < 2; ++i)
    if (rows[i]) rows[i]->finish(state_fields(s[size_t(i)]));
  return out;
}

ForwardResult Dmnc::forward(Tape& tape, const Batch& batch, const ForwardOptions& opts) {
  const dnc::Views views = dnc::read_views(tape, batch, name());
  start_patients(batch, views.batch);
  // Continuing the graph (models/unroll.hpp): from the previous forward's memories on this tape,
  // unless every row starts a new patient (start_patients then cleared the carried memory).
  const bool continues = persistent_ && opts.continues_graph && carried_valid_;
  std::optional<Encoded> start;
  if (continues) start = continued_state(tape, batch, views.batch, views.x[0].dtype());
  const Encoded e = encode(tape, views, opts.trace, start ? &*start : nullptr);
  if (persistent_) {
    store_carried(e, opts.continues_graph);
    graph_carry_ = e;
  }
  const int64_t B = views.batch, N = mem_.slots, RW = mem_.read_heads * mem_.word;
  const dnc::State memories[2] = {e.enc[0].memory, e.enc[1].memory};
  Var read_weights[2];
  for (int i = 0; i < 2; ++i) {
    Var rw = e.enc[size_t(i)].memory.read_weights;
    read_weights[i] = fusion_ == Fusion::late ? rw : slice(rw, 2, i * N, N);
  }
  layers::MemoryReader reader(dec_read_, mem_, memories, read_weights, opts.trace, "dec/");
  const LstmState h0 = layers::concat_states(e.enc[0].controller, e.enc[1].controller);
  Var context0 = concat({reshape(e.enc[0].memory.read_vectors, Shape{B, RW}),
                         reshape(e.enc[1].memory.read_vectors, Shape{B, RW})},
                        1);
  return decoder_.run(tape, batch, opts, name(), h0, context0, &reader);
}

// ================================================================== view-concatenated DNC

ViewConcatDnc::ViewConcatDnc(const nlohmann::json& config, DType dtype, uint64_t seed)
    : Model(dtype) {
  const std::string model = name();
  config_ = layers::merge_config(model, view_concat_defaults(), config);
  mem_ = read_memory_config(config_, model);
  embedding_ = layers::config_int(config_, model, "embedding");
  hidden_ = layers::config_int(config_, model, "hidden");
  clip_ = clip_value(config_, model);
  pack_rows_ = config_.at("pack_rows").get<bool>();
  const int64_t vocab[2] = {layers::config_int(config_, model, "input_vocab"),
                            second_vocab(config_, model)};
  const int64_t E = embedding_, H = hidden_, RW = mem_.read_heads * mem_.word;
  Rng rng(seed);
  use_ = dnc::views_read(config_, model);
  for (int i = 0; i < 2; ++i)  // a view not read has no embedding
    if (use_[size_t(i)])
      embed_[size_t(i)] = layers::Embedding(params_, i == 0 ? "enc1.embedding" : "enc2.embedding",
                                            vocab[i], E, rng);
  cell_.emplace_back(params_, "enc.lstm", E + RW, H, rng);
  interface_ = layers::Linear(params_, "enc.interface", H, dnc::interface_size(mem_), rng);
  dec_read_ = layers::Linear(params_, "dec.read", H, layers::read_interface_size(mem_), rng);
  layers::DecoderSpec spec = layers::decoder_spec(config_, model);
  spec.hidden = H;
  spec.context = RW;
  spec.clip = clip_;
  decoder_ = layers::Decoder(params_, "dec", spec, rng);
}

ForwardResult ViewConcatDnc::forward(Tape& tape, const Batch& batch, const ForwardOptions& opts) {
  const dnc::Views views = dnc::read_views(tape, batch, name());
  const int64_t B = views.batch, RW = mem_.read_heads * mem_.word;
  const DType dtype = views.x[0].dtype();
  const LstmCell& cell = cell_.front();
  LstmState ctrl = cell.zero_state(tape, B, dtype);
  dnc::State mem = dnc::initial_state(tape, B, mem_, dtype);
  std::string prefix;
  // One DNC step of the rows with tokens ids [n, 1] from the state (c, m) of those rows; the
  // controller reads [x_t ; r_{t-1}].
  auto step = [&](const layers::TokenLstm& lstm, Var ids, LstmState& c, dnc::State& m) {
    std::optional<TapeScope> part(std::in_place, tape, "controller");  // memgrad inspect --tape
    Var reads = reshape(m.read_vectors, Shape{ids.dim(0), RW});
    c = layers::clip_state(lstm.step(tape, ids, reads, c), clip_);
    part.emplace(tape, "interface");
    const dnc::Interface iface = dnc::parse_interface(interface_(tape, c.h), mem_);
    part.reset();  // the memory step names its own parts
    m = dnc::step(m, iface, true, opts.trace, prefix, kUsageGradient);
  };
  for (int i = 0; i < 2; ++i) {  // view 1's events, then view 2's: one concatenated sequence
    if (!use_[size_t(i)] || views.length[i] == 0) continue;
    const layers::TokenLstm lstm(tape, embed_[size_t(i)], cell, views.x[i].shape().numel());
    auto ids_at = [&](int64_t t) { return slice(views.x[i], 1, t, 1); };  // [B, 1]
    const bool pack = pack_rows_ && !opts.trace;
    if (pack && layers::RetiringRows::prefix_events(views.mask[i].value())) {
      // Packed, keeping only the rows that still step (layers::RetiringRows).
      layers::RetiringRows rows(views.mask[i], 0);
      const StateFields fields = state_fields(ctrl, mem);
      for (int64_t t = 0; t < views.length[i] && rows.begin_step(t, fields) > 0; ++t)
        step(lstm, rows.take(ids_at(t)), ctrl, mem);
      rows.finish(fields);
      continue;
    }
    for (int64_t t = 0; t < views.length[i]; ++t) {
      const StepMask mask(views.mask[i], t);
      if (!mask.any()) continue;
      // One sequence: view 2's steps are numbered after view 1's.
      const int64_t step_number = t + (i == 1 && use_[0] ? views.length[0] : 0);
      const TapeScope encoder(tape, "enc"), step_scope(tape, "t", step_number);
      if (opts.trace) prefix = "enc/t" + std::to_string(step_number) + "/";
      // Packed: only the samples with an event step (layers::StepMask); else all, then blended.
      Var ids = ids_at(t);
      LstmState c = pack ? mask.take(ctrl) : ctrl;
      dnc::State m = pack ? mask.take(mem) : mem;
      step(lstm, pack ? mask.take(ids) : ids, c, m);
      ctrl = pack ? mask.put(ctrl, c) : mask.blend(c, ctrl);
      mem = pack ? mask.put(mem, m) : mask.blend(m, mem);
      if (opts.trace) {  // the state the next step reads (memgrad inspect --grad-flow)
        const std::string p = prefix + "state/";
        record(opts.trace, p, "h", ctrl.h);
        record(opts.trace, p, "c", ctrl.c);
        record(opts.trace, p, "memory", mem.memory);
      }
    }
  }
  layers::MemoryReader reader(dec_read_, mem_, std::span<const dnc::State>(&mem, 1),
                              std::span<const Var>(&mem.read_weights, 1), opts.trace, "dec/");
  Var context0 = reshape(mem.read_vectors, Shape{B, RW});
  return decoder_.run(tape, batch, opts, name(), ctrl, context0, &reader);
}

// ==================================================================================== registry

namespace {

nlohmann::json tiny(nlohmann::json extra) {
  nlohmann::json c = {{"embedding", 3},    {"hidden", 4},     {"word_size", 3},
                      {"memory_slots", 4}, {"read_heads", 1}, {"input_vocab", 7},
                      {"output_vocab", 9}};
  for (auto it = extra.begin(); it != extra.end(); ++it) c[it.key()] = *it;
  return c;
}

// Row 1 starts a new patient at every admission (patient_start), row 0 continues: the unrolled
// persistent variants check both the carried graph and the per-row restart (only persistent
// memory reads the field).
void check_batch(Rng& rng, DType dtype, Batch& batch) {
  dnc::make_check_batch(rng, dtype, batch, 7, 9);
  Tensor& start = batch.field("patient_start", Shape{batch.size}, dtype);
  for (int64_t r = 0; r < batch.size; ++r) start.set(r, r % 2);
}

const nlohmann::json kTrainDefaults = dnc::dmnc_paper_recipe();

// The check variants include the settings of documented runs: trained on the decoder's own
// predictions (README, the table with --train-teacher-forcing false), every sample stepped at every
// position (--pack-rows false, README "Packing"), and two read heads.
const bool kRegistered = [] {
  register_model(
      {.name = "dmnc-late",
       .summary = "Dual Memory Neural Computer, late fusion: two DNC encoders with separate "
                  "memories, a write-protected decoder reading both (Le et al. 2018)",
       .create = [](const nlohmann::json& c, DType d,
                    uint64_t s) { return std::make_unique<Dmnc>(Fusion::late, c, d, s); },
       .default_config = dmnc_defaults(Fusion::late),
       .train_defaults = kTrainDefaults,
       .check_configs =
           {tiny({{"variant", "sequence"}}), tiny({{"variant", "set"}, {"output", "set"}}),
            tiny({{"variant", "set-read"}, {"output", "set"}, {"set_decoder", "read"}}),
            tiny({{"variant", "sequence-cache"}, {"cache", true}}),
            tiny({{"variant", "sequence-free-running"}, {"train_teacher_forcing", false}}),
            tiny({{"variant", "sequence-unpacked"}, {"pack_rows", false}}),
            tiny({{"variant", "sequence-2heads"}, {"read_heads", 2}}),
            // More codes than the batch's tokens: the encoders project each
            // step's embedded rows, not the table (layers::TokenLstm).
            tiny({{"variant", "set-large-vocab"}, {"output", "set"}, {"input_vocab", 64}}),
            tiny({{"variant", "set-persistent-unrolled"},
                  {"output", "set"},
                  {"persistent_memory", true},
                  {"admissions", 2}})},
       .check_batch = check_batch,
       .config_before = layers::decoder_config_before()});
  register_model(
      {.name = "dmnc-early",
       .summary = "Dual Memory Neural Computer, early fusion: shared address space [M1; M2] with "
                  "a shared read function, cache-then-write (Le et al. 2018)",
       .create = [](const nlohmann::json& c, DType d,
                    uint64_t s) { return std::make_unique<Dmnc>(Fusion::early, c, d, s); },
       .default_config = dmnc_defaults(Fusion::early),
       .train_defaults = kTrainDefaults,
       .check_configs =
           {tiny({{"variant", "sequence-cache"}}),
            tiny({{"variant", "sequence-nocache"}, {"cache", false}}),
            tiny({{"variant", "set-cache"}, {"output", "set"}}),
            tiny({{"variant", "set-cache-read"}, {"output", "set"}, {"set_decoder", "read"}}),
            tiny({{"variant", "set-cache-persistent-unrolled"},
                  {"output", "set"},
                  {"persistent_memory", true},
                  {"admissions", 2}}),
            tiny({{"variant", "sequence-cache-2heads"}, {"read_heads", 2}}),
            tiny({{"variant", "sequence-cache-free-running"}, {"train_teacher_forcing", false}}),
            tiny({{"variant", "sequence-cache-unpacked"}, {"pack_rows", false}})},
       .check_batch = check_batch,
       .config_before = layers::decoder_config_before()});
  register_model(
      {.name = "dnc",
       .summary = "view-concatenated DNC: one DNC reads view 1 then view 2 (32 slots), then a "
                  "write-protected decoder (DMNC paper, Table 1 baseline)",
       .create = [](const nlohmann::json& c, DType d,
                    uint64_t s) { return std::make_unique<ViewConcatDnc>(c, d, s); },
       .default_config = view_concat_defaults(),
       .train_defaults = kTrainDefaults,
       .check_configs =
           {tiny({{"variant", "sequence"}}), tiny({{"variant", "set"}, {"output", "set"}}),
            tiny({{"variant", "set-read"}, {"output", "set"}, {"set_decoder", "read"}}),
            tiny({{"variant", "sequence-free-running"}, {"train_teacher_forcing", false}}),
            tiny({{"variant", "sequence-unpacked"}, {"pack_rows", false}}),
            tiny({{"variant", "sequence-2heads"}, {"read_heads", 2}}),
            tiny({{"variant", "set-dx-only"}, {"output", "set"}, {"views", "dx"}})},
       .check_batch = check_batch,
       .config_before = layers::decoder_config_before()});
  return true;
}();

}  // namespace
}  // namespace memgrad
