// Dual Memory Neural Computer (Le, Tran & Venkatesh 2018, "Dual Memory Neural Computer for
// Asynchronous Two-view Sequential Learning", section 3) and the view-concatenated DNC baseline of
// its Table 1. Registered as "dmnc-late", "dmnc-early" and "dnc". The paper is implemented, not the
// authors' public code (../shared/design/reference-notes.md section 2): early fusion really shares
// the address space, and persistent memory really carries one admission into the next.
//
// Shapes: B batch, L1/L2 view lengths, E embedding, H encoder hidden, N slots, W word, R read
// heads, V output vocabulary.
//
// ---- Design decisions (each tied to the paper's equations)
//
// Encoders (Eq. 3-4, Algorithm 1). Encoder i has its own embedding W_E^i, LSTM controller over
//   [x_t ; r_{t-1}] (E + R*W -> H) and memory M_i (N x W, DNC state: usage, link, precedence, write
//   and read weights, read vectors). The controller output o_t is the LSTM's h_t. Each iteration of
//   Algorithm 1's while loop steps encoder 1 and then encoder 2, each only for the samples whose
//   view still has an event at that position (per-sample view masks): a sample whose view has
//   ended keeps its controller state, memory and cache exactly; a position no sample has is
//   skipped. Config "pack_rows" (default true): the step is computed on the rows of the samples
//   with an event only and written back into the batch state (layers::StepMask, "Packing"; the
//   same values at n/B of the cost); false, and any traced forward, steps every sample and keeps
//   the others' state by state = where(mask, new, old). Views may have different widths (x1 [B,L1],
//   x2 [B,L2]). Within a step: controller, then write (Eq. 1 / Eq. 11), then read (Eq. 5-8), in
//   DeepMind's order (dnc_memory.hpp), as Algorithm 1 lines 8-10.
//
// Interface. Per encoder a read function (Linear H -> R*W + 4R: keys, oneplus strengths,
//   (backward, content, forward) modes) and a write function (Linear H -> 3W + R + 3 [+ W]: write
//   key, strength, erase, write vector, free gates, allocation and write gates [, cache gate]),
//   assembled into dnc_memory's interface layout and parsed by dnc::parse_interface.
//
// Late fusion (Eq. 5-6). Separate memories and separate read-function parameters
//   ("enc1.read", "enc2.read"); encoder i reads only M_i. This is one ordinary DNC step
//   (dnc::step) per encoder; encoder 2's reads never see M1 and vice versa.
//
// Early fusion (Eq. 7-8): the two memories share one address space. Realised as:
//   - reads: each encoder's read function content-addresses the slot concatenation [M1; M2]
//     (2N slots, M1 first), and both encoders use the SAME read-function parameters
//     ("enc.read"). Read weights live over the 2N slots; the temporal-link modes follow each
//     memory's own link matrix inside its block (forward/backward = [L1 w_1 ; L2 w_2], i.e. a
//     block-diagonal link over [M1; M2]), so an encoder can read the other view's memory by
//     content and then walk it in the other view's write order.
//   - writes: encoder i writes only M_i (Algorithm 1 lines 9 and 15: "update M1" for view 1,
//     "update M2" for view 2; Figs. 3-4 show M1's write gate over diagnoses and M2's over
//     procedures), with M_i's own usage, allocation, link and precedence. M_i's usage is freed by
//     encoder i's free gates applied to encoder i's previous read weights on M_i's block.
//   - alternation ("the writings must be executed in an alternating manner"): encoder 1's step of
//     iteration t writes M1 and reads [M1; M2] with M2 as encoder 2 left it at iteration t-1;
//     encoder 2's step of iteration t then writes M2 and reads [M1; M2] including encoder 1's write
//     of iteration t. The cross-view path is the reads: a gradient from encoder 2's state reaches
//     encoder 1's parameters only through encoder 2 reading what encoder 1 wrote (tested).
//
// Cache (Eq. 9-11), config key "cache" (default true for dmnc-early, false for dmnc-late; either
//   mode accepts both): g^c_t = sigmoid(W_c o_t + b_c) in (0,1)^W (a W-wide extra block of the
//   write function, the "single-layer feed-forward" f^c of footnote 3), c_t = g^c_t * c_{t-1} +
//   (1 - g^c_t) * v_t with c_0 = 0, and the memory is written with c_t in place of v_t (Eq. 11 =
//   Eq. 1 with v -> c). The cache is part of the encoder's state (kept by masked samples).
//   Config "cache_gate_bias" (default -3, ours: the paper gives no initialisation) initialises
//   b_c. At 0 the gate starts near 1/2, so each written vector starts as a running blend of the
//   events so far, and early fusion learned far slower (loss 2.71 against 1.78 after 2,000
//   steps, docs/sum2seq.md); at -3 it starts writing through (c_t ~ v_t) and learns to hold.
//
// Write-protected decoder (Eq. 12-15). The decoder never writes: M1, M2 (and their links) are the
//   encoders' final memories. Its LSTM has hidden 2H and starts from the concatenation of the
//   encoders' final states, h_0 = [h^1_{L1}; h^2_{L2}] and c_0 = [c^1; c^2], exactly the paper's
//   h_0 (and the authors' code); no projection. Its input is [embedding of y*_{t-1} ; r^1_{t-1} ;
//   r^2_{t-1}] (y*_0 = GO, an extra row of the decoder embedding; r_0 = the encoders' final read
//   vectors). Its output is split into halves o1_t, o2_t (H each); ONE read function m^d_read
//   ("dec.read", shared by Eq. 12 and 13) reads M1 with o1_t and M2 with o2_t, by content and by
//   temporal links (each memory's frozen link, the decoder's own previous read weights per memory,
//   starting from encoder i's final read weights on M_i's slots). Both reads are one batched
//   computation. Output (Eq. 14-15): logits_t = W_y [o1_t; o2_t] + W_r [r1_t; r2_t] + b (one Linear
//   over [h_t; r_t], "dec.out"), softmax cross-entropy over y with y_mask; teacher forcing or
//   greedy decoding by ForwardOptions::teacher_forcing.
//
// Set output (Eq. 16-17), config "output": "set". f^d, "the decoder's output function", is not
//   written out. Config "set_decoder": "step" (default, the authors' code, which decodes a set in
//   one decoder step): the decoder LSTM steps once from h_0 on [GO; r_0], and reads M1 and M2
//   with that step's output halves; "read" (the default until 2026-11-27, and what runs saved
//   before the key load as): no decoder step, the reads use h_0's halves (the encoders' final
//   hidden states) and f^d is a single linear layer folded into W1..W3 and b. Either way the
//   logits are one Linear over [h; r1; r2]. With "read", late fusion's logits are a sum of a
//   diagnosis term and a procedure term (tested), so it cannot score an interaction of the views
//   (docs/mimic.md). Loss: bce_with_logits against the multi-hot batch field "labels" [B, V].
//
// Usage gradient. The memories follow the DNC paper's usage update, u_t = (u + (1 - u) w_{t-1})
//   psi_t, differentiable in the previous write weights (as the DMNC authors' code, built on
//   Mostafa-Samir's DNC, has it); dnc::usage_update's default follows DeepMind's code, which
//   stops that gradient, and these models pass dnc::UsageGradient::through_write_weights. (With
//   the stop-gradient, finite differences of the whole model disagree with its gradient by 1e-3
//   to 5e-2 relative, so no model-level check could pass.)
//
// Controller clipping, config "clip_controller" (default 20, 0 = off): every controller's LSTM cell
//   state c is clamped to [-20, 20] after each step, as DeepMind's DNC clips the controller state
//   (its h is already in (-1, 1), so clipping it would do nothing); logits are not clipped (Eq. 14
//   has no clip).
//
// Initialisation: see models/layers/linear.hpp (embeddings uniform(-1, 1) as the authors' code;
// Linear layers
//   Glorot-uniform, zero bias; LSTMs Glorot with forget bias 1). Memory initial state
//   dnc::initial_state (memory, weights and read vectors 1e-6, usage/link/precedence 0).
//
// Persistent memory (section 3.4, Algorithm 1 lines 3-5), config "persistent_memory" (default
//   false). When on, forward() starts each encoder's memory (memory, usage, link, precedence, write
//   and read weights, read vectors, cache) from the final memory of the previous forward() for the
//   same batch row (row b = one patient, admissions in time order), and stores this forward's final
//   memories for the next one. The controllers start from zero each admission (only the memories
//   persist, as section 3.4 says). clear_memory() starts every row afresh (a new patient in every
//   row), clear_memory(row) one row; a batch's optional field "patient_start" [B] does the same
//   for the rows it marks (the mimic-progression task sets it on a group's first admission). A
//   row whose views are all masked keeps its memory exactly (a patient without an admission at
//   this step). By default the carried state is DETACHED between admissions: it is stored as
//   values and enters the next admission's tape as a constant, because Algorithm 1 updates the
//   parameters after every admission (line 22), so gradients are truncated at admission
//   boundaries. A forward with ForwardOptions::continues_graph instead starts from the previous
//   forward's final memories as recorded on the same tape (models/unroll.hpp: `memgrad train
//   --unroll K` puts K admissions on one tape), so a later admission's loss trains what an earlier
//   one wrote: truncated backpropagation through time over K admissions, our addition to the
//   paper. Rows that patient_start marks still start from the initial memory (a per-row `where`).
//
// View-concatenated DNC ("dnc", Table 1): one DNC (controller LSTM over [x_t ; r_{t-1}], one
//   memory of memory_slots = 32 slots, standard interface parsed by dnc::parse_interface) reads
//   view 1's events and then view 2's (each view embedded with its own table, i.e. a sequence over
//   the union of the two vocabularies; per-sample masks skip padding; the paper's usage gradient
//   as above), then decodes with the same write-protected decoder as DMNC with one memory: hidden
//   H, h_0 = the controller's final state, input [emb(y*_{t-1}); r_{t-1}], logits = W_y h_t +
//   W_r r_t + b.
#pragma once
#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "models/dnc/dnc_memory.hpp"
#include "models/dnc/two_view.hpp"
#include "models/layers/decoder.hpp"
#include "models/layers/linear.hpp"
#include "models/layers/lstm_runner.hpp"
#include "models/layers/rnn_cells.hpp"
#include "models/layers/row_packing.hpp"
#include "models/model.hpp"

