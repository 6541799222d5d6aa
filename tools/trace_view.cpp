#include "tools/trace_view.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "engine/error.hpp"

namespace memgrad::cli {
namespace {

// "enc1/t3/write_gate" -> ("enc1/write_gate", 3); no t<number> component -> (name, -1).
std::pair<std::string, int64_t> split_step(const std::string& name) {
  size_t begin = 0;
  while (begin <= name.size()) {
    size_t end = name.find('/', begin);
    if (end == std::string::npos) end = name.size();
    const std::string part = name.substr(begin, end - begin);
    if (part.size() >= 2 && part[0] == 't' &&
        std::all_of(part.begin() + 1, part.end(), [](char c) { return std::isdigit(c) != 0; })) {
      std::string rest = name.substr(0, begin) + (end < name.size() ? name.substr(end + 1) : "");
      if (!rest.empty() && rest.back() == '/') rest.pop_back();
      return {rest, std::stoll(part.substr(1))};
    }
    begin = end + 1;
  }
  return {name, -1};
}

// The colour scale of a series: [0, max] for non-negative values (weightings spread over many
// slots stay visible), [-m, m] (diverging) with m the largest magnitude when some are negative.
struct Scale {
  double lo = 0, hi = 1;
  bool diverging = false;
  std::string str() const {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3g .. %.3g", lo, hi);
    return buf;
  }
};
Scale scale_of(const std::vector<std::vector<double>>& rows) {
  double lo = 0, hi = 0;
  bool first = true;
  for (const auto& r : rows)
    for (double v : r) {
      if (!std::isfinite(v)) continue;
      lo = first ? v : std::min(lo, v);
      hi = first ? v : std::max(hi, v);
      first = false;
    }
  Scale s;
  if (lo >= 0) {
    s.hi = hi > 0 ? hi : 1;
    return s;
  }
  const double m = std::max(std::abs(lo), std::abs(hi));
  s.lo = -m;
  s.hi = m;
  s.diverging = true;
  return s;
}

// What is shown of a step's value: all of it, or the L2 norm of each row over the last axis.
struct Shown {
  std::vector<std::vector<double>> rows;
  std::string note;
};
Shown shown_values(const TraceSeries& s, size_t limit) {
  const size_t n = s.values.empty() ? 0 : s.values.front().size();
  if (n <= limit || s.shape.rank < 2) return {s.values, ""};
  const int64_t last = s.shape[-1];
  Shown out;
  out.note = "L2 norm of each row over the last axis (" + std::to_string(last) + " values)";
  for (const auto& v : s.values) {
    std::vector<double> norms(v.size() / size_t(last), 0.0);
    for (size_t i = 0; i < v.size(); ++i) norms[i / size_t(last)] += v[i] * v[i];
    for (double& x : norms) x = std::sqrt(x);
    out.rows.push_back(std::move(norms));
  }
  return out;
}

std::string step_label(int64_t step) {
  if (step < 0) return "-";
  std::string label = "t";
  label += std::to_string(step);  // not "t" + ...: g++ 12 warns (-Wrestrict) on that
  return label;
}

// White to blue for [lo, hi]; red through white to blue when diverging.
std::string colour(double v, const Scale& s) {
  if (!std::isfinite(v)) return "#ff00ff";
  double t = (v - s.lo) / (s.hi - s.lo);
  t = std::clamp(t, 0.0, 1.0);
  int r, g, b;
  if (s.diverging) {
    const double u = std::abs(2 * t - 1);
    if (t < 0.5) {
      r = 255, g = int(255 * (1 - 0.8 * u)), b = int(255 * (1 - 0.8 * u));
    } else {
      r = int(255 * (1 - 0.85 * u)), g = int(255 * (1 - 0.6 * u)), b = 255;
    }
  } else {
    r = int(255 - 247 * t), g = int(255 - 207 * t), b = int(255 - 148 * t);
  }
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", r, g, b);
  return buf;
}

// Series with at most this many values a step print them in their cells.
constexpr size_t kAnnotatedColumns = 16;

bool all_whole(const std::vector<std::vector<double>>& rows) {
  for (const auto& r : rows)
    for (double v : r)
      if (!std::isfinite(v) || v != std::round(v)) return false;
  return true;
}

// Whether colour(v, s) is dark enough for white text.
bool dark(double v, const Scale& s) {
  if (!std::isfinite(v)) return false;
  const double t = std::clamp((v - s.lo) / (s.hi - s.lo), 0.0, 1.0);
  return s.diverging ? std::abs(2 * t - 1) > 0.7 : t > 0.6;
}

}  // namespace

std::string html_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}

