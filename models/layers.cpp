#include "models/layers.hpp"

#include "ops/ops.hpp"

namespace memgrad::layers {
namespace {

// The JSON type classes a config value may have: numbers are one class (an int default accepts a
// float and vice versa is checked by the reader), bools, strings, others.
int type_class(const nlohmann::json& j) {
  if (j.is_number()) return 0;
  if (j.is_boolean()) return 1;
  if (j.is_string()) return 2;
  return 3;
}

}  // namespace

// ------------------------------------------------------------------------------- config, batch

nlohmann::json merge_config(const std::string& model, const nlohmann::json& defaults,
                            const nlohmann::json& user) {
  nlohmann::json out = defaults;
  if (user.is_null()) return out;
  MG_CHECK(user.is_object(), model, ": the config must be a JSON object, got ", user.dump());
  for (auto it = user.begin(); it != user.end(); ++it) {
    if (it.key() == "variant") continue;
    auto d = defaults.find(it.key());
    if (d == defaults.end()) {
      std::string known;
      for (auto k = defaults.begin(); k != defaults.end(); ++k)
        known += (known.empty() ? "" : ", ") + k.key();
      fail(model, ": unknown config key '", it.key(), "' (known: ", known, ")");
    }
    MG_CHECK(type_class(*d) == type_class(*it), model, ": config key '", it.key(),
             "' must be like ", d->dump(), ", got ", it->dump());
    out[it.key()] = *it;
  }
  return out;
}

int64_t config_int(const nlohmann::json& cfg, const std::string& model, const char* key,
                   int64_t min_value) {
  const nlohmann::json& v = cfg.at(key);
  MG_CHECK(v.is_number_integer() || (v.is_number() && v.get<double>() == double(v.get<int64_t>())),
           model, ": config key '", key, "' must be a whole number, got ", v.dump());
  const int64_t x = v.get<int64_t>();
  MG_CHECK(x >= min_value, model, ": config key '", key, "' must be at least ", min_value, ", got ",
           x);
  return x;
}

const Tensor& field(const Batch& batch, const std::string& model, const std::string& name,
                    int rank) {
  MG_CHECK(batch.has(name), model, ": the batch has no field '", name, "'");
  const Tensor& t = batch.get(name);
  MG_CHECK(t.rank() == rank, model, ": batch field '", name, "' must have rank ", rank, ", got ",
           t.shape());
  return t;
}

void expect_shape(const std::string& model, const std::string& name, const Tensor& t,
                  const Shape& want) {
  MG_CHECK(t.shape() == want, model, ": batch field '", name, "' must be ", want, ", got ",
           t.shape());
}

Views read_views(Tape& tape, const Batch& batch, const std::string& model) {
  Views v;
  const char* names[2] = {"x1", "x2"};
  const char* masks[2] = {"x1_mask", "x2_mask"};
  for (int i = 0; i < 2; ++i) {
    const Tensor& x = field(batch, model, names[i], 2);
    const Tensor& m = field(batch, model, masks[i], 2);
    expect_shape(model, masks[i], m, x.shape());
    if (i == 0) v.batch = x.dim(0);
    MG_CHECK(x.dim(0) == v.batch, model, ": batch field 'x2' has ", x.dim(0),
             " samples but 'x1' has ", v.batch);
    v.length[i] = x.dim(1);
    v.x[i] = tape.input(x);
    v.mask[i] = tape.input(m);
  }
  return v;
}

// ------------------------------------------------------------------------------------- layers

Linear::Linear(ParameterSet& params, const std::string& prefix, int64_t in, int64_t out, Rng& rng,
               bool bias)
    : in_(in), out_(out) {
  MG_CHECK(in > 0 && out > 0, "Linear '", prefix, "': sizes ", in, " x ", out, " must be positive");
  w_ = &params.add_glorot(prefix + ".w", Shape{in, out}, rng);
  if (bias) b_ = &params.add(prefix + ".b", Shape{out});
}

void Linear::init_bias(int64_t begin, int64_t count, double value) {
  MG_CHECK(b_ && begin >= 0 && count >= 0 && begin + count <= out_, "Linear::init_bias: entries [",
           begin, ", ", begin + count, ") of a layer with ", b_ ? out_ : 0, " bias entries");
  for (int64_t j = begin; j < begin + count; ++j) b_->value.set(j, value);
}

void Linear::init_weights_uniform(double limit, Rng& rng) {
  MG_CHECK(limit > 0, "Linear::init_weights_uniform: limit must be positive, got ", limit);
  for (int64_t i = 0; i < w_->value.numel(); ++i) w_->value.set(i, rng.uniform(-limit, limit));
}

Var Linear::operator()(Tape& tape, Var x) const {
  return b_ ? addmm(tape.param(*b_), x, tape.param(*w_)) : matmul(x, tape.param(*w_));
}

Embedding::Embedding(ParameterSet& params, const std::string& name, int64_t rows, int64_t dim,
                     Rng& rng)
    : rows_(rows), dim_(dim) {
  MG_CHECK(rows > 0 && dim > 0, "Embedding '", name, "': sizes ", rows, " x ", dim,
           " must be positive");
  table_ = &params.add_uniform(name, Shape{rows, dim}, -1.0, 1.0, rng);
}

Var Embedding::lookup(Var table, Var ids) const {
  MG_CHECK(table.defined() && table.dim(0) == rows_, table_->name,
           ": a table to look up must have ", rows_, " rows, got ",
           table.defined() ? table.shape().str() : "undefined");
  // gather_rows would reject the id too; here the message names the table, whose size is a
  // vocabulary setting of the model or its task.
  const Tensor& v = ids.value();
  for (int64_t i = 0; i < v.numel(); ++i)
    MG_CHECK(v.at(i) >= 0 && v.at(i) < double(rows_), table_->name, ": token id ", v.at(i),
             " (position ", i, " of ids of shape ", v.shape(), ") is not in [0, ", rows_,
             "): the data has more tokens than the embedding's vocabulary setting");
  return gather_rows(table, ids);
}

Var oneplus(Var x) { return add_scalar(softplus(x), 1.0); }

// ---------------------------------------------------------------------------------- view masks

namespace {
// The DNC state whose every field is f(a's field, b's field).
template <class F>
dnc::State each_field(const dnc::State& a, const dnc::State& b, F f) {
  dnc::State s;
  s.memory = f(a.memory, b.memory);
  s.usage = f(a.usage, b.usage);
  s.link = f(a.link, b.link);
  s.precedence = f(a.precedence, b.precedence);
  s.write_weights = f(a.write_weights, b.write_weights);
  s.read_weights = f(a.read_weights, b.read_weights);
  s.read_vectors = f(a.read_vectors, b.read_vectors);
  if (a.memory_norms.defined() && b.memory_norms.defined())
    s.memory_norms = f(a.memory_norms, b.memory_norms);
  return s;
}
}  // namespace

StepMask::StepMask(Var mask, int64_t t) : mask_(mask), t_(t) {
  const Tensor& m = mask.value();
  const int64_t B = m.dim(0), T = m.dim(1);
  for (int64_t b = 0; b < B; ++b) on_ += m.at(b * T + t) != 0 ? 1 : 0;
  any_ = on_ > 0;
  all_ = on_ == B;
}

Var StepMask::rows() const {
  if (!rows_.defined()) {
    const Tensor& m = mask_.value();
    const int64_t B = m.dim(0), T = m.dim(1);
    static const char kRows = 0;
    std::vector<int64_t>& rows = mask_.tape->index_scratch(&kRows);
    rows.clear();
    for (int64_t b = 0; b < B; ++b)
      if (m.at(b * T + t_) != 0) rows.push_back(b);
    rows_ = index_leaf(*mask_.tape, rows, m.dtype());
  }
  return rows_;
}

Var StepMask::take(Var full) const { return all_ ? full : gather_rows(full, rows()); }

Var StepMask::put(Var old, Var packed) const {
  return all_ ? packed : replace_rows(old, rows(), packed);
}

LstmState StepMask::take(const LstmState& full) const { return {take(full.h), take(full.c)}; }

LstmState StepMask::put(const LstmState& old, const LstmState& packed) const {
  return {put(old.h, packed.h), put(old.c, packed.c)};
}

dnc::State StepMask::take(const dnc::State& full) const {
  return each_field(full, full, [&](Var x, Var) { return take(x); });
}

dnc::State StepMask::put(const dnc::State& old, const dnc::State& packed) const {
  return each_field(old, packed, [&](Var o, Var p) { return put(o, p); });
}

Var index_leaf(Tape& tape, std::span<const int64_t> rows, DType dtype) {
  Var v = tape.constant(Shape{int64_t(rows.size())}, dtype, 0.0);
  Tensor& t = tape.value(v.id);
  for (size_t i = 0; i < rows.size(); ++i) t.set(int64_t(i), double(rows[i]));
  return v;
}

bool RetiringRows::prefix_events(const Tensor& mask) {
  const int64_t B = mask.dim(0), T = mask.dim(1);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 1; t < T; ++t)
      if (mask.at(b * T + t) != 0 && mask.at(b * T + t - 1) == 0) return false;
  return true;
}

