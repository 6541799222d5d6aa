// DMNC (late and early fusion), the view-concatenated DNC and the LSTM baselines of the DMNC
// paper's Table 1 (their gradient checks are test_model_registry's): the cross-view memory path
// of early fusion (absent in late fusion), persistent memory across admissions, padding invariance,
// asynchronous encoders, greedy decoding and output shapes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "models/dnc/dmnc.hpp"
#include "models/dnc/seq_baselines.hpp"
#include "models/dnc/two_view.hpp"
#include "ops/ops.hpp"

namespace dmnc_tests {

using namespace memgrad;

namespace {

const char* const kModels[] = {"lstm", "dnc", "dual-lstm", "wlas", "dmnc-late", "dmnc-early"};
constexpr int64_t kInVocab = 11, kOutVocab = 13;

bool has_memory(const std::string& name) { return name == "dnc" || name.rfind("dmnc", 0) == 0; }

// Small (not tiny) dimensions for the behavioural tests.
nlohmann::json small_config(const std::string& name, const std::string& output = "sequence") {
  nlohmann::json c = {{"embedding", 4},
                      {"hidden", 5},
                      {"input_vocab", kInVocab},
                      {"output_vocab", kOutVocab},
                      {"output", output}};
  if (has_memory(name)) {
    c["word_size"] = 4;
    c["memory_slots"] = 5;
  }
  if (name == "wlas") c["attention_size"] = 4;
  return c;
}

// A two-view batch: per-sample token lists, padded to the given widths. Padded positions hold
// `pad` tokens (0) or, with `garbage`, random valid tokens; labels are fixed multi-hot rows.
struct Samples {
  std::vector<std::vector<int>> x1, x2, y;
};

void fill_batch(Batch& batch, const Samples& s, int64_t w1, int64_t w2, int64_t wy,
                Rng* garbage = nullptr) {
  const int64_t B = int64_t(s.x1.size());
  const DType dt = DType::f64;
  // Create every field first: a new field may move the others (references into the batch).
  batch.field("x1", Shape{B, w1}, dt);
  batch.field("x1_mask", Shape{B, w1}, dt);
  batch.field("x2", Shape{B, w2}, dt);
  batch.field("x2_mask", Shape{B, w2}, dt);
  batch.field("y", Shape{B, wy}, dt);
  batch.field("y_mask", Shape{B, wy}, dt);
  batch.field("labels", Shape{B, kOutVocab}, dt);
  auto put = [&](const char* name, const char* mask_name, const std::vector<std::vector<int>>& v,
                 int64_t w, int64_t vocab, int64_t first) {
    Tensor x = batch.field(name, Shape{B, w}, dt);  // shares the field's storage
    Tensor m = batch.field(mask_name, Shape{B, w}, dt);
    for (int64_t b = 0; b < B; ++b) REQUIRE(int64_t(v[size_t(b)].size()) <= w);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < w; ++t) {
        const bool real = t < int64_t(v[size_t(b)].size());
        double tok = real ? v[size_t(b)][size_t(t)] : 0;
        if (!real && garbage)
          tok = double(first + int64_t(garbage->below(uint64_t(vocab - first))));
        x.set(b * w + t, tok);
        m.set(b * w + t, real ? 1 : 0);
      }
  };
  put("x1", "x1_mask", s.x1, w1, kInVocab, 1);
  put("x2", "x2_mask", s.x2, w2, kInVocab, 1);
  put("y", "y_mask", s.y, wy, kOutVocab, 0);
  Tensor& labels = batch.field("labels", Shape{B, kOutVocab}, dt);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t c = 0; c < kOutVocab; ++c) labels.set(b * kOutVocab + c, (b + c) % 3 == 0 ? 1 : 0);
  batch.size = B;
}

// Views of different lengths per sample and per view; sample 2's view 2 is empty.
Samples samples() {
  return {{{3, 1, 4, 1, 5}, {9, 2}, {6, 5, 3}},
          {{2, 7}, {1, 8, 2, 8}, {}},
          {{10, 3, 3, 7}, {4}, {5, 9}}};
}

struct Run {
  double loss = 0;
  Tensor predictions;
  std::vector<std::vector<double>> grads;
};

Run run(Model& model, const Batch& batch, bool teacher_forcing, Trace* trace = nullptr) {
  Run r;
  model.params().zero_grad();
  Tape tape(3);
  ForwardOptions opts;
  opts.training = teacher_forcing;
  opts.teacher_forcing = teacher_forcing;
  opts.trace = trace;
  ForwardResult out = model.forward(tape, batch, opts);
  r.loss = out.loss.value().at(0);
  r.predictions = out.predictions.value().clone();
  tape.backward(out.loss);
  for (size_t i = 0; i < model.params().size(); ++i)
    r.grads.push_back(model.params()[i].grad.to_vector());
  return r;
}

// The pieces streamed into one string (doctest's INFO takes one expression).
template <class... Parts>
std::string cat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

double rel_diff(double a, double b) {
  return std::abs(a - b) / std::max({1.0, std::abs(a), std::abs(b)});
}

