#include "tools/figures/svg_draw.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "engine/error.hpp"
#include "tools/trace_view.hpp"

namespace memgrad::cli {
namespace {

constexpr double kCharWidth = 6.6;  // sans-serif at 12 px, for sizing label columns

}  // namespace

int svg_text_width(const std::string& s) { return int(std::ceil(kCharWidth * double(s.size()))); }
// Titles are bold: wider.
int svg_title_width(const std::string& s) { return svg_text_width(s) * 6 / 5 + 20; }

// The document's start: size, font and a white ground (so the figure reads on any page).
void svg_open(std::ostringstream& out, int width, int height) {
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" viewBox=\"0 0 " << width << " " << height
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"" << width
      << "\" height=\"" << height << "\" fill=\"#fff\"/>\n";
}

void svg_text(std::ostringstream& out, double x, double y, const std::string& s, const char* anchor,
              const char* extra) {
  out << "<text x=\"" << x << "\" y=\"" << y << "\" text-anchor=\"" << anchor << "\"" << extra
      << ">" << html_escape(s) << "</text>";
}

// White (0) to dark blue (1), the MemN2N paper's shading.
std::string svg_blue(double v) {
  const double t = std::clamp(v, 0.0, 1.0);
  char buf[16];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", int(255 - 225 * t), int(255 - 175 * t),
                int(255 - 75 * t));
  return buf;
}

namespace {

// Blue (-1) through white (0) to red (+1).
std::string diverging(double v) {
  const double t = std::clamp(v, -1.0, 1.0);
  char buf[16];
  if (t >= 0)
    std::snprintf(buf, sizeof buf, "#%02x%02x%02x", int(255 - 40 * t), int(255 - 215 * t),
                  int(255 - 215 * t));
  else
    std::snprintf(buf, sizeof buf, "#%02x%02x%02x", int(255 + 215 * t), int(255 + 150 * t),
                  int(255 + 40 * t));
  return buf;
}

}  // namespace

void svg_notes(std::ostringstream& out, int x, int y, const std::vector<std::string>& notes) {
  for (size_t i = 0; i < notes.size(); ++i) svg_text(out, x, y + 16 * int(i), notes[i]);
}

