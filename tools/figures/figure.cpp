#include "tools/figures/figure.hpp"

#include <algorithm>
#include <sstream>

#include "engine/error.hpp"
#include "tools/args.hpp"

namespace memgrad::cli {
namespace {

std::vector<FigureInfo>& registry() {
  static std::vector<FigureInfo> figures;
  return figures;
}

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : ", ") + w;
  return out;
}

}  // namespace

const TraceSeries* FigureInput::find(const std::string& name) const {
  for (const TraceSeries& s : series)
    if (s.name == name) return &s;
  return nullptr;
}

const TraceSeries& FigureInput::get(const std::string& figure, const std::string& name) const {
  const TraceSeries* s = find(name);
  MG_CHECK(s && !s->values.empty(), "figure ", figure, ": model ", model, " recorded no series '",
           name, "'");
  return *s;
}

const std::string& FigureInput::line(const std::string& figure, const std::string& key) const {
  for (const auto& [k, v] : sample)
    if (k == key) return v;
  MG_CHECK(false, "figure ", figure, ": task ", task, " gives no '", key, "' line for the sample");
  static const std::string none;
  return none;
}

void register_figure(FigureInfo info) {
  MG_CHECK(!info.name.empty() && (bool(info.draw) != bool(info.draw_runs)) && !info.models.empty(),
           "register_figure: a figure needs a name, models and one draw function");
  for (const FigureInfo& f : registry())
    MG_CHECK(f.name != info.name, "register_figure: figure '", info.name, "' registered twice");
  registry().push_back(std::move(info));
}

const std::vector<FigureInfo>& all_figures() { return registry(); }

const FigureInfo& find_figure(const std::string& name) {
  std::vector<std::string> names;
  for (const FigureInfo& f : registry()) {
    if (f.name == name) return f;
    names.push_back(f.name);
  }
  throw UsageError("unknown figure '" + name + "'; figures: " + join(names) +
                   " (memgrad figure --list)");
}

bool figure_applies(const FigureInfo& info, const std::string& model, const std::string& task) {
  const auto has = [](const std::vector<std::string>& v, const std::string& w) {
    return std::find(v.begin(), v.end(), w) != v.end();
  };
  return has(info.models, model) && (info.tasks.empty() || has(info.tasks, task));
}

std::string figures_html(const FigureInput& input) {
  std::ostringstream out;
  for (const FigureInfo& f : registry()) {
    if (!f.draw || !f.on_inspect_page || !figure_applies(f, input.model, input.task)) continue;
    out << "<h2>" << html_escape(f.paper) << " (<code>memgrad figure " << html_escape(f.name)
        << "</code>)</h2><div class=\"note\">" << html_escape(f.summary) << "</div>\n"
        << f.draw(input);
  }
  return out.str();
}

std::string figure_page(const FigureInfo& info, const FigureInput& input, const std::string& svg) {
  std::ostringstream out;
  const std::string title = info.paper + ": " + input.model + " on " + input.task + ", " +
                            input.source + (input.trained ? "" : " (untrained)");
  out << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" << html_escape(title)
      << "</title>\n<style>body{font-family:sans-serif;margin:2em}td{padding:0 1em 0 0}"
         ".note{color:#666;font-size:.85em}</style></head><body>\n<h1>"
      << html_escape(title) << "</h1>\n<div class=\"note\">" << html_escape(info.summary)
      << "</div>\n";
  const std::string body = info.page_body ? info.page_body(input) : std::string();
  if (body.empty()) {
    out << "<table>\n";
    for (const auto& [key, value] : input.sample)
      out << "<tr><td><b>" << html_escape(key) << "</b></td><td>" << html_escape(value)
          << "</td></tr>\n";
    out << "</table>\n";
  }
  out << body << svg << "</body></html>\n";
  return out.str();
}

}  // namespace memgrad::cli