// Largest relative difference of the predictions on the first `len` positions (sequence output:
// [B, T, V] with T >= len in both) or everywhere (set output).
double prediction_diff(const Tensor& a, const Tensor& b, int64_t len) {
  double worst = 0;
  if (a.rank() == 2) {
    REQUIRE(a.shape() == b.shape());
    for (int64_t i = 0; i < a.numel(); ++i) worst = std::max(worst, rel_diff(a.at(i), b.at(i)));
    return worst;
  }
  const int64_t B = a.dim(0), V = a.dim(2);
  for (int64_t s = 0; s < B; ++s)
    for (int64_t t = 0; t < len; ++t)
      for (int64_t c = 0; c < V; ++c)
        worst = std::max(
            worst, rel_diff(a.at((s * a.dim(1) + t) * V + c), b.at((s * b.dim(1) + t) * V + c)));
  return worst;
}

double grad_diff(const Run& a, const Run& b) {
  double worst = 0;
  for (size_t p = 0; p < a.grads.size(); ++p)
    for (size_t j = 0; j < a.grads[p].size(); ++j)
      worst = std::max(worst, rel_diff(a.grads[p][j], b.grads[p][j]));
  return worst;
}

double max_abs_grad(ParameterSet& params, const std::string& prefix) {
  double m = 0;
  bool found = false;
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i].name.rfind(prefix, 0) != 0) continue;
    found = true;
    for (double g : params[i].grad.to_vector()) m = std::max(m, std::abs(g));
  }
  REQUIRE_MESSAGE(found, "no parameter named ", prefix, "*");
  return m;
}

// Trace entry `name` (the last one recorded under that name).
Tensor trace_get(const Trace& trace, const std::string& name) {
  for (auto it = trace.entries.rbegin(); it != trace.entries.rend(); ++it)
    if (it->first == name) return it->second;
  FAIL("no trace entry ", name);
  return {};
}

// Row b of a [B, ...] tensor.
std::vector<double> row(const Tensor& t, int64_t b) {
  const int64_t per = t.numel() / t.dim(0);
  std::vector<double> v(static_cast<size_t>(per));
  for (int64_t j = 0; j < per; ++j) v[size_t(j)] = t.at(b * per + j);
  return v;
}

}  // namespace

// ------------------------------------------------------------------- 1. cross-view memory access

TEST_CASE("dmnc early fusion: each encoder's state depends on what the other encoder wrote") {
  // A loss built from encoder 2's final hidden state alone can reach encoder 1's parameters only
  // through encoder 2 reading memory 1 (the encoders share nothing else while encoding). In early
  // fusion that gradient is non-zero; in late fusion it is exactly zero. And vice versa.
  Batch batch;
  fill_batch(batch, samples(), 5, 4, 4);
  for (Fusion fusion : {Fusion::late, Fusion::early}) {
    for (int target = 0; target < 2; ++target) {
      const int other = 1 - target;
      Dmnc model(fusion, small_config("dmnc-early"), DType::f64, 5);
      model.params().zero_grad();
      Tape tape;
      const dnc::Views views = dnc::read_views(tape, batch, model.name());
      const Dmnc::Encoded e = model.encode(tape, views);
      tape.backward(sum(e.enc[size_t(target)].controller.h));
      const std::string o = "enc" + std::to_string(other + 1) + ".";
      const double write = max_abs_grad(model.params(), o + "write");
      const double lstm = max_abs_grad(model.params(), o + "lstm");
      const double emb = max_abs_grad(model.params(), o + "embedding");
      INFO(cat(model.name(), ": loss on encoder ", target + 1, "; gradients of encoder ", other + 1,
               ": write ", write, ", lstm ", lstm, ", embedding ", emb));
      if (fusion == Fusion::late) {
        CHECK(write == 0.0);
        CHECK(lstm == 0.0);
        CHECK(emb == 0.0);
        CHECK(max_abs_grad(model.params(), o + "read") == 0.0);
      } else {
        CHECK(write > 1e-8);
        CHECK(lstm > 1e-8);
        CHECK(emb > 1e-8);
      }
    }
  }
}

TEST_CASE(
    "dmnc early fusion: changing view 1 changes encoder 2's final state only in early fusion") {
  Samples a = samples(), b = samples();
  b.x1[0] = {7, 7, 2, 9, 1};  // sample 0's view 1 only
  Batch ba, bb;
  fill_batch(ba, a, 5, 4, 4);
  fill_batch(bb, b, 5, 4, 4);
  for (Fusion fusion : {Fusion::late, Fusion::early}) {
    Dmnc model(fusion, small_config("dmnc-early"), DType::f64, 5);
    Tape ta, tb;
    const Dmnc::Encoded ea = model.encode(ta, dnc::read_views(ta, ba, model.name()));
    const Dmnc::Encoded eb = model.encode(tb, dnc::read_views(tb, bb, model.name()));
    const std::vector<double> ha = row(ea.enc[1].controller.h.value(), 0);
    const std::vector<double> hb = row(eb.enc[1].controller.h.value(), 0);
    INFO(cat(model.name()));
    if (fusion == Fusion::late) {
      CHECK(ha == hb);
    } else {
      CHECK(ha != hb);
    }
    // Sample 1 is unchanged: its encoder 2 state is the same in both modes.
    CHECK(row(ea.enc[1].controller.h.value(), 1) == row(eb.enc[1].controller.h.value(), 1));
  }
}

TEST_CASE("dmnc: early fusion shares one encoder read function, late fusion has two") {
  Dmnc late(Fusion::late, small_config("dmnc-late"), DType::f64, 1);
  Dmnc early(Fusion::early, small_config("dmnc-early"), DType::f64, 1);
  CHECK(late.params().find("enc1.read.w") != nullptr);
  CHECK(late.params().find("enc2.read.w") != nullptr);
  CHECK(late.params().find("enc.read.w") == nullptr);
  CHECK(early.params().find("enc.read.w") != nullptr);
  CHECK(early.params().find("enc1.read.w") == nullptr);
  CHECK(early.params().find("enc2.read.w") == nullptr);
  // The decoder's read function is one for both memories (Eq. 12-13) in both modes.
  CHECK(late.params().find("dec.read.w") != nullptr);
  CHECK(early.config().at("cache").get<bool>());
  CHECK(!late.config().at("cache").get<bool>());
}