bool longest_first(std::span<const int64_t> lengths, std::vector<int64_t>& order) {
  // An insertion sort: stable, no allocation once order has its capacity, and n is a batch size.
  order.clear();
  bool moved = false;
  for (int64_t b = 0; b < int64_t(lengths.size()); ++b) {
    order.push_back(b);
    for (size_t p = order.size() - 1; p > 0 && lengths[size_t(order[p - 1])] < lengths[size_t(b)];
         --p) {
      std::swap(order[p], order[p - 1]);
      moved = true;
    }
  }
  return moved;
}

RetiringRows::RetiringRows(Var mask, int slot) : mask_(mask), batch_(mask.dim(0)) {
  static const char kKeys[4][5] = {};
  MG_CHECK(slot >= 0 && slot < 4, "RetiringRows: slot ", slot, " must be 0-3");
  MG_CHECK(mask.shape().rank == 2 && prefix_events(mask.value()), "RetiringRows: mask of shape ",
           mask.shape(), " must be [B, T] with each row's events a prefix of its steps");
  Tape& tape = *mask.tape;
  order_ = &tape.index_scratch(&kKeys[slot][0]);
  lengths_ = &tape.index_scratch(&kKeys[slot][1]);
  scratch_ = &tape.index_scratch(&kKeys[slot][2]);
  pieces_ = &tape.var_scratch(&kKeys[slot][3]);
  joined_ = &tape.var_scratch(&kKeys[slot][4]);
  // Each row's view length (its events are a prefix), then the rows longest first.
  const Tensor& m = mask.value();
  const int64_t T = m.dim(1);
  std::vector<int64_t>&order = *order_, &len = *scratch_;
  len.clear();
  for (int64_t b = 0; b < batch_; ++b) {
    int64_t l = 0;
    while (l < T && m.at(b * T + l) != 0) ++l;
    len.push_back(l);
  }
  sorted_ = longest_first(len, order);
  lengths_->clear();
  for (int64_t b : order) lengths_->push_back(len[size_t(b)]);
  rows_ = batch_;
  pieces_->clear();
}

