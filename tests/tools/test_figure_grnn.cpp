// grnn-fig4 (tools/figures/grnn.cpp) on a hand-made inspection of one note: which labels become
// rows (the gold ones, then the top predicted ones that are not gold), their names, the words as
// columns, each cell's value, and the errors for an input it cannot draw. The render test
// (tests/scripts/render_pages.sh) draws it from a trained model when CodiEsp is there.
// grnn-fig3 (tools/figures/grnn_fig3.cpp) on hand-made runs' metrics: the frequency bins, a line
// per model averaged over its seeds, and the runs it refuses.
#include <doctest/doctest.h>

#include <string>

#include "tests/test_util.hpp"
#include "tools/figures/figure.hpp"

using namespace memgrad;
using namespace memgrad::cli;

namespace {

// A note of three words and three labels: gold labels 0 and 2, predicted order 2, 1, 0.
FigureInput note_input(const std::string& series = "g") {
  FigureInput in;
  in.model = "grnn";
  in.task = "codiesp";
  in.source = "test sample 0";
  in.sample = {{"document", "d1 (test, d1.txt)"},
               {"gold labels", "a00 First title; c00 Third title"},
               {"predicted 1", "0.9000  c00 Third title  (gold)"},
               {"predicted 2", "0.6000  b00 Second title"},
               {"predicted 3", "0.1000  a00 First title  (gold)"},
               {"gold label indices", "0 2"},
               {"predicted label indices", "2 1 0"}};
  TraceSeries g;
  g.name = series;
  g.shape = Shape{3};
  g.steps = {0, 1, 2};
  g.values = {{-0.5, 0.0, 0.25}, {-0.75, 0.5, 0.5}, {-1.0, 0.125, 1.0}};
  in.series.push_back(g);
  in.observed.step_name = "word";
  for (const char* w : {"patient", "diabetes", "hypertension"})
    in.observed.steps.push_back({{w, 1.0}});
  return in;
}

}  // namespace

TEST_CASE("grnn-fig4: gold then predicted labels as rows, the note's words as columns") {
  const FigureInfo& fig = find_figure("grnn-fig4");
  CHECK(figure_applies(fig, "grnn", "codiesp"));
  CHECK(figure_applies(fig, "text-gru", "codiesp"));
  CHECK_FALSE(figure_applies(fig, "grnn", "babi"));
  const std::string svg = fig.draw(note_input());
  CHECK(test::count_of(svg, "class=\"cell\"") == 9);  // 3 rows (2 gold, 1 predicted) x 3 words
  CHECK(svg.find("a00 First title  [gold]") != std::string::npos);
  CHECK(svg.find("c00 Third title  [gold]") != std::string::npos);
  CHECK(svg.find("b00 Second title  [predicted 2, p 0.6000]") != std::string::npos);
  // Cells read label l of each step: c00 (label 2) after "hypertension" is 1, b00 (label 1)
  // after "diabetes" is 0.5.
  CHECK(svg.find("hypertension (word 3), c00 Third title  [gold]: 1.0000") != std::string::npos);
  CHECK(svg.find("diabetes (word 2), b00 Second title  [predicted 2, p 0.6000]: 0.5000") !=
        std::string::npos);
  CHECK(svg.find("Grounded belief g_t") != std::string::npos);
}

TEST_CASE("grnn-fig4: a GRU's probabilities, and the inputs it refuses") {
  const FigureInfo& fig = find_figure("grnn-fig4");
  FigureInput gru = note_input("p");
  gru.model = "text-gru";
  CHECK(fig.draw(gru).find("Label probability") != std::string::npos);
  FigureInput short_note = note_input();
  short_note.observed.steps.pop_back();
  CHECK(test::error_of([&] { fig.draw(short_note); }).find("3 steps of g for a note of 2 words") !=
        std::string::npos);
  FigureInput names = note_input();
  names.sample[1].second = "a00 First title";  // two gold indices, one name
  CHECK(test::error_of([&] { fig.draw(names); }).find("2 gold label indices for 1") !=
        std::string::npos);
  FigureInput none = note_input();
  none.series.clear();
  CHECK(test::error_of([&] { fig.draw(none); }).find("grnn-fig4") != std::string::npos);
}