// ------------------------------------------------------------------------- 2. persistent memory

TEST_CASE("dmnc persistent memory carries a patient's admissions and is cleared between patients") {
  Samples adm1 = samples(), adm1b = samples(), adm2 = samples();
  adm1b.x1 = {{8, 8, 1}, {3}, {2, 2}};
  adm1b.x2 = {{5}, {6, 6}, {1, 4, 1}};
  adm2.x1 = {{4, 4}, {9, 1, 9}, {7}};
  adm2.x2 = {{2, 3, 5}, {10}, {8, 1}};
  Batch b1, b1b, b2;
  fill_batch(b1, adm1, 5, 4, 4);
  fill_batch(b1b, adm1b, 5, 4, 4);
  fill_batch(b2, adm2, 3, 3, 4);
  for (const char* name : {"dmnc-late", "dmnc-early"}) {
    for (const char* output : {"set", "sequence"}) {
      INFO(cat(name, " ", output));
      nlohmann::json cfg = small_config(name, output);
      cfg["persistent_memory"] = true;
      auto model = create_model(name, cfg, DType::f64, 9);
      auto fresh = create_model(name, small_config(name, output), DType::f64, 9);
      auto& dmnc = dynamic_cast<Dmnc&>(*model);
      CHECK(!dmnc.has_carried_memory());

      run(*model, b1, true);
      CHECK(dmnc.has_carried_memory());
      const Run after1 = run(*model, b2, true);
      dmnc.clear_memory();
      run(*model, b1b, true);
      const Run after1b = run(*model, b2, true);
      // The second admission's output depends on the first admission.
      CHECK(prediction_diff(after1.predictions, after1b.predictions, 4) > 1e-6);
      CHECK(after1.loss != after1b.loss);

      // Cleared: the admission is computed as by a fresh model (no carried memory).
      dmnc.clear_memory();
      const Run cleared = run(*model, b2, true);
      const Run reference = run(*fresh, b2, true);
      CHECK(prediction_diff(cleared.predictions, reference.predictions, 4) == 0.0);
      CHECK(cleared.loss == reference.loss);
      CHECK(grad_diff(cleared, reference) == 0.0);

      // Clearing one row: that patient starts afresh, the others keep their history.
      dmnc.clear_memory();
      run(*model, b1, true);
      dmnc.clear_memory(1);
      const Run partial = run(*model, b2, true);
      CHECK(row(partial.predictions, 1) == row(reference.predictions, 1));
      CHECK(row(partial.predictions, 0) == row(after1.predictions, 0));
      CHECK(row(partial.predictions, 2) == row(after1.predictions, 2));

      // The carried memory belongs to a batch of 3 patients: another batch size is an error.
      Batch small;
      Samples two = adm2;
      two.x1.pop_back(), two.x2.pop_back(), two.y.pop_back();
      fill_batch(small, two, 3, 3, 4);
      CHECK_THROWS_AS(run(*model, small, true), Error);

      // Without persistence nothing is carried: the same admission twice gives the same output.
      dmnc.set_persistent_memory(false);
      const Run again1 = run(*model, b2, true);
      const Run again2 = run(*model, b2, true);
      CHECK(prediction_diff(again1.predictions, again2.predictions, 4) == 0.0);
      CHECK(prediction_diff(again1.predictions, reference.predictions, 4) == 0.0);
    }
  }
}

// ---------------------------------------------------------------------------------- 3. padding

TEST_CASE("padding never changes a loss, a gradient or a prediction") {
  const Samples s = samples();
  Batch plain, garbage, longer;
  Rng rng(17);
  fill_batch(plain, s, 5, 4, 4);
  fill_batch(garbage, s, 5, 4, 4, &rng);  // other tokens at masked positions
  fill_batch(longer, s, 8, 6, 7, &rng);   // padded longer, with garbage
  for (const char* name : kModels) {
    for (const char* output : {"sequence", "set"}) {
      auto model = create_model(name, small_config(name, output), DType::f64, 21);
      for (bool tf : {true, false}) {
        INFO(cat(name, " ", output, tf ? " teacher forcing" : " greedy"));
        const Run a = run(*model, plain, tf);
        const Run b = run(*model, garbage, tf);
        const Run c = run(*model, longer, tf);
        // Same shapes: bitwise identical.
        CHECK(a.loss == b.loss);
        CHECK(grad_diff(a, b) == 0.0);
        CHECK(prediction_diff(a.predictions, b.predictions, 4) == 0.0);
        // Longer: the same up to the summation order of the larger products (measured: <= 6e-17).
        CHECK(rel_diff(a.loss, c.loss) <= 1e-14);
        CHECK(grad_diff(a, c) <= 1e-14);
        CHECK(prediction_diff(a.predictions, c.predictions, 4) <= 1e-14);
      }
    }
  }
}

// ------------------------------------------------------------------------------- 4. asynchrony

