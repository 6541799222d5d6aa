// Pieces shared by the two-view sequence models (DMNC, the view-concatenated LSTM and DNC, Dual
// LSTM, WLAS): config merging, batch-field checks, linear and embedding layers, per-sample view
// masks, a masked LSTM encoder, the DNC read function used by write-protected decoders, additive
// attention, and the one decoder loop (sequence output with teacher forcing or greedy decoding, or
// set output) that all of them end in. Everything is built from primitive ops.
//
// Initialisation (one place, so every model agrees):
//   - embeddings: uniform(-1, 1), as the DMNC authors' code initialises its embedding matrices;
//   - linear layers: Glorot-uniform weights, zero biases. Glorot scales with fan-in + fan-out, so a
//     layer reading [h; r] of width 2H + 2RW = 384 starts with unit-order pre-activations; the
//     authors' fixed N(0, 0.1) would give pre-activations of std ~2 at that width and saturate the
//     sigmoid gates of the interface at the start.
//   - LSTM cells: rnn_cells.hpp's Glorot over the fused matrix with forget bias 1.
#pragma once
#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "engine/batch.hpp"
#include "engine/parameter.hpp"
#include "engine/rng.hpp"
#include "engine/tape.hpp"
#include "models/dnc_memory.hpp"
#include "models/model.hpp"
#include "models/rnn_cells.hpp"

namespace memgrad::layers {

// ---------------------------------------------------------------------------------- config, batch

// `defaults` with the keys of `user` put over it. A key of `user` that `defaults` lacks is an Error
// naming the model and the key; a key whose JSON type differs from the default's (number vs string
// vs bool) too. The label key "variant" (gradient-check configs) is ignored.
nlohmann::json merge_config(const std::string& model, const nlohmann::json& defaults,
                            const nlohmann::json& user);

// cfg[key] as an integer >= min_value; an Error names the model and the key otherwise.
int64_t config_int(const nlohmann::json& cfg, const std::string& model, const char* key,
                   int64_t min_value = 1);

// The batch field `name`, checked to have rank `rank`; an Error names the model and the field.
const Tensor& field(const Batch& batch, const std::string& model, const std::string& name,
                    int rank);
// Throws an Error naming the model, the field and both shapes unless t has shape `want`.
void expect_shape(const std::string& model, const std::string& name, const Tensor& t,
                  const Shape& want);

// ----------------------------------------------------------------------------------------- layers

// y = x W + b, W [in, out] Glorot-uniform, b [out] zero (optional). Parameters "<prefix>.w",
// "<prefix>.b".
class Linear {
 public:
  Linear() = default;
  Linear(ParameterSet& params, const std::string& prefix, int64_t in, int64_t out, Rng& rng,
         bool bias = true);
  // x [..., in] -> [..., out] (leading dims folded into one GEMM).
  Var operator()(Tape& tape, Var x) const;
  int64_t in() const { return in_; }
  int64_t out() const { return out_; }
  // The weight [in, out] and bias [out] on `tape` (the bias undefined without one).
  Var weight(Tape& tape) const { return tape.param(*w_); }
  Var bias(Tape& tape) const { return b_ ? tape.param(*b_) : Var{}; }
  // Sets bias entries [begin, begin + count) to value (an initialisation choice, e.g. a gate's
  // starting bias); the layer must have a bias.
  void init_bias(int64_t begin, int64_t count, double value);
  // Redraws the weights uniform(-limit, limit) instead of Glorot (an initialisation choice).
  void init_weights_uniform(double limit, Rng& rng);

 private:
  Parameter* w_ = nullptr;
  Parameter* b_ = nullptr;
  int64_t in_ = 0, out_ = 0;
};

// A lookup table [rows, dim], uniform(-1, 1). Parameter "<name>".
class Embedding {
 public:
  Embedding() = default;
  Embedding(ParameterSet& params, const std::string& name, int64_t rows, int64_t dim, Rng& rng);
  // ids of any shape S (rank <= 3, whole numbers in [0, rows)) -> [S..., dim].
  Var operator()(Tape& tape, Var ids) const { return lookup(table(tape), ids); }
  // The table [rows, dim] on `tape`, and a lookup in it or in any [rows, D] function of it: a
  // layer applied to the table's rows and then looked up costs V rows instead of one per token
  // (LstmCell::project_leading).
  Var table(Tape& tape) const { return tape.param(*table_); }
  Var lookup(Var table, Var ids) const;
  int64_t rows() const { return rows_; }
  int64_t dim() const { return dim_; }

