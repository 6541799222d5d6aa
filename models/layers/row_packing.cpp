#include "models/layers/row_packing.hpp"

#include "ops/ops.hpp"

namespace memgrad::layers {

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

}  // namespace memgrad::layers