std::vector<TraceSeries> group_trace(const Trace& trace) {
  std::vector<TraceSeries> series;
  for (size_t k = 0; k < trace.entries.size(); ++k) {
    const auto& [entry, value] = trace.entries[k];
    const Shape& full = value.shape();
    MG_CHECK(full.rank >= 1 && full[0] == 1, "inspect: trace entry '", entry, "' has shape ", full,
             "; a trace of one sample has a first dimension of 1");
    Shape shape;
    shape.rank = std::max(1, full.rank - 1);
    for (int d = 0; d < shape.rank; ++d) shape.dims[size_t(d)] = full.rank > 1 ? full[d + 1] : 1;
    const auto [name, step] = split_step(entry);
    auto it = std::find_if(series.begin(), series.end(),
                           [&](const TraceSeries& s) { return s.name == name; });
    if (it == series.end()) {
      series.push_back({name, shape, {}, {}, {}});
      it = series.end() - 1;
    }
    MG_CHECK(it->shape == shape, "inspect: trace entry '", entry, "' has shape ", shape,
             " but earlier steps of '", name, "' have ", it->shape);
    it->steps.push_back(step);
    it->values.push_back(value.to_vector());
    it->nodes.push_back(k < trace.nodes.size() ? trace.nodes[k] : -1);
  }
  return series;
}

std::vector<TraceSeries> select_series(const std::vector<TraceSeries>& all,
                                       const std::string& filter) {
  std::vector<TraceSeries> out;
  for (const TraceSeries& s : all)
    if (filter.empty() || s.name.find(filter) != std::string::npos) out.push_back(s);
  return out;
}

std::string render_text(const std::vector<TraceSeries>& series) {
  static const char* kShades[] = {" ", "\u2591", "\u2592", "\u2593", "\u2588"};
  std::ostringstream out;
  for (const TraceSeries& s : series) {
    const Shown shown = shown_values(s, 64);
    out << s.name << "  " << s.shape << (shown.note.empty() ? "" : "  " + shown.note) << "\n";
    const size_t n = shown.rows.empty() ? 0 : shown.rows.front().size();
    if (n > 64) {
      out << "  (" << n << " values a step: see --json or --html)\n";
      continue;
    }
    const Scale scale = scale_of(shown.rows);
    if (n > 8)
      out << "  shades " << scale.str() << (scale.diverging ? " (by |value|)" : "") << "\n";
    for (size_t k = 0; k < shown.rows.size(); ++k) {
      char label[16];
      std::snprintf(label, sizeof label, "  %-5s", step_label(s.steps[k]).c_str());
      out << label;
      if (n <= 8) {
        for (double v : shown.rows[k]) {
          char buf[16];
          std::snprintf(buf, sizeof buf, " %7.3f", v);
          out << buf;
        }
      } else {
        out << '|';
        for (double v : shown.rows[k]) {
          double t =
              scale.diverging ? std::abs(v) / scale.hi : (v - scale.lo) / (scale.hi - scale.lo);
          if (!std::isfinite(t)) t = 1;
          out << kShades[std::clamp(int(std::lround(4 * t)), 0, 4)];
        }
        // Where the row peaks: the slot written, the memory attended to.
        const auto& row = shown.rows[k];
        const size_t at = size_t(std::max_element(row.begin(), row.end()) - row.begin());
        char peak[48];
        std::snprintf(peak, sizeof peak, "|  max %.3g at %zu", row[at], at);
        out << peak;
      }
      out << "\n";
    }
  }
  return out.str();
}

