// The AMN paper's figures ("Adaptive Memory Networks", anonymous ICLR 2018 submission, §A.3-A.4)
// for one bAbI story, from the model's trace (models/qa/amn.hpp lists what it records):
//  - amn-fig3 (Fig. 3, "distribution of entities across various memory banks"): a heatmap with the
//    banks as rows (m_0 at the bottom) and, where the paper has one column per task, one column
//    per sentence of the story; a cell's shade is the number of entities in the bank after the
//    sentence, grey where the bank does not exist yet; the cell lists its entities, marking those
//    that entered it with the sentence (moved up by Pi_move, or new in m_0), and outlines a bank
//    the sentence created (Pi_new).
//  - amn-fig4 (Fig. 4, "propagation in AMN ... across time"): the word graph A after each
//    sentence, the sentence's own edges (the ones Pi_prop emphasises) highlighted, each entity's
//    node shaded by its relevance strength s and placed in the column of the highest bank holding
//    it, so that moves between banks show from panel to panel; a last panel marks the banks read
//    for the answer (their weight d_m, Eq. 18) and the entities examined, with the attention ps.
#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "engine/error.hpp"
#include "tools/figures/babi_lines.hpp"
#include "tools/figures/figure.hpp"
#include "tools/figures/svg_draw.hpp"
#include "tools/trace_view.hpp"