namespace memgrad {

enum class Fusion { late, early };

class Dmnc : public Model {
 public:
  Dmnc(Fusion fusion, const nlohmann::json& config, DType dtype, uint64_t seed);

  std::string name() const override { return fusion_ == Fusion::late ? "dmnc-late" : "dmnc-early"; }
  nlohmann::json config() const override { return config_; }
  ForwardResult forward(Tape& tape, const Batch& batch, const ForwardOptions& opts) override;

  bool supports_shards() const override { return !persistent_; }  // carried memory is per row
  bool carries_state() const override { return persistent_; }
  void reset_state() override { clear_memory(); }
  Fusion fusion() const { return fusion_; }
  const dnc::MemoryConfig& memory_config() const { return mem_; }

  // ---- persistent memory across a patient's admissions (see the header comment)
  bool persistent_memory() const { return persistent_; }
  void set_persistent_memory(bool on);  // also config "persistent_memory"; off clears
  bool has_carried_memory() const { return carried_valid_; }
  void clear_memory();             // every row starts from the initial memory
  void clear_memory(int64_t row);  // one row does

  // ---- the encoding phase alone (inspection and tests)
  struct EncoderState {
    LstmState controller;
    dnc::State memory;  // early fusion: read_weights over [M1; M2], [B,R,2N]
    Var cache;          // [B,W]; undefined without the cache
  };
  struct Encoded {
    std::array<EncoderState, 2> enc;
  };
  // Runs both encoders over the batch's views (from the carried memory when persistent). With a
  // trace, records at every position t < L_i of encoder i (1-based) the step's gates and
  // weightings under "enc<i>/t<t>/" (write_gate, alloc_gate, free_gates, read_modes, cache_gate,
  // ...; only when some sample has an event) and the state after the step, padded samples kept,
  // under "enc<i>/t<t>/state/" (h, c, memory, usage, link, write_weights, read_weights,
  // read_vectors, cache). The decoder's reads are recorded under "dec/t<t>/". `start`, when given,
  // is the encoders' memories to start from (on this tape), instead of the carried or initial
  // ones; the controllers start from zero either way.
  Encoded encode(Tape& tape, const dnc::Views& views, Trace* trace = nullptr,
                 const Encoded* start = nullptr) const;

