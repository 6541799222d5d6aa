// The AMN paper's Figs. 3 and 4 (tools/figures/amn_fig3.cpp, amn_fig4.cpp) drawn from a hand-made
// trace of a three-sentence story, whose banks, moves, edges and banks read are known: every cell,
// mark, panel and edge is counted. (tests/scripts/render_pages.sh draws them from a trained run.)
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "engine/error.hpp"
#include "models/model.hpp"
#include "tests/test_util.hpp"
#include "tools/figures/figure.hpp"
#include "tools/trace_view.hpp"

using namespace memgrad;
using namespace memgrad::cli;

namespace {

constexpr int64_t kV = 6, kL = 3, kJ = 4;  // words 1 mary 2 moved 3 kitchen 4 john 5 garden

Tensor row(const Shape& shape, const std::vector<double>& values) {
  std::vector<int64_t> dims = {1};  // a batch of one
  for (int i = 0; i < shape.rank; ++i) dims.push_back(shape[i]);
  return Tensor::from(Shape::of(dims.data(), int(dims.size())), DType::f64, values);
}

// Banks [L, V] from the members of m_0, m_1, m_2.
std::vector<double> banks(const std::vector<std::vector<int>>& members) {
  std::vector<double> b(size_t(kL * kV), 0.0);
  for (size_t m = 0; m < members.size(); ++m)
    for (int e : members[m]) b[m * kV + size_t(e)] = 1;
  return b;
}

// Sentence 1 "mary moved kitchen"; 2 "john moved garden" (m_1 created, mary and kitchen moved
// up); 3 "mary moved garden" (m_2 created, garden moved to m_1, mary to m_2). The answer reads
// m_1 and m_2.
FigureInput hand_story() {
  const std::vector<std::vector<double>> words = {{1, 2, 3, 0}, {4, 2, 5, 0}, {1, 2, 5, 0}};
  const std::vector<std::vector<double>> edges = {
      {1, 2, 2, 3, 0, 0, 0, 0}, {4, 2, 2, 5, 0, 0, 0, 0}, {1, 2, 2, 5, 0, 0, 0, 0}};
  const std::vector<std::vector<double>> bank = {banks({{1, 2, 3}}),
                                                 banks({{1, 2, 3, 4, 5}, {1, 3}}),
                                                 banks({{1, 2, 3, 4, 5}, {1, 3, 5}, {1}})};
  const std::vector<std::vector<double>> exists = {{0, 0}, {1, 0}, {1, 1}};
  Trace trace;
  for (int t = 0; t < 3; ++t) {
    const std::string p = "t" + std::to_string(t) + "/";
    trace.record(p + "banks", row(Shape{kL, kV}, bank[size_t(t)]));
    trace.record(p + "exists", row(Shape{kL - 1}, exists[size_t(t)]));
    trace.record(p + "strength", row(Shape{kV}, {0, 0.9, 0.2, 0.6, 0.1, 0.5}));
    trace.record(p + "words", row(Shape{kJ}, words[size_t(t)]));
    trace.record(p + "edges", row(Shape{kJ, 2}, edges[size_t(t)]));
  }
  trace.record("end/banks", row(Shape{kL, kV}, bank[2]));
  trace.record("end/exists", row(Shape{kL}, {1, 1, 1}));
  trace.record("bank_weights", row(Shape{kL}, {0, 0.3, 0.7}));
  std::vector<double> attention(size_t(kL * kV), 0.0);
  attention[1 * kV + 1] = 0.1, attention[1 * kV + 3] = 0.02, attention[1 * kV + 5] = 0.88;
  attention[2 * kV + 1] = 1.0;
  trace.record("attention", row(Shape{kL, kV}, attention));
  trace.record("end/strength", row(Shape{kV}, {0, 0.9, 0.2, 0.6, 0.1, 0.5}));
  FigureInput in;
  in.model = "amn";
  in.task = "babi";
  in.source = "test sample 0";
  in.sample = {{"memory 0 (time 3)", "mary moved kitchen"},
               {"memory 1 (time 2)", "john moved garden"},
               {"memory 2 (time 1)", "mary moved garden"},
               {"question", "where is mary"},
               {"answer", "garden"},
               {"predicted", "garden (0.91)"}};
  in.series = group_trace(trace);
  return in;
}

// A long story: 14 sentences "aK moved pK" (K = 1..14; ids: moved 1, aK 2K, pK 2K + 1), 29
// entities, more than a column of 24. Every entity is in m_0 once said; sentences 3 and 12's are
// also in m_1, the one bank read for the answer. With `attends` the read gives a3 ps 0.6 and p12
// 0.4, else 0.02 to each of m_1's entities (none reaches 0.05).
FigureInput long_story(bool attends) {
  constexpr int64_t n = 14, v = 2 * n + 2, l = 2;
  const auto said = [](int64_t k) { return std::vector<int64_t>{2 * k, 1, 2 * k + 1}; };
  Trace trace;
  std::vector<double> bank(size_t(l * v), 0.0);
  FigureInput in;
  for (int64_t k = 1; k <= n; ++k) {
    for (const int64_t e : said(k)) {
      bank[size_t(e)] = 1;
      if (k == 3 || k == 12) bank[size_t(v + e)] = 1;
    }
    const std::string p = "t" + std::to_string(k - 1) + "/";
    trace.record(p + "banks", row(Shape{l, v}, bank));
    trace.record(p + "exists", row(Shape{l - 1}, {1}));
    trace.record(p + "strength", row(Shape{v}, std::vector<double>(size_t(v), 0.5)));
    trace.record(p + "words", row(Shape{3}, {double(2 * k), 1, double(2 * k + 1)}));
    trace.record(p + "edges", row(Shape{2, 2}, {double(2 * k), 1, 1, double(2 * k + 1)}));
    in.sample.push_back(
        {"memory " + std::to_string(k - 1) + " (time " + std::to_string(n + 1 - k) + ")",
         "a" + std::to_string(k) + " moved p" + std::to_string(k)});
  }
  trace.record("end/banks", row(Shape{l, v}, bank));
  trace.record("end/exists", row(Shape{l}, {1, 1}));
  trace.record("bank_weights", row(Shape{l}, {0, 1}));
  std::vector<double> attention(size_t(l * v), 0.0);
  for (const int64_t k : {3, 12})
    for (const int64_t e : said(k)) attention[size_t(v + e)] = 0.02;
  if (attends) attention[size_t(v + 6)] = 0.6, attention[size_t(v + 25)] = 0.4;  // a3, p12
  trace.record("attention", row(Shape{l, v}, attention));
  trace.record("end/strength", row(Shape{v}, std::vector<double>(size_t(v), 0.5)));
  in.model = "amn";
  in.task = "babi";
  in.source = "test sample 0";
  in.sample.push_back({"question", "where is a3"});
  in.sample.push_back({"answer", "p3"});
  in.sample.push_back({"predicted", "p3 (0.50)"});
  in.series = group_trace(trace);
  return in;
}

}  // namespace

