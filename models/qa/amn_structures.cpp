// The AMN's per-sample constants (models/qa/amn_steps.hpp): the ids are read once, each sample's
// AmnStory (models/qa/amn_story.hpp) is built in a TBB loop over the batch, and the flags and
// propagation weights are copied into [T, B, ...] constants, each sample writing its own rows.
#include <algorithm>
#include <cmath>

#include "engine/error.hpp"
#include "engine/threads.hpp"
#include "models/qa/amn_steps.hpp"

namespace memgrad::qa::amn {
namespace {

int32_t read_id(const Tensor& t, int64_t i, const char* field) {
  const double id = t.at(i);
  MG_CHECK(id >= 0 && id < 2147483647.0 && id == std::floor(id), "amn: batch field '", field,
           "' holds ", id, " at position ", i, ", not a word id");
  return int32_t(id);
}

}  // namespace

Structures build_structures(Tape& tape, const Tensor& story, const Tensor& mask,
                            const Tensor& query, const Tensor* answer, int64_t vocab,
                            const AmnGraphOptions& graph, Scratch& scratch) {
  const int64_t b = story.shape()[0], t_count = story.shape()[1], j = story.shape()[2];
  const int64_t v = vocab;
  const DType dtype = story.dtype();
  scratch.ids.resize(size_t(story.numel()));
  scratch.query.resize(size_t(query.numel()));
  scratch.live.resize(size_t(b * t_count));
  for (int64_t i = 0; i < story.numel(); ++i) scratch.ids[size_t(i)] = read_id(story, i, "story");
  for (int64_t i = 0; i < query.numel(); ++i) scratch.query[size_t(i)] = read_id(query, i, "query");
  for (int64_t i = 0; i < b * t_count; ++i) scratch.live[size_t(i)] = mask.at(i) != 0 ? 1 : 0;
  if (int64_t(scratch.stories.size()) < b) scratch.stories.resize(size_t(b));

  Structures st;
  st.word_live = tape.constant(Shape{b, t_count, j, 1}, dtype, 0.0);
  st.query_live = tape.constant(Shape{b, j, 1}, dtype, 0.0);
  st.live = tape.constant(Shape{t_count, b, 1}, dtype, 0.0);
  st.onehot = tape.constant(Shape{t_count, b, v, j}, dtype, 0.0);
  st.pick = tape.constant(Shape{t_count, b, v, j}, dtype, 0.0);
  st.fresh = tape.constant(Shape{t_count, b, v, 1}, dtype, 0.0);
  st.again = tape.constant(Shape{t_count, b, v, 1}, dtype, 0.0);
  st.seen = tape.constant(Shape{t_count, b, v, 1}, dtype, 0.0);
  st.heard = tape.constant(Shape{t_count, b, v, 1}, dtype, 0.0);
  st.prop = tape.constant(Shape{t_count, b, v, v}, dtype, 0.0);
  st.relevant = tape.constant(Shape{b, v}, dtype, 0.0);
  for (int64_t i = 0; i < b * t_count * j; ++i)
    tape.value(st.word_live.id).set(i, scratch.ids[size_t(i)] != 0 ? 1.0 : 0.0);
  for (int64_t i = 0; i < b * j; ++i)
    tape.value(st.query_live.id).set(i, scratch.query[size_t(i)] != 0 ? 1.0 : 0.0);

  MG_DISPATCH(dtype, T, {
    T* live = tape.value(st.live.id).data<T>();
    T* onehot = tape.value(st.onehot.id).data<T>();
    T* pick = tape.value(st.pick.id).data<T>();
    T* fresh = tape.value(st.fresh.id).data<T>();
    T* again = tape.value(st.again.id).data<T>();
    T* seen = tape.value(st.seen.id).data<T>();
    T* heard = tape.value(st.heard.id).data<T>();
    T* prop = tape.value(st.prop.id).data<T>();
    T* relevant = tape.value(st.relevant.id).data<T>();
    parallel_for_each(b, [&](int64_t s) {
      AmnStory& story_s = scratch.stories[size_t(s)];
      const int32_t ans = answer ? read_id(*answer, s, "answer") : -1;
      build_amn_story({scratch.ids.data() + s * t_count * j, size_t(t_count * j)},
                      {scratch.live.data() + s * t_count, size_t(t_count)}, j,
                      {scratch.query.data() + s * j, size_t(j)}, ans, v, graph, story_s);
      for (int64_t t = 0; t < t_count; ++t) {
        const int64_t row = t * b + s;  // [t, s] of the [T, B, ...] constants
        live[row] = T(story_s.live[size_t(t)]);
        const int32_t* words = scratch.ids.data() + (s * t_count + t) * j;
        for (int64_t w = 0; w < j; ++w) {
          const int32_t id = words[w];
          if (id <= 0) continue;
          onehot[(row * v + id) * j + w] = T(1);
          if (story_s.again[size_t(t * v + id)] && std::find(words, words + w, id) == words + w)
            pick[(row * v + id) * j + w] = T(1);
        }
        for (int64_t i = 0; i < v; ++i) {
          fresh[row * v + i] = T(story_s.fresh[size_t(t * v + i)]);
          again[row * v + i] = T(story_s.again[size_t(t * v + i)]);
          seen[row * v + i] = T(story_s.seen[size_t(t * v + i)]);
          heard[row * v + i] = T(story_s.heard[size_t(t * v + i)]);
        }
        const double* p = &story_s.prop[size_t(t * v * v)];
        for (int64_t i = 0; i < v * v; ++i) prop[row * v * v + i] = T(p[i]);
      }
      if (answer)
        for (int64_t i = 0; i < v; ++i) relevant[s * v + i] = T(story_s.relevant[size_t(i)]);
    });
    for (int64_t i = 0; i < t_count * b; ++i) {
      st.live_count += double(live[i]);
      if (live[i] == T(0)) continue;
      for (int64_t k = 0; k < v; ++k) st.seen_count += double(seen[i * v + k]);
    }
  });
  return st;
}

void fill_relevance_targets(const Structures& st, Rng& rng, Tensor& targets, double decay) {
  const Tensor& rel = st.relevant.value();
  for (int64_t i = 0; i < rel.numel(); ++i) {
    const bool relevant = rel.at(i) != 0;
    double x =
        relevant ? 0.75 + std::sqrt(0.05) * rng.normal() : 0.3 + std::sqrt(0.1) * rng.normal();
    x = relevant ? std::min(x, 1.0) : std::max(x, 0.0);  // the paper's caps
    if (relevant) x *= std::pow(decay, rel.at(i) - 1);   // "weighted ... by distance from a"
    targets.set(i, std::clamp(x, 0.01, 0.99));           // inside (0, 1) for the KL
  }
}

}  // namespace memgrad::qa::amn
