#include "engine/tape.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <ostream>
#include <sstream>

namespace memgrad {
namespace {
const OpDef kInput{"input", true};
const OpDef kParameter{"parameter", true};
const OpDef kDetach{"detach", true};
const OpDef kConstant{"constant", true};
}  // namespace

Tensor Var::grad() const { return tape->has_grad(id) ? tape->grad(id) : Tensor(); }

void Tape::ensure_slot(NodeId id) {
  if (values_.size() > size_t(id)) return;
  const size_t n = std::max({size_t(id) + 1, values_.size() * 3 / 2, size_t(64)});
  nodes_.reserve(n);
  inputs_.reserve(2 * n);
  grad_live_.resize(n, 0);
  bound_.resize(n, 0);
  read_.resize(n, 0);
  while (values_.size() < n) {
    values_.push_back(Tensor::arena_slot());
    grads_.push_back(Tensor::arena_slot());
    saved_.push_back(Tensor::arena_slot());
    spare_.emplace_back();
    grad_spare_.emplace_back();
  }
}

Tape::~Tape() { reset(); }  // hands values someone still holds over to them

void Tape::make_room(size_t factor) {
  const size_t n = nodes_.size() * factor;
  if (n > 0) ensure_slot(NodeId(n - 1));
  inputs_.reserve(inputs_.size() * factor);
  aliased_grads_.reserve(n);  // a node's gradient is aliased at most once a step
  arena_.reserve(arena_.demand_high_water() * factor);
}

Var Tape::add_leaf(const Tensor& value, bool requires_grad, Parameter* param) {
  MG_CHECK(value.defined(), "tape input: undefined tensor");
  const NodeId id = NodeId(nodes_.size());
  Node n;
  n.op = param ? &kParameter : &kInput;
  n.requires_grad = requires_grad && grad_enabled_;
  n.param = param;
  n.scope = scope_;
  n.inputs_begin = int32_t(inputs_.size());
  nodes_.push_back(n);
  ensure_slot(id);
  // A leaf shares its tensor's storage (it never copies its data); the slot's own buffer waits in
  // spare_ for the next computed node recorded at this position.
  Tensor& slot = values_[size_t(id)];
  if (slot.defined() && slot.storage_users() == 1) spare_[size_t(id)] = std::move(slot);
  slot = value;
  grad_live_[size_t(id)] = 0;
  if (param) param_leaves_.push_back(id);
  if (param && param_grads_in_place_ && nodes_[size_t(id)].requires_grad) {
    MG_CHECK(param->grad.shape() == value.shape() && param->grad.dtype() == value.dtype(),
             "parameter '", param->name, "': gradient buffer of shape ", param->grad.shape(),
             " does not match its value's ", value.shape());
    alias_grad(id, param->grad);
  }
  if (detect_anomaly_) check_value(id);
  return Var{this, id};
}

Var Tape::input(const Tensor& value, bool requires_grad) {
  return add_leaf(value, requires_grad, nullptr);
}

Var Tape::param(Parameter& p) {
  // One leaf per parameter per step: reuse it when the parameter is used again.
  for (NodeId id : param_leaves_)
    if (nodes_[size_t(id)].param == &p) return Var{this, id};
  return add_leaf(p.value, true, &p);
}

Var detach(Var x) {
  // A copy in the node's own slot rather than a leaf sharing x's storage: a shared buffer could
  // not be reused by the next step, which would then allocate.
  Var out = x.tape->record(kDetach, x.shape(), x.dtype(), std::span<const Var>(), nullptr);
  x.tape->value(out.id).copy_from(x.value());
  return out;
}

Var Tape::constant(const Shape& shape, DType dtype, double value) {
  Var out = record(kConstant, shape, dtype, std::span<const Var>(), nullptr);
  values_[size_t(out.id)].fill(value);
  return out;
}

bool Tape::is_zero_constant(NodeId id) const {
  if (nodes_[size_t(id)].op != &kConstant) return false;
  const Tensor& v = values_[size_t(id)];
  bool zero = true;
  MG_DISPATCH(v.dtype(), T, {
    const T* p = v.data<T>();
    for (int64_t i = 0; i < v.numel() && zero; ++i) zero = p[i] == T(0);
  });
  return zero;
}

NodeId Tape::append(const OpDef& op, std::span<const Var> inputs, BackwardFn backward, bool view) {
  // The gradient-check registry skips leaves (ops_without_grad_case): a leaf with a backward would
  // be a gradient no check covers.
  MG_CHECK(!(op.leaf && backward), "op '", op.name,
           "' is a leaf (no gradient check covers it) and cannot be recorded with a backward");
  const NodeId id = NodeId(nodes_.size());
  if (profile_) {
    end_forward_interval();
    profiled_op_ = &op;
  }
  Node n;
  n.op = &op;
  n.scope = scope_;
  n.inputs_begin = int32_t(inputs_.size());
  n.num_inputs = int32_t(inputs.size());
  bool needs = false;
  for (const Var& v : inputs) {
    MG_CHECK(v.tape == this, op.name, ": input comes from another tape (or is undefined)");
    MG_CHECK(!(bound_[size_t(v.id)] & kReleased), op.name, ": input node ", v.id, " (op '",
             nodes_[size_t(v.id)].op->name,
             "') was released as a temporary (Tape::release_temporaries): keep it in its "
             "Temporaries scope");
    inputs_.push_back(v.id);
    needs = needs || nodes_[size_t(v.id)].requires_grad;
  }
  // The previous op has filled its value by now: anomaly mode checks it here.
  if (detect_anomaly_ && id > 0) check_value(id - 1);
  n.requires_grad = needs && grad_enabled_ && backward != nullptr;
  n.backward = n.requires_grad ? backward : nullptr;
  n.view = view;
  nodes_.push_back(n);
  ensure_slot(id);
  grad_live_[size_t(id)] = 0;
  return id;
}

Var Tape::record(const OpDef& op, const Shape& shape, DType dtype, std::span<const Var> inputs,
                 BackwardFn backward) {
  const NodeId id = append(op, inputs, backward, false);
  Tensor& slot = values_[size_t(id)];
  if (!slot.defined() && spare_[size_t(id)].defined()) slot = std::move(spare_[size_t(id)]);
  slot.bind_to_arena(arena_, shape, dtype);
  bound_[size_t(id)] |= kValueBound;
  if (profile_) profile_->add_value_bytes(&op, double(slot.bytes()));
  return Var{this, id};
}

Var Tape::record_view(const OpDef& op, Var x, const Shape& shape, BackwardFn backward) {
  const NodeId id = append(op, std::span<const Var>(&x, 1), backward, true);
  Tensor& slot = values_[size_t(id)];
  if (slot.defined() && slot.storage_users() == 1) spare_[size_t(id)] = std::move(slot);
  slot = values_[size_t(x.id)].leading(shape);
  return Var{this, id};
}

void Tape::alias_grad(NodeId id, const Tensor& shared) {
  Tensor& g = grads_[size_t(id)];
  if (g.defined() && g.storage_users() == 1) grad_spare_[size_t(id)] = std::move(g);
  g = shared;
  grad_live_[size_t(id)] = 1;  // live from the start: contributions add to what it holds
  aliased_grads_.push_back(id);
  bound_[size_t(id)] = uint8_t((bound_[size_t(id)] & ~kGradBound) | kGradAliased);
}

bool Tape::can_move_grad(NodeId id, NodeId in) const {
  if (!move_grads_ || !grad_live_[size_t(id)] || grad_live_[size_t(in)] ||
      !nodes_[size_t(in)].requires_grad)
    return false;
  const Tensor &g = grads_[size_t(id)], &v = values_[size_t(in)];
  return g.numel() == v.numel() && g.dtype() == v.dtype();
}

bool Tape::move_grad(NodeId id, NodeId in) {
  if (!can_move_grad(id, in)) return false;
  // in's gradient becomes a view of id's buffer (whose backward is done with it).
  alias_grad(in, grads_[size_t(id)].view(values_[size_t(in)].shape()));
  grad_live_[size_t(id)] = 0;  // id's gradient is gone: in's accumulates into its buffer
  return true;
}

void Tape::pass_grad(NodeId id, NodeId in, bool may_move) {
  if (may_move && move_grad(id, in)) return;
  const Tensor& g = grads_[size_t(id)];
  MG_CHECK(g.numel() == values_[size_t(in)].numel(), "pass_grad: node ", id, "'s gradient has ",
           g.numel(), " elements, input ", in, " has ", values_[size_t(in)].numel());
  bool overwrite = false;
  Tensor& gin = grad_for_write(in, overwrite);
  MG_DISPATCH(g.dtype(), T, {
    const T* src = g.data<T>();
    T* dst = gin.data<T>();
    if (overwrite)
      std::copy_n(src, g.numel(), dst);
    else
      for (int64_t i = 0; i < g.numel(); ++i) dst[i] += src[i];
  });
}

Tensor& Tape::make_saved(NodeId id, const Shape& shape, DType dtype) {
  saved_[size_t(id)].bind_to_arena(arena_, shape, dtype);
  bound_[size_t(id)] |= kSavedBound;
  return saved_[size_t(id)];
}

Tensor& Tape::grad(NodeId id) {
  Tensor& g = grads_[size_t(id)];
  if (!grad_live_[size_t(id)]) {
    bool fresh = false;
    grad_for_write(id, fresh);
    g.zero();
  }
  return g;
}

Tensor& Tape::grad_for_write(NodeId id, bool& overwrite) {
  Tensor& g = grads_[size_t(id)];
  overwrite = !grad_live_[size_t(id)];
  if (overwrite && !grad_in_input(id)) {
    const Tensor& v = values_[size_t(id)];
    g.bind_to_arena(arena_, v.shape(), v.dtype());
    grad_live_[size_t(id)] = 1;
    bound_[size_t(id)] |= kGradBound;
  }
  return g;
}

bool Tape::grad_in_input(NodeId id) {
  // A view's gradient is the leading part of its input's, when that has none yet: the view's
  // backward then has nothing to copy. Its input's other elements start at zero.
  if (!move_grads_ || !nodes_[size_t(id)].view) return false;
  const NodeId in = input_id(id, 0);
  if (grad_live_[size_t(in)] || !nodes_[size_t(in)].requires_grad) return false;
  bool fresh = false;
  Tensor& gin = grad_for_write(in, fresh);  // in may be a view too
  const Tensor& v = values_[size_t(id)];
  MG_DISPATCH(gin.dtype(), T,
              { std::fill(gin.data<T>() + v.numel(), gin.data<T>() + gin.numel(), T(0)); });
  alias_grad(id, gin.leading(v.shape()));
  return true;
}

bool Tape::grad_is_in_input(NodeId id) const {
  const NodeId in = input_id(id, 0);
  return grad_live_[size_t(in)] && grads_[size_t(id)].raw() == grads_[size_t(in)].raw();
}

void Tape::mark_read_values(size_t begin) {
  const size_t end = nodes_.size();
  std::fill(read_.begin() + ptrdiff_t(begin), read_.begin() + ptrdiff_t(end), uint8_t(0));
  for (size_t i = begin; i < end; ++i) {
    const Node& n = nodes_[i];
    if (!n.backward) continue;  // no gradient reaches it: its backward never runs
    const BackwardReads& reads = n.op->backward_reads;
    if (reads.output) read_[i] = 1;
    for (int k = 0; k < n.num_inputs; ++k) {
      const size_t in = size_t(input_id(NodeId(i), k));
      if (in < begin || !reads.input(k)) continue;
      // A factor of a product is read only for the other factor's gradient.
      const bool factor = reads.pair >= 0 && (k == reads.pair || k == reads.pair + 1);
      if (!factor || nodes_[size_t(input_id(NodeId(i), 2 * reads.pair + 1 - k))].requires_grad)
        read_[in] = 1;
    }
  }
}

void Tape::release_temporaries(NodeId begin, std::span<const Var> keep) noexcept {
  if (!release_temporaries_) return;
  const size_t first = size_t(begin), end = nodes_.size();
  mark_read_values(first);
  for (const Var& v : keep)
    if (v.tape == this && size_t(v.id) >= first) read_[size_t(v.id)] = 1;
  // Anomaly mode checks a value when the next op is recorded: the newest one waits for that.
  const size_t stop = detect_anomaly_ && end > 0 ? end - 1 : end;
  for (size_t i = first; i < stop; ++i)
    if (!read_[i]) release_node(i);
}

void Tape::release_node(size_t i) noexcept {
  if (!owns_value(i)) return;
  size_t bytes = 0;
  // A value someone else holds (a view of it, a caller's copy) stays.
  if (void* p = values_[i].sole_arena_block(bytes)) {
    arena_.give_back(p, bytes);
    released_bytes_ += bytes;
    bound_[i] = uint8_t((bound_[i] & ~kValueBound) | kReleased);
  }
}

void Tape::release_value(Var v) noexcept {
  if (!release_temporaries_ || v.tape != this) return;
  const size_t i = size_t(v.id);
  if (detect_anomaly_ && i + 1 == nodes_.size()) return;  // checked when the next op is recorded
  mark_read_values(i);
  if (!read_[i]) release_node(i);
}

void Tape::poison_unread_values() {
  mark_read_values(0);
  for (size_t i = 0; i < nodes_.size(); ++i)
    if (!read_[i] && owns_value(i)) values_[i].fill(std::numeric_limits<double>::quiet_NaN());
}

void Tape::check_value(NodeId id) const {
  const int64_t bad = first_non_finite(values_[size_t(id)]);
  if (bad < 0) return;
  const Node& n = nodes_[size_t(id)];
  fail("anomaly: op '", n.op->name, "' (node ", id, ") produced a non-finite value ",
       values_[size_t(id)].at(bad), " at element ", bad, " of its output of shape ",
       values_[size_t(id)].shape());
}

void Tape::backward(Var loss, bool flush_params) {
  MG_CHECK(loss.tape == this, "backward: the loss belongs to another tape");
  MG_CHECK(loss.value().numel() == 1, "backward: the loss must be a scalar, got shape ",
           loss.shape(), " (use backward(out, upstream) for a non-scalar output)");
  if (detect_anomaly_) check_value(loss.id);
  grad(loss.id).fill(1.0);
  run_backward(loss.id, flush_params);
}

void Tape::backward(Var out, const Tensor& upstream, bool flush_params) {
  MG_CHECK(out.tape == this, "backward: the output belongs to another tape");
  MG_CHECK(upstream.shape() == out.shape(), "backward: upstream gradient of shape ",
           upstream.shape(), " for an output of shape ", out.shape());
  if (detect_anomaly_) check_value(out.id);
  grad(out.id).copy_from(upstream);
  run_backward(out.id, flush_params);
}

void Tape::end_forward_interval() {
  const auto now = OpProfile::Clock::now();
  if (profiled_op_) profile_->add_forward(profiled_op_, ms_between(profiled_since_, now));
  profiled_op_ = nullptr;
  profiled_since_ = now;
}

void Tape::run_backward(NodeId from, bool flush_params) {
  // Moved gradients are views of buffers a second pass would add into again: one pass per step.
  MG_CHECK(!move_grads_ || !backward_done_,
           "backward: this tape moves gradients (set_move_grads), so it runs one backward per "
           "step; call reset() before the next");
  backward_done_ = true;
  params_flushed_ = false;
  if (profile_) end_forward_interval();
  for (NodeId id = from; id >= 0; --id) {
    backward_node(id);
    if (move_grads_) retire(id, from);
  }
  if (flush_params) flush_param_grads();
}

void Tape::backward_node(NodeId id) {
  const Node& n = nodes_[size_t(id)];
  if (!n.backward || !grad_live_[size_t(id)]) return;
  if (n.view && grad_is_in_input(id)) return;  // its gradient is already its input's
  if (profile_) {
    const auto t0 = OpProfile::Clock::now();
    n.backward(*this, id);
    profile_->add_backward(n.op, ms_between(t0, OpProfile::Clock::now()));
  } else {
    n.backward(*this, id);
  }
  if (!detect_anomaly_) return;
  for (int k = 0; k < n.num_inputs; ++k) {
    const NodeId in = input_id(id, k);
    if (!grad_live_[size_t(in)]) continue;
    const int64_t bad = first_non_finite(grads_[size_t(in)]);
    if (bad >= 0)
      fail("anomaly: the backward of op '", n.op->name, "' (node ", id,
           ") produced a non-finite gradient for its input ", k, " (node ", in, ", op '",
           nodes_[size_t(in)].op->name, "') at element ", bad);
  }
}

void Tape::retire(NodeId id, NodeId loss) {
  const size_t i = size_t(id);
  const Node& n = nodes_[i];
  size_t bytes = 0;
  auto give_back_if_sole = [&](const Tensor& t) {
    if (void* p = t.sole_arena_block(bytes)) arena_.give_back(p, bytes);
  };
  // The loss's value may be read after backward; leaves' values are their owners', and their
  // gradients are the results (inputs) or still to be flushed (parameters).
  const bool leaf = n.op == &kInput || n.op == &kParameter;
  if (n.view)
    values_[i] = Tensor();  // as reset() does; the input's slot gives the memory back
  else if ((bound_[i] & kValueBound) && id != loss)
    give_back_if_sole(values_[i]);
  if (bound_[i] & kSavedBound) give_back_if_sole(saved_[i]);
  if (leaf) return;
  if (bound_[i] & kGradBound) {
    give_back_if_sole(grads_[i]);
  } else if (bound_[i] & kGradAliased) {
    // A view's gradient inside its input's belongs to that lower, still working node; any other
    // alias (a gradient moved down from a node above) is the last user once its owner is done.
    const bool in_input = n.view && grad_is_in_input(id);
    Tensor alias = std::move(grads_[i]);
    grads_[i] = std::move(grad_spare_[i]);
    bound_[i] &= uint8_t(~kGradAliased);
    // Held now by `alias` and, unless someone kept it, by the owner's slot alone.
    if (!in_input && alias.storage_users() == 2)
      if (void* p = alias.arena_block(bytes)) arena_.give_back(p, bytes);
  }
}

void Tape::flush_param_grads() {
  if (params_flushed_) return;  // flushed once per backward: a second flush adds nothing
  params_flushed_ = true;
  for (NodeId id : param_leaves_) {
    if (!grad_live_[size_t(id)]) continue;
    Parameter& p = *nodes_[size_t(id)].param;
    if (grads_[size_t(id)].raw() == p.grad.raw()) continue;  // in place: already there
    const Tensor& g = grads_[size_t(id)];
    MG_CHECK(p.grad.shape() == g.shape() && p.grad.dtype() == g.dtype(), "parameter '", p.name,
             "': gradient buffer of shape ", p.grad.shape(), " does not match ", g.shape());
    MG_DISPATCH(g.dtype(), T, {
      const T* src = g.data<T>();
      T* dst = p.grad.data<T>();
      for (int64_t i = 0; i < g.numel(); ++i) dst[i] += src[i];
    });
  }
}

void Tape::reset() {
  profiled_op_ = nullptr;  // a forward without backward: its last op's interval is unknown
  // Leaves share their tensor's storage; drop those references so the owner (a batch field, say)
  // can refill its buffer in place instead of allocating a new one for the next step.
  for (size_t i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].op == &kInput || nodes_[i].op == &kParameter || nodes_[i].view)
      values_[i] = Tensor();
  // Likewise Parameter::grad, which in-place leaves held; their slots get their own buffers back.
  for (NodeId id : aliased_grads_)
    if (bound_[size_t(id)] & kGradAliased) grads_[size_t(id)] = std::move(grad_spare_[size_t(id)]);
  aliased_grads_.clear();
  // Values kept past the step (a caller's copy of a node's value or gradient) get memory of their
  // own; then the whole arena is free for the next step.
  for (size_t i = 0; i < nodes_.size(); ++i) {
    values_[i].release_arena_memory();
    grads_[i].release_arena_memory();
    saved_[i].release_arena_memory();
  }
  arena_.rewind();
  backward_done_ = false;
  released_bytes_ = 0;
  nodes_.clear();
  inputs_.clear();
  param_leaves_.clear();
  noise_counter_ = 0;
  params_flushed_ = false;
  for (size_t i = 0; i < values_.size(); ++i) grad_live_[i] = bound_[i] = 0;
}

