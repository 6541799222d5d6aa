// The Adaptive Memory Network's steps (models/qa/amn.hpp has the model and its equations), one
// file each: amn_encoder.cpp (Eqs. 1-4), amn_strength.cpp (Eqs. 5-8), amn_banks.cpp (Eqs. 9-15),
// amn_decode.cpp (Eqs. 16-19), amn_losses.cpp (§4.4), amn_structures.cpp (the per-sample
// constants, built in TBB over the batch).
#pragma once
#include <cstdint>
#include <vector>

#include "engine/batch.hpp"
#include "engine/parameter.hpp"
#include "engine/tape.hpp"
#include "models/layers/rnn_cells.hpp"
#include "models/qa/amn_story.hpp"
#include "ops/random.hpp"

namespace memgrad::qa::amn {

// Gap 15's readings of Pi_move (models/qa/amn.hpp).
enum class BankMoves { copy, migrate, filter };

// The config's choices (models/qa/amn.hpp, "Gaps").
struct Settings {
  bool literal_gate = false;          // gap 1: "relevance_gate" == "literal"
  bool move_by_strength = false;      // gap 2: "move_prob" == "strength"
  BankMoves moves = BankMoves::copy;  // gap 15: "bank_moves"
  bool learned_weighting = true;      // gap 4: "bank_weighting" "learned" or "learned-positive"
  bool positive_temperature = false;  // gap 4: "learned-positive": tau = e^theta > 0
  bool straight_through = true;       // "ctrl_grad" == "straight_through"
  StraightThrough mode = StraightThrough::sample;  // "decisions"
  double p_hat = 0.8, beta = 0.25;
  double strength_loss = 1.0, bank_loss = 1.0, move_loss = 1.0;
};

struct Params {
  Parameter* embed = nullptr;                      // "E" [V, d]
  Parameter* s0 = nullptr;                         // "s0" [V]
  Parameter *u_z, *w_z, *x_z, *u_r, *w_h, *u_h;    // "sgru.*"
  Parameter *new_w, *new_b;                        // "new.w" [V d, 1], "new.b" [1]
  Parameter *move_v = nullptr, *move_b = nullptr;  // "move.v" [d, 1], "move.b" [1]
  Parameter* temp = nullptr;                       // "bank_temp" [1]
  Parameter *h, *out_prelu, *r;                    // "H" [d, d], "out_prelu" [d], "R" [d, V]
};

// The per-sample structures as constants on the tape (amn_structures.cpp), [T, ...] leading so that
// sentence t is a view.
struct Structures {
  Var word_live;   // [B, T, J, 1]  word is not nil
  Var query_live;  // [B, J, 1]
  Var live;        // [T, B, 1]     sentence t of sample b is real
  Var onehot;      // [T, B, V, J]  onehot[t, b, v, j] = [word j of sentence t is v]
  Var pick;  // [T, B, V, J]  onehot where v is "again" and j its first position (Pi_au's rows)
  Var fresh, again, seen, heard;          // [T, B, V, 1]
  Var prop;                               // [T, B, V, V]
  Var relevant;                           // [B, V]  1 + distance in the answer's component, else 0
  double seen_count = 0, live_count = 0;  // sum of seen (on live sentences) and of live
};

// Reused host memory of the structure builder (one AmnStory per sample) and of filter_banks.
struct Scratch {
  std::vector<AmnStory> stories;
  std::vector<int32_t> ids, query;
  std::vector<uint8_t> live;
  std::vector<Var> bank_rows;
};

// Reads the batch's story [B, T, J], memory_mask [B, T], query [B, J] and (training) answer [B]
// and builds the Structures in TBB over the batch.
Structures build_structures(Tape& tape, const Tensor& story, const Tensor& mask,
                            const Tensor& query, const Tensor* answer, int64_t vocab,
                            const AmnGraphOptions& graph, Scratch& scratch);

// Eqs. 1-4, with our two encoder options.
struct EncoderOptions {
  bool carry_state = false;  // false: every sentence starts from zero; true: the state runs on
                             // through the story's sentences (gap 14)
  double dropout = 0.0;      // inverted dropout on the embedded words u, story and question,
                             // in training only (ours: the paper names no regularisation)
  bool training = false;
};
struct Encoded {
  Var words;     // [B, T, J, d]  GRU outputs (zero on nil words)
  Var last;      // [B, T, d]     w_N of every sentence
  Var question;  // [B, d]        w_Nq
};
Encoded encode(Tape& tape, const GruCell& gru, Var table, Var story_ids, Var query_ids,
               const Structures& st, const EncoderOptions& options = {});

// Eqs. 5-8: one SGRU step for entity states w [B, V, d], question q [B, d], strengths s [B, V].
Var strength_step(Tape& tape, const Params& p, const Settings& set, Var w, Var q, Var s);

// The bank state: upper banks m_1..m_{L-1} ([B, L-1, V] membership, [B, L-1] existence).
struct Banks {
  Var upper, exists;
};
// All L banks [B, L, V]: m_0 = seen [B, V, 1] on top of the upper banks; with migrate (gap 15)
// m_0 = the seen entities no upper bank holds.
Var all_banks(Var seen, Var upper, bool migrate);
// Eqs. 9-10: the decision H for probabilities p (see Settings: straight-through or detached,
// sample or surrogate).
Var decide(Var p, const Settings& set);
// Eq. 13: Pi_au for sentence t (pick_t [B, V, J]: Structures::pick).
Var add_update(Tape& tape, const GruCell& au, Var w, Var dict, Var au_input_t, Var fresh_t,
               Var again_t, Var pick_t);
// Eqs. 14-15: Pi_prop for sentence t.
Var propagate(Tape& tape, const GruCell& prop, Var w, Var prop_t, Var heard_t);
// Eq. 11: p_new [B, 1] from the last bank's entities, and which bank is last ([B, L], 0/1 when
// sampling); create_bank applies a decision H_new [B, 1] (live_t [B, 1] keeps padding sentences
// from changing the banks).
struct Creation {
  Var p, last;
};
Creation creation_prob(Tape& tape, const Params& p, Var banks_all, Var exists, Var w);
Banks create_bank(const Banks& b, Var last, Var h_new, Var live_t);
// Eq. 12: p_i [B, V] and the banks after decisions H [B, V].
Var move_prob(Tape& tape, const Params& p, const Settings& set, Var w, Var s);
Banks move_entities(Tape& tape, const Banks& b, Var banks_all, Var h_move, Var live_t,
                    bool migrate);
// Eq. 12 read as Algorithm 1's assignment m_{k+1} <- Pi_move(m_k) ("filter", gap 15): the upper
// banks drawn anew from m_0 = seen [B, V, 1] with one decision per bank and entity, H [B, L-1, V].
// `rows` is reused memory (no allocation once it has held L-1 banks).
Banks filter_banks(const Banks& b, Var seen, Var h_move, Var live_t, std::vector<Var>& rows);

// Eqs. 16-19: answer logits [B, V] from entity states w [B, V, d], strengths s [B, V], banks
// [B, L, V], existence of all L banks [B, L] and the banks read ([B, L] 0/1 constant).
struct Decoded {
  Var logits, attention, bank_weights;
  double temperature = 1.0;  // tau of the bank weights e^{tau m} (1 when not learned)
};
Decoded decode(Tape& tape, const Params& p, const Settings& set, Var w, Var s, Var q, Var banks_all,
               Var exists_all, Var read);

// §4.4: mean Bernoulli KL(p || target) over the entries where `mask` is 1 (`count` of them), for
// probabilities p and targets in (0, 1) (constants).
Var bernoulli_kl(Var p, Var target, Var mask, double count);
// E[s] targets [B, V] (gap 7) drawn from `rng` for the relevant entities of Structures, those
// at distance k from the answer weighted by decay^k.
void fill_relevance_targets(const Structures& st, Rng& rng, Tensor& targets, double decay);

}  // namespace memgrad::qa::amn
