// The AMN's parameter-free per-story structures; see models/qa/amn_story.hpp.
#include "models/qa/amn_story.hpp"

#include <algorithm>

#include "engine/error.hpp"

namespace memgrad::qa {
namespace {

// Which way a search follows the edges of A: along them, against them (to the nodes that reach
// the start), or both ways.
enum class Direction { along, against, both };

// Breadth-first search from the nodes marked in `frontier` over `edge` (edge[a * V + b]: a -> b),
// in `direction`, at most `depth` steps (depth < 0: unbounded); marks every node reached
// in `reach` (the start nodes only if reached again) with 1, or with `levels` with 2 + the step
// that reached it (1 + its distance from the start nodes, capped at 255).
void search(const std::vector<uint8_t>& edge, std::span<const int32_t> nodes, int64_t v,
            int64_t depth, Direction direction, std::vector<uint8_t>& frontier,
            std::vector<uint8_t>& next, uint8_t* reach, bool levels = false) {
  for (int64_t step = 0; depth < 0 || step < depth; ++step) {
    bool any = false;
    const uint8_t mark = levels ? uint8_t(std::min<int64_t>(step + 2, 255)) : 1;
    std::fill(next.begin(), next.end(), uint8_t(0));
    for (int32_t a : nodes) {
      if (!frontier[size_t(a)]) continue;
      for (int32_t b : nodes) {
        const bool linked = (direction != Direction::against && edge[size_t(a * v + b)]) ||
                            (direction != Direction::along && edge[size_t(b * v + a)]);
        if (linked && !reach[b]) reach[b] = mark, next[size_t(b)] = 1, any = true;
      }
    }
    if (!any) return;
    frontier.swap(next);
  }
}

}  // namespace

int64_t sentence_path(std::span<const int32_t> words, std::span<int32_t> edges) {
  int64_t n = 0;
  int32_t prev = 0;
  for (const int32_t id : words) {
    if (id == 0) continue;
    if (prev != 0 && prev != id) {
      MG_CHECK(2 * n + 1 < int64_t(edges.size()), "amn: no room for the path's edge ", n);
      edges[size_t(2 * n)] = prev;
      edges[size_t(2 * n + 1)] = id;
      ++n;
    }
    prev = id;
  }
  return n;
}

void build_amn_story(std::span<const int32_t> words, std::span<const uint8_t> live, int64_t j,
                     std::span<const int32_t> query, int32_t answer, int64_t vocab,
                     const AmnGraphOptions& options, AmnStory& out) {
  const int64_t t_count = int64_t(live.size()), v = vocab;
  MG_CHECK(j > 0 && int64_t(words.size()) == t_count * j, "amn: story of ", words.size(),
           " ids is not ", t_count, " sentences of ", j, " words");
  MG_CHECK(options.hops >= 1, "amn: prop_hops must be >= 1, got ", options.hops);
  out.sentences = t_count;
  out.vocab = v;
  out.live.assign(live.begin(), live.end());
  out.fresh.assign(size_t(t_count * v), 0);
  out.again.assign(size_t(t_count * v), 0);
  out.seen.assign(size_t(t_count * v), 0);
  out.heard.assign(size_t(t_count * v), 0);
  out.prop.assign(size_t(t_count * v * v), 0.0);
  out.relevant.assign(size_t(v), 0);
  out.edge.assign(size_t(v * v), 0);
  out.current.assign(size_t(v * v), 0);
  out.reach.assign(size_t(v), 0);
  out.frontier.assign(size_t(v), 0);
  out.next.assign(size_t(v), 0);
  out.nodes.clear();
  out.nodes.reserve(size_t(v));
  out.path.resize(size_t(2 * j));

  std::vector<uint8_t>& known = out.known;  // seen so far
  known.assign(size_t(v), 0);
  for (int64_t t = 0; t < t_count; ++t) {
    uint8_t* fresh = &out.fresh[size_t(t * v)];
    uint8_t* again = &out.again[size_t(t * v)];
    std::fill(out.current.begin(), out.current.end(), uint8_t(0));
    if (live[size_t(t)]) {
      for (int64_t w = 0; w < j; ++w) {
        const int32_t id = words[size_t(t * j + w)];
        MG_CHECK(id >= 0 && id < v, "amn: word id ", id, " at sentence ", t, ", word ", w,
                 " is not in [0, ", v, ")");
        if (id == 0) continue;
        if (!known[size_t(id)]) {
          fresh[id] = 1;
          known[size_t(id)] = 1;
          out.nodes.push_back(id);
        } else if (!fresh[id]) {
          again[id] = 1;
        }
      }
      const int64_t edges = sentence_path(words.subspan(size_t(t * j), size_t(j)), out.path);
      for (int64_t e = 0; e < edges; ++e) {
        const int32_t from = out.path[size_t(2 * e)], to = out.path[size_t(2 * e + 1)];
        out.edge[size_t(from * v + to)] = 1;
        out.current[size_t(from * v + to)] = 1;
      }
    }
    std::copy(known.begin(), known.end(), out.seen.begin() + t * v);
    if (!live[size_t(t)]) continue;
    // prop[t, i, k]: k reaches i within r edges, plus the recency weight of sentence t's edges.
    double* p = &out.prop[size_t(t * v * v)];
    for (int32_t k : out.nodes) {
      std::fill(out.reach.begin(), out.reach.end(), uint8_t(0));
      std::fill(out.frontier.begin(), out.frontier.end(), uint8_t(0));
      out.frontier[size_t(k)] = 1;
      search(out.edge, out.nodes, v, options.hops, Direction::along, out.frontier, out.next,
             out.reach.data());
      for (int32_t i : out.nodes)
        if (i != k)
          p[i * v + k] =
              double(out.reach[size_t(i)]) + options.recency * out.current[size_t(k * v + i)];
    }
    for (int32_t i : out.nodes) {
      double total = 0;
      for (int64_t k = 0; k < v; ++k) total += p[i * v + k];
      if (total <= 0) continue;
      for (int64_t k = 0; k < v; ++k) p[i * v + k] /= total;
      out.heard[size_t(t * v + i)] = 1;
    }
  }

  // E[s]'s relevant group: the answer's component (or the nodes that reach it), or the question
  // words' when it is absent.
  if (answer < 0) return;
  MG_CHECK(answer < v, "amn: answer id ", answer, " is not in [0, ", v, ")");
  std::fill(out.frontier.begin(), out.frontier.end(), uint8_t(0));
  if (answer > 0 && known[size_t(answer)]) {
    out.frontier[size_t(answer)] = 1;
  } else {
    for (int32_t id : query) {
      MG_CHECK(id >= 0 && id < v, "amn: question word id ", id, " is not in [0, ", v, ")");
      if (id > 0 && known[size_t(id)]) out.frontier[size_t(id)] = 1;
    }
  }
  // relevant[i] = 1 + i's distance from the start nodes, so that E[s] can be weighted by distance
  // (gap 7).
  for (int64_t i = 0; i < v; ++i) out.relevant[size_t(i)] = out.frontier[size_t(i)];
  const Direction way =
      options.relevance == RelevanceGraph::ancestors ? Direction::against : Direction::both;
  search(out.edge, out.nodes, v, -1, way, out.frontier, out.next, out.relevant.data(), true);
}

}  // namespace memgrad::qa
