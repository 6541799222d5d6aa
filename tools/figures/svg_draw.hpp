// Small SVG drawings the papers' figures are made of: a bar chart of one value per input token
// (the DMNC paper's write-gate figures) and a shaded table of weights per row and column (the
// MemN2N paper's attention per hop). Each returns a standalone SVG document on a white ground.
#pragma once
#include <sstream>
#include <string>
#include <vector>

namespace memgrad::cli {

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

struct BarChart {
  std::string title;                  // above the plot
  std::vector<std::string> x_labels;  // one per bar, under it
  std::vector<double> values;         // bar heights, on [y_min, y_max]
  std::string x_title, y_title;       // axis titles
  double y_min = 0, y_max = 1;
  std::vector<std::string> notes;  // lines under the plot
};
// Bars with their values printed on top, the y axis ticked at 5 even steps. An Error when labels
// and values differ in number.
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

}  // namespace memgrad::cli
