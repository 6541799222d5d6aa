#include "tools/svg_chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <limits>
#include <sstream>

#include "tools/trace_view.hpp"

namespace memgrad::cli {
namespace {

// A value as a tick label: few digits, exponent form for very large or small magnitudes.
std::string tick_text(double v) {
  char text[32];
  if (v == 0)
    return "0";
  else if (std::fabs(v) >= 1e5 || std::fabs(v) < 1e-3)
    std::snprintf(text, sizeof text, "%.0e", v);
  else
    std::snprintf(text, sizeof text, "%.4g", v);
  return text;
}

// Ticks at round numbers (1, 2 or 5 times a power of ten) covering [lo, hi], about `want` of
// them; lo and hi widened to the outer ticks.
std::vector<double> linear_ticks(double& lo, double& hi, int want) {
  if (!(hi > lo)) {
    const double pad = lo == 0 ? 1 : std::fabs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  const double raw = (hi - lo) / want;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  lo = std::floor(lo / step) * step;
  hi = std::ceil(hi / step) * step;
  std::vector<double> ticks;
  for (double t = lo; t <= hi + step * 1e-9; t += step)
    ticks.push_back(std::fabs(t) < step * 1e-9 ? 0 : t);
  return ticks;
}

bool drawable(double y, bool log_y) { return std::isfinite(y) && (!log_y || y > 0); }

// Ticks of a logarithmic axis over [lo, hi] (log10 units): 1, 2 and 5 times each power of ten
// (powers of ten alone over more than 2.5 decades), in log10 units; lo and hi widened to the
// outer ticks.
std::vector<double> log_ticks(double& lo, double& hi) {
  if (!(hi > lo)) hi = lo + 0.3;
  const bool decades_only = hi - lo > 2.5;
  std::vector<double> candidates;  // ascending, a decade beyond [lo, hi] on each side
  for (double e = std::floor(lo) - 1; e <= std::ceil(hi) + 1; ++e)
    for (double m : {1.0, 2.0, 5.0})
      if (!decades_only || m == 1.0) candidates.push_back(e + std::log10(m));
  const auto first = std::prev(
      std::find_if(candidates.begin(), candidates.end(), [&](double c) { return c > lo + 1e-9; }));
  const auto last = std::find_if(first, candidates.end(), [&](double c) { return c >= hi - 1e-9; });
  lo = *first;
  hi = *last;
  return {first, last + 1};
}

}  // namespace

const char* chart_colour(int i) {
  static const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                   "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  const int n = int(sizeof kPalette / sizeof kPalette[0]);
  return kPalette[((i % n) + n) % n];
}

std::string line_chart_svg(const ChartSpec& spec, const std::vector<ChartLine>& lines) {
  // Layout: title on top, y tick labels on the left, legend on the right.
  const int legend = 190, left = 62, top = 26, bottom = 38;
  const int plot_w = std::max(80, spec.width - left - legend - 10);
  const int plot_h = std::max(60, spec.height - top - bottom);
  double x_lo = std::numeric_limits<double>::infinity(), x_hi = -x_lo, y_lo = x_lo, y_hi = -x_lo;
  for (const ChartLine& l : lines)
    for (size_t i = 0; i < l.x.size() && i < l.y.size(); ++i) {
      if (!drawable(l.x[i], spec.log_x) || !drawable(l.y[i], spec.log_y)) continue;
      const double x = spec.log_x ? std::log10(l.x[i]) : l.x[i];
      const double y = spec.log_y ? std::log10(l.y[i]) : l.y[i];
      x_lo = std::min(x_lo, x);
      x_hi = std::max(x_hi, x);
      y_lo = std::min(y_lo, y);
      y_hi = std::max(y_hi, y);
    }
  std::ostringstream out;
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << spec.width << "\" height=\""
      << spec.height << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n"
      << "<text x=\"" << left << "\" y=\"16\" font-size=\"13\" font-weight=\"bold\">"
      << html_escape(spec.title) << "</text>\n";
  out << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << plot_w << "\" height=\""
      << plot_h << "\" fill=\"none\" stroke=\"#999\"/>\n";
  if (!std::isfinite(x_lo)) {
    out << "<text x=\"" << left + plot_w / 2 << "\" y=\"" << top + plot_h / 2
        << "\" text-anchor=\"middle\" fill=\"#666\">no data</text>\n</svg>\n";
    return out.str();
  }
  std::vector<double> y_ticks;
  if (spec.log_y) {  // a tick at each power of ten
    y_lo = std::floor(y_lo);
    y_hi = std::max(std::ceil(y_hi), y_lo + 1);
    const int every = int(std::ceil((y_hi - y_lo) / 8));
    for (double e = y_lo; e <= y_hi; e += every) y_ticks.push_back(e);
  } else {
    y_ticks = linear_ticks(y_lo, y_hi, 5);
  }
  std::vector<double> x_ticks = spec.log_x ? log_ticks(x_lo, x_hi) : linear_ticks(x_lo, x_hi, 6);
  auto px = [&](double x) {
    const double v = spec.log_x ? std::log10(x) : x;
    return left + (v - x_lo) / (x_hi - x_lo) * plot_w;
  };
  auto py = [&](double y) {
    const double v = spec.log_y ? std::log10(y) : y;
    return top + plot_h - (v - y_lo) / (y_hi - y_lo) * plot_h;
  };
  char num[64];
  for (double t : y_ticks) {
    const double y = top + plot_h - (t - y_lo) / (y_hi - y_lo) * plot_h;
    std::snprintf(num, sizeof num, "%.1f", y);
    out << "<line x1=\"" << left << "\" x2=\"" << left + plot_w << "\" y1=\"" << num << "\" y2=\""
        << num << "\" stroke=\"#eee\"/><text x=\"" << left - 4 << "\" y=\"" << num
        << "\" dy=\"4\" text-anchor=\"end\">"
        << (spec.log_y ? "1e" + std::to_string(int(t)) : tick_text(t)) << "</text>\n";
  }
  for (double t : x_ticks) {
    if (spec.log_x) t = std::pow(10.0, t);
    std::snprintf(num, sizeof num, "%.1f", px(t));
    out << "<line x1=\"" << num << "\" x2=\"" << num << "\" y1=\"" << top + plot_h << "\" y2=\""
        << top + plot_h + 4 << "\" stroke=\"#999\"/><text x=\"" << num << "\" y=\""
        << top + plot_h + 15 << "\" text-anchor=\"middle\">" << tick_text(t) << "</text>\n";
  }
  out << "<text x=\"" << left + plot_w / 2 << "\" y=\"" << spec.height - 6
      << "\" text-anchor=\"middle\" fill=\"#444\">" << html_escape(spec.x_label)
      << (spec.log_x ? " (log)" : "") << "</text>\n"
      << "<text transform=\"translate(12," << top + plot_h / 2
      << ") rotate(-90)\" text-anchor=\"middle\" fill=\"#444\">" << html_escape(spec.y_label)
      << (spec.log_y ? " (log)" : "") << "</text>\n";
  for (size_t k = 0; k < lines.size(); ++k) {
    const ChartLine& l = lines[k];
    const char* colour = chart_colour(l.colour);
    // Consecutive drawable points make one polyline; an undrawable one ends it.
    std::string points;
    auto flush = [&] {
      if (points.empty()) return;
      out << "<polyline fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"1.5\""
          << (l.dashed ? " stroke-dasharray=\"5,3\"" : "") << " points=\"" << points << "\"/>\n";
      points.clear();
    };
    for (size_t i = 0; i < l.x.size() && i < l.y.size(); ++i) {
      if (!drawable(l.x[i], spec.log_x) || !drawable(l.y[i], spec.log_y)) {
        flush();
        continue;
      }
      std::snprintf(num, sizeof num, "%.1f,%.1f ", px(l.x[i]), py(l.y[i]));
      points += num;
    }
    flush();
    if (l.markers || l.x.size() <= 60)
      for (size_t i = 0; i < l.x.size() && i < l.y.size(); ++i) {
        if (!drawable(l.x[i], spec.log_x) || !drawable(l.y[i], spec.log_y)) continue;
        std::snprintf(num, sizeof num, "cx=\"%.1f\" cy=\"%.1f\"", px(l.x[i]), py(l.y[i]));
        out << "<circle " << num << " r=\"" << (l.markers ? 3 : 2) << "\" fill=\"" << colour
            << "\"><title>" << html_escape(l.label) << ": " << tick_text(l.x[i]) << ", " << l.y[i]
            << "</title></circle>";
      }
    out << "\n";
    // The legend: a swatch and the label, cut to fit.
    const int ly = top + 6 + int(k) * 15;
    if (ly > spec.height - 8) continue;
    std::string label = l.label.size() > 28 ? l.label.substr(0, 27) + "\u2026" : l.label;
    out << "<line x1=\"" << left + plot_w + 10 << "\" x2=\"" << left + plot_w + 30 << "\" y1=\""
        << ly << "\" y2=\"" << ly << "\" stroke=\"" << colour << "\" stroke-width=\"2\""
        << (l.dashed ? " stroke-dasharray=\"5,3\"" : "") << "/><text x=\"" << left + plot_w + 34
        << "\" y=\"" << ly + 4 << "\"><title>" << html_escape(l.label) << "</title>"
        << html_escape(label) << "</text>\n";
  }
  out << "</svg>\n";
  return out.str();
}

}  // namespace memgrad::cli
