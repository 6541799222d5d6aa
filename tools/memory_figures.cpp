#include "tools/memory_figures.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "engine/error.hpp"

namespace memgrad::cli {
namespace {

constexpr int kCell = 22, kRow = 16, kLeft = 70, kTop = 28;

const TraceSeries* find(const std::vector<TraceSeries>& series, const std::string& name) {
  for (const TraceSeries& s : series)
    if (s.name == name) return &s;
  return nullptr;
}

// A series' values as [step][column], checked to have `columns` values at every step.
const std::vector<std::vector<double>>& rows_of(const TraceSeries& s, size_t columns) {
  for (const auto& v : s.values)
    MG_CHECK(v.size() == columns, "inspect: series '", s.name, "' has ", v.size(),
             " values at a step, expected ", columns);
  return s.values;
}

std::string number(double v, const char* format) {
  char buf[32];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// "HR 76, MAP 80" for the variables a step observed ("nothing observed" when none).
std::string observed_text(const Task::StepObservations& o, int64_t step) {
  if (step < 0 || step >= int64_t(o.steps.size()) || o.steps[size_t(step)].empty())
    return "nothing observed";
  std::string text;
  for (const auto& [name, value] : o.steps[size_t(step)])
    text += (text.empty() ? "" : ", ") + name + " " + number(value, "%g");
  return text;
}

// White to blue as the stored event's step goes from 0 to last.
std::string shade(double step, double last) {
  const double t = last > 0 ? std::clamp(step / last, 0.0, 1.0) : 1.0;
  char buf[16];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", int(235 - 190 * t), int(242 - 150 * t), 255);
  return buf;
}

// Step numbers across the top of a panel.
void step_header(std::ostringstream& out, size_t steps) {
  for (size_t t = 0; t < steps; ++t)
    out << "<text x=\"" << kLeft + kCell * int(t) + kCell / 2 << "\" y=\"" << kTop - 6
        << "\" text-anchor=\"middle\" font-size=\"8\" fill=\"#666\">" << t << "</text>";
  out << "\n";
}

void axis_title(std::ostringstream& out, int y, const std::string& text) {
  out << "<text x=\"" << kLeft << "\" y=\"" << y << "\" font-size=\"11\" fill=\"#333\">"
      << html_escape(text) << "</text>\n";
}

// Fig. 2: slots down, steps across; the stored event's step in each cell, evictions outlined.
void slot_panel(std::ostringstream& out, const std::vector<std::vector<double>>& hour,
                const std::vector<std::vector<double>>* evicted, const Task::StepObservations& o,
                const std::string& unit, bool notes) {
  const size_t steps = hour.size(), slots = hour.front().size();
  const double last = double(steps - 1);
  int evictions = 0;
  if (notes)
    out << "<h2>Fig. 2: explicit memory slot utilization</h2><div class=\"note\">Columns: the "
        << html_escape(unit) << " t of the stay; rows: the explicit slots. Each cell prints the "
        << html_escape(unit)
        << " of the event the slot holds after step t's write (the paper's annotation), shaded "
           "from light (early) to dark (late); empty slots are blank. A red outline marks an "
           "eviction (the popped event is named in the cell's tooltip, which also lists the "
           "variables the held event observed).</div>\n";
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kLeft + kCell * int(steps) + 10
      << "\" height=\"" << kTop + kRow * int(slots) + 24 << "\" font-size=\"9\">\n";
  step_header(out, steps);
  for (size_t j = 0; j < slots; ++j) {
    const int y = kTop + kRow * int(j);
    out << "<text x=\"4\" y=\"" << y + 12 << "\" font-size=\"11\">slot " << j << "</text>";
    for (size_t t = 0; t < steps; ++t) {
      const double h = hour[t][j];
      const int x = kLeft + kCell * int(t);
      const bool out_now = evicted && (*evicted)[t][j] > 0.5;
      std::string tip = unit + " " + std::to_string(t) + ", slot " + std::to_string(j) + ": ";
      tip += h < 0 ? "empty"
                   : "the event of " + unit + " " + number(h, "%.0f") + " (" +
                         observed_text(o, int64_t(h)) + ")";
      if (out_now && t > 0 && hour[t - 1][j] >= 0)
        tip += "; evicted the event of " + unit + " " + number(hour[t - 1][j], "%.0f");
      out << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << kCell << "\" height=\"" << kRow
          << "\" fill=\"" << (h < 0 ? "#fff" : shade(h, last)) << "\" stroke=\""
          << (out_now ? "#d00" : "#ddd") << "\" stroke-width=\"" << (out_now ? 2 : 1) << "\""
          << (out_now ? " class=\"evicted\"" : "") << "><title>" << html_escape(tip)
          << "</title></rect>";
      evictions += out_now;
      if (h >= 0)
        out << "<text x=\"" << x + kCell / 2 << "\" y=\"" << y + 12
            << "\" text-anchor=\"middle\" fill=\""
            << (h / std::max(last, 1.0) > 0.6 ? "#fff" : "#000") << "\">" << number(h, "%.0f")
            << "</text>";
    }
    out << "\n";
  }
  axis_title(out, kTop + kRow * int(slots) + 16, unit + " of the stay (t) \u2192");
  out << "</svg>";
  if (notes) out << "<div class=\"note\">" << evictions << " evictions</div>";
  out << "\n";
}

// The variables the sample observed, variable x step, with the events still held at the last
// step in blue (grey: observed, not held at the end); the held events listed by slot.
void variable_panel(std::ostringstream& out, const std::vector<std::vector<double>>& hour,
                    const Task::StepObservations& o, const std::string& unit) {
  const size_t steps = hour.size();
  std::map<int64_t, size_t> held;  // step of a held event -> its slot, at the last step
  for (size_t j = 0; j < hour.back().size(); ++j)
    if (hour.back()[j] >= 0) held[int64_t(hour.back()[j])] = j;
  std::vector<std::string> names;
  for (const auto& step : o.steps)
    for (const auto& [name, value] : step)
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  std::sort(names.begin(), names.end());
  out << "<h2>The events' variables</h2><div class=\"note\">Rows: the variables this sample "
         "observed; columns: the "
      << html_escape(unit) << " t. A cell is filled where the variable was observed in that "
      << html_escape(unit) << ": blue when that " << html_escape(unit)
      << "'s event is still in an explicit slot at the last step (slot number on top), grey "
         "otherwise.</div>\n";
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kLeft + kCell * int(steps) + 10
      << "\" height=\"" << kTop + kRow * int(names.size() + 1) + 24 << "\" font-size=\"9\">\n";
  step_header(out, steps);
  out << "<text x=\"4\" y=\"" << kTop + 12 << "\" font-size=\"11\">held in</text>";
  for (const auto& [t, j] : held)
    if (t >= 0 && t < int64_t(steps))
      out << "<text x=\"" << kLeft + kCell * int(t) + kCell / 2 << "\" y=\"" << kTop + 12
          << "\" text-anchor=\"middle\" fill=\"#2050c0\">s" << j << "</text>";
  for (size_t v = 0; v < names.size(); ++v) {
    const int y = kTop + kRow * int(v + 1);
    out << "<text x=\"4\" y=\"" << y + 12 << "\" font-size=\"11\" class=\"variable\">"
        << html_escape(names[v]) << "</text>";
    for (size_t t = 0; t < steps && t < o.steps.size(); ++t)
      for (const auto& [name, value] : o.steps[t]) {
        if (name != names[v]) continue;
        const auto it = held.find(int64_t(t));
        std::string tip =
            name + " at " + unit + " " + std::to_string(t) + ": " + number(value, "%g");
        if (it != held.end())
          tip += " (held in slot " + std::to_string(it->second) + " at the end)";
        out << "<rect x=\"" << kLeft + kCell * int(t) + 1 << "\" y=\"" << y + 1 << "\" width=\""
            << kCell - 2 << "\" height=\"" << kRow - 2 << "\" fill=\""
            << (it != held.end() ? "#3a6fd8" : "#bbb") << "\"><title>" << html_escape(tip)
            << "</title></rect>";
      }
    out << "\n";
  }
  axis_title(out, kTop + kRow * int(names.size() + 1) + 16, unit + " of the stay (t) \u2192");
  out << "</svg>\n<div class=\"note\">Held at the last step (" << html_escape(unit) << " "
      << steps - 1 << "):";
  for (size_t j = 0; j < hour.back().size(); ++j) {
    const double h = hour.back()[j];
    out << "<br>slot " << j << ": "
        << (h < 0 ? std::string("empty")
                  : html_escape(unit + " " + number(h, "%.0f") + " (" +
                                observed_text(o, int64_t(h)) + ")"));
  }
  out << "</div>\n";
}

// Fig. 3: g_t of every read/hop over the steps, one line each, on [0, 1].
void gate_panel(std::ostringstream& out, const std::vector<std::vector<double>>& gate,
                const std::string& unit, bool notes) {
  const char* colours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                           "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};
  const size_t steps = gate.size(), hops = gate.front().size();
  const int height = 120;
  if (notes)
    out << "<h2>Fig. 3: influence of the explicit memory (read gate g_t)</h2><div class=\"note\">"
           "g_t of each read/hop (Eq. 7: 1 reads only the explicit memory, 0 only the blurred "
           "one) at every "
        << html_escape(unit) << "; hover a point for its value.</div>\n";
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kLeft + kCell * int(steps) + 10
      << "\" height=\"" << kTop + height + 40 << "\" font-size=\"9\">\n";
  step_header(out, steps);
  auto y_of = [&](double g) { return kTop + height - int(std::lround(g * height)); };
  for (double g : {0.0, 0.5, 1.0})
    out << "<line x1=\"" << kLeft << "\" x2=\"" << kLeft + kCell * int(steps) << "\" y1=\""
        << y_of(g) << "\" y2=\"" << y_of(g) << "\" stroke=\"#ddd\"/><text x=\"" << kLeft - 24
        << "\" y=\"" << y_of(g) + 3 << "\">" << number(g, "%.1f") << "</text>";
  out << "<text x=\"4\" y=\"" << kTop + height / 2 << "\" font-size=\"11\">g_t</text>\n";
  for (size_t k = 0; k < hops; ++k) {
    const char* c = colours[k % 8];
    out << "<polyline fill=\"none\" stroke=\"" << c << "\" stroke-width=\"1.5\" points=\"";
    for (size_t t = 0; t < steps; ++t)
      out << kLeft + kCell * int(t) + kCell / 2 << "," << y_of(gate[t][k]) << " ";
    out << "\"/>";
    for (size_t t = 0; t < steps; ++t)
      out << "<circle cx=\"" << kLeft + kCell * int(t) + kCell / 2 << "\" cy=\"" << y_of(gate[t][k])
          << "\" r=\"2\" fill=\"" << c << "\"><title>hop " << k + 1 << ", " << html_escape(unit)
          << " " << t << ": g = " << number(gate[t][k], "%.3f") << "</title></circle>";
    out << "<text x=\"" << kLeft + 60 * int(k) << "\" y=\"" << kTop + height + 34 << "\" fill=\""
        << c << "\" font-size=\"11\">hop " << k + 1 << "</text>\n";
  }
  axis_title(out, kTop + height + 18, unit + " of the stay (t) \u2192");
  out << "</svg>\n";
}

}  // namespace

namespace {

// The series behind the figures, checked; hour empty when the model records no "slot_hour".
struct Slots {
  const std::vector<std::vector<double>>* hour = nullptr;
  const std::vector<std::vector<double>>* evicted = nullptr;
  const std::vector<std::vector<double>>* gate = nullptr;
};

Slots slots_of(const std::vector<TraceSeries>& series) {
  Slots s;
  const TraceSeries* slots = find(series, "slot_hour");
  if (!slots || slots->values.empty()) return s;
  const size_t n = slots->values.front().size();
  s.hour = &rows_of(*slots, n);
  if (const TraceSeries* evicted = find(series, "evicted")) {
    s.evicted = &rows_of(*evicted, n);
    MG_CHECK(s.evicted->size() == s.hour->size(), "inspect: 'evicted' has ", s.evicted->size(),
             " steps, 'slot_hour' ", s.hour->size());
  }
  const TraceSeries* gate = find(series, "read_gate");
  if (gate && !gate->values.empty()) s.gate = &rows_of(*gate, gate->values.front().size());
  return s;
}

std::string unit_of(const Task::StepObservations& observed) {
  return observed.step_name.empty() ? "step" : observed.step_name;
}

}  // namespace

std::string render_memory_figures(const std::vector<TraceSeries>& series,
                                  const Task::StepObservations& observed) {
  const Slots s = slots_of(series);
  if (!s.hour) return "";
  const std::string unit = unit_of(observed);
  std::ostringstream out;
  slot_panel(out, *s.hour, s.evicted, observed, unit, true);
  if (!observed.steps.empty()) variable_panel(out, *s.hour, observed, unit);
  if (s.gate) gate_panel(out, *s.gate, unit, true);
  return out.str();
}

std::string ebmrnn_figure_svg(int figure, const std::vector<TraceSeries>& series,
                              const Task::StepObservations& observed) {
  const Slots s = slots_of(series);
  MG_CHECK(s.hour, "figure: the model recorded no 'slot_hour' (an explicit memory)");
  std::ostringstream out;
  if (figure == 2) {
    slot_panel(out, *s.hour, s.evicted, observed, unit_of(observed), false);
  } else {
    MG_CHECK(figure == 3 && s.gate, "figure: the model recorded no 'read_gate'");
    gate_panel(out, *s.gate, unit_of(observed), false);
  }
  return out.str();
}

}  // namespace memgrad::cli