Var RetiringRows::index(std::span<const int64_t> rows) const {
  return index_leaf(*mask_.tape, rows, mask_.dtype());
}

int64_t RetiringRows::begin_step(int64_t t, std::span<Var* const> fields) {
  MG_CHECK(fields_ == 0 || fields_ == fields.size(), "RetiringRows: ", fields.size(),
           " fields at step ", t, " after ", fields_);
  fields_ = fields.size();
  if (!started_) {
    started_ = true;
    // Room for the most pieces there can be (each row retires once), so that a batch with more
    // distinct lengths than any before does not allocate here.
    pieces_->reserve(fields.size() * size_t(batch_));
    joined_->reserve(size_t(batch_) + 1);
    if (sorted_) {
      const Var to_order = index(*order_);
      for (Var* f : fields) *f = gather_rows(*f, to_order);
    }
  }
  int64_t n = rows_;
  while (n > 0 && (*lengths_)[size_t(n - 1)] <= t) --n;
  if (n == rows_) return n;
  for (Var* f : fields) {
    if (n == 0) {  // every row ends: the fields are the last piece
      pieces_->push_back(*f);
      continue;
    }
    pieces_->push_back(slice(*f, 0, n, rows_ - n));  // the rows that end: a copy
    *f = slice(*f, 0, 0, n);                         // the leading rows: a view
  }
  rows_ = n;
  stepping_rows_ = Var{};
  return n;
}

