// The tape: a define-by-run record of a computation, for reverse-mode autodiff.
//
// Calling an op computes its value at once and appends a Node: the op, its inputs, a backward
// function and a few saved numbers. A Var is a handle (tape + node index). backward(loss) walks the
// nodes in reverse creation order, and each node's backward adds into its inputs' gradients.
// Node values, gradients and saved tensors live in the tape's arena (engine/arena.hpp), given back
// all at once by reset(): a step allocates nothing on the heap unless it needs more bytes in all,
// or more nodes, than the tape has held before (both grow geometrically when it does).
#pragma once
#include <array>
#include <cstdint>
#include <deque>
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/arena.hpp"
#include "engine/op_def.hpp"
#include "engine/op_profile.hpp"
#include "engine/parameter.hpp"
#include "engine/rng.hpp"
#include "engine/tensor.hpp"

namespace memgrad {

class Tape;
using NodeId = int32_t;

// A handle to a node of a tape. Cheap to copy; valid until the tape is reset.
struct Var {
  Tape* tape = nullptr;
  NodeId id = -1;

  bool defined() const { return tape != nullptr; }
  const Tensor& value() const;
  const Shape& shape() const;
  DType dtype() const;
  int64_t dim(int i) const { return shape()[i]; }
  // The gradient of the last backward() with respect to this node (an undefined tensor if none
  // reached it).
  Tensor grad() const;
};

// Backward of one node: reads the node's gradient and adds into its inputs' gradients.
using BackwardFn = void (*)(Tape& tape, NodeId node);

struct Node {
  const OpDef* op = nullptr;
  BackwardFn backward = nullptr;  // null for leaves and for nodes that need no gradient
  int32_t inputs_begin = 0;       // into the tape's input pool
  int32_t num_inputs = 0;
  bool requires_grad = false;
  bool view = false;           // its value shares an input's storage (record_view)
  Parameter* param = nullptr;  // set on parameter leaves
  int32_t scope = 0;           // the model part that recorded it (Tape::scope_path); 0 = none
  // Small saved arguments (axis, flags, scalars) an op's backward needs.
  std::array<int64_t, 4> ints{};
  std::array<double, 2> reals{};
};

class Tape {
 public:
  explicit Tape(uint64_t seed = 0) : seed_(seed) {}
  ~Tape();
  Tape(const Tape&) = delete;
  Tape& operator=(const Tape&) = delete;

  // ---- leaves
  // A constant input (data). With requires_grad it gets a gradient (gradient checks, inspection).
  Var input(const Tensor& value, bool requires_grad = false);
  // A parameter: one leaf per parameter per tape; its gradient is added into param.grad by
  // backward() (or by flush_param_grads()).
  Var param(Parameter& p);
  // A constant filled with `value` (zeros for initial states, ones for masks), in the node's own
  // reused slot: no allocation in steady state.
  Var constant(const Shape& shape, DType dtype, double value);
  // Whether node id is a constant (made by constant()) whose every element is 0 now: ops may skip
  // work it makes trivial (a product with an initial state h = 0). Scans the values, since code
  // may fill a constant's slot after making it (index lists do).
  bool is_zero_constant(NodeId id) const;

