// Small SVG drawings the papers' figures are made of: a bar chart of one value per input token
// (the DMNC paper's write-gate figures) and a shaded table of weights per row and column (the
// MemN2N paper's attention per hop), and a heat map of values over a text's words (the GRNN
// paper's beliefs). Each returns a standalone SVG document on a white ground.
#pragma once
#include <sstream>
#include <string>
#include <vector>

namespace memgrad::cli {

// `s` cut to n characters, ending "..." when cut.
std::string svg_shortened(const std::string& s, size_t n);

// printf-formats one number ("%.2f").
std::string svg_number(double v, const char* format);

// The pieces every drawing here is made of, for the figures that draw their own layout.
int svg_text_width(const std::string& s);   // pixels of s at 12 px sans-serif (about)
int svg_title_width(const std::string& s);  // the same in bold, with a margin
// The document's start: size, font and a white ground (so the figure reads on any page).
void svg_open(std::ostringstream& out, int width, int height);
// A <text> at (x, y), escaped; `extra` holds further attributes (" font-weight=\"bold\"").
void svg_text(std::ostringstream& out, double x, double y, const std::string& s,
              const char* anchor = "start", const char* extra = "");
std::string svg_blue(double v);  // white (0) to dark blue (1), the MemN2N paper's shading
void svg_notes(std::ostringstream& out, int x, int y, const std::vector<std::string>& notes);

constexpr size_t kBarDetailChars = 40;

struct BarChart {
  std::string title;                  // above the plot
  std::vector<std::string> x_labels;  // one per bar, under it
  // Optional, one per bar (a code's title; "" for none): when given, each bar's label and detail
  // are written together, the label in bold, rotated to read upwards under the bar, the detail
  // shortened to kBarDetailChars (the bar's tooltip has it whole), so that dozens of long labels
  // stay readable side by side.
  std::vector<std::string> x_details;
  std::vector<double> values;    // bar heights, on [y_min, y_max]
  std::string x_title, y_title;  // axis titles
  double y_min = 0, y_max = 1;
  std::vector<std::string> notes;  // lines under the plot
};
// Bars with their values printed on top, the y axis ticked at 5 even steps. An Error when labels,
// details (when given) and values differ in number.
std::string bar_chart_svg(const BarChart& chart);

struct WeightTable {
  std::string title;
  std::string row_title;                    // heading of the label column, e.g. "story"
  std::vector<std::string> row_labels;      // e.g. the sentences
  std::vector<std::string> columns;         // e.g. "hop 1", "hop 2", "hop 3"
  std::vector<std::vector<double>> values;  // [row][column], on [0, 1]
  std::vector<std::string> notes;           // lines under the table
};
// A table of the rows' labels and one shaded cell per column printing its value (white at 0,
// dark blue at 1), as in the MemN2N paper's Fig. 2. An Error when the shapes disagree.
std::string weight_table_svg(const WeightTable& table);

struct BeliefMap {
  std::string title;
  std::vector<std::string> row_labels;      // e.g. the labels' codes and titles
  std::vector<std::string> columns;         // e.g. the note's words, in reading order
  std::vector<std::vector<double>> values;  // [row][column], on [lo, hi]
  double lo = -1, hi = 1;          // the colour scale: blue at lo, white halfway, red at hi
  std::string scale_title;         // what the colours are, e.g. "belief g_t"
  std::vector<std::string> notes;  // lines under the map
};
// A heat map of one value per row and column, small cells without printed numbers (each cell's
// tooltip gives its column, row and value), the column labels written vertically under the cells,
// a colour key beside the title: the GRNN paper's belief-over-the-note figure (Fig. 4) for every
// row at once. An Error when the shapes disagree.
std::string belief_map_svg(const BeliefMap& map);

}  // namespace memgrad::cli