 private:
  Parameter* table_ = nullptr;
  int64_t rows_ = 0, dim_ = 0;
};

// oneplus(x) = 1 + softplus(x), the DNC strength transform (>= 1).
Var oneplus(Var x);

// ------------------------------------------------------------------------------------ view masks

// Column t of a view mask [B, T] (a tape Var holding 0/1): which samples have an event at step t.
// blend(fresh, old) is the state update of Algorithm 1 for a batch: fresh where the sample's view
// has an event, old where it has ended (state = mask * new + (1 - mask) * old, realised with the
// `where` op so that the unused branch gets an exactly-zero gradient). When every sample has an
// event it returns fresh itself, and callers skip a step no sample has (any() false).
//
// Packing, the cheaper way to the same result: take() the rows of the samples with an event (n of
// the B), compute the step on those n rows only, and put() them back over the old state. Rows are
// independent in every step, so put(old, step(take(old))) equals blend(step(old), old) in every
// row, at n/B of the step's cost. take and put are identities when all() holds.
class StepMask {
 public:
  StepMask(Var mask, int64_t t);
  bool any() const { return any_; }
  bool all() const { return all_; }
  Var blend(Var fresh, Var old) const;
  LstmState blend(const LstmState& fresh, const LstmState& old) const;
  dnc::State blend(const dnc::State& fresh, const dnc::State& old) const;

  Var take(Var full) const;            // [B, ...] -> [n, ...]
  Var put(Var old, Var packed) const;  // old [B, ...] with the n rows replaced
  LstmState take(const LstmState& full) const;
  LstmState put(const LstmState& old, const LstmState& packed) const;
  dnc::State take(const dnc::State& full) const;
  dnc::State put(const dnc::State& old, const dnc::State& packed) const;

 private:
  Var column(int rank) const;  // [B, 1, ..., 1] of the given rank
  Var rows() const;            // the n sample indices with an event, increasing, as data [n]
  Var mask_;
  int64_t t_;
  int64_t on_ = 0;
  bool any_ = false, all_ = false;
  mutable Var cols_[5];
  mutable Var rows_;
};

// order = the rows 0..n-1 of `lengths` longest first, ties in row order; returns whether that
// differs from 0..n-1. Packing keeps its rows in this order, so that the rows still stepping are
// always the leading ones.
bool longest_first(std::span<const int64_t> lengths, std::vector<int64_t>& order);

// Packing for views whose events are a prefix of each sample's steps (a padded batch: a sample
// whose view has ended never steps again). StepMask::put writes the n stepped rows back into the
// whole [B, ...] state at every step; here the state stays compact instead: it holds only the rows
// that still step. The rows are kept sorted by view length, longest first (one gather before the
// first step, skipped when the batch is in that order already), so the rows that step on are
// always the leading ones: a step narrows each field to them without a copy (a slice of leading
// rows is a view) and copies out only the rows that end, once. finish() joins the pieces and puts
// them back in the batch's order. Same values as StepMask's packing in every row (a test compares
// them), a fraction of the copying.
class RetiringRows {
 public:
  // True when every row of mask [B, T] is 1 up to some step and 0 after it.
  static bool prefix_events(const Tensor& mask);
  // mask [B, T] with prefix_events. Helpers alive at the same time need different `slot`s (0-3):
  // each keeps its row lists in the tape's scratch under its slot.
  RetiringRows(Var mask, int slot);
  // Step t: sets aside the rows of `fields` (the state's tensors, [n, ...] in the order take()
  // gives) whose view has no event at t; returns how many rows step (0: none).
  int64_t begin_step(int64_t t, std::span<Var* const> fields);
  Var take(Var full) const;  // [B, ...] in the batch's order -> the rows that step
  // After the last step: every field back at [B, ...], in the batch's order.
  void finish(std::span<Var* const> fields);