  // ---- building nodes (used by ops)
  // Appends a node whose value has `shape` and `dtype` (uninitialised: the op fills it).
  Var record(const OpDef& op, const Shape& shape, DType dtype, std::span<const Var> inputs,
             BackwardFn backward);
  Var record(const OpDef& op, const Shape& shape, DType dtype, std::initializer_list<Var> inputs,
             BackwardFn backward) {
    return record(op, shape, dtype, std::span<const Var>(inputs.begin(), inputs.size()), backward);
  }
  // A node whose value is the first shape.numel() elements of x's storage seen as `shape` (all of
  // them for a reshape, the leading rows for a slice): no copy. Its slot's own buffer waits in
  // spare_, as for leaves; reset() drops the view, so that x's slot can reuse its buffer next
  // step. Ops never write into an input, so the view stays valid.
  Var record_view(const OpDef& op, Var x, const Shape& shape, BackwardFn backward);
  Node& node(NodeId id) { return nodes_[size_t(id)]; }
  const Node& node(NodeId id) const { return nodes_[size_t(id)]; }
  NodeId input_id(NodeId id, int k) const {
    return inputs_[size_t(nodes_[size_t(id)].inputs_begin + k)];
  }
  Var input_var(NodeId id, int k) { return Var{this, input_id(id, k)}; }
  Tensor& value(NodeId id) { return values_[size_t(id)]; }
  const Tensor& value(NodeId id) const { return values_[size_t(id)]; }
  // A per-node saved tensor (indices, masks, replayed noise), reusing slot memory.
  Tensor& make_saved(NodeId id, const Shape& shape, DType dtype);
  Tensor& saved(NodeId id) { return saved_[size_t(id)]; }

  // ---- gradients
  bool requires_grad(NodeId id) const { return nodes_[size_t(id)].requires_grad; }
  bool has_grad(NodeId id) const { return grad_live_[size_t(id)] != 0; }
  // The gradient of node id, allocated and zeroed on first use in this backward pass.
  Tensor& grad(NodeId id);
  // The gradient of node id for a backward that will write *every* element of it. On the first
  // contribution in this pass the buffer is returned uninitialised and `overwrite` is set: the
  // caller stores instead of adding, which saves zeroing the buffer and reading it back. Later
  // contributions get the live buffer with `overwrite` false and must add, as with grad().
  Tensor& grad_for_write(NodeId id, bool& overwrite);
  // For a backward whose input `in` gets exactly node id's gradient (reshape, add): when gradients
  // may move (set_move_grads) and `in` has none yet in this pass, in's gradient becomes a view of
  // id's buffer (no copy) and id's is gone; returns false when it cannot, and the caller copies
  // or adds.
  bool move_grad(NodeId id, NodeId in);
  bool can_move_grad(NodeId id, NodeId in) const;
  // For a backward whose input `in` gets exactly node id's gradient (same number of elements):
  // moved when it can (and may_move), else copied on in's first contribution and added after.
  void pass_grad(NodeId id, NodeId in, bool may_move = true);
  // Lets backward passes move gradient buffers (move_grad) and write a view's gradient straight
  // into its input's (then the view's backward is skipped): only the leaves' and parameters'
  // gradients are kept, not
  // every intermediate node's (training; not for inspecting a tape), and a second backward before
  // reset() is refused.
  void set_move_grads(bool on) { move_grads_ = on; }

  // Runs backward from a scalar (numel 1) loss with d(loss) = 1.
  void backward(Var loss, bool flush_params = true);
  // Runs backward from any node with a given upstream gradient (same shape as the node).
  void backward(Var out, const Tensor& upstream, bool flush_params = true);
  // Adds each parameter leaf's gradient into its Parameter::grad. Call it in a fixed order over
  // tapes when several tapes (one per sample) share parameters.
  void flush_param_grads();
  // In place: parameter leaves made from now on add their gradients straight into Parameter::grad
  // (the leaf's gradient *is* it) instead of into a buffer of their own that flush_param_grads()
  // then adds in: one pass over every parameter less per step. Only for a tape that is alone in
  // writing those gradients (one-tape training); tapes working side by side must flush, in a
  // fixed order. The same sums either way when Parameter::grad starts at zero (0 + g = g).
  void set_param_grads_in_place(bool on) { param_grads_in_place_ = on; }

  // ---- steps
  void reset();
  size_t size() const { return nodes_.size(); }
  // Makes room for steps with up to `factor` times the nodes of the one recorded now (node slots
  // with their storage objects; the node, input, parameter and gradient lists; an arena of
  // `factor` times the largest step's bytes, address space only until written), so that such a
  // step allocates nothing. The trainer calls it after a pass on the
  // task's largest batch: a batch of many different lengths has more nodes than one of only the
  // longest (each length that ends sets rows aside), by up to 24 % in the test's small models.
  void make_room(size_t factor);
  // Bytes of the arena, and the most one step has used (memgrad bench prints them).
  size_t arena_capacity() const { return arena_.capacity(); }
  size_t arena_high_water() const { return arena_.high_water(); }