TEST_CASE("amn-fig3: a cell per bank and sentence, absent banks grey, creations and moves marked") {
  const std::string svg = find_figure("amn-fig3").draw(hand_story());
  CHECK(test::count_of(svg, "class=\"absent\"") == 3);  // m_1 at 1; m_2 at 1 and 2
  CHECK(test::count_of(svg, "class=\"bank-cell") == 6);
  CHECK(test::count_of(svg, "class=\"bank-cell created\"") == 2);  // m_1 at 2, m_2 at 3
  CHECK(test::count_of(svg, "class=\"entered\"") == 5);  // m_0: 3 at 1, john and garden at 2
  CHECK(test::count_of(svg, "class=\"moved\"") == 4);    // mary, kitchen; garden; mary
  CHECK(svg.find("m_2 after sentence 3: mary (entered)</title>") != std::string::npos);
  CHECK(svg.find("m_1 after sentence 3: mary, kitchen, garden (entered)</title>") !=
        std::string::npos);
  CHECK(svg.find(">+kitchen</text>") != std::string::npos);
  CHECK(svg.find(">2. john moved garden</text>") != std::string::npos);
  CHECK(svg.find(">predicted: garden (0.91)</text>") != std::string::npos);
}

TEST_CASE("amn-fig4: a graph per sentence with its path, and the banks read for the answer") {
  const std::string svg = find_figure("amn-fig4").draw(hand_story());
  CHECK(test::count_of(svg, "class=\"panel\"") == 4);     // 3 sentences and the answer
  CHECK(test::count_of(svg, "class=\"edge-now\"") == 6);  // two edges a sentence
  CHECK(test::count_of(svg, "class=\"edge\"") ==
        2 + 4 + 4 + 4);  // A after each sentence, then the end
  CHECK(test::count_of(svg, "class=\"read-bank\"") == 2);
  CHECK(test::count_of(svg, "m_0: not read") == 1);
  CHECK(test::count_of(svg, "m_2: read, d = 0.70") == 1);
  CHECK(test::count_of(svg, "class=\"node examined\"") == 3);  // mary, kitchen, garden
  CHECK(svg.find(">mary 1.00</text>") != std::string::npos);   // ps in m_2, its highest read bank
  CHECK(svg.find(">garden 0.88</text>") != std::string::npos);
  CHECK(svg.find(">kitchen</text>") != std::string::npos);  // ps 0.02: not printed
  CHECK(svg.find("4 / 5 = 0.80") != std::string::npos);     // m_1's 3 and m_2's 1 of 5
  CHECK(svg.find("john -&gt; moved (this sentence's path)") != std::string::npos);
  CHECK(svg.find("long story") == std::string::npos);  // every sentence and entity drawn
  CHECK(svg.find("not shown") == std::string::npos);
}