Var RetiringRows::take(Var full) const {
  MG_CHECK(full.defined() && full.dim(0) == batch_,
           "RetiringRows::take: ", full.defined() ? full.shape().str() : std::string("undefined"),
           " must have ", batch_, " rows");
  MG_CHECK(rows_ > 0, "RetiringRows::take: no row steps");
  if (!sorted_) return rows_ == batch_ ? full : slice(full, 0, 0, rows_);
  if (!stepping_rows_.defined())
    stepping_rows_ = index(std::span<const int64_t>(order_->data(), size_t(rows_)));
  return gather_rows(full, stepping_rows_);
}

void RetiringRows::finish(std::span<Var* const> fields) {
  if (!started_ || (pieces_->empty() && !sorted_)) return;  // the fields are in batch order
  MG_CHECK(fields.size() == fields_, "RetiringRows::finish: ", fields.size(), " fields, stepped ",
           fields_);
  // Positions 0.. hold the rows still stepping, then the pieces from the last retirement back to
  // the first; then each batch row is fetched from its position.
  std::vector<int64_t>& position = *scratch_;
  position.assign(size_t(batch_), 0);
  for (int64_t p = 0; p < batch_; ++p) position[size_t((*order_)[size_t(p)])] = p;
  const Var to_batch = sorted_ ? index(position) : Var{};
  const size_t K = pieces_->size() / fields_;
  for (size_t f = 0; f < fields_; ++f) {
    std::vector<Var>& joined = *joined_;
    joined.clear();
    if (rows_ > 0) joined.push_back(*fields[f]);
    for (size_t k = K; k-- > 0;) joined.push_back((*pieces_)[k * fields_ + f]);
    const Var all = joined.size() == 1 ? joined[0] : concat(joined, 0);
    *fields[f] = sorted_ ? gather_rows(all, to_batch) : all;
  }
}

std::array<Var*, 2> state_fields(LstmState& s) { return {&s.h, &s.c}; }

std::array<Var*, 8> state_fields(dnc::State& s) {
  MG_CHECK(s.memory_norms.defined(), "state_fields: the DNC state's memory_norms are not set ",
           "(dnc::initial_state sets them)");
  return {&s.memory,        &s.usage,        &s.link,         &s.precedence,
          &s.write_weights, &s.read_weights, &s.read_vectors, &s.memory_norms};
}

Var StepMask::column(int rank) const {
  Var& c = cols_[rank];
  if (!c.defined()) {
    const int64_t B = mask_.dim(0);
    if (!cols_[2].defined()) cols_[2] = slice(mask_, 1, t_, 1);  // [B,1]
    if (rank != 2) {
      Shape s;
      s.rank = rank;
      s.dims = {1, 1, 1, 1};
      s.dims[0] = B;
      c = reshape(cols_[2], s);
    }
  }
  return c;
}

Var StepMask::blend(Var fresh, Var old) const {
  if (all_) return fresh;
  if (!any_) return old;
  const int rank = fresh.shape().rank;
  MG_CHECK(rank >= 2 && rank <= 4, "StepMask::blend: state of shape ", fresh.shape(),
           " must have rank 2 to 4");
  return where(column(rank), fresh, old);
}

LstmState StepMask::blend(const LstmState& fresh, const LstmState& old) const {
  return {blend(fresh.h, old.h), blend(fresh.c, old.c)};
}

dnc::State StepMask::blend(const dnc::State& fresh, const dnc::State& old) const {
  return each_field(fresh, old, [&](Var f, Var o) { return blend(f, o); });
}

// --------------------------------------------------------------------------------------- LSTMs

LstmState clip_state(const LstmState& s, double clip) {
  if (clip <= 0) return s;
  return {s.h, clamp(s.c, -clip, clip)};
}

LstmState concat_states(const LstmState& a, const LstmState& b) {
  return {concat({a.h, b.h}, 1), concat({a.c, b.c}, 1)};
}