namespace {

// A finished codiesp run of `model` with four labels trained on 5, 6, 12 and 40 documents.
RunLog fig3_run(const std::string& path, const std::string& model, int seed,
                const nlohmann::json& auc_pr, int hidden = 128) {
  RunLog run;
  run.path = path;
  run.config = {{"model", model},
                {"model_config", {{"hidden", hidden}}},
                {"seed", seed},
                {"task", "codiesp"},
                {"task_settings", {{"seed", seed}, {"label_set", "extended"}}}};
  run.metrics["per_label"] = {{"code", {"a", "b", "c", "d"}},
                              {"train_docs", {5, 6, 12, 40}},
                              {"positives", {1, 1, 2, 3}},
                              {"auc_pr", auc_pr}};
  return run;
}

}  // namespace

TEST_CASE("grnn-fig3: AUC-PR by training frequency, a line per model, seeds averaged") {
  const FigureInfo& fig = find_figure("grnn-fig3");
  CHECK(figure_applies(fig, "l1-logreg", "codiesp"));
  CHECK_FALSE(figure_applies(fig, "grnn", "codiesp-kb"));
  const std::vector<RunLog> runs = {
      fig3_run("r/grnn/seed1", "grnn", 1, {0.2, 0.4, 0.6, 0.8}),
      fig3_run("r/gru-128/seed1", "text-gru", 1, {0.1, 0.1, 0.1, 0.1}),
      fig3_run("r/grnn/seed2", "grnn", 2, {0.4, nullptr, 0.8, 1.0}),
      fig3_run("r/gru-168/seed1", "text-gru", 1, {0.3, 0.3, 0.3, 0.3}, 168)};
  const std::string svg = fig.draw_runs(runs);
  // Bins [4, 8), [8, 16), [32, 64): 2, 1 and 1 labels; x the bin's geometric mean frequency.
  CHECK(svg.find("labels per bin 2, 1, 1; training documents per label (log)") !=
        std::string::npos);
  // grnn: the seeds' bin means (0.3, 0.6, 0.8) and (0.4, 0.8, 1.0; a label without a positive
  // left out), averaged.
  CHECK(svg.find("grnn, 2 runs: 5.477, 0.35<") != std::string::npos);
  CHECK(svg.find("grnn, 2 runs: 12, 0.7<") != std::string::npos);
  CHECK(svg.find("grnn, 2 runs: 40, 0.9<") != std::string::npos);
  // Two lines of one model are told apart by their folders.
  CHECK(svg.find("text-gru (gru-128): 40, 0.1<") != std::string::npos);
  CHECK(svg.find("text-gru (gru-168): 40, 0.3<") != std::string::npos);
  // The log axis ticks at 5, 10, 20, 50.
  for (const char* tick : {">5<", ">10<", ">20<", ">50<"})
    CHECK(svg.find(tick) != std::string::npos);

  // The page's table: a column per bin, grnn's cells the mean ± sd over its two seeds.
  const std::string table = fig.runs_page_body(runs);
  CHECK(table.find("<th>4-7 (2)</th><th>8-15 (1)</th><th>32-63 (1)</th>") != std::string::npos);
  CHECK(table.find("<td>grnn, 2 runs</td><td>0.350 ± 0.071</td><td>0.700 ± 0.141</td>") !=
        std::string::npos);
  CHECK(table.find("<td>text-gru (gru-168)</td><td>0.300</td>") != std::string::npos);

  std::vector<RunLog> bad = runs;
  bad[1].metrics = nullptr;
  CHECK(test::error_of([&] {
          fig.draw_runs(bad);
        }).find("figure grnn-fig3: r/gru-128/seed1/metrics.json has no per_label") !=
        std::string::npos);
  bad = runs;
  bad[2].metrics["per_label"]["code"][3] = "e";
  CHECK(test::error_of([&] {
          fig.draw_runs(bad);
        }).find("r/grnn/seed2 has other labels than r/grnn/seed1") != std::string::npos);
}