TEST_CASE("amn-fig4: a long story gets panels for the sentences the answer's read attended to") {
  const std::string svg = find_figure("amn-fig4").draw(long_story(true));
  CHECK(test::count_of(svg, "class=\"panel\"") == 3);  // sentences 3 and 12, and the answer
  CHECK(svg.find(">after 3. a3 moved p3</text>") != std::string::npos);
  CHECK(svg.find(">after 12. a12 moved p12</text>") != std::string::npos);
  CHECK(svg.find(">after 14.") == std::string::npos);
  CHECK(svg.find("A long story (14 sentences): panels only for sentences 3, 12, those that "
                 "mention an entity the answer's read attended to (ps &gt;= 0.05)") !=
        std::string::npos);
  CHECK(svg.find(">... 12 sentences not shown; their edges are in every graph.</text>") !=
        std::string::npos);
  // Nodes: moved, a3, p3, a12, p12 of the 29 (sentence 3's panel: the three said by then).
  CHECK(svg.find("Only 5 of the story's 29 entities have a node") != std::string::npos);
  CHECK(test::count_of(svg, "class=\"node") == 3 + 5 + 5);
  CHECK(test::count_of(svg, "class=\"edge\"") == 2 + 4 + 4);  // A's edges between drawn nodes only
  CHECK(test::count_of(svg, "class=\"edge-now\"") == 2 + 2);
  CHECK(svg.find(">a3 0.60</text>") != std::string::npos);
}

TEST_CASE("amn-fig4: a long story without attention to go by shows its last 10 sentences") {
  const std::string svg = find_figure("amn-fig4").draw(long_story(false));
  CHECK(test::count_of(svg, "class=\"panel\"") == 11);
  CHECK(svg.find(">after 4.") == std::string::npos);
  CHECK(svg.find(">after 5. a5 moved p5</text>") != std::string::npos);
  CHECK(svg.find("panels only for the last 10 (no entity reached ps &gt;= 0.05 in the answer's "
                 "read)") != std::string::npos);
  CHECK(svg.find(">... 4 sentences not shown;") != std::string::npos);
  CHECK(svg.find("Only 21 of the story's 29 entities have a node") != std::string::npos);
}

TEST_CASE("amn figures: a trace that does not match the story's lines is an error") {
  FigureInput in = hand_story();
  in.sample[1].second = "john moved";
  CHECK_THROWS_WITH_AS(find_figure("amn-fig3").draw(in),
                       doctest::Contains("sentence 1 has 3 word ids for the 2 words"), Error);
  in = hand_story();
  in.series.erase(in.series.begin() + 3);  // "words"
  CHECK_THROWS_WITH_AS(find_figure("amn-fig4").draw(in),
                       doctest::Contains("model amn recorded no series 'words'"), Error);
}
