// The AMN paper's Fig. 4 ("Adaptive Memory Networks", anonymous ICLR 2018 submission, §A.3-A.4)
// for one bAbI story, from the model's trace (tools/figures/amn_trace.hpp reads it):
// amn-fig4 (Fig. 4, "propagation in AMN ... across time"): the word graph A after each
// sentence, the sentence's own edges (the ones Pi_prop emphasises) highlighted, each entity's
// node shaded by its relevance strength s and placed in the column of the highest bank holding
// it, so that moves between banks show from panel to panel; a last panel marks the banks read
// for the answer (their weight d_m, Eq. 18) and the entities examined, with the attention ps.
// A long story (the extended task's 90 sentences and 100 entities) would give a page of panels,
// each a graph of every entity: it gets panels only for the sentences that bear on the answer
// and nodes only for their entities (choose_panels, choose_nodes say how and why).
#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "engine/error.hpp"
#include "tools/figures/amn_trace.hpp"
#include "tools/figures/babi_lines.hpp"
#include "tools/figures/figure.hpp"
#include "tools/figures/svg_draw.hpp"
#include "tools/trace_view.hpp"

namespace memgrad::cli {
namespace {

using namespace amn_figure;

struct Point {
  double x = 0, y = 0;
};

// A directed edge as a slightly bent curve (edges within a column do not run through its nodes)
// with an arrowhead at the node it enters.
void edge_svg(std::ostringstream& out, Point a, Point b, double radius, const char* cls,
              const char* colour, double width, const std::string& tip) {
  const double dx = b.x - a.x, dy = b.y - a.y, len = std::hypot(dx, dy);
  if (len < 1e-6) return;
  const Point c{(a.x + b.x) / 2 - dy * 0.18, (a.y + b.y) / 2 + dx * 0.18};
  const double ex = b.x - c.x, ey = b.y - c.y, el = std::hypot(ex, ey);
  const Point tip_at{b.x - ex / el * radius, b.y - ey / el * radius};
  const double ux = ex / el, uy = ey / el, head = 7;
  out << "<g class=\"" << cls << "\"><title>" << html_escape(tip) << "</title><path d=\"M" << a.x
      << " " << a.y << " Q" << c.x << " " << c.y << " " << tip_at.x << " " << tip_at.y
      << "\" fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"" << width
      << "\"/><polygon points=\"" << tip_at.x << "," << tip_at.y << " "
      << tip_at.x - ux * head - uy * head * 0.45 << "," << tip_at.y - uy * head + ux * head * 0.45
      << " " << tip_at.x - ux * head + uy * head * 0.45 << ","
      << tip_at.y - uy * head - ux * head * 0.45 << "\" fill=\"" << colour << "\"/></g>";
}

constexpr double kShownPs = 0.05;  // attention ps printed beside a node, and "attended to"
constexpr int64_t kPanels = 10;    // sentence panels at most

// One panel of Fig. 4: the graph as it stands after a sentence.
struct Panel {
  std::string heading;
  std::vector<double> banks, exists, strength;  // that step's [L, V], [L - 1] or [L], [V]
  bool exists_all = false;                      // exists holds all L banks (the end's series)
  std::vector<std::pair<int64_t, int64_t>> edges, current;  // A so far; the sentence's path
  std::vector<double> weights, attention;  // the answer panel: d_m [L] and ps [L, V]
};

// The highest bank read for the answer (weight d_m > 0) that holds entity e, and e's attention
// ps there; bank -1 when no bank read holds e.
struct Examined {
  int64_t bank = -1;
  double ps = 0;
};
Examined examined_where(const Story& st, const Panel& answer, int64_t e) {
  const int64_t v = st.vocab;
  for (int64_t m = st.banks - 1; m >= 0; --m)
    if (answer.weights[size_t(m)] > 0 && member(answer.banks, v, m, e))
      return {m, answer.attention[size_t(m * v + e)]};
  return {};
}

// Where a panel's nodes go: a column per existing bank (the highest bank holding the entity),
// entities in order of first appearance, wrapped into sub-columns of kRows; positions relative to
// the panel's corner.
constexpr int kRows = 24, kColW = 118, kRowH = 22, kHead = 40;

struct Layout {
  int64_t last = 0;        // the highest existing bank
  std::vector<int> col_x;  // [last + 2]: each bank's column starts, then the width
  std::map<int64_t, Point> at;
  int width = 0, height = 0;
};

Layout layout_panel(const Story& st, const Panel& p, const std::vector<int64_t>& order) {
  const int64_t l = st.banks, v = st.vocab;
  Layout lay;
  for (int64_t m = 0; m < l; ++m)
    if (p.exists_all ? p.exists[size_t(m)] >= 0.5 : exists_upper(p.exists, m)) lay.last = m;
  const std::vector<int64_t> top = top_banks(p.banks, l, v);
  std::vector<std::vector<int64_t>> column(size_t(lay.last + 1));
  for (const int64_t e : order)
    if (top[size_t(e)] >= 0) column[size_t(std::min(top[size_t(e)], lay.last))].push_back(e);
  lay.col_x.assign(size_t(lay.last + 2), 0);
  int rows = 1;
  for (int64_t m = 0; m <= lay.last; ++m) {
    const std::vector<int64_t>& c = column[size_t(m)];
    const int subs = std::max(1, int((c.size() + kRows - 1) / kRows));
    lay.col_x[size_t(m + 1)] = lay.col_x[size_t(m)] + kColW * subs;
    rows = std::max(rows, std::min<int>(kRows, int(c.size())));
    for (size_t i = 0; i < c.size(); ++i)
      lay.at[c[i]] = {lay.col_x[size_t(m)] + 14.0 + kColW * double(i / kRows),
                      kHead + kRowH * (double(i % kRows) + 0.5)};
  }
  lay.width = std::max(lay.col_x[size_t(lay.last + 1)], svg_title_width(p.heading));
  lay.height = kHead + rows * kRowH + 8;
  return lay;
}

void panel_svg(std::ostringstream& out, const Story& st, const Panel& p, const Layout& lay, int x0,
               int y0, bool answer) {
  const int64_t l = st.banks, v = st.vocab;
  const auto at = [&](int64_t e) {
    const Point q = lay.at.at(e);
    return Point{x0 + q.x, y0 + q.y};
  };
  out << "<g class=\"panel\">";
  out << "<rect x=\"" << x0 << "\" y=\"" << y0 << "\" width=\"" << lay.width << "\" height=\""
      << lay.height << "\" fill=\"none\" stroke=\"#999\"/>";
  svg_text(out, x0 + 4, y0 + 14, p.heading, "start", " font-weight=\"bold\"");
  for (int64_t m = 0; m <= lay.last; ++m) {
    const bool read = answer && p.weights[size_t(m)] > 0;
    const int cx = x0 + lay.col_x[size_t(m)], cw = lay.col_x[size_t(m + 1)] - lay.col_x[size_t(m)];
    if (read)
      out << "<rect class=\"read-bank\" x=\"" << cx + 1 << "\" y=\"" << y0 + 20 << "\" width=\""
          << cw - 2 << "\" height=\"" << lay.height - 21 << "\" fill=\"#fff3c4\"/>";
    std::string head = bank_label(m);
    if (answer)
      head += read ? ": read, d = " + svg_number(p.weights[size_t(m)], "%.2f") : ": not read";
    svg_text(out, cx + 4, y0 + 32, head, "start", " font-size=\"10\" font-style=\"italic\"");
  }
  const auto drawn = [&](int64_t e) { return lay.at.count(e) > 0; };
  for (const auto& [a, b] : p.edges)
    if (drawn(a) && drawn(b))
      edge_svg(out, at(a), at(b), 8, "edge", "#aaa", 1, name_of(st, a) + " -> " + name_of(st, b));
  for (const auto& [a, b] : p.current)
    if (drawn(a) && drawn(b))
      edge_svg(out, at(a), at(b), 8, "edge-now", "#e07000", 2.5,
               name_of(st, a) + " -> " + name_of(st, b) + " (this sentence's path)");
  for (const auto& [e, rel] : lay.at) {
    const Point pt = at(e);
    const double s = p.strength[size_t(e)];
    std::string tip = name_of(st, e) + ": s = " + svg_number(s, "%.3f") + "; in";
    for (int64_t m = 0, n = 0; m < l; ++m)
      if (member(p.banks, v, m, e)) tip += (n++ ? ", " : " ") + bank_label(m);
    const Examined x = answer ? examined_where(st, p, e) : Examined{};
    const int64_t in_read = x.bank;
    const double ps = x.ps;
    if (in_read >= 0)
      tip += "; examined, ps = " + svg_number(ps, "%.3f") + " in " + bank_label(in_read);
    out << "<circle class=\"node" << (in_read >= 0 ? " examined" : "") << "\" cx=\"" << pt.x
        << "\" cy=\"" << pt.y << "\" r=\"7\" fill=\"" << svg_blue(s) << "\" stroke=\"#222\""
        << " stroke-width=\"" << (in_read >= 0 ? 3 : 1) << "\"><title>" << html_escape(tip)
        << "</title></circle>";
    const std::string label =
        name_of(st, e) + (in_read >= 0 && ps >= kShownPs ? " " + svg_number(ps, "%.2f") : "");
    svg_text(out, pt.x + 10, pt.y + 4, label, "start", " font-size=\"10\"");
  }
  out << "</g>\n";
}

// The sentences that get a panel. Up to kPanels sentences: all of them (the paper's figure). A
// longer story: the sentences that mention an entity the answer's read attended to (ps >=
// kShownPs), the last kPanels of them, because those are the steps that built what the answer
// used, and a reader follows the model's reasons there rather than in the last sentences, which
// in the extended task mostly move other actors; when no entity reached kShownPs (an untrained
// model's flat attention), the last kPanels sentences. `by_attention` says which.
std::vector<int64_t> choose_panels(const std::vector<std::vector<int64_t>>& said,
                                   const std::vector<bool>& attended, bool& by_attention) {
  const int64_t n = int64_t(said.size());
  std::vector<int64_t> shown;
  if (n > kPanels)
    for (int64_t k = 0; k < n; ++k)
      for (const int64_t e : said[size_t(k)])
        if (attended[size_t(e)]) {
          shown.push_back(k);
          break;
        }
  by_attention = !shown.empty();
  if (!by_attention)
    for (int64_t k = std::max<int64_t>(0, n - kPanels); k < n; ++k) shown.push_back(k);
  if (int64_t(shown.size()) > kPanels) shown.erase(shown.begin(), shown.end() - kPanels);
  return shown;
}

// The entities that get a node: all of them when they fit one column of kRows; more (the
// extended task's 100) would make every panel a wall of nodes several columns wide, so then only
// the entities of the sentences with a panel and those the answer attended to, in order of first
// appearance. With every sentence shown this keeps every entity, so a short story is unchanged.
std::vector<int64_t> choose_nodes(const std::vector<int64_t>& order,
                                  const std::vector<std::vector<int64_t>>& said,
                                  const std::vector<int64_t>& shown, std::vector<bool> keep) {
  if (order.size() <= size_t(kRows)) return order;
  for (const int64_t k : shown)
    for (const int64_t e : said[size_t(k)]) keep[size_t(e)] = true;
  std::vector<int64_t> nodes;
  for (const int64_t e : order)
    if (keep[size_t(e)]) nodes.push_back(e);
  return nodes;
}

std::string sentence_list(const std::vector<int64_t>& shown) {  // "3, 7, 12" (from 1)
  std::string list;
  for (const int64_t k : shown) list += (list.empty() ? "" : ", ") + std::to_string(k + 1);
  return list;
}

std::string amn_fig4(const FigureInput& in) {
  const std::string fig = "amn-fig4";
  const Story st = read_story(in, fig);
  const TraceSeries& banks = in.get(fig, "banks");
  const TraceSeries& exists = in.get(fig, "exists");
  const TraceSeries& strength = in.get(fig, "strength");
  const TraceSeries& edges = in.get(fig, "edges");
  const int64_t l = st.banks, v = st.vocab, n = int64_t(st.step.size());
  MG_CHECK(edges.shape.rank == 2 && edges.shape[1] == 2, "figure ", fig,
           ": series 'edges' of shape ", edges.shape, ", not [pairs, 2]");
  // Entities in order of first appearance, each sentence's entities; A's edges in the order
  // sentences add them.
  std::vector<int64_t> order;
  std::vector<std::vector<int64_t>> said(static_cast<size_t>(n));
  std::vector<std::vector<std::pair<int64_t, int64_t>>> path(static_cast<size_t>(n));
  const TraceSeries& words = in.get(fig, "words");
  for (int64_t k = 0; k < n; ++k) {
    const int64_t step = st.step[size_t(k)];
    for (const double id : at_step(words, step, fig)) {
      if (id <= 0) continue;
      said[size_t(k)].push_back(int64_t(id));
      if (std::find(order.begin(), order.end(), int64_t(id)) == order.end())
        order.push_back(int64_t(id));
    }
    const std::vector<double>& pairs = at_step(edges, step, fig);
    for (size_t i = 0; i + 1 < pairs.size(); i += 2)
      if (pairs[i] > 0) path[size_t(k)].emplace_back(int64_t(pairs[i]), int64_t(pairs[i + 1]));
  }
  Panel answer;
  answer.heading = "for the answer: the banks read (Eq. 18) and the entities examined";
  answer.banks = in.get(fig, "end/banks").values.front();
  answer.exists = in.get(fig, "end/exists").values.front();
  answer.exists_all = true;
  answer.strength = in.get(fig, "end/strength").values.front();
  answer.weights = in.get(fig, "bank_weights").values.front();
  answer.attention = in.get(fig, "attention").values.front();
  MG_CHECK(int64_t(answer.banks.size()) == l * v && int64_t(answer.weights.size()) == l &&
               int64_t(answer.attention.size()) == l * v,
           "figure ", fig, ": the end's series do not hold ", l, " banks of ", v, " entities");
  std::vector<bool> attended(size_t(v), false);
  for (int64_t e = 1; e < v; ++e)
    attended[size_t(e)] = examined_where(st, answer, e).ps >= kShownPs;
  bool by_attention = false;
  const std::vector<int64_t> shown = choose_panels(said, attended, by_attention);
  const std::vector<int64_t> nodes = choose_nodes(order, said, shown, attended);

  std::vector<Panel> panels;
  std::vector<std::pair<int64_t, int64_t>> graph;
  for (int64_t k = 0; k < n; ++k) {
    for (const auto& e : path[size_t(k)])
      if (std::find(graph.begin(), graph.end(), e) == graph.end()) graph.push_back(e);
    if (std::find(shown.begin(), shown.end(), k) == shown.end()) continue;
    const int64_t step = st.step[size_t(k)];
    Panel p;
    std::string text = st.text[size_t(k)];
    if (text.size() > 34) text = text.substr(0, 32) + "...";
    p.heading = "after " + std::to_string(k + 1) + ". " + text;
    p.banks = at_step(banks, step, fig);
    p.exists = at_step(exists, step, fig);
    p.strength = at_step(strength, step, fig);
    p.edges = graph;
    p.current = path[size_t(k)];
    panels.push_back(std::move(p));
  }
  answer.edges = graph;

  // The story's entities are those in any bank (m_0 holds them all unless entities migrate).
  const std::vector<int64_t> top = top_banks(answer.banks, l, v);
  int64_t seen = 0, examined = 0;
  for (int64_t e = 1; e < v; ++e) {
    seen += top[size_t(e)] >= 0;
    for (int64_t m = 0; m < l; ++m)
      examined += answer.weights[size_t(m)] > 0 && member(answer.banks, v, m, e);
  }
  const std::string title =
      "Propagation over the word graph A after each sentence, and the "
      "banks read for the answer (" +
      in.model + ", " + in.source + ")";
  std::vector<std::string> notes = babi_outcome(in);
  const int64_t hidden = n - int64_t(shown.size());
  const std::string ps_min = svg_number(kShownPs, "%.2f");
  if (hidden > 0) {
    const std::string story =
        "A long story (" + std::to_string(n) + " sentences): panels only for ";
    notes.push_back(by_attention
                        ? story + "sentences " + sentence_list(shown) +
                              ", those that mention an entity the answer's read attended "
                              "to (ps >= " +
                              ps_min + "), the last " + std::to_string(kPanels) + " at most."
                        : story + "the last " + std::to_string(kPanels) +
                              " (no entity reached ps >= " + ps_min + " in the answer's read).");
    notes.push_back("... " + std::to_string(hidden) +
                    " sentences not shown; their edges are in every graph.");
  }
  if (nodes.size() < order.size())
    notes.push_back("Only " + std::to_string(nodes.size()) + " of the story's " +
                    std::to_string(order.size()) +
                    " entities have a node: those the panels' sentences mention or the answer "
                    "attended to; edges only between them.");
  notes.push_back(
      "Nodes: entities, shaded by their relevance strength s (white 0, blue 1), in "
      "the column of the highest bank holding them. Grey arrows: A; orange: the "
      "sentence's own path (Pi_prop's emphasis).");
  notes.push_back(
      "Last panel: yellow columns are the banks read (their weight d_m); thick "
      "outline: an entity examined, with its attention ps when >= " +
      ps_min +
      ". Entities "
      "examined (summed over the banks read) / entities in the story: " +
      std::to_string(examined) + " / " + std::to_string(seen) + " = " +
      svg_number(seen ? double(examined) / double(seen) : 0.0, "%.2f") + ".");

  // Panels left to right, wrapping at kWrap pixels, the answer's on a row of its own.
  constexpr int kWrap = 1400, kGap = 14;
  std::ostringstream body;
  int x = 10, y = 34, row_h = 0, width = 0;
  const auto place = [&](const Panel& p, bool is_answer) {
    const Layout lay = layout_panel(st, p, nodes);
    if (x > 10 && (is_answer || x + lay.width > kWrap)) x = 10, y += row_h + kGap, row_h = 0;
    panel_svg(body, st, p, lay, x, y, is_answer);
    row_h = std::max(row_h, lay.height);
    x += lay.width + kGap;
    width = std::max(width, x);
  };
  for (const Panel& p : panels) place(p, false);
  place(answer, true);
  const int notes_top = y + row_h + 22;
  for (const std::string& s : notes) width = std::max(width, svg_text_width(s) + 20);
  width = std::max(width, svg_title_width(title));
  std::ostringstream out;
  svg_open(out, width, notes_top + 16 * int(notes.size()));
  svg_text(out, 10, 20, title, "start", " font-weight=\"bold\"");
  out << body.str();
  svg_notes(out, 10, notes_top, notes);
  out << "</svg>\n";
  return out.str();
}

const bool kRegistered = [] {
  register_figure({.name = "amn-fig4",
                   .paper = "AMN (ICLR 2018 submission), Fig. 4",
                   .summary = "the word graph A after each sentence (its own path highlighted), "
                              "entities shaded by relevance strength in the column of their "
                              "highest bank, and the banks read for the answer",
                   .models = {"amn"},
                   .tasks = {"babi"},
                   .draw = amn_fig4});
  return true;
}();

}  // namespace
}  // namespace memgrad::cli
