// Line charts as self-contained SVG (no scripts, fonts or links), for `memgrad plot` (training
// curves) and the gradient-flow panel of `memgrad inspect --html`.
#pragma once
#include <string>
#include <vector>

namespace memgrad::cli {

struct ChartLine {
  std::string label;      // in the legend
  std::vector<double> x;  // same length as y
  std::vector<double> y;  // a NaN (or, on a log axis, a value <= 0) breaks the line there (x too)
  int colour = 0;         // index into a fixed palette of distinguishable colours
  bool dashed = false;
  bool markers = false;  // a dot at each point (for sparse series such as evaluations)
};

struct ChartSpec {
  std::string title;
  std::string x_label;
  std::string y_label;
  bool log_y = false;  // logarithmic y axis (gradient norms)
  bool log_x = false;  // logarithmic x axis, ticks at 1, 2 and 5 times powers of ten (frequencies)
  int width = 720;     // the whole chart, legend included
  int height = 260;
};

// One chart: axes with ticks at round numbers, a line per ChartLine, a legend on the right
// (each line's label), hovering a point shows its value. A chart without any drawable point says
// so in its plot area.
std::string line_chart_svg(const ChartSpec& spec, const std::vector<ChartLine>& lines);

// The i-th colour of the palette, as "#rrggbb".
const char* chart_colour(int i);

}  // namespace memgrad::cli