 private:
  struct Carried {
    std::array<std::array<Tensor, 8>, 2> enc;  // memory, usage, link, precedence, ww, rw, rv, cache
  };
  EncoderState initial_state(Tape& tape, int64_t batch, DType dtype) const;
  EncoderState carried_state(Tape& tape, int i) const;
  // The previous forward's final memories on this tape (graph_carry_), with the rows the batch's
  // patient_start marks back at the initial memory: where a continuing forward starts.
  Encoded continued_state(Tape& tape, const Batch& batch, int64_t rows, DType dtype) const;
  // Stores the final memories as values for the next forward. `in_place`: into the current
  // buffers, for a forward that continued the graph and so read no carried values as leaves
  // (the spare buffers may then be an earlier forward's leaves on the same tape).
  void store_carried(const Encoded& e, bool in_place);
  // Clears the carried memory of the rows the batch's optional field "patient_start" [B] marks
  // (all of it when every row starts), when persistent.
  void start_patients(const Batch& batch, int64_t rows);
  // What encoder i's steps share in one forward pass, made once per pass: its embedding and
  // controller (layers::TokenLstm), and its read and write functions as one weight [H, S] and bias
  // whose columns are in dnc::parse_interface's order (read keys and strengths | write block | read
  // modes), then the cache gate's: a step makes one GEMM of h and no copies to reorder it.
  struct EncoderPass {
    // `tokens`: the most ids the pass looks up (B x L of the view): layers::TokenLstm projects
    // the embedding table only when the vocabulary is smaller.
    EncoderPass(Tape& tape, const Dmnc& model, int i, int64_t tokens);
    layers::TokenLstm lstm;
    Var interface_w, interface_b;
  };
  // Steps encoder i on tokens ids [B', 1] from the states s (B' rows each): controller, write,
  // read.
  EncoderState advance(Tape& tape, int i, const EncoderPass& pass, Var ids,
                       const std::array<EncoderState, 2>& s, Trace* trace,
                       const std::string& prefix) const;
  // Steps encoder i at one position of its view (ids [B, 1]): packed or blended by the view mask.
  void encoder_step(Tape& tape, int i, const EncoderPass& pass, Var ids,
                    std::array<EncoderState, 2>& s, const layers::StepMask& mask, Trace* trace,
                    const std::string& prefix) const;
  dnc::State early_memory_step(int i, const std::array<EncoderState, 2>& s,
                               const dnc::Interface& iface, Trace* trace,
                               const std::string& prefix) const;

