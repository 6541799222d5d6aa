// The Adaptive Memory Network's per-story structures that do not depend on parameters, built from
// the word ids of one sample's story window (models/qa/amn.hpp has the model): which entities a
// sentence adds or updates (Pi_au, Eq. 13), the directed word graph A and its propagation weights
// (Pi_prop, Eq. 14), and the entities related to the answer (the expected relevance E[s], §4.4).
// Plain C++ on ids, one sample at a time: the model runs it over the batch in TBB.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

namespace memgrad::qa {

// Which nodes of the word graph E[s] counts as "connected to the answer node a in a directed
// graph" (§4.4, gap 7): its undirected component (edges taken both ways), or its ancestors (the
// nodes with a directed path to a).
enum class RelevanceGraph { component, ancestors };

struct AmnGraphOptions {
  int64_t hops = 2;      // r of Eq. 14: a node hears the nodes that reach it in <= r edges
  double recency = 1.0;  // extra weight of the current sentence's edges (the paper's "emphasis")
  RelevanceGraph relevance = RelevanceGraph::component;
};

// One story's structures, sentence by sentence. Arrays are row-major over (t, v) or (t, i, k) for
// T sentences and a vocabulary of V ids (0 = nil, never an entity).
struct AmnStory {
  int64_t sentences = 0, vocab = 0;
  std::vector<uint8_t> live;      // [T]      sentence t is real (not a padding slot)
  std::vector<uint8_t> fresh;     // [T, V]   v first appears in sentence t: enters m_0 with D[v]
  std::vector<uint8_t> again;     // [T, V]   v is in sentence t and was seen before: GRU update
  std::vector<uint8_t> seen;      // [T, V]   v appeared in sentences 0..t (the entities of m_0)
  std::vector<uint8_t> heard;     // [T, V]   v has an in-neighbour within r hops after sentence t
  std::vector<double> prop;       // [T, V, V] row i: weights of the nodes k whose states a_i sums
  std::vector<uint8_t> relevant;  // [V]      0: not related to the answer; else 1 + distance
  // Scratch of the builder (kept so that a reused AmnStory does not allocate).
  std::vector<uint8_t> edge, current, reach, frontier, next, known;
  std::vector<int32_t> nodes, path;
};

// The path a sentence of J ids (nil = 0) adds to the word graph A (Pi_prop; the paper's A.4: "a
// directed graph is drawn progressively from w_0 ... w_N", reusing nodes already in A): an edge
// from each non-nil word to the next, none from a word to itself. Writes the edges as (from, to)
// pairs into `edges` (room for J - 1 pairs) and returns how many there are.
int64_t sentence_path(std::span<const int32_t> words, std::span<int32_t> edges);

// Builds `out` from one sample: `words` holds T sentences of J ids (row-major, nil-padded), `live`
// T flags, `query` the question's ids and `answer` its answer id (or -1: no E[s] targets). Edges:
// each real sentence adds w_0 -> w_1 -> ... over its non-nil words (a repeated word adds no self
// loop); prop[t, i, k] = [k reaches i in 1..r edges] + recency * [k -> i is an edge of sentence t],
// normalised to sum 1 over k (a mean over the in-neighbours; see models/qa/amn.hpp, gap 5).
// relevant: the undirected component of the answer in the final graph, each node marked 1 + its
// distance (edges taken both ways, capped at 255) from the answer; with RelevanceGraph::ancestors,
// only the nodes with a directed path to the answer, marked 1 + the length of the shortest; when
// the answer is no word of the story, the same from the question's words that are, by distance
// from the nearest (gap 7).
// Throws an Error for an id outside [0, V).
void build_amn_story(std::span<const int32_t> words, std::span<const uint8_t> live, int64_t j,
                     std::span<const int32_t> query, int32_t answer, int64_t vocab,
                     const AmnGraphOptions& options, AmnStory& out);

}  // namespace memgrad::qa
