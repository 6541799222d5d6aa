// The AMN paper's Fig. 3 ("Adaptive Memory Networks", anonymous ICLR 2018 submission, §A.3-A.4)
// for one bAbI story, from the model's trace (tools/figures/amn_trace.hpp reads it):
// amn-fig3 (Fig. 3, "distribution of entities across various memory banks"): a heatmap with the
// banks as rows (m_0 at the bottom) and, where the paper has one column per task, one column
// per sentence of the story; a cell's shade is the number of entities in the bank after the
// sentence, grey where the bank does not exist yet; the cell lists its entities, marking those
// that entered it with the sentence (moved up by Pi_move, or new in m_0), and outlines a bank
// the sentence created (Pi_new).
#include <algorithm>
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

const bool kRegistered = [] {
  register_figure({.name = "amn-fig3",
                   .paper = "AMN (ICLR 2018 submission), Fig. 3",
                   .summary = "entities per memory bank (rows) after every sentence of the story "
                              "(columns): a heatmap of counts listing the entities, banks absent "
                              "in grey, bank creation and moves marked",
                   .models = {"amn"},
                   .tasks = {"babi"},
                   .draw = amn_fig3});
  return true;
}();

}  // namespace
}  // namespace memgrad::cli