 private:
  Var index(std::span<const int64_t> rows) const;
  Var mask_;
  int64_t batch_ = 0;
  size_t fields_ = 0;              // fields per piece, fixed by the first begin_step
  std::vector<int64_t>* order_;    // position p of the fields holds batch row order[p]
  std::vector<int64_t>* lengths_;  // view length of position p (non-increasing)
  std::vector<int64_t>* scratch_;  // finish(): each batch row's position
  std::vector<Var>* pieces_;       // per retirement, one piece per field
  std::vector<Var>* joined_;       // scratch: one field's pieces, for concat
  int64_t rows_ = 0;               // rows the fields hold now (the leading positions)
  bool sorted_ = false;            // whether order_ differs from the batch's order
  bool started_ = false;           // whether begin_step has put the fields in order_
  mutable Var stepping_rows_;      // order_[0, rows_) as data, made when take() needs it
};
// The state tensors of an LSTM and of a DNC memory, for RetiringRows.
std::array<Var*, 2> state_fields(LstmState& s);
std::array<Var*, 8> state_fields(dnc::State& s);

// The whole numbers `rows` (row indices, token ids) as a data leaf [n] on the tape, in `dtype`,
// in the tape's reused slot (no allocation in steady state).
Var index_leaf(Tape& tape, std::span<const int64_t> rows, DType dtype);

// --------------------------------------------------------------------------------------- LSTMs

// c clamped to [-clip, clip] when clip > 0 (h = o * tanh(c) is already in (-1, 1)).
LstmState clip_state(const LstmState& s, double clip);
// [h_a; h_b], [c_a; c_b] along the feature axis.
LstmState concat_states(const LstmState& a, const LstmState& b);

// The steps of an LSTM whose input is [e(id_t) ; r_t]: e an Embedding, id_t a token, r_t what only
// the steps produce (memory reads, an attention context; nothing when the cell's input is E wide).
// The embedding and its share of the input projection fold into one table, e W_x[:E] + b [V, 4H],
// made once per forward pass; a step looks up its ids' rows and adds r_t W_x[E:] + h W_h. The same
// function as embed, concat and LstmCell::step, but the GEMM covers V rows instead of one per
// token.
class TokenLstm {
 public:
  TokenLstm(Tape& tape, const Embedding& embed, const LstmCell& cell);
  const LstmCell& cell() const { return cell_; }
  // ids [n] or [n, 1] (whole numbers in [0, V)), rest [n, in - E] (undefined when in = E) -> the
  // new state of those n rows.
  LstmState step(Tape& tape, Var ids, Var rest, const LstmState& prev) const;

 private:
  const Embedding& embed_;
  const LstmCell& cell_;
  LstmCell::SplitInput split_;
  Var table_;  // [V, 4H]
};

// Runs an LSTM over one view of tokens: lstm's embedding and cell, ids [B, T], mask [B, T]. A
// sample without an event at step t keeps its state; a step no sample has is skipped. With `pack`
// a step computes the rows of the samples with an event only (RetiringRows when the mask is a
// padded batch's and no `outputs` are wanted, else StepMask's packing), else every row, blended.
// The input projection of every token is a lookup in lstm's projected table. With `outputs`,
// appends the state's h (its cell state c with `output_cells`) after every step (all B rows), T
// entries.
LstmState run_lstm(Tape& tape, const TokenLstm& lstm, Var ids, Var mask, LstmState state,
                   double clip, bool pack, std::vector<Var>* outputs = nullptr,
                   bool output_cells = false);

// ------------------------------------------------------------------------------ reading memories

// The DNC read function's interface, Eq. 5-8 / 12-13: R keys, R strengths (oneplus) and R read-mode
// distributions (softmax over (backward, content, forward), dnc_memory.hpp's order).
struct ReadInterface {
  Var keys;       // [M, R, W]
  Var strengths;  // [M, R]
  Var modes;      // [M, R, 3]
};
inline int64_t read_interface_size(const dnc::MemoryConfig& m) {
  return m.read_heads * m.word + 4 * m.read_heads;
}
// Splits raw [M, R*W + 4R] (keys | strengths | modes) and applies the transforms.
ReadInterface parse_read_interface(Var raw, const dnc::MemoryConfig& m);

// What a decoder reads at each step from its hidden state: memory reads (DMNC, DNC) or attention
// (WLAS). read() may advance the reader's own state (previous read weights).
class DecoderReader {
 public:
  virtual ~DecoderReader() = default;
  virtual int64_t width() const = 0;
  // The decoder's state (h, c [B, Hd]) -> context [B, width()].
  virtual Var read(Tape& tape, const LstmState& state) = 0;
  // Keeps only rows `rows` (data [n], indices into the current B rows) of whatever the reader
  // holds per sample, in that order: B becomes n (the decoder's packing orders its samples).
  virtual void take_rows(Tape& tape, Var rows) = 0;
  // Keeps the leading n rows (samples) of it, without copies (the decoder's packing drops samples
  // that have ended, which it keeps last).
  virtual void keep_leading(int64_t n) = 0;
};

// Write-protected reads of K memories with ONE read function (Eq. 12-13: the same m_read^d reads
// M1 with o1 and M2 with o2). The decoder's hidden state h [B, K*Hk] is split into K outputs
// o_k [B, Hk]; o_k's read interface (one Linear Hk -> R*W + 4R shared by all k) addresses memory k
// with content and temporal-link modes, using memory k's frozen link matrix and the reader's own
// previous read weights on memory k. The K reads are one batched computation over K*B rows. The
// context is [r_1; ...; r_K], [B, K*R*W].
class MemoryReader : public DecoderReader {
 public:
  // `memories`: the K final memory states (memory, link used); `read_weights`: the initial
  // previous read weights [B, R, N] on each memory.
  MemoryReader(const Linear& head, const dnc::MemoryConfig& m, std::span<const dnc::State> memories,
               std::span<const Var> read_weights, Trace* trace, std::string prefix);
  int64_t width() const override { return k_ * m_.read_heads * m_.word; }
  Var read(Tape& tape, const LstmState& state) override;  // reads with state.h
  void take_rows(Tape& tape, Var rows) override;
  void keep_leading(int64_t n) override;