TokenLstm::TokenLstm(Tape& tape, const Embedding& embed, const LstmCell& cell)
    : embed_(embed), cell_(cell), split_(cell.split_input(tape, embed.dim())) {
  table_ = cell.project_leading(split_, embed.table(tape));
}

LstmState TokenLstm::step(Tape& tape, Var ids, Var rest, const LstmState& prev) const {
  MG_CHECK(ids.defined() && (ids.shape().rank == 1 || (ids.shape().rank == 2 && ids.dim(1) == 1)),
           "TokenLstm '", cell_.prefix(), "': ids must be [n] or [n, 1], got ",
           ids.defined() ? ids.shape().str() : "undefined");
  if (ids.shape().rank == 2) ids = reshape(ids, Shape{ids.dim(0)});
  return cell_.step_split(tape, split_, embed_.lookup(table_, ids), rest, prev);
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

// --------------------------------------------------------------------------- reading memories

ReadInterface parse_read_interface(Var raw, const dnc::MemoryConfig& m) {
  const int64_t R = m.read_heads, W = m.word;
  MG_CHECK(raw.defined() && raw.shape().rank == 2 && raw.dim(1) == read_interface_size(m),
           "parse_read_interface: the raw read interface must be [M, ", read_interface_size(m),
           "], got ", raw.defined() ? raw.shape().str() : std::string("undefined"));
  const int64_t M = raw.dim(0);
  ReadInterface r;
  r.keys = reshape(slice(raw, 1, 0, R * W), Shape{M, R, W});
  r.strengths = oneplus(slice(raw, 1, R * W, R));
  r.modes = softmax(reshape(slice(raw, 1, R * W + R, 3 * R), Shape{M, R, 3}));
  return r;
}

MemoryReader::MemoryReader(const Linear& head, const dnc::MemoryConfig& m,
                           std::span<const dnc::State> memories, std::span<const Var> read_weights,
                           Trace* trace, std::string prefix)
    : head_(head), m_(m), k_(int64_t(memories.size())), trace_(trace), prefix_(std::move(prefix)) {
  MG_CHECK(k_ >= 1 && read_weights.size() == memories.size(),
           "MemoryReader: needs one initial read weighting per memory");
  b_ = memories[0].memory.dim(0);
  if (k_ == 1) {
    memory_ = memories[0].memory;
    link_ = memories[0].link;
    read_weights_ = read_weights[0];
    memory_norms_ =
        memories[0].memory_norms.defined() ? memories[0].memory_norms : dnc::memory_norms(memory_);
    return;
  }
  constexpr int64_t kMaxMemories = 4;  // fixed arrays: no allocation per step
  MG_CHECK(k_ <= kMaxMemories, "MemoryReader: at most ", kMaxMemories, " memories, got ", k_);
  Var ms[kMaxMemories], ls[kMaxMemories], ns[kMaxMemories];
  bool norms = true;
  for (int64_t k = 0; k < k_; ++k) {
    ms[k] = memories[size_t(k)].memory;
    ls[k] = memories[size_t(k)].link;
    ns[k] = memories[size_t(k)].memory_norms;
    norms = norms && ns[k].defined();
  }
  const int64_t N = m.slots, W = m.word, R = m.read_heads;
  memory_ = reshape(stack(std::span<const Var>(ms, size_t(k_)), 1), Shape{b_ * k_, N, W});
  link_ = reshape(stack(std::span<const Var>(ls, size_t(k_)), 1), Shape{b_ * k_, N, N});
  read_weights_ = reshape(stack(read_weights, 1), Shape{b_ * k_, R, N});
  memory_norms_ =
      norms ? reshape(stack(std::span<const Var>(ns, size_t(k_)), 1), Shape{b_ * k_, 1, N})
            : dnc::memory_norms(memory_);
}

Var MemoryReader::read(Tape& tape, const LstmState& state) {
  const Var h = state.h;
  const int64_t R = m_.read_heads, W = m_.word;
  MG_CHECK(h.shape().rank == 2 && h.dim(0) == b_ && h.dim(1) == k_ * head_.in(),
           "MemoryReader: decoder state must be [", b_, ", ", k_ * head_.in(), "], got ",
           h.shape());
  Var o = k_ == 1 ? h : reshape(h, Shape{b_ * k_, head_.in()});  // row b*K + k holds o_k
  const ReadInterface r = parse_read_interface(head_(tape, o), m_);
  Var content = dnc::content_weighting(memory_, r.keys, r.strengths, memory_norms_);
  const dnc::DirectionalResult dir = dnc::directional_read(link_, read_weights_);
  const dnc::ReadResult read =
      dnc::read_weighting(content, dir.forward, dir.backward, r.modes, memory_);
  read_weights_ = read.read_weights;
  if (trace_) {
    const std::string p = prefix_ + "t" + std::to_string(step_) + "/";
    trace_->record(p + "read_weights", read.read_weights.value().view(Shape{b_, k_ * R, m_.slots}));
    trace_->record(p + "read_modes", r.modes.value().view(Shape{b_, k_ * R, 3}));
  }
  ++step_;
  return reshape(read.read_vectors, Shape{b_, k_ * R * W});
}

void MemoryReader::take_rows(Tape& tape, Var rows) {
  // Row b*K + k holds memory k of sample b: sample rows[j] keeps K consecutive rows.
  const Tensor& r = rows.value();
  const int64_t n = r.numel();
  static const char kKept = 0;
  std::vector<int64_t>& kept_rows = tape.index_scratch(&kKept);
  kept_rows.clear();
  for (int64_t j = 0; j < n; ++j)
    for (int64_t k = 0; k < k_; ++k) kept_rows.push_back(int64_t(r.at(j)) * k_ + k);
  Var kept = index_leaf(tape, kept_rows, r.dtype());
  memory_ = gather_rows(memory_, kept);
  link_ = gather_rows(link_, kept);
  read_weights_ = gather_rows(read_weights_, kept);
  memory_norms_ = gather_rows(memory_norms_, kept);
  b_ = n;
}

void MemoryReader::keep_leading(int64_t n) {
  MG_CHECK(n >= 1 && n <= b_, "MemoryReader::keep_leading: ", n, " of ", b_, " rows");
  // Sample b's K rows are rows b*K .. b*K + K-1: the leading n samples are the leading n*K rows.
  memory_ = slice(memory_, 0, 0, n * k_);
  link_ = slice(link_, 0, 0, n * k_);
  read_weights_ = slice(read_weights_, 0, 0, n * k_);
  memory_norms_ = slice(memory_norms_, 0, 0, n * k_);
  b_ = n;
}

Attention::Attention(ParameterSet& params, const std::string& prefix, int64_t value_size,
                     int64_t query_size, int64_t attention_size, Rng& rng, double init_range)
    : key_(params, prefix + ".key", value_size, attention_size, rng, /*bias=*/false),
      query_(params, prefix + ".query", query_size, attention_size, rng),
      score_(params, prefix + ".score", attention_size, 1, rng, /*bias=*/false) {
  if (init_range > 0)
    for (Linear* l : {&key_, &query_, &score_}) l->init_weights_uniform(init_range, rng);
}

Attention::Memory Attention::prepare(Tape& tape, Var outputs, Var mask) const {
  Memory m;
  m.outputs = outputs;
  m.keys = key_(tape, outputs);
  m.mask = mask;
  // 0 on events, -1e9 elsewhere: exp underflows to exactly 0 in float32 and float64.
  m.bias = scale_shift(mask, 1e9, -1e9);
  return m;
}

Var Attention::attend(Tape& tape, const Memory& mem, Var query, Var* weights) const {
  const int64_t B = mem.outputs.dim(0), T = mem.outputs.dim(1), H = mem.outputs.dim(2);
  const int64_t A = key_.out();
  Var q = reshape(query_(tape, query), Shape{B, 1, A});
  Var e = reshape(score_(tape, tanh(add(mem.keys, q))), Shape{B, T});
  Var a = mul(softmax(add(e, mem.bias)), mem.mask);  // an empty view: all weights 0
  if (weights) *weights = a;
  return reshape(bmm(reshape(a, Shape{B, 1, T}), mem.outputs), Shape{B, H});
}

// ------------------------------------------------------------------------------------- decoder

DecoderSpec decoder_spec(const nlohmann::json& cfg, const std::string& model) {
  const std::string out = cfg.at("output").get<std::string>();
  MG_CHECK(out == "sequence" || out == "set", model,
           ": config key 'output' must be \"sequence\" or \"set\", got \"", out, "\"");
  DecoderSpec spec;
  spec.output_vocab = config_int(cfg, model, "output_vocab");
  spec.embedding = config_int(cfg, model, "embedding");
  spec.sequence = out == "sequence";
  spec.feedback = cfg.at("decoder_feedback").get<bool>();
  spec.train_teacher_forcing = cfg.at("train_teacher_forcing").get<bool>();
  spec.pack_rows = cfg.at("pack_rows").get<bool>();
  return spec;
}

Decoder::Decoder(ParameterSet& params, const std::string& prefix, const DecoderSpec& spec, Rng& rng)
    : spec_(spec) {
  if (spec.sequence) {
    embedding_ =
        Embedding(params, prefix + ".embedding", spec.output_vocab + 1, spec.embedding, rng);
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
  Var features = init.h;
  if (reader) features = concat({init.h, reader->read(tape, init)}, 1);
  ForwardResult r;
  r.predictions = out_(tape, features);  // [B, V]
  r.loss = bce_with_logits(r.predictions, tape.input(labels));
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
    if (!pack)
      logits = out_(tape, features(stack(hs, 1), context_out ? stack(cs, 1) : Var{}));  // [B,L,V]
    else
      logits = unpack(
          hs.empty() ? Var{}
                     : out_(tape, features(concat(hs, 0), context_out ? concat(cs, 0) : Var{})));
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

// --------------------------------------------------------------------------------- check batch

nlohmann::json dmnc_paper_recipe() {
  return {{"optimizer", "adam"},    {"lr", 1e-3},           {"batch", 50},
          {"iterations", 10000},    {"clip_value", 10.0},   {"clip_norm", 5.0},
          {"lr_decay_start", 5000}, {"lr_decay_final", 0.1}};
}

void make_check_batch(Rng& rng, DType dtype, Batch& batch, int64_t input_vocab,
                      int64_t output_vocab, int64_t input_vocab2) {
  if (input_vocab2 <= 0) input_vocab2 = input_vocab;
  const int64_t B = 2, L = 3;
  // Per sample lengths: view 1 {3, 1}, view 2 {2, 3}, output {3, 2}.
  const int64_t len1[B] = {3, 1}, len2[B] = {2, 3}, leny[B] = {3, 2};
  // Create every field first: a new field may move the others (references into the batch).
  for (const char* f : {"x1", "x2", "x1_mask", "x2_mask", "y", "y_mask"})
    batch.field(f, Shape{B, L}, dtype);
  batch.field("labels", Shape{B, output_vocab}, dtype);
  Tensor& x1 = batch.field("x1", Shape{B, L}, dtype);
  Tensor& x2 = batch.field("x2", Shape{B, L}, dtype);
  Tensor& m1 = batch.field("x1_mask", Shape{B, L}, dtype);
  Tensor& m2 = batch.field("x2_mask", Shape{B, L}, dtype);
  Tensor& y = batch.field("y", Shape{B, L}, dtype);
  Tensor& ym = batch.field("y_mask", Shape{B, L}, dtype);
  Tensor& labels = batch.field("labels", Shape{B, output_vocab}, dtype);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t t = 0; t < L; ++t) {
      const int64_t at = b * L + t;
      if (t < len1[b])
        x1.set(at, double(1 + int64_t(rng.below(uint64_t(input_vocab - 1))))), m1.set(at, 1);
      if (t < len2[b])
        x2.set(at, double(1 + int64_t(rng.below(uint64_t(input_vocab2 - 1))))), m2.set(at, 1);
      if (t < leny[b]) y.set(at, double(rng.below(uint64_t(output_vocab)))), ym.set(at, 1);
    }
    labels.set(b * output_vocab + int64_t(rng.below(uint64_t(output_vocab))), 1);
    for (int64_t c = 0; c < output_vocab; ++c)
      if (rng.uniform() < 0.3) labels.set(b * output_vocab + c, 1);
  }
  batch.size = B;
}

}  // namespace memgrad::layers