namespace {
// The vector stored under `key` in `store`, added on first use (a deque keeps references valid).
template <class T>
std::vector<T>& keyed(std::deque<std::pair<const void*, std::vector<T>>>& store, const void* key) {
  for (auto& [k, v] : store)
    if (k == key) return v;
  return store.emplace_back(key, std::vector<T>()).second;
}
}  // namespace

std::vector<int64_t>& Tape::index_scratch(const void* key) { return keyed(index_scratch_, key); }
std::vector<Var>& Tape::var_scratch(const void* key) { return keyed(var_scratch_, key); }

Rng Tape::noise_stream() {
  const uint64_t key = mix64(step_ * 0x9e3779b97f4a7c15ULL + noise_counter_++);
  return Rng(seed_, key);
}

const Tensor& Tape::live_grad(NodeId id) const {
  MG_CHECK(grad_live_[size_t(id)], "node ", id, " (op '", nodes_[size_t(id)].op->name,
           "') has no gradient from the last backward");
  return grads_[size_t(id)];
}

void Tape::enter_scope(std::string_view name, int64_t index) {
  // Appended piece by piece: g++ 12 warns falsely (-Wrestrict) on "a" + std::to_string(i).
  std::string path = scope_paths_[size_t(scope_)];
  if (!path.empty()) path += '/';
  path += name;
  if (index >= 0) path += std::to_string(index);
  // Searched from the newest: a step's scopes are met again by its next op.
  for (size_t k = scope_paths_.size(); k-- > 0;)
    if (scope_paths_[k] == path) {
      scope_ = int32_t(k);
      return;
    }
  scope_paths_.push_back(std::move(path));
  scope_ = int32_t(scope_paths_.size() - 1);
}

