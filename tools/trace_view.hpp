// What `memgrad inspect` shows of a model's Trace (models/model.hpp): the entries of one sample,
// grouped into series over time steps, rendered as text, JSON or a self-contained HTML page.
//
// Models name their entries with the step as a path component: "enc1/t3/write_gate" is encoder
// 1's write gate at step 3, "dec/t0/read_weights" the decoder's first read. Grouping takes the
// first component of the form t<number> as the step, so "enc1/t0/write_gate", "enc1/t1/write_gate"
// ... become the series "enc1/write_gate" with one value per step. An entry without a step
// ("hop1/attention") is a series of one.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "engine/tensor.hpp"
#include "models/model.hpp"

namespace memgrad::cli {

struct TraceSeries {
  std::string name;            // the entry name without its step component
  Shape shape;                 // one step's value, without the leading batch dimension of 1
  std::vector<int64_t> steps;  // step numbers, in recording order (-1: no step)
  std::vector<std::vector<double>> values;  // per step, flattened row-major
  std::vector<NodeId> nodes;  // per step, the tape node recorded (-1: none; Trace::nodes)
};

// Groups the entries of a batch of one (every entry's first dimension 1) into series, in the order
// their names first appear. An Error names an entry that is not of a batch of one, or whose shape
// differs from its series' earlier steps.
std::vector<TraceSeries> group_trace(const Trace& trace);

// Series whose name contains `filter` (all when empty).
std::vector<TraceSeries> select_series(const std::vector<TraceSeries>& all,
                                       const std::string& filter);

// A terminal view: per series its shape and, per step, the numbers (up to 8 values) or a row of
// shade cells scaled to the series' range with the row's largest value and its index (up to 64
// values); larger values (memories, link matrices) are shown as the L2 norm of each row over
// their last axis.
std::string render_text(const std::vector<TraceSeries>& series);

// {"series": [{"name", "shape", "steps", "values"}]}: everything, for plotting elsewhere.
nlohmann::json series_json(const std::vector<TraceSeries>& series);

// text with &, <, > and " written as HTML entities.
std::string html_escape(const std::string& text);

// A self-contained HTML page: the sample's lines, then one heatmap per series (a row per step, a
// cell per value, colour scaled to the series' range; hover a cell for its value). A series of at
// most 16 values a step is drawn with its columns numbered and each cell printing its value (a
// whole number as such, e.g. the step stored in a memory slot; others with two decimals).
// `figures` (HTML, e.g. render_memory_figures) goes between the sample's lines and the heatmaps.
std::string render_html(const std::string& title,
                        const std::vector<std::pair<std::string, std::string>>& sample,
                        const std::vector<TraceSeries>& series, const std::string& figures = "");

}  // namespace memgrad::cli