nlohmann::json series_json(const std::vector<TraceSeries>& series) {
  nlohmann::json list = nlohmann::json::array();
  for (const TraceSeries& s : series) {
    nlohmann::json shape = nlohmann::json::array();
    for (int d = 0; d < s.shape.rank; ++d) shape.push_back(s.shape[d]);
    list.push_back({{"name", s.name}, {"shape", shape}, {"steps", s.steps}, {"values", s.values}});
  }
  return {{"series", list}};
}

std::string render_html(const std::string& title,
                        const std::vector<std::pair<std::string, std::string>>& sample,
                        const std::vector<TraceSeries>& series, const std::string& figures) {
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" << html_escape(title)
      << "</title>\n<style>body{font-family:sans-serif;margin:2em}td{padding:0 1em 0 0}"
         "h2{font-size:1em;margin:1.5em 0 .3em}.note{color:#666;font-size:.85em}</style>"
         "</head><body>\n<h1>"
      << html_escape(title) << "</h1>\n<table>\n";
  for (const auto& [key, value] : sample)
    out << "<tr><td><b>" << html_escape(key) << "</b></td><td>" << html_escape(value)
        << "</td></tr>\n";
  out << "</table>\n" << figures;
  for (const TraceSeries& s : series) {
    const Shown shown = shown_values(s, 1024);
    const Scale scale = scale_of(shown.rows);
    const size_t n = shown.rows.empty() ? 0 : shown.rows.front().size();
    // A series of few values a step (gates per read, the step stored in each memory slot) is
    // drawn with wide cells that print their values, and its columns numbered on top.
    const bool annotate = n > 0 && n <= kAnnotatedColumns;
    const bool whole = annotate && all_whole(shown.rows);
    const int cell = annotate ? 30 : int(std::clamp<size_t>(900 / std::max<size_t>(n, 1), 2, 16));
    const int label = 40, height = 14, top = annotate ? height : 0;
    std::ostringstream shape;
    shape << s.shape;
    out << "<h2>" << html_escape(s.name) << " " << shape.str() << "</h2><div class=\"note\">colour "
        << (scale.diverging ? "red (negative) to blue (positive), " : "white to blue, ")
        << scale.str() << (shown.note.empty() ? "" : "; " + html_escape(shown.note))
        << "</div>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << label + cell * int(n)
        << "\" height=\"" << top + height * int(shown.rows.size()) << "\" font-size=\"11\">\n";
    if (annotate) {
      for (size_t i = 0; i < n; ++i)
        out << "<text x=\"" << label + cell * int(i) + cell / 2 << "\" y=\"11\" "
            << "text-anchor=\"middle\" fill=\"#666\">" << i << "</text>";
      out << "\n";
    }
    for (size_t k = 0; k < shown.rows.size(); ++k) {
      const int y = top + int(k) * height;
      out << "<text x=\"0\" y=\"" << y + 11 << "\">" << step_label(s.steps[k]) << "</text>";
      for (size_t i = 0; i < n; ++i) {
        char value[32];
        std::snprintf(value, sizeof value, "%.4g", shown.rows[k][i]);
        out << "<rect x=\"" << label + cell * int(i) << "\" y=\"" << y << "\" width=\"" << cell
            << "\" height=\"" << height << "\" fill=\"" << colour(shown.rows[k][i], scale)
            << "\"><title>" << step_label(s.steps[k]) << " [" << i << "] " << value
            << "</title></rect>";
        if (annotate) {
          char text[32];
          std::snprintf(text, sizeof text, whole ? "%.0f" : "%.2f", shown.rows[k][i]);
          out << "<text x=\"" << label + cell * int(i) + cell / 2 << "\" y=\"" << y + 11
              << "\" text-anchor=\"middle\" font-size=\"9\" fill=\""
              << (dark(shown.rows[k][i], scale) ? "#fff" : "#000") << "\">" << text << "</text>";
        }
      }
      out << "\n";
    }
    out << "</svg>\n";
  }
  out << "</body></html>\n";
  return out.str();
}

}  // namespace memgrad::cli