void Tape::print(std::ostream& out) const {
  out << std::left << std::setw(7) << "node" << std::setw(20) << "op" << std::setw(16) << "shape"
      << std::setw(18) << "inputs" << std::setw(14) << "|value|" << std::setw(14) << "|grad|"
      << "parameter\n";
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node& n = nodes_[i];
    std::string ins;
    for (int k = 0; k < n.num_inputs; ++k) {
      if (k) ins += ',';
      ins += std::to_string(inputs_[size_t(n.inputs_begin + k)]);
    }
    // Columns stay aligned when a field overflows its width: at least one space between.
    auto cell = [&](const std::string& text, size_t width) {
      out << text << std::string(text.size() < width ? width - text.size() : 1, ' ');
    };
    std::ostringstream value, grad;
    if (bound_[i] & kReleased)
      value << "released";
    else
      value << l2_norm_of(values_[i]);
    if (grad_live_[i])
      grad << l2_norm_of(grads_[i]);
    else
      grad << "-";
    cell(std::to_string(i), 7);
    cell(n.op->name, 20);
    cell(values_[i].shape().str(), 16);
    cell(ins.empty() ? "-" : ins, 18);
    cell(value.str(), 14);
    if (n.param) {
      cell(grad.str(), 14);
      out << n.param->name;
    } else {
      out << grad.str();
    }
    out << '\n';
  }
}

}  // namespace memgrad