  Fusion fusion_;
  nlohmann::json config_;
  dnc::MemoryConfig mem_;
  int64_t embedding_, hidden_;
  bool cache_, persistent_, pack_rows_;
  double clip_;
  std::array<layers::Embedding, 2> embed_;
  std::vector<LstmCell> cell_;           // the two encoder controllers
  std::array<layers::Linear, 2> write_;  // per encoder
  std::array<layers::Linear, 2> read_;   // late: per encoder; early: both entries the same
  layers::Linear dec_read_;              // m^d_read, shared by the two memories
  layers::Decoder decoder_;
  std::optional<Carried> carried_, spare_;  // spare_: the previous buffers, reused when they fit
  bool carried_valid_ = false;              // false: every row starts from the initial memory
  // The last forward's final encoder states as Vars of its tape (continues_graph reads them;
  // undefined Vars, whose tape is null, before the first persistent forward).
  Encoded graph_carry_;
};

class ViewConcatDnc : public Model {
 public:
  ViewConcatDnc(const nlohmann::json& config, DType dtype, uint64_t seed);
  std::string name() const override { return "dnc"; }
  nlohmann::json config() const override { return config_; }
  bool supports_shards() const override { return true; }
  ForwardResult forward(Tape& tape, const Batch& batch, const ForwardOptions& opts) override;

 private:
  nlohmann::json config_;
  dnc::MemoryConfig mem_;
  int64_t embedding_, hidden_;
  double clip_;
  bool pack_rows_;
  std::array<bool, 2> use_ = {true, true};  // config "views"
  std::array<layers::Embedding, 2> embed_;
  std::vector<LstmCell> cell_;
  layers::Linear interface_;
  layers::Linear dec_read_;
  layers::Decoder decoder_;
};

}  // namespace memgrad