TEST_CASE("dmnc asynchrony: an encoder keeps its state and memory after its view has ended") {
  // Sample 0: view 1 has 4 events, view 2 one; sample 1: view 1 one, view 2 four.
  Samples s;
  s.x1 = {{3, 1, 4, 1}, {5}};
  s.x2 = {{9}, {2, 6, 5, 3}};
  s.y = {{1, 2}, {3}};
  Batch batch;
  fill_batch(batch, s, 4, 4, 2);
  const char* fields[] = {
      "h", "c", "memory", "usage", "link", "write_weights", "read_weights", "read_vectors"};
  for (const char* name : {"dmnc-late", "dmnc-early"}) {
    auto model = create_model(name, small_config(name), DType::f64, 4);
    Trace trace;
    run(*model, batch, true, &trace);
    for (int enc = 1; enc <= 2; ++enc) {
      const int64_t ended = enc == 1 ? 1 : 0;  // the sample whose view `enc` has one event
      const int64_t going = 1 - ended;
      for (const char* f : fields) {
        INFO(cat(name, " encoder ", enc, " ", f));
        const std::string p = "enc" + std::to_string(enc) + "/t";
        const Tensor first = trace_get(trace, p + "0/state/" + f);
        for (int t = 1; t < 4; ++t) {
          const Tensor now = trace_get(trace, p + std::to_string(t) + "/state/" + f);
          CHECK(row(now, ended) == row(first, ended));  // unchanged after the view's end
        }
        CHECK(row(trace_get(trace, p + "3/state/" + f), going) != row(first, going));
      }
    }
    // The cache of early fusion is part of the held state.
    if (std::string(name) == "dmnc-early") {
      const Tensor c0 = trace_get(trace, "enc2/t0/state/cache");
      CHECK(row(trace_get(trace, "enc2/t3/state/cache"), 0) == row(c0, 0));
    }
  }
}

TEST_CASE("dmnc: views of different widths and an empty view run") {
  Samples s;
  s.x1 = {{3, 1}, {5}};
  s.x2 = {{9, 4, 4, 2, 8, 1}, {}};
  s.y = {{1, 2, 3}, {3}};
  Batch batch;
  fill_batch(batch, s, 2, 6, 3);
  for (const char* name : kModels) {
    auto model = create_model(name, small_config(name), DType::f64, 4);
    const Run r = run(*model, batch, true);
    CHECK(std::isfinite(r.loss));
    CHECK(r.predictions.shape() == Shape({2, 3, kOutVocab}));
  }
}

TEST_CASE(
    "lstm and dnc on one view (DMNC Table 3's single-view rows): the other view is not read") {
  Samples s;
  s.x1 = {{3, 1}, {5}};
  s.x2 = {{9, 4, 4}, {2}};
  s.y = {{1, 2, 3}, {3}};
  Batch batch, other;
  fill_batch(batch, s, 2, 3, 3);
  s.x2 = {{7, 7, 8}, {6}};  // other procedures, the same diagnoses
  fill_batch(other, s, 2, 3, 3);
  for (const char* name : {"lstm", "dnc"}) {
    CAPTURE(name);
    nlohmann::json cfg = small_config(name);
    cfg["views"] = "dx";
    auto model = create_model(name, cfg, DType::f64, 4);
    CHECK(model->params().find("enc2.embedding") == nullptr);  // no parameter without gradient
    CHECK(run(*model, batch, true).loss == run(*model, other, true).loss);
    auto both = create_model(name, small_config(name), DType::f64, 4);
    CHECK(both->params().find("enc2.embedding") != nullptr);
    CHECK(run(*both, batch, true).loss != run(*both, other, true).loss);
    cfg["views"] = "x2";
    CHECK_THROWS_WITH_AS(create_model(name, cfg, DType::f64, 4),
                         doctest::Contains("views must be \"both\", \"dx\" (view 1) or \"proc\""),
                         Error);
  }
}

// --------------------------------------------------------------------- 5. shapes and decoding

TEST_CASE("every model: output shapes, teacher forcing and greedy decoding") {
  Batch batch;
  fill_batch(batch, samples(), 5, 4, 4);
  for (const char* name : kModels) {
    for (const char* output : {"sequence", "set"}) {
      INFO(cat(name, " ", output));
      auto model = create_model(name, small_config(name, output), DType::f64, 2);
      CHECK(model->name() == name);
      for (bool tf : {true, false}) {
        Tape tape;
        ForwardOptions opts;
        opts.teacher_forcing = tf;
        opts.training = tf;
        const ForwardResult r = model->forward(tape, batch, opts);
        CHECK(r.loss.shape() == Shape({1}));
        CHECK(std::isfinite(r.loss.value().at(0)));
        if (std::string(output) == "sequence") {
          CHECK(r.predictions.shape() == Shape({3, 4, kOutVocab}));
        } else {
          CHECK(r.predictions.shape() == Shape({3, kOutVocab}));
        }
      }
    }
  }
}

