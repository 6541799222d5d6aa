#include "tools/grad_flow.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "tools/svg_chart.hpp"

namespace memgrad::cli {
namespace {

std::string last_name(const std::string& name) {
  const size_t slash = name.rfind('/');
  return slash == std::string::npos ? name : name.substr(slash + 1);
}

bool is_state(const std::string& name) {
  const std::string last = last_name(name);
  return name.find("state/") != std::string::npos || last == "h" || last == "c" || last == "memory";
}

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3e", v);
  return text;
}

}  // namespace

GradFlow grad_flow(const Tape& tape, const std::vector<TraceSeries>& series) {
  GradFlow flow;
  for (const TraceSeries& s : series) {
    GradFlow::Series out;
    out.name = s.name;
    bool any_node = false;
    for (size_t k = 0; k < s.steps.size(); ++k) {
      const NodeId id = k < s.nodes.size() ? s.nodes[k] : -1;
      if (id < 0 || size_t(id) >= tape.size()) continue;
      any_node = true;
      out.steps.push_back(s.steps[k]);
      out.value.push_back(l2_norm_of(tape.value(id)));
      out.grad.push_back(tape.has_grad(id) ? std::optional<double>(l2_norm_of(tape.live_grad(id)))
                                           : std::nullopt);
    }
    if (any_node) flow.series.push_back(std::move(out));
  }
  for (NodeId id = 0; id < NodeId(tape.size()); ++id) {
    const Node& n = tape.node(id);
    if (!n.param) continue;
    flow.params.push_back({n.param->name, l2_norm_of(tape.value(id)),
                           tape.has_grad(id) ? l2_norm_of(tape.live_grad(id)) : 0.0});
  }
  return flow;
}

nlohmann::json grad_flow_json(const GradFlow& flow) {
  nlohmann::json series = nlohmann::json::array(), params = nlohmann::json::array();
  for (const GradFlow::Series& s : flow.series) {
    nlohmann::json grad = nlohmann::json::array();
    for (const auto& g : s.grad) grad.push_back(g ? nlohmann::json(*g) : nullptr);
    series.push_back(
        {{"name", s.name}, {"steps", s.steps}, {"grad_norm", grad}, {"value_norm", s.value}});
  }
  for (const GradFlow::Param& p : flow.params)
    params.push_back({{"name", p.name}, {"norm", p.value}, {"grad_norm", p.grad}});
  return {{"series", series}, {"parameters", params}};
}

std::string grad_flow_text(const GradFlow& flow) {
  std::ostringstream out;
  out << "gradient flow: |d loss / d value| per step (- where no gradient reached)\n";
  for (const GradFlow::Series& s : flow.series) {
    out << "  " << s.name << "\n   ";
    for (size_t k = 0; k < s.steps.size(); ++k) {
      out << " ";
      if (s.steps[k] >= 0)
        out << "t" << s.steps[k];
      else
        out << "-";
      out << " " << (s.grad[k] ? number(*s.grad[k]) : std::string("-"));
      if (k % 6 == 5 && k + 1 < s.steps.size()) out << "\n   ";
    }
    out << "\n";
  }
  out << "parameters: |value|, |d loss / d parameter|\n";
  for (const GradFlow::Param& p : flow.params)
    out << "  " << p.name << std::string(p.name.size() < 28 ? 28 - p.name.size() : 1, ' ')
        << number(p.value) << "  " << number(p.grad) << "\n";
  return out.str();
}

std::string grad_flow_html(const GradFlow& flow) {
  std::vector<ChartLine> state, other;
  for (const GradFlow::Series& s : flow.series) {
    if (s.steps.size() < 2) continue;
    ChartLine line;
    line.label = s.name;
    for (size_t k = 0; k < s.steps.size(); ++k) {
      line.x.push_back(double(s.steps[k]));
      line.y.push_back(s.grad[k] ? *s.grad[k] : std::numeric_limits<double>::quiet_NaN());
    }
    auto& group = is_state(s.name) ? state : other;
    line.colour = int(group.size());
    line.dashed = group.size() >= 10;
    group.push_back(std::move(line));
  }
  std::ostringstream out;
  out << "<h2>Gradient flow</h2><div class=\"note\">|d loss / d value| of each recorded tensor "
         "at each step (log scale): how far back the loss's gradient reaches through the "
         "steps. A gap: no gradient reached that step.</div>\n";
  const auto chart = [&](const std::string& title, const std::vector<ChartLine>& lines) {
    if (lines.empty()) return;
    ChartSpec spec;
    spec.title = title;
    spec.x_label = "step";
    spec.y_label = "|gradient|";
    spec.log_y = true;
    spec.width = 900;
    spec.height = std::max(260, 40 + 15 * int(lines.size()));
    out << line_chart_svg(spec, lines);
  };
  chart("state and memory", state);
  chart("gates, weightings and reads", other);
  out << "<h2>Parameters</h2><table><tr><th align=\"left\">parameter</th><th>|value|</th>"
         "<th>|gradient|</th></tr>\n";
  for (const GradFlow::Param& p : flow.params)
    out << "<tr><td>" << html_escape(p.name) << "</td><td>" << number(p.value) << "</td><td>"
        << number(p.grad) << "</td></tr>\n";
  out << "</table>\n";
  return out.str();
}

}  // namespace memgrad::cli