  // ---- temporaries: with set_release_temporaries(true), release_temporaries(begin, keep) gives
  // the arena back, during the forward pass, the value of every node recorded since `begin` (other
  // than those in `keep`, leaves and views) that no backward will read: neither its own op's
  // (BackwardReads::output, engine/op_def.hpp) nor any recorded consumer's. The next values of
  // the step take that memory first, so the step's high water falls. The caller promises that no
  // op recorded later takes one of them as input (Temporaries below makes it a scope's promise);
  // one that does is refused with an error naming both nodes. Off by default, since inspection
  // reads intermediate values after the fact; the trainer turns it on.
  void set_release_temporaries(bool on) { release_temporaries_ = on; }
  void release_temporaries(NodeId begin, std::span<const Var> keep) noexcept;
  // release_temporaries for the one node v: its value is given back now unless a backward reads
  // it (its own op's, or a consumer's recorded so far); no op recorded later may take v.
  void release_value(Var v) noexcept;
  // Bytes of values released since the last reset() (memgrad bench prints them).
  size_t released_bytes() const { return released_bytes_; }
  // For the test of the ops' BackwardReads: fills with NaN every computed value that no backward
  // reads, as if every node were a temporary. A gradient that changes then reads a value its op
  // declares unread.
  void poison_unread_values();

  // ---- modes
  bool grad_enabled() const { return grad_enabled_; }
  void set_grad_enabled(bool on) { grad_enabled_ = on; }
  // Anomaly mode: every value and gradient is checked for NaN/Inf as it is made; the first op that
  // makes one throws an Error naming it.
  void set_detect_anomaly(bool on) { detect_anomaly_ = on; }
  bool detect_anomaly() const { return detect_anomaly_; }
  void check_value(NodeId id) const;

  // ---- randomness: stochastic ops draw from noise_stream(), a stream keyed by (seed, step,
  // index of the stochastic op in this step), so the same step replays the same noise.
  uint64_t seed() const { return seed_; }
  void set_seed(uint64_t s) { seed_ = s; }
  uint64_t step() const { return step_; }
  void set_step(uint64_t s) { step_ = s; }
  Rng noise_stream();

  // Op-by-op timing (engine/op_profile.hpp) into `profile`, or none with nullptr.
  void set_profile(OpProfile* profile) {
    profile_ = profile;
    profiled_op_ = nullptr;
  }

  // Prints one line per node: index, op, shape, inputs, value norm and gradient norm.
  void print(std::ostream& out) const;
  // Node id's gradient of the last backward(); has_grad(id) must hold.
  const Tensor& live_grad(NodeId id) const;

  // ---- inspection: the model part that recorded each node, as a path of TapeScope names
  // ("enc1/t3/memory/allocation"). Off by default: a TapeScope then costs one branch and every
  // node's path is "". Paths are kept across reset(), so a node's scope id stays meaningful.
  void set_record_scopes(bool on) { record_scopes_ = on; }
  bool record_scopes() const { return record_scopes_; }
  const std::string& scope_path(NodeId id) const {
    return scope_paths_[size_t(nodes_[size_t(id)].scope)];
  }

  // ---- scratch for code that builds graphs (lists of rows, per-step outputs): vectors that keep
  // their capacity from step to step, so a steady-state step allocates nothing, and belong to one
  // tape, so tapes built concurrently (batch shards) never share them. `key` is any address unique
  // to the user (a static of its own); the same key always gets the same vector, not cleared.
  std::vector<int64_t>& index_scratch(const void* key);
  std::vector<Var>& var_scratch(const void* key);