std::string svg_number(double v, const char* format) {
  char buf[32];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string svg_shortened(const std::string& s, size_t n) {
  return s.size() <= n ? s : s.substr(0, n - 3) + "...";
}

namespace {

// Bar i's label and detail, bold label then detail, reading upwards from below the axis at
// (x, y) down to y + its length.
void rotated_label(std::ostringstream& out, double x, double y, const std::string& label,
                   const std::string& detail) {
  out << "<text x=\"" << x << "\" y=\"" << y << "\" text-anchor=\"end\" transform=\"rotate(-90 "
      << x << " " << y << ")\"><tspan font-weight=\"bold\">" << html_escape(label) << "</tspan>";
  if (!detail.empty()) out << "  " << html_escape(svg_shortened(detail, kBarDetailChars));
  out << "</text>";
}

}  // namespace

std::string bar_chart_svg(const BarChart& c) {
  MG_CHECK(c.x_labels.size() == c.values.size(), "figure '", c.title, "': ", c.x_labels.size(),
           " labels for ", c.values.size(), " bars");
  const bool rotated = !c.x_details.empty();
  MG_CHECK(!rotated || c.x_details.size() == c.values.size(), "figure '", c.title,
           "': ", c.x_details.size(), " label details for ", c.values.size(), " bars");
  MG_CHECK(c.y_max > c.y_min, "figure '", c.title, "': empty y range");
  const int left = 64, top = 40, plot_h = 200, bar = 34;
  const int n = int(c.values.size());
  const int plot_w = std::max(bar * n, 200);
  int labels_h = 0;  // below the axis: the labels (rotated: the longest one's length)
  if (rotated)
    for (int i = 0; i < n; ++i)
      labels_h = std::max(labels_h,
                          svg_text_width(c.x_labels[size_t(i)] + "  " +
                                         svg_shortened(c.x_details[size_t(i)], kBarDetailChars)));
  int width = left + plot_w + 20;
  for (const std::string& s : c.notes) width = std::max(width, svg_text_width(s) + 20);
  const int height = top + plot_h + labels_h + 56 + 16 * int(c.notes.size());
  std::ostringstream out;
  svg_open(out, std::max(width, svg_title_width(c.title)), height);
  svg_text(out, 10, 20, c.title, "start", " font-weight=\"bold\"");
  auto y_of = [&](double v) {
    const double t = (std::clamp(v, c.y_min, c.y_max) - c.y_min) / (c.y_max - c.y_min);
    return top + plot_h - t * plot_h;
  };
  for (int k = 0; k <= 4; ++k) {  // y ticks and grid
    const double v = c.y_min + (c.y_max - c.y_min) * k / 4.0;
    out << "<line x1=\"" << left << "\" x2=\"" << left + plot_w << "\" y1=\"" << y_of(v)
        << "\" y2=\"" << y_of(v) << "\" stroke=\"" << (k == 0 ? "#000" : "#ddd") << "\"/>";
    svg_text(out, left - 6, y_of(v) + 4, svg_number(v, "%.2f"), "end");
  }
  out << "<line x1=\"" << left << "\" x2=\"" << left << "\" y1=\"" << top << "\" y2=\""
      << top + plot_h << "\" stroke=\"#000\"/>\n";
  for (int i = 0; i < n; ++i) {
    const double v = c.values[size_t(i)];
    const double x = left + bar * i + 4, y = y_of(v);
    const std::string& label = c.x_labels[size_t(i)];
    const std::string tip =
        rotated && !c.x_details[size_t(i)].empty() ? label + " " + c.x_details[size_t(i)] : label;
    out << "<rect class=\"bar\" x=\"" << x << "\" y=\"" << y << "\" width=\"" << bar - 8
        << "\" height=\"" << top + plot_h - y << "\" fill=\"#3a6fd8\"><title>" << html_escape(tip)
        << ": " << svg_number(v, "%.4f") << "</title></rect>";
    svg_text(out, x + (bar - 8) / 2.0, y - 3, svg_number(v, "%.2f"), "middle", " font-size=\"9\"");
    if (rotated)
      rotated_label(out, x + (bar - 8) / 2.0 + 4, top + plot_h + 8, label, c.x_details[size_t(i)]);
    else
      svg_text(out, x + (bar - 8) / 2.0, top + plot_h + 15, label, "middle");
  }
  svg_text(out, left + plot_w / 2.0, top + plot_h + labels_h + 34, c.x_title, "middle");
  svg_text(out, 14, top + plot_h / 2.0, c.y_title, "middle",
           (" transform=\"rotate(-90 14 " + std::to_string(top + plot_h / 2) + ")\"").c_str());
  svg_notes(out, 10, top + plot_h + labels_h + 54, c.notes);
  out << "\n</svg>\n";
  return out.str();
}

std::string weight_table_svg(const WeightTable& t) {
  MG_CHECK(t.values.size() == t.row_labels.size(), "figure '", t.title, "': ", t.row_labels.size(),
           " row labels for ", t.values.size(), " rows");
  for (const auto& row : t.values)
    MG_CHECK(row.size() == t.columns.size(), "figure '", t.title, "': a row of ", row.size(),
             " values for ", t.columns.size(), " columns");
  int label_w = svg_text_width(t.row_title);
  for (const std::string& s : t.row_labels) label_w = std::max(label_w, svg_text_width(s));
  label_w += 16;
  const int ncol = int(t.columns.size()), nrow = int(t.row_labels.size());
  const int cell_w = ncol > 8 ? 48 : 64, row_h = 20, top = 52, left = 10;
  int width = left + label_w + cell_w * ncol + 10;
  for (const std::string& s : t.notes) width = std::max(width, svg_text_width(s) + 20);
  width = std::max(width, svg_title_width(t.title));
  const int height = top + row_h * nrow + 20 + 16 * int(t.notes.size());
  std::ostringstream out;
  svg_open(out, width, height);
  svg_text(out, left, 20, t.title, "start", " font-weight=\"bold\"");
  svg_text(out, left, top - 8, t.row_title, "start", " font-style=\"italic\"");
  for (int j = 0; j < ncol; ++j)
    svg_text(out, left + label_w + cell_w * j + cell_w / 2.0, top - 8, t.columns[size_t(j)],
             "middle");
  for (int i = 0; i < nrow; ++i) {
    const int y = top + row_h * i;
    svg_text(out, left, y + 14, t.row_labels[size_t(i)]);
    for (int j = 0; j < ncol; ++j) {
      const double v = t.values[size_t(i)][size_t(j)];
      const int x = left + label_w + cell_w * j;
      out << "<rect class=\"cell\" x=\"" << x << "\" y=\"" << y << "\" width=\"" << cell_w - 2
          << "\" height=\"" << row_h - 2 << "\" fill=\"" << svg_blue(v) << "\"><title>"
          << html_escape(t.columns[size_t(j)]) << ", " << html_escape(t.row_labels[size_t(i)])
          << ": " << svg_number(v, "%.4f") << "</title></rect>";
      svg_text(out, x + (cell_w - 2) / 2.0, y + 14, svg_number(v, "%.2f"), "middle",
               v > 0.55 ? " fill=\"#fff\"" : "");
    }
    out << "\n";
  }
  svg_notes(out, left, top + row_h * nrow + 18, t.notes);
  out << "</svg>\n";
  return out.str();
}

std::string belief_map_svg(const BeliefMap& m) {
  MG_CHECK(m.values.size() == m.row_labels.size(), "figure '", m.title, "': ", m.row_labels.size(),
           " row labels for ", m.values.size(), " rows");
  for (const auto& row : m.values)
    MG_CHECK(row.size() == m.columns.size(), "figure '", m.title, "': a row of ", row.size(),
             " values for ", m.columns.size(), " columns");
  MG_CHECK(m.hi > m.lo, "figure '", m.title, "': empty colour scale");
  int label_w = 0;
  for (const std::string& s : m.row_labels) label_w = std::max(label_w, svg_text_width(s));
  size_t longest = 1;
  for (const std::string& s : m.columns) longest = std::max(longest, s.size());
  const int ncol = int(m.columns.size()), nrow = int(m.row_labels.size());
  const int cell_w = 13, row_h = 18, top = 60, left = 10, grid_x = left + label_w + 12;
  const int words_h = int(std::ceil(kCharWidth * 0.85 * double(longest))) + 10;
  int width = grid_x + cell_w * ncol + 10;
  for (const std::string& s : m.notes) width = std::max(width, svg_text_width(s) + 20);
  width = std::max(width, svg_title_width(m.title) + 260);
  const int grid_bottom = top + row_h * nrow;
  const int height = grid_bottom + words_h + 20 + 16 * int(m.notes.size());
  std::ostringstream out;
  svg_open(out, width, height);
  svg_text(out, left, 20, m.title, "start", " font-weight=\"bold\"");
  // The colour key: lo, midpoint and hi.
  const int key_x = left, key_y = 32;
  for (int k = 0; k <= 20; ++k)
    out << "<rect x=\"" << key_x + 8 * k << "\" y=\"" << key_y
        << "\" width=\"8\" height=\"10\" fill=\"" << diverging(-1 + k / 10.0) << "\"/>";
  svg_text(out, key_x, key_y + 22, svg_number(m.lo, "%.2g"), "start", " font-size=\"10\"");
  svg_text(out, key_x + 84, key_y + 22, svg_number((m.lo + m.hi) / 2, "%.2g"), "middle",
           " font-size=\"10\"");
  svg_text(out, key_x + 168, key_y + 22, svg_number(m.hi, "%.2g"), "end", " font-size=\"10\"");
  svg_text(out, key_x + 180, key_y + 9, m.scale_title);
  for (int i = 0; i < nrow; ++i) {
    const int y = top + row_h * i;
    svg_text(out, grid_x - 8, y + 13, m.row_labels[size_t(i)], "end");
    for (int j = 0; j < ncol; ++j) {
      const double v = m.values[size_t(i)][size_t(j)];
      out << "<rect class=\"cell\" x=\"" << grid_x + cell_w * j << "\" y=\"" << y << "\" width=\""
          << cell_w - 1 << "\" height=\"" << row_h - 1 << "\" fill=\""
          << diverging(2 * (v - m.lo) / (m.hi - m.lo) - 1) << "\"><title>"
          << html_escape(m.columns[size_t(j)]) << " (word " << j + 1 << "), "
          << html_escape(m.row_labels[size_t(i)]) << ": " << svg_number(v, "%.4f")
          << "</title></rect>";
    }
    out << "\n";
  }
  for (int j = 0; j < ncol; ++j) {  // the words, written downwards under their column
    const double x = grid_x + cell_w * j + cell_w / 2.0 + 3, y = grid_bottom + 6;
    svg_text(out, x, y, m.columns[size_t(j)], "start",
             (" font-size=\"10\" transform=\"rotate(90 " + svg_number(x, "%.1f") + " " +
              svg_number(y, "%.1f") + ")\"")
                 .c_str());
  }
  out << "\n";
  svg_notes(out, left, grid_bottom + words_h + 20, m.notes);
  out << "</svg>\n";
  return out.str();
}

}  // namespace memgrad::cli
