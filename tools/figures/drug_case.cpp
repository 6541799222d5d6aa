#include "tools/figures/drug_case.hpp"

#include <sstream>

#include "engine/error.hpp"

namespace memgrad::cli {
namespace {

bool starts_with(const std::string& s, const std::string& head) {
  return s.compare(0, head.size(), head) == 0;
}
bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// "4019 (Hypertension NOS)" or "4019", either perhaps followed by kUnseenSuffix: codes hold no
// space, so the title is what follows the first one, in parentheses.
CodeLabel code_label(std::string text, const std::string& figure, const std::string& key) {
  CodeLabel c;
  c.unseen = ends_with(text, kUnseenSuffix) || text == "<unseen>";
  if (ends_with(text, kUnseenSuffix)) text.resize(text.size() - std::string(kUnseenSuffix).size());
  const size_t space = text.find(' ');
  c.code = text.substr(0, space);
  if (space == std::string::npos) return c;
  const std::string rest = text.substr(space + 1);
  MG_CHECK(space > 0 && rest.size() >= 2 && rest.front() == '(' && rest.back() == ')', "figure ",
           figure, ": line '", key, "' is not 'CODE (TITLE)': ", text);
  c.title = rest.substr(1, rest.size() - 2);
  return c;
}

// The lines "<singular> 1", "<singular> 2", ... in order.
std::vector<CodeLabel> codes(const FigureInput& in, const std::string& figure,
                             const std::string& singular) {
  std::vector<CodeLabel> out;
  for (const auto& [key, value] : in.sample) {
    if (!starts_with(key, singular + " ")) continue;
    MG_CHECK(key == singular + " " + std::to_string(out.size() + 1), "figure ", figure, ": line '",
             key, "' out of order (expected ", singular, " ", out.size() + 1, ")");
    out.push_back(code_label(value, figure, key));
  }
  return out;
}

std::string named(const CodeLabel& c) {
  std::string s = c.title.empty() ? html_escape(c.code)
                                  : html_escape(c.title) + " (" + html_escape(c.code) + ")";
  if (c.unseen && c.code != "<unseen>") s += " <i>unseen in training</i>";
  return s;
}

void code_row(std::ostringstream& out, const char* heading, const std::vector<CodeLabel>& codes,
              const std::string& note) {
  out << "<tr><th>" << heading << "</th><td><ol>";
  for (const CodeLabel& c : codes) out << "<li>" << named(c) << "</li>";
  out << "</ol><div class=\"note\">" << html_escape(note) << "</div></td></tr>\n";
}

}  // namespace

DrugCase read_drug_case(const FigureInput& in, const std::string& figure) {
  DrugCase c;
  c.diagnoses = codes(in, figure, "diagnosis");
  c.procedures = codes(in, figure, "procedure");
  c.diagnoses_note = in.line(figure, "diagnoses");
  c.procedures_note = in.line(figure, "procedures");
  c.drugs = in.line(figure, "drugs");
  c.correct = in.line(figure, "correct");
  for (const auto& [key, value] : in.sample) {
    if (!starts_with(key, "top ")) continue;
    const size_t gap = value.find("  ");
    MG_CHECK(gap != std::string::npos && gap > 0, "figure ", figure, ": line '", key,
             "' is not 'PROBABILITY  DRUG': ", value);
    DrugCase::Top t{value.substr(0, gap), value.substr(gap + 2)};
    t.true_drug = ends_with(t.drug, "  (true)");
    if (t.true_drug) t.drug.resize(t.drug.size() - 8);
    c.top.push_back(std::move(t));
  }
  return c;
}

std::string drug_case_html(const FigureInput& in, const std::string& figure) {
  const DrugCase c = read_drug_case(in, figure);
  std::ostringstream out;
  out << "<style>table.case{border-collapse:collapse;max-width:70em}table.case th,table.case td{"
         "border-top:1px solid #bbb;padding:.4em .8em;text-align:left;vertical-align:top}"
         "table.case ol{margin:0;padding-left:1.6em}.true{font-weight:bold}</style>\n"
      << "<h2>Case study (the paper's Table 4): " << html_escape(in.model) << ", "
      << html_escape(in.source) << "</h2>\n<table class=\"case\">\n";
  code_row(out, "Diagnoses", c.diagnoses, c.diagnoses_note);
  code_row(out, "Procedures", c.procedures, c.procedures_note);
  out << "<tr><th>Ground-truth drugs</th><td>" << html_escape(c.drugs) << "</td></tr>\n"
      << "<tr><th>Top " << c.top.size() << " recommendations (" << html_escape(in.model)
      << ")</th><td><ol>";
  for (const DrugCase::Top& t : c.top)
    out << "<li" << (t.true_drug ? " class=\"true\"" : "") << ">" << html_escape(t.drug) << " <span"
        << " class=\"note\">p = " << html_escape(t.probability) << "</span>"
        << (t.true_drug ? " &#10003; true" : "") << "</li>";
  out << "</ol><div class=\"note\">bold and ticked: a drug of the admission; of the model's top "
         "|Y| drugs (|Y| the number of true drugs) "
      << html_escape(c.correct) << " are true</div></td></tr>\n</table>\n";
  return out.str();
}

}  // namespace memgrad::cli