 private:
  Var add_leaf(const Tensor& value, bool requires_grad, Parameter* param);
  // Grows the slot arrays to hold node id, by half again at least, each slot with storage objects
  // ready to bind to the arena: a step a few nodes longer than any before allocates nothing.
  void ensure_slot(NodeId id);
  void run_backward(NodeId from, bool flush_params);
  void backward_node(NodeId id);  // runs node id's backward, if it has one and a gradient
  // The node set-up record() and record_view() share: appends node and slot, returns its id.
  NodeId append(const OpDef& op, std::span<const Var> inputs, BackwardFn backward, bool view);
  // Makes `shared` (a Parameter::grad, or a part of another node's gradient) id's live gradient
  // for this pass; id's own buffer waits in grad_spare_ until reset().
  void alias_grad(NodeId id, const Tensor& shared);
  bool grad_in_input(NodeId id);  // makes view id's gradient a part of its input's, if it can
  // Whether view id's gradient already is the leading part of its input's (grad_in_input made it
  // so): run_backward then skips its backward.
  bool grad_is_in_input(NodeId id) const;
  void end_forward_interval();  // profiling: charges the time since the last record to its op
  friend class TapeScope;
  // Makes `name` (followed by `index` when >= 0) under the current scope the scope of the nodes
  // recorded from now on.
  void enter_scope(std::string_view name, int64_t index = -1);
  // With move_grads_, once the backward pass is below node id: gives the arena back the memory of
  // its value, gradient and saved tensor that no one else holds (nothing reads them any more:
  // every node that uses id comes after it), and drops what its slot holds of others' memory
  // (a view's value, a moved gradient), giving that back when the owner's slot is done with it.
  void retire(NodeId id, NodeId loss);
  // read_[i] for the nodes from `begin` on: whether a backward reads node i's value (temporaries).
  void mark_read_values(size_t begin);
  // Whether node i's value is this step's arena memory of its own (not a leaf's or a view's).
  bool owns_value(size_t i) const { return (bound_[i] & kValueBound) && !nodes_[i].view; }
  // Gives node i's value back to the arena as a temporary, when it is the sole holder of it.
  void release_node(size_t i) noexcept;

  Arena arena_;
  std::vector<Node> nodes_;
  std::vector<NodeId> inputs_;  // input pool: node k's inputs are a slice of it
  // Slots per node, reused across resets; their storage objects point into arena_ (or, for leaves,
  // views and aliased gradients, share someone else's). Deques, so that a reference to a value
  // stays valid while later nodes are recorded (an op may hold x.value() across tape->record()).
  std::deque<Tensor> values_;
  std::deque<Tensor> grads_;
  std::deque<Tensor> saved_;
  std::deque<Tensor> spare_;  // a slot's own value buffer while a leaf's shared tensor is there
  std::deque<Tensor> grad_spare_;  // the same for gradients, while another buffer is there
  std::vector<uint8_t> grad_live_;
  // Per slot, what of its memory is this step's (bits below), for retire(); cleared by reset().
  // kReleased: its value was given back as a temporary (release_temporaries).
  enum : uint8_t {
    kValueBound = 1,
    kGradBound = 2,
    kSavedBound = 4,
    kGradAliased = 8,
    kReleased = 16
  };
  std::vector<uint8_t> bound_;
  std::vector<uint8_t> read_;  // mark_read_values()'s answer, per slot
  bool release_temporaries_ = false;
  size_t released_bytes_ = 0;
  std::vector<NodeId> param_leaves_;
  uint64_t seed_;
  uint64_t step_ = 0;
  uint64_t noise_counter_ = 0;
  bool params_flushed_ = false;
  bool param_grads_in_place_ = false;
  bool move_grads_ = false;
  bool backward_done_ = false;  // a backward ran since the last reset()
  // Slots whose gradient is another's buffer for this pass (in-place parameter leaves, moved
  // gradients); reset() gives them their own buffers back from grad_spare_.
  std::vector<NodeId> aliased_grads_;
  bool grad_enabled_ = true;
  bool detect_anomaly_ = false;
  std::deque<std::pair<const void*, std::vector<int64_t>>> index_scratch_;
  std::deque<std::pair<const void*, std::vector<Var>>> var_scratch_;
  bool record_scopes_ = false;
  int32_t scope_ = 0;                         // index into scope_paths_ of the current scope
  std::vector<std::string> scope_paths_{""};  // every scope path met, "" (none) first
  OpProfile* profile_ = nullptr;
  const OpDef* profiled_op_ = nullptr;  // the last recorded op, still computing its value
  OpProfile::Clock::time_point profiled_since_;
};

inline const Tensor& Var::value() const { return tape->value(id); }
inline const Shape& Var::shape() const { return tape->value(id).shape(); }
inline DType Var::dtype() const { return tape->value(id).dtype(); }

// Turns recording of gradients off for its lifetime (evaluation, straight-through pieces).
class NoGradScope {
 public:
  explicit NoGradScope(Tape& tape) : tape_(tape), was_(tape.grad_enabled()) {
    tape.set_grad_enabled(false);
  }
  ~NoGradScope() { tape_.set_grad_enabled(was_); }

