#include "models/layers/memory_reader.hpp"

#include "models/layers/row_packing.hpp"
#include "ops/ops.hpp"

namespace memgrad::layers {

Var oneplus(Var x) { return add_scalar(softplus(x), 1.0); }

ReadInterface parse_read_interface(Var raw, const dnc::MemoryConfig& m) {
  const int64_t R = m.read_heads, W = m.word;
  MG_CHECK(raw.defined() && raw.shape().rank == 2 && raw.dim(1) == read_interface_size(m),
           "parse_read_interface: the raw read interface must be [M, ", read_interface_size(m),
           "], got ", raw.defined() ? raw.shape().str() : std::string("undefined"));
  const int64_t M = raw.dim(0);
  Temporaries temps(*raw.tape, raw);  // raw and the modes' pre-activations die here
  ReadInterface r;
  r.keys = temps.keep(reshape(slice(raw, 1, 0, R * W), Shape{M, R, W}));
  r.strengths = temps.keep(oneplus(slice(raw, 1, R * W, R)));
  r.modes = temps.keep(softmax(reshape(slice(raw, 1, R * W + R, 3 * R), Shape{M, R, 3})));
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

}  // namespace memgrad::layers