TEST_CASE("greedy decoding feeds back the argmax of the previous step") {
  // Teacher forcing with targets equal to the greedy predictions reproduces the greedy logits on
  // every position a sample decodes (up to its output length; packing computes no more).
  Batch batch;
  fill_batch(batch, samples(), 5, 4, 4);
  for (const char* name : kModels) {
    INFO(cat(name));
    auto model = create_model(name, small_config(name), DType::f64, 8);
    const Run greedy = run(*model, batch, false);
    const Tensor& p = greedy.predictions;
    const int64_t B = p.dim(0), T = p.dim(1), V = p.dim(2);
    Batch forced;
    Samples s = samples();
    for (int64_t b = 0; b < B; ++b) {
      const size_t len = s.y[size_t(b)].size();
      s.y[size_t(b)].clear();
      for (int64_t t = 0; t < int64_t(len); ++t) {
        int64_t best = 0;
        for (int64_t c = 1; c < V; ++c)
          if (p.at((b * T + t) * V + c) > p.at((b * T + t) * V + best)) best = c;
        s.y[size_t(b)].push_back(int(best));
      }
    }
    fill_batch(forced, s, 5, 4, 4);
    const Run tf = run(*model, forced, true);
    CHECK(prediction_diff(tf.predictions, greedy.predictions, T) <= 1e-13);
    // And greedy decoding differs from teacher forcing on the real targets.
    const Run real = run(*model, batch, true);
    CHECK(prediction_diff(real.predictions, greedy.predictions, T) > 1e-9);
  }
}

TEST_CASE("pack_rows: stepping only the samples with an event gives the same loss and gradients") {
  // Packing (layers::StepMask, DecoderSpec::pack_rows) computes each encoder step on the samples
  // whose view has an event and each decoder step on the samples whose output goes on; stepping
  // every sample and blending must give the same numbers. Views and outputs of different lengths,
  // an empty view, and an output that ends before the batch's last position.
  Batch batch;
  fill_batch(batch, samples(), 5, 4, 4);
  for (const char* name : kModels) {
    for (const char* output : {"sequence", "set"}) {
      nlohmann::json cfg = small_config(name, output);
      auto packed = create_model(name, cfg, DType::f64, 31);
      cfg["pack_rows"] = false;
      auto blended = create_model(name, cfg, DType::f64, 31);
      CHECK(packed->config().at("pack_rows") == true);  // the default
      for (bool tf : {true, false}) {
        INFO(cat(name, " ", output, tf ? " teacher forcing" : " greedy"));
        const Run a = run(*packed, batch, tf);
        const Run b = run(*blended, batch, tf);
        CHECK(rel_diff(a.loss, b.loss) <= 1e-14);
        CHECK(grad_diff(a, b) <= 1e-13);
        // Predictions agree wherever a sample has an output (samples() has lengths 4, 1, 2).
        const int64_t lengths[3] = {4, 1, 2};
        if (a.predictions.rank() == 3)
          for (int64_t s = 0; s < 3; ++s)
            for (int64_t t = 0; t < lengths[s]; ++t)
              for (int64_t c = 0; c < kOutVocab; ++c) {
                const int64_t at = (s * 4 + t) * kOutVocab + c;
                CHECK(rel_diff(a.predictions.at(at), b.predictions.at(at)) <= 1e-13);
              }
        else
          CHECK(prediction_diff(a.predictions, b.predictions, 0) <= 1e-13);
      }
    }
  }
}

TEST_CASE("decoder_feedback false: the decoder's inputs never depend on targets or predictions") {
  Batch batch;
  fill_batch(batch, samples(), 5, 4, 4);
  for (const char* name : kModels) {
    INFO(cat(name));
    nlohmann::json cfg = small_config(name);
    cfg["decoder_feedback"] = false;
    auto model = create_model(name, cfg, DType::f64, 8);
    const Run greedy = run(*model, batch, false);
    const Run forced = run(*model, batch, true);
    const int64_t T = greedy.predictions.dim(1);
    CHECK(prediction_diff(forced.predictions, greedy.predictions, T) <= 1e-13);
    // The same model with feedback sees its targets under teacher forcing.
    cfg["decoder_feedback"] = true;
    auto fed = create_model(name, cfg, DType::f64, 8);
    CHECK(prediction_diff(run(*fed, batch, true).predictions, forced.predictions, T) > 1e-9);
  }
}

TEST_CASE("train_teacher_forcing false: training feeds the decoder its own predictions") {
  // As the DMNC authors' view-concatenated baselines are trained: the training forward decodes
  // greedily, so its predictions are those of greedy evaluation; evaluation with teacher forcing
  // still feeds the targets.
  Batch batch;
  fill_batch(batch, samples(), 5, 4, 4);
  for (const char* name : kModels) {
    INFO(cat(name));
    nlohmann::json cfg = small_config(name);
    cfg["train_teacher_forcing"] = false;
    auto model = create_model(name, cfg, DType::f64, 8);
    const Run trained = run(*model, batch, true);  // training forward
    const Run greedy = run(*model, batch, false);
    const int64_t T = greedy.predictions.dim(1);
    CHECK(prediction_diff(trained.predictions, greedy.predictions, T) <= 1e-13);
    CHECK(rel_diff(trained.loss, greedy.loss) <= 1e-13);
    Tape tape;
    ForwardOptions forced;
    forced.training = false;
    const double forced_loss = model->forward(tape, batch, forced).loss.value().at(0);
    CHECK(rel_diff(forced_loss, trained.loss) > 1e-9);
    // The default trains with teacher forcing: its training forward differs from greedy decoding.
    auto teacher = create_model(name, small_config(name), DType::f64, 8);
    CHECK(rel_diff(run(*teacher, batch, true).loss, forced_loss) <= 1e-13);
  }
}