 private:
  Tape& tape_;
  bool was_;
};

// Names the model part recording nodes for its lifetime, nested in the enclosing one's:
//   TapeScope enc(tape, "enc1"); TapeScope step(tape, "t", t); ... memory ops ...
// records them under "enc1/t3/memory" when dnc::step opens "memory" inside. Only a tape with
// set_record_scopes(true) (memgrad inspect --tape) builds the paths; otherwise nothing is built
// or allocated.
class TapeScope {
 public:
  TapeScope(Tape& tape, const char* name) : tape_(tape), was_(tape.scope_) {
    if (tape.record_scopes_) tape.enter_scope(name);
  }
  // name followed by index: TapeScope(tape, "t", 3) is "t3".
  TapeScope(Tape& tape, const char* name, int64_t index) : tape_(tape), was_(tape.scope_) {
    if (tape.record_scopes_) tape.enter_scope(name, index);
  }
  ~TapeScope() { tape_.scope_ = was_; }
  TapeScope(const TapeScope&) = delete;
  TapeScope& operator=(const TapeScope&) = delete;

 private:
  Tape& tape_;
  int32_t was_;
};

// Gives back, when it ends, the values of the nodes recorded in its lifetime that no backward
// reads, except the kept ones (Tape::release_temporaries; only on a tape that releases them). For
// a function whose intermediate nodes cannot escape it:
//   Temporaries temps(tape);
//   Var hc = lstm_cell(addmm(xw, h, w_h), c);          // the gates [B, 4H] are dead after this
//   return {temps.keep(slice(hc, 1, 0, H)), temps.keep(slice(hc, 1, H, H))};
class Temporaries {
 public:
  explicit Temporaries(Tape& tape) : tape_(tape), begin_(NodeId(tape.size())) {}
  // A scope that also takes over `first`, recorded before it, and whatever came after `first`:
  // for a function whose input is dead once the function has read it.
  Temporaries(Tape& tape, Var first) : tape_(tape), begin_(first.id) {}
  ~Temporaries() { tape_.release_temporaries(begin_, std::span<const Var>(kept_.data(), kept_n_)); }
  Temporaries(const Temporaries&) = delete;
  Temporaries& operator=(const Temporaries&) = delete;
  // Marks v as escaping the scope (returned, or stored for later steps) and returns it.
  Var keep(Var v) {
    MG_CHECK(kept_n_ < kept_.size(), "Temporaries: more than ", kept_.size(), " kept nodes");
    kept_[kept_n_++] = v;
    return v;
  }

 private:
  Tape& tape_;
  NodeId begin_;
  std::array<Var, 16> kept_{};
  size_t kept_n_ = 0;
};

// The same value, cut off from the gradient.
Var detach(Var x);

}  // namespace memgrad