 private:
  const Linear& head_;
  dnc::MemoryConfig m_;
  int64_t k_, b_;
  Var memory_, link_, read_weights_;  // [K*B, N, W], [K*B, N, N], [K*B, R, N] (row b*K + k)
  Var memory_norms_;  // the frozen memory's slot norms, computed once for every read
  Trace* trace_;
  std::string prefix_;
  int64_t step_ = 0;
};

// Additive (Bahdanau) attention of a query over one encoder's outputs, masked:
//     e_j = v^T tanh(W_k o_j + W_q q + b),  a = softmax over the view's events,  ctx = sum_j a_j
//     o_j.
// Positions where the view has no event get weight exactly 0 (an empty view gives ctx = 0).
// Parameters "<prefix>.key.w" [H, A], "<prefix>.query.w"/".b" [Q, A], "<prefix>.score.w" [A, 1].
class Attention {
 public:
  Attention() = default;
  // Weights Glorot-uniform, or uniform(-init_range, init_range) when init_range > 0 (the DMNC
  // authors' WLAS draws its attention weights from uniform(-1, 1)).
  Attention(ParameterSet& params, const std::string& prefix, int64_t value_size, int64_t query_size,
            int64_t attention_size, Rng& rng, double init_range = 0.0);
  // Precomputes W_k o_j for outputs [B, T, H] and the mask's additive bias.
  struct Memory {
    Var outputs, keys, mask, bias;  // [B,T,H], [B,T,A], [B,T], [B,T]
  };
  Memory prepare(Tape& tape, Var outputs, Var mask) const;
  // query [B, Q] -> context [B, H]; with `weights`, stores the attention weights [B, T].
  Var attend(Tape& tape, const Memory& mem, Var query, Var* weights = nullptr) const;