TEST_CASE("missing or malformed batch fields are errors naming the model and the field") {
  Batch full;
  fill_batch(full, samples(), 5, 4, 4);
  for (const char* name : kModels) {
    auto model = create_model(name, small_config(name), DType::f64, 2);
    auto set_model = create_model(name, small_config(name, "set"), DType::f64, 2);
    for (const char* missing : {"x1", "x2_mask", "y", "y_mask"}) {
      Batch b;
      for (const auto& [k, v] : full.fields())
        if (k != missing) b.field(k, v.shape(), v.dtype()).copy_from(v);
      Tape tape;
      try {
        model->forward(tape, b, ForwardOptions{});
        FAIL(name, ": no error without ", missing);
      } catch (const Error& e) {
        const std::string msg = e.what();
        CHECK_MESSAGE(msg.find(name) != std::string::npos, msg);
        CHECK_MESSAGE(msg.find(missing) != std::string::npos, msg);
      }
    }
    Batch bad;
    for (const auto& [k, v] : full.fields())
      if (k != "labels") bad.field(k, v.shape(), v.dtype()).copy_from(v);
    bad.field("labels", Shape{3, kOutVocab + 1}, DType::f64);
    Tape tape;
    CHECK_THROWS_WITH_AS(set_model->forward(tape, bad, ForwardOptions{}),
                         doctest::Contains("labels"), Error);
    Batch wrong_mask;
    for (const auto& [k, v] : full.fields()) wrong_mask.field(k, v.shape(), v.dtype()).copy_from(v);
    wrong_mask.field("x1_mask", Shape{3, 4}, DType::f64);
    Tape tape2;
    CHECK_THROWS_WITH_AS(model->forward(tape2, wrong_mask, ForwardOptions{}),
                         doctest::Contains("x1_mask"), Error);
  }
}

namespace {

// Parameter counts from the architectures' formulas, at the DMNC paper's dimensions (embedding E,
// hidden H, memory word W, R read heads; 101 output classes, the sums 0..100). An LSTM of input I
// and hidden H has 4H(I + H + 1) parameters (W_x, W_h and b of its four gates), a linear layer
// I*O + O, an embedding V*E. The DNC interface (Graves et al. 2016, Methods) has
// W*R + 3W + 5R + 3 units: its read part RW + 4R (keys, strengths, three read modes per head) and
// its write part 3W + R + 3 (key, erase, write vector; strength, free gates, allocation and write
// gates), to which DMNC's cache adds a gate of W units.
int64_t lstm_params(int64_t in, int64_t hidden) { return 4 * hidden * (in + hidden + 1); }
int64_t linear_params(int64_t in, int64_t out) { return in * out + out; }

// Output "sequence" (sequence = true) or "set" with set_decoder "step" (read_only false) or "read".
int64_t paper_parameter_count(const std::string& model, bool sequence, int64_t vocab_in,
                              bool read_only = false) {
  const int64_t E = 64, H = 128, W = 64, R = 1, V = 101, A = 128;  // A: WLAS's attention size
  const int64_t read = R * W + 4 * R, write = 3 * W + R + 3;
  CHECK(read + write == W * R + 3 * W + 5 * R + 3);  // the DNC paper's interface size
  // The decoder: hidden Hd, context C (read vectors, attention contexts). A sequence decoder embeds
  // the previous output (V + 1 tokens with the start token) and steps an LSTM over [e; context];
  // its output layer reads [h; context]. A set decoder steps the LSTM once on [GO; context] (a
  // one-row embedding) and reads the same, once; with set_decoder "read" it has no LSTM.
  auto decoder = [&](int64_t Hd, int64_t C) {
    const int64_t lstm = sequence    ? (V + 1) * E + lstm_params(E + C, Hd)
                         : read_only ? 0
                                     : E + lstm_params(E + C, Hd);
    return lstm + linear_params(Hd + C, V);
  };
  const int64_t embeddings = 2 * vocab_in * E;  // one input embedding per view
  if (model == "dmnc-late")                     // two DNC encoders, each with its own read function
    return embeddings +
           2 * (lstm_params(E + R * W, H) + linear_params(H, write) + linear_params(H, read)) +
           linear_params(H, read) + decoder(2 * H, 2 * R * W);
  if (model == "dmnc-early")  // with the cache, and one read function for both encoders
    return embeddings + 2 * (lstm_params(E + R * W, H) + linear_params(H, write + W)) +
           linear_params(H, read) + linear_params(H, read) + decoder(2 * H, 2 * R * W);
  if (model == "dnc")  // one DNC encoder reads both views
    return embeddings + lstm_params(E + R * W, H) + linear_params(H, read + write) +
           linear_params(H, read) + decoder(H, R * W);
  if (model == "lstm") return embeddings + lstm_params(E, H) + decoder(H, 0);
  if (model == "dual-lstm") return embeddings + 2 * lstm_params(E, H) + decoder(2 * H, 0);
  if (model == "wlas") {  // per view an attention: W_k [H, A], W_q and b [2H, A], v [A, 1]
    const int64_t attention = H * A + linear_params(2 * H, A) + A;
    return embeddings + 2 * lstm_params(E, H) + 2 * attention + decoder(2 * H, 2 * H);
  }
  FAIL("no formula for model ", model);
  return 0;
}

}  // namespace