namespace memgrad::cli {
namespace {

// The story as the model read it: its real sentences in reading order, each with the trace step
// that holds it and its text, and every entity's name.
struct Story {
  std::vector<int64_t> step;  // per sentence, its trace step (the model's sentence index)
  std::vector<std::string> text;
  std::map<int64_t, std::string> names;  // entity (word id) -> word
  int64_t banks = 0, vocab = 0;
};

std::vector<std::string> split_words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// The series' values at `step`, or an Error naming the figure.
const std::vector<double>& at_step(const TraceSeries& s, int64_t step, const std::string& figure) {
  const auto it = std::find(s.steps.begin(), s.steps.end(), step);
  MG_CHECK(it != s.steps.end(), "figure ", figure, ": series '", s.name, "' has no sentence ",
           step);
  return s.values[size_t(it - s.steps.begin())];
}

// The sample's "memory M (time T)" lines give the sentences (M is the model's sentence index, the
// trace's step); the series "words" their word ids, zipped with the lines' words for the names.
Story read_story(const FigureInput& in, const std::string& figure) {
  const TraceSeries& words = in.get(figure, "words");
  const TraceSeries& banks = in.get(figure, "banks");
  MG_CHECK(banks.shape.rank == 2, "figure ", figure, ": series 'banks' of shape ", banks.shape,
           ", not [banks, entities]");
  Story st;
  st.banks = banks.shape[0];
  st.vocab = banks.shape[1];
  for (const StorySentence& line : babi_story(in, figure)) {
    const int memory = line.memory;
    const std::string& text = line.text;
    const std::vector<double>& sentence = at_step(words, memory, figure);
    at_step(banks, memory, figure);
    const std::vector<std::string> tokens = split_words(text);
    std::vector<int64_t> ids;
    for (const double id : sentence)
      if (id > 0) ids.push_back(int64_t(id));
    MG_CHECK(ids.size() == tokens.size(), "figure ", figure, ": sentence ", memory, " has ",
             ids.size(), " word ids for the ", tokens.size(), " words of \"", text, "\"");
    for (size_t w = 0; w < ids.size(); ++w) {
      MG_CHECK(ids[w] < st.vocab, "figure ", figure, ": word id ", ids[w], " outside the ",
               st.vocab, " entities of the banks");
      st.names[ids[w]] = tokens[w];
    }
    st.step.push_back(memory);
    st.text.push_back(text);
  }
  return st;
}

std::string name_of(const Story& st, int64_t id) {
  const auto it = st.names.find(id);
  return it != st.names.end() ? it->second : "#" + std::to_string(id);
}

// Membership and existence of bank m for one step's values ([L, V] banks, [L - 1] or [L] exists).
bool member(const std::vector<double>& banks, int64_t vocab, int64_t m, int64_t e) {
  return banks[size_t(m * vocab + e)] >= 0.5;
}
bool exists_upper(const std::vector<double>& exists, int64_t m) {  // exists of m_1 .. m_{L-1}
  return m == 0 || exists[size_t(m - 1)] >= 0.5;
}

// The highest bank holding each entity of m_0 (-1: not in memory).
std::vector<int64_t> top_banks(const std::vector<double>& banks, int64_t l, int64_t v) {
  std::vector<int64_t> top(size_t(v), -1);
  for (int64_t m = 0; m < l; ++m)
    for (int64_t e = 1; e < v; ++e)
      if (member(banks, v, m, e)) top[size_t(e)] = m;
  return top;
}

std::string bank_label(int64_t m) { return "m_" + std::to_string(m); }

// ---- Fig. 3 ----

std::string amn_fig3(const FigureInput& in) {
  const std::string fig = "amn-fig3";
  const Story st = read_story(in, fig);
  const TraceSeries& banks = in.get(fig, "banks");
  const TraceSeries& exists = in.get(fig, "exists");
  const int64_t l = st.banks, v = st.vocab, n = int64_t(st.step.size());
  MG_CHECK(exists.shape.rank == 1 && exists.shape[0] == l - 1, "figure ", fig,
           ": series 'exists' of shape ", exists.shape, " for ", l, " banks");
  // Cells [bank][sentence].
  struct Cell {
    bool present = false, created = false;
    std::vector<int64_t> members;
    std::vector<bool> entered;  // per member: not in this bank after the previous sentence
  };
  std::vector<std::vector<Cell>> cells(static_cast<size_t>(l),
                                       std::vector<Cell>(static_cast<size_t>(n)));
  size_t most = 1, longest = 0;
  for (int64_t k = 0; k < n; ++k) {
    const int64_t step = st.step[size_t(k)], prev = k > 0 ? st.step[size_t(k - 1)] : -1;
    const std::vector<double>& now = at_step(banks, step, fig);
    const std::vector<double>& ex = at_step(exists, step, fig);
    const std::vector<double>* before = k > 0 ? &at_step(banks, prev, fig) : nullptr;
    const std::vector<double>* ex_before = k > 0 ? &at_step(exists, prev, fig) : nullptr;
    for (int64_t m = 0; m < l; ++m) {
      Cell& c = cells[size_t(m)][size_t(k)];
      c.present = exists_upper(ex, m);
      c.created = m > 0 && c.present && !(ex_before && exists_upper(*ex_before, m));
      for (int64_t e = 1; e < v; ++e) {
        if (!member(now, v, m, e)) continue;
        c.members.push_back(e);
        c.entered.push_back(!(before && member(*before, v, m, e)));
        longest = std::max(longest, name_of(st, e).size());
      }
      most = std::max(most, c.members.size());
    }
  }
  // Names are listed in the cells up to kListed entities a cell (the counts always).
  constexpr size_t kListed = 14;
  const bool list = most <= kListed;
  const int cell_w = list ? std::max(52, int(6.5 * double(longest + 1)) + 10) : 34;
  const int cell_h = list ? 20 + 12 * int(most) : 26;
  const int left = 64, top = 56;
  const int grid_w = cell_w * int(n), grid_h = cell_h * int(l);

  std::vector<std::string> legend;
  for (int64_t k = 0; k < n; ++k)
    legend.push_back(std::to_string(k + 1) + ". " + st.text[size_t(k)]);
  std::vector<std::string> notes = babi_outcome(in);
  notes.push_back("Shade: entities in the bank after the sentence (darkest " +
                  std::to_string(most) +
                  "); grey: the bank does not exist yet; orange outline: "
                  "created by Pi_new with this sentence.");
  notes.push_back(list ? "Orange +name: moved up into the bank by Pi_move with this sentence; "
                         "green +name: a new entity entering m_0."
                       : "More than " + std::to_string(kListed) +
                             " entities in a bank: hover a cell for its entities.");
  const std::string title =
      "Entities per memory bank after each sentence (" + in.model + ", " + in.source + ")";
  int width = std::max(left + grid_w + 20, svg_title_width(title));
  for (const auto* lines : {&legend, &notes})
    for (const std::string& s : *lines) width = std::max(width, svg_text_width(s) + 20);
  const int legend_top = top + grid_h + 44;
  const int height = legend_top + 16 * int(legend.size() + notes.size()) + 10;

  std::ostringstream out;
  svg_open(out, width, height);
  svg_text(out, 10, 20, title, "start", " font-weight=\"bold\"");
  for (int64_t k = 0; k < n; ++k)
    svg_text(out, left + cell_w * (double(k) + 0.5), top - 8, std::to_string(k + 1), "middle");
  for (int64_t m = 0; m < l; ++m) {
    const int y = top + cell_h * int(l - 1 - m);  // m_0 at the bottom
    svg_text(out, left - 8, y + cell_h / 2.0 + 4, bank_label(m), "end");
    for (int64_t k = 0; k < n; ++k) {
      const Cell& c = cells[size_t(m)][size_t(k)];
      const int x = left + cell_w * int(k);
      std::string tip = bank_label(m) + " after sentence " + std::to_string(k + 1) + ": ";
      if (!c.present) {
        out << "<rect class=\"absent\" x=\"" << x << "\" y=\"" << y << "\" width=\"" << cell_w - 2
            << "\" height=\"" << cell_h - 2 << "\" fill=\"#bbb\"><title>" << html_escape(tip)
            << "absent</title></rect>\n";
        continue;
      }
      for (size_t i = 0; i < c.members.size(); ++i)
        tip += (i ? ", " : "") + name_of(st, c.members[i]) + (c.entered[i] ? " (entered)" : "");
      if (c.members.empty()) tip += "empty";
      const double shade = double(c.members.size()) / double(most);
      out << "<rect class=\"bank-cell" << (c.created ? " created" : "") << "\" x=\"" << x
          << "\" y=\"" << y << "\" width=\"" << cell_w - 2 << "\" height=\"" << cell_h - 2
          << "\" fill=\"" << svg_blue(shade) << "\""
          << (c.created ? " stroke=\"#e07000\" stroke-width=\"3\"" : "") << "><title>"
          << html_escape(tip) << "</title></rect>";
      const char* ink = shade > 0.55 ? " fill=\"#fff\"" : "";
      svg_text(out, x + (cell_w - 2) / 2.0, y + 14, std::to_string(c.members.size()), "middle",
               (std::string(ink) + " font-weight=\"bold\"").c_str());
      if (list)
        for (size_t i = 0; i < c.members.size(); ++i) {
          const std::string cls = !c.entered[i] ? "" : m == 0 ? "entered" : "moved";
          std::string attrs = " font-size=\"10\"", label = cls.empty() ? "" : "+";
          if (cls.empty()) {
            attrs += ink;
          } else {
            attrs += " class=\"";
            attrs += cls;
            attrs += cls == "moved" ? "\" font-weight=\"bold\" fill=\"#e07000\""
                                    : "\" font-weight=\"bold\" fill=\"#1a8f2a\"";
          }
          label += name_of(st, c.members[i]);
          svg_text(out, x + 4, y + 27 + 12 * double(i), label, "start", attrs.c_str());
        }
      out << "\n";
    }
  }
  svg_text(out, left + grid_w / 2.0, top + grid_h + 20, "sentence of the story", "middle");
  svg_text(out, 14, top + grid_h / 2.0, "memory bank", "middle",
           (" transform=\"rotate(-90 14 " + std::to_string(top + grid_h / 2) + ")\"").c_str());
  svg_notes(out, 10, legend_top, legend);
  svg_notes(out, 10, legend_top + 16 * int(legend.size()), notes);
  out << "</svg>\n";
  return out.str();
}

// ---- Fig. 4 ----

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

// One panel of Fig. 4: the graph as it stands after a sentence.
struct Panel {
  std::string heading;
  std::vector<double> banks, exists, strength;  // that step's [L, V], [L - 1] or [L], [V]
  bool exists_all = false;                      // exists holds all L banks (the end's series)
  std::vector<std::pair<int64_t, int64_t>> edges, current;  // A so far; the sentence's path
  std::vector<double> weights, attention;  // the answer panel: d_m [L] and ps [L, V]
};

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
    std::string tip = name_of(st, e) + ": s = " + svg_number(s, "%.3f") + "; in m_0";
    for (int64_t m = 1; m < l; ++m)
      if (member(p.banks, v, m, e)) tip += ", " + bank_label(m);
    int64_t in_read = -1;  // the highest bank read that holds e
    if (answer)
      for (int64_t m = l - 1; m >= 0 && in_read < 0; --m)
        if (p.weights[size_t(m)] > 0 && member(p.banks, v, m, e)) in_read = m;
    const double ps = in_read >= 0 ? p.attention[size_t(in_read * v + e)] : 0.0;
    if (in_read >= 0)
      tip += "; examined, ps = " + svg_number(ps, "%.3f") + " in " + bank_label(in_read);
    out << "<circle class=\"node" << (in_read >= 0 ? " examined" : "") << "\" cx=\"" << pt.x
        << "\" cy=\"" << pt.y << "\" r=\"7\" fill=\"" << svg_blue(s) << "\" stroke=\"#222\""
        << " stroke-width=\"" << (in_read >= 0 ? 3 : 1) << "\"><title>" << html_escape(tip)
        << "</title></circle>";
    const std::string label =
        name_of(st, e) + (in_read >= 0 && ps >= 0.05 ? " " + svg_number(ps, "%.2f") : "");
    svg_text(out, pt.x + 10, pt.y + 4, label, "start", " font-size=\"10\"");
  }
  out << "</g>\n";
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
  // Entities in order of first appearance; A's edges in the order sentences add them.
  std::vector<int64_t> order;
  std::vector<std::vector<std::pair<int64_t, int64_t>>> path(static_cast<size_t>(n));
  const TraceSeries& words = in.get(fig, "words");
  for (int64_t k = 0; k < n; ++k) {
    const int64_t step = st.step[size_t(k)];
    for (const double id : at_step(words, step, fig))
      if (id > 0 && std::find(order.begin(), order.end(), int64_t(id)) == order.end())
        order.push_back(int64_t(id));
    const std::vector<double>& pairs = at_step(edges, step, fig);
    for (size_t i = 0; i + 1 < pairs.size(); i += 2)
      if (pairs[i] > 0) path[size_t(k)].emplace_back(int64_t(pairs[i]), int64_t(pairs[i + 1]));
  }
  // Every sentence gets a panel up to kPanels; a longer story the last kPanels sentences'.
  constexpr int64_t kPanels = 10;
  const int64_t first = std::max<int64_t>(0, n - kPanels);
  std::vector<Panel> panels;
  std::vector<std::pair<int64_t, int64_t>> graph;
  for (int64_t k = 0; k < n; ++k) {
    for (const auto& e : path[size_t(k)])
      if (std::find(graph.begin(), graph.end(), e) == graph.end()) graph.push_back(e);
    if (k < first) continue;
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
  Panel answer;
  answer.heading = "for the answer: the banks read (Eq. 18) and the entities examined";
  answer.banks = in.get(fig, "end/banks").values.front();
  answer.exists = in.get(fig, "end/exists").values.front();
  answer.exists_all = true;
  answer.strength = in.get(fig, "end/strength").values.front();
  answer.weights = in.get(fig, "bank_weights").values.front();
  answer.attention = in.get(fig, "attention").values.front();
  answer.edges = graph;
  MG_CHECK(int64_t(answer.banks.size()) == l * v && int64_t(answer.weights.size()) == l &&
               int64_t(answer.attention.size()) == l * v,
           "figure ", fig, ": the end's series do not hold ", l, " banks of ", v, " entities");

  int64_t seen = 0, examined = 0;
  for (int64_t e = 1; e < v; ++e) {
    seen += member(answer.banks, v, 0, e);
    for (int64_t m = 0; m < l; ++m)
      examined += answer.weights[size_t(m)] > 0 && member(answer.banks, v, m, e);
  }
  const std::string title =
      "Propagation over the word graph A after each sentence, and the "
      "banks read for the answer (" +
      in.model + ", " + in.source + ")";
  std::vector<std::string> notes = babi_outcome(in);
  if (first > 0)
    notes.push_back("Sentences 1-" + std::to_string(first) +
                    " have no panel; their edges are in every graph.");
  notes.push_back(
      "Nodes: entities, shaded by their relevance strength s (white 0, blue 1), in "
      "the column of the highest bank holding them. Grey arrows: A; orange: the "
      "sentence's own path (Pi_prop's emphasis).");
  notes.push_back(
      "Last panel: yellow columns are the banks read (their weight d_m); thick "
      "outline: an entity examined, with its attention ps when >= 0.05. Entities "
      "examined (summed over the banks read) / entities in the story: " +
      std::to_string(examined) + " / " + std::to_string(seen) + " = " +
      svg_number(seen ? double(examined) / double(seen) : 0.0, "%.2f") + ".");

  // Panels left to right, wrapping at kWrap pixels, the answer's on a row of its own.
  constexpr int kWrap = 1400, kGap = 14;
  std::ostringstream body;
  int x = 10, y = 34, row_h = 0, width = 0;
  const auto place = [&](const Panel& p, bool is_answer) {
    const Layout lay = layout_panel(st, p, order);
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
  register_figure({.name = "amn-fig3",
                   .paper = "AMN (ICLR 2018 submission), Fig. 3",
                   .summary = "entities per memory bank (rows) after every sentence of the story "
                              "(columns): a heatmap of counts listing the entities, banks absent "
                              "in grey, bank creation and moves marked",
                   .models = {"amn"},
                   .tasks = {"babi"},
                   .draw = amn_fig3});
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