 private:
  Linear key_, query_, score_;
};

// --------------------------------------------------------------------------------------- decoder

// The output stage every model ends in.
//   sequence: an LSTM decoder of hidden Hd reads [embedding of y*_{t-1}; context_{t-1}] (y*_0 =
//     GO, an extra embedding row), steps, reads context_t with its hidden state h_t, and scores
//     logits_t = W [h_t; context_t] + b (Eq. 14: W_y h + W_r r). y*_{t-1} is the target y_{t-1}
//     with teacher forcing (ForwardOptions::teacher_forcing) or the argmax of the previous logits
//     (greedy decoding, computed on values: no gradient). Loss: cross_entropy(logits, y, y_mask)
//     over batch fields y, y_mask [B, Ly]; predictions: logits [B, Ly, V].
//   set: logits = W [h0; context] + b with context read once with the initial state h0 (Eq. 16);
//     loss: bce_with_logits(logits, labels) over batch field labels [B, V] (multi-hot);
//     predictions: logits [B, V].
struct DecoderSpec {
  int64_t output_vocab = 0;
  int64_t embedding = 0;
  int64_t hidden = 0;   // Hd
  int64_t context = 0;  // width of what the reader returns (0: no reader)
  bool sequence = true;
  double clip = 0;  // clip of the decoder LSTM's cell state (0 = off)
  // false: every step's input embedding is GO's, as in the DMNC authors' runs (decoder_mode=False):
  // the decoder never sees the previous target or prediction. Config key "decoder_feedback".
  bool feedback = true;
  // false: in training too the decoder is fed its own previous prediction (greedy, as in
  // evaluation), never the target, as the DMNC authors' view-concatenated LSTM and DNC are trained
  // (decoder_mode=True, use_teacher=False). Config key "train_teacher_forcing".
  bool train_teacher_forcing = true;
  // false (sequence output): logits_t = W h_t + b, the context entering only the next step's input,
  // as the DMNC authors' WLAS decoder has it. Config key "context_in_output" (WLAS).
  bool context_in_output = true;
  // Packing (config key "pack_rows"): sample b's outputs end at its last unmasked position L_b, and
  // nothing the decoder computes for it after that reaches the loss; so step t computes the rows of
  // the samples with L_b > t only. The samples are put in order of L_b, longest first
  // (DecoderReader::take_rows), so that the state, the context and the reader drop the rows of
  // those that end by keeping the leading rows (DecoderReader::keep_leading, views); the logits of
  // every step are scattered back into [B, Ly, V], zero at the positions never computed (masked:
  // no loss reads them). The same loss and gradients as stepping every row, at sum_b L_b / (B Ly)
  // of the cost. Off in traced forwards.
  bool pack_rows = true;
};

// The decoder settings every sequence model's config holds: output_vocab, embedding, "output"
// ("sequence" or "set", anything else an Error naming the model), decoder_feedback, pack_rows.
// The caller sets hidden, context, clip and context_in_output.
DecoderSpec decoder_spec(const nlohmann::json& cfg, const std::string& model);

class Decoder {
 public:
  Decoder() = default;
  Decoder(ParameterSet& params, const std::string& prefix, const DecoderSpec& spec, Rng& rng);
  // init: the decoder's initial LSTM state [B, Hd]; context0: what the first step reads as the
  // previous context (undefined when spec.context == 0; unused for set output); reader: null when
  // spec.context == 0.
  ForwardResult run(Tape& tape, const Batch& batch, const ForwardOptions& opts,
                    const std::string& model, const LstmState& init, Var context0,
                    DecoderReader* reader) const;
  const DecoderSpec& spec() const { return spec_; }

 private:
  ForwardResult run_sequence(Tape& tape, const Batch& batch, const ForwardOptions& opts,
                             const std::string& model, const LstmState& init, Var context0,
                             DecoderReader* reader) const;
  DecoderSpec spec_;
  Embedding embedding_;         // [V + 1, E]; row V is GO
  std::vector<LstmCell> cell_;  // one cell (sequence output) or none (set output)
  Linear out_;
};

// The two-view batch every model reads: x1, x2 [B, L1], [B, L2] with masks of the same shapes,
// checked and put on the tape.
struct Views {
  Var x[2], mask[2];
  int64_t batch = 0;
  int64_t length[2] = {0, 0};
};
Views read_views(Tape& tape, const Batch& batch, const std::string& model);

// The training recipe of the DMNC paper's models (DMNC, DNC and the Table 1 baselines): Adam
// (lr 1e-3), batch 50, 10,000 iterations, gradients clipped by value to +-10 as in the authors'
// code, plus two choices of ours (docs/sum2seq.md): a global-norm clip of 5 (without it,
// 10,000-step DMNC runs collapsed to uniform predictions after a gradient spike) and a linear
// learning-rate decay over the second half, to 0.1 lr at the last step (at a constant rate the test
// accuracy of both DMNC modes swung by 3-4 points between evaluations late in training).
nlohmann::json dmnc_paper_recipe();

// A tiny two-view check batch (B = 2, L = 3): view lengths differ between samples and between the
// views (masks with zeros), y_mask likewise; labels [2, output_vocab] multi-hot for set output.
void make_check_batch(Rng& rng, DType dtype, Batch& batch, int64_t input_vocab,
                      int64_t output_vocab, int64_t input_vocab2 = 0);

}  // namespace memgrad::layers