TEST_CASE("configs: defaults, unknown keys and parameter counts at the paper's dimensions") {
  int counted = 0;
  for (const ModelInfo& m : all_models()) {
    if (std::find(std::begin(kModels), std::end(kModels), m.name) == std::end(kModels)) continue;
    INFO(cat(m.name));
    CHECK(m.default_config.at("embedding") == 64);
    CHECK(m.default_config.at("hidden") == 128);
    CHECK(m.default_config.at("input_vocab") == 51);  // the numbers 1..50 and PAD
    CHECK(m.default_config.at("output_vocab") == 101);
    CHECK(m.train_defaults.at("optimizer") == "adam");
    CHECK(m.train_defaults.at("clip_value") == 10);
    if (has_memory(m.name)) {
      CHECK(m.default_config.at("word_size") == 64);
      CHECK(m.default_config.at("memory_slots") == (m.name == "dnc" ? 32 : 16));
      CHECK(m.default_config.at("read_heads") == 1);
    }
    CHECK_THROWS_WITH_AS(m.create({{"hiden", 3}}, DType::f32, 1), doctest::Contains("hiden"),
                         Error);
    auto model = m.create(nlohmann::json::object(), DType::f32, 1);
    CHECK(model->params().count() == paper_parameter_count(m.name, true, 51));
    auto set = m.create({{"output", "set"}}, DType::f32, 1);
    CHECK(set->params().count() == paper_parameter_count(m.name, false, 51));
    auto set_read = m.create({{"output", "set"}, {"set_decoder", "read"}}, DType::f32, 1);
    CHECK(set_read->params().count() == paper_parameter_count(m.name, false, 51, true));
    // sum2seq's input has an end marker (52 tokens): the count `memgrad bench` and
    // docs/results/speed.md give for its runs (dmnc-late: 851,897).
    auto with_end_marker = m.create({{"input_vocab", 52}}, DType::f32, 1);
    CHECK(with_end_marker->params().count() == paper_parameter_count(m.name, true, 52));
    MESSAGE(m.name, ": ", model->params().count(), " parameters at the paper's dimensions (",
            set->params().count(), " with set output)");
    ++counted;
  }
  CHECK(counted == int(std::size(kModels)));
  CHECK(paper_parameter_count("dmnc-late", true, 52) ==
        851897);  // docs/results/speed.md, DMNC training step
}

TEST_CASE("dmnc: cache_gate_bias initialises the cache gate's bias block and nothing else") {
  const int64_t W = 4, R = 1;
  auto model = create_model("dmnc-early",
                            {{"embedding", 3},
                             {"hidden", 5},
                             {"word_size", W},
                             {"memory_slots", 3},
                             {"input_vocab", 7},
                             {"output_vocab", 9},
                             {"cache_gate_bias", -3.0}},
                            DType::f64, 4);
  for (const char* name : {"enc1.write.b", "enc2.write.b"}) {
    const Tensor& b = model->params().get(name).value;
    const int64_t gate = 3 * W + R + 3;  // after erase, write vector, write key and the gates
    REQUIRE(b.numel() == gate + W);
    for (int64_t j = 0; j < b.numel(); ++j) CHECK(b.at(j) == (j >= gate ? -3.0 : 0.0));
  }
}

TEST_CASE("wlas: the authors' decoder queries with cell-state halves and keeps the context out") {
  // attention_query "cell_halves": attention k's query is half k of the decoder's cell state, so
  // its query weights read H (not 2H) numbers, and the attention weights change with c alone;
  // context_in_output false: the output layer reads h only.
  nlohmann::json cfg = small_config("wlas");
  cfg["attention_query"] = "cell_halves";
  cfg["context_in_output"] = false;
  auto authors = create_model("wlas", cfg, DType::f64, 5);
  auto ours = create_model("wlas", small_config("wlas"), DType::f64, 5);
  const int64_t H = 5, A = 4;  // small_config's hidden and attention size
  CHECK(authors->params().get("dec.attention1.query.w").value.shape() == Shape({H, A}));
  CHECK(ours->params().get("dec.attention1.query.w").value.shape() == Shape({2 * H, A}));
  CHECK(authors->params().get("dec.out.w").value.shape() == Shape({2 * H, kOutVocab}));
  CHECK(ours->params().get("dec.out.w").value.shape() == Shape({4 * H, kOutVocab}));
  // Decoding runs, packed and not, with the same numbers.
  Batch batch;
  fill_batch(batch, samples(), 5, 4, 4);
  cfg["pack_rows"] = false;
  auto blended = create_model("wlas", cfg, DType::f64, 5);
  const Run a = run(*authors, batch, true), b = run(*blended, batch, true);
  CHECK(std::isfinite(a.loss));
  CHECK(rel_diff(a.loss, b.loss) <= 1e-14);
  CHECK(grad_diff(a, b) <= 1e-13);
  nlohmann::json bad = small_config("wlas");
  bad["attention_query"] = "cell";
  CHECK_THROWS_WITH(create_model("wlas", bad, DType::f64, 4),
                    doctest::Contains("'attention_query' must be \"hidden\" or \"cell_halves\""));
}

TEST_CASE("wlas: the authors' attention buffer mixes the batch's samples, ours does not") {
  // attention_memory "authors_reshape": the time-major [T, B, H] stack of cell states read as
  // [B, T, H], so sample 0's attention buffer holds (t0, s0), (t0, s1), (t0, s2), (t1, s0), ...:
  // changing sample 1's view changes sample 0's predictions. With "outputs" it cannot.
  Samples a = samples(), b = samples();
  b.x1[1] = {5, 5, 10, 2};  // sample 1's view 1 only
  Batch ba, bb;
  fill_batch(ba, a, 5, 4, 4);
  fill_batch(bb, b, 5, 4, 4);
  nlohmann::json authors_cfg = small_config("wlas");
  authors_cfg["attention_memory"] = "authors_reshape";
  auto authors = create_model("wlas", authors_cfg, DType::f64, 5);
  auto ours = create_model("wlas", small_config("wlas"), DType::f64, 5);
  auto sample0_change = [&](Model& m) {
    const Run ra = run(m, ba, true), rb = run(m, bb, true);
    const std::vector<double> pa = row(ra.predictions, 0), pb = row(rb.predictions, 0);
    double worst = 0;
    for (size_t j = 0; j < pa.size(); ++j) worst = std::max(worst, rel_diff(pa[j], pb[j]));
    return worst;
  };
  CHECK(sample0_change(*ours) == 0.0);
  CHECK(sample0_change(*authors) > 1e-6);
  // Same parameters either way (the buffer has no weights of its own); a bad value is named.
  CHECK(authors->params().size() == ours->params().size());
  nlohmann::json bad = small_config("wlas");
  bad["attention_memory"] = "reshape";
  CHECK_THROWS_WITH(
      create_model("wlas", bad, DType::f64, 4),
      doctest::Contains("'attention_memory' must be \"outputs\" or \"authors_reshape\""));
}

TEST_CASE("wlas: attention_init_range draws the attention weights uniform(-r, r)") {
  const nlohmann::json base = {{"embedding", 3},
                               {"hidden", 8},
                               {"attention_size", 16},
                               {"input_vocab", 7},
                               {"output_vocab", 9}};
  auto max_abs = [](const Tensor& t) {
    double m = 0;
    for (int64_t i = 0; i < t.numel(); ++i) m = std::max(m, std::fabs(t.at(i)));
    return m;
  };
  nlohmann::json authors = base;
  authors["attention_init_range"] = 1.0;
  auto glorot = create_model("wlas", base, DType::f64, 4);
  auto wide = create_model("wlas", authors, DType::f64, 4);
  for (const char* name :
       {"dec.attention1.key.w", "dec.attention2.query.w", "dec.attention1.score.w"}) {
    const Tensor& g = glorot->params().get(name).value;
    const double limit = std::sqrt(6.0 / double(g.dim(0) + g.dim(1)));
    CHECK(max_abs(g) <= limit);
    const double m = max_abs(wide->params().get(name).value);
    CHECK(m <= 1.0);
    CHECK(m > limit);  // 16 x 8 or more draws from uniform(-1, 1): one is beyond the Glorot limit
  }
  nlohmann::json bad = base;
  bad["attention_init_range"] = -1.0;
  CHECK_THROWS_WITH(create_model("wlas", bad, DType::f64, 4),
                    doctest::Contains("attention_init_range"));
}

// Rows (a, b), (a', b'), (a, b'), (a', b) of two view-1 and two view-2 sequences: a score that is a
// sum of one term per view gives row 0 + row 1 = row 2 + row 3.
TEST_CASE("set output: 'read' scores the views additively in the two-encoder models, 'step' not") {
  Batch batch;
  const double v1[2][3] = {{1, 2, 3}, {4, 5, 0}}, v2[2][3] = {{6, 7, 0}, {8, 9, 10}};
  const int pair[4][2] = {{0, 0}, {1, 1}, {0, 1}, {1, 0}};
  // Every field created first: a new field may move the others (references into the batch).
  for (const char* f : {"x1", "x2", "x1_mask", "x2_mask"}) batch.field(f, Shape{4, 3}, DType::f64);
  batch.field("labels", Shape{4, kOutVocab}, DType::f64);
  Tensor& x1 = batch.field("x1", Shape{4, 3}, DType::f64);
  Tensor& m1 = batch.field("x1_mask", Shape{4, 3}, DType::f64);
  Tensor& x2 = batch.field("x2", Shape{4, 3}, DType::f64);
  Tensor& m2 = batch.field("x2_mask", Shape{4, 3}, DType::f64);
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t t = 0; t < 3; ++t) {
      const double a = v1[pair[r][0]][t], b = v2[pair[r][1]][t];
      x1.set(r * 3 + t, a), m1.set(r * 3 + t, a != 0);
      x2.set(r * 3 + t, b), m2.set(r * 3 + t, b != 0);
    }
  batch.size = 4;
  for (const char* name : {"dual-lstm", "dmnc-late", "dmnc-early", "wlas", "lstm"}) {
    for (const char* set_decoder : {"read", "step"}) {
      INFO(cat(name, " ", set_decoder));
      nlohmann::json c = small_config(name, "set");
      c["set_decoder"] = set_decoder;
      auto model = create_model(name, c, DType::f64, 3);
      Tape tape;
      ForwardOptions eval;
      eval.training = false;
      const Tensor p = model->forward(tape, batch, eval).predictions.value();
      double gap = 0;
      for (int64_t k = 0; k < kOutVocab; ++k)
        gap = std::max(gap, std::abs(p.at(k) + p.at(kOutVocab + k) - p.at(2 * kOutVocab + k) -
                                     p.at(3 * kOutVocab + k)));
      // Additive only where each view's encoder and read see that view alone, and nothing
      // after them mixes the two: dual-lstm and dmnc-late with "read".
      const bool additive = std::string(set_decoder) == "read" &&
                            (std::string(name) == "dual-lstm" || std::string(name) == "dmnc-late");
      if (additive)
        CHECK(gap < 1e-12);
      else
        CHECK(gap > 1e-6);
    }
  }
  nlohmann::json bad = small_config("dmnc-late", "set");
  bad["set_decoder"] = "twice";
  CHECK_THROWS_WITH_AS(
      create_model("dmnc-late", bad, DType::f64, 1),
      doctest::Contains("'set_decoder' must be \"read\" or \"step\", got \"twice\""), Error);
}

}  // namespace dmnc_tests
