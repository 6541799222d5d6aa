// OBO 1.2 parser (see kb_obo.hpp).
#include "tasks/kb_obo.hpp"

#include "engine/error.hpp"
#include "engine/quote.hpp"
#include "tasks/kb_text.hpp"

namespace memgrad {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The first whitespace-separated token of v: an identifier, without a trailing "! comment" or
// quoted description.
std::string first_token(std::string_view v) {
  const size_t end = v.find_first_of(" \t");
  return std::string(v.substr(0, end));
}

struct Parser {
  std::string_view path;
  int64_t line_no = 0;

  template <class... Parts>
  [[noreturn]] void bad(const Parts&... parts) const {
    fail(path, ":", line_no, ": ", parts...);
  }

  // The quoted string that opens v ("text" ...), unescaped.
  std::string quoted(std::string_view tag, std::string_view v) const {
    if (v.empty() || v.front() != '"')
      bad(tag, ": value must start with a quoted string, got ", quote(v));
    std::string out;
    for (size_t i = 1; i < v.size(); ++i) {
      const char c = v[i];
      if (c == '"') return out;
      if (c == '\\') {
        if (++i == v.size()) break;
        out += v[i] == 'n' || v[i] == 't' ? ' ' : v[i];
      } else {
        out += c;
      }
    }
    bad(tag, ": quoted string not closed: ", quote(v));
  }
};

}  // namespace

const OboTerm* Ontology::find(std::string_view id) const {
  const auto it = index.find(std::string(id));
  return it == index.end() ? nullptr : &terms[it->second];
}

Ontology parse_obo(std::string_view text, const std::string& path) {
  Ontology onto;
  onto.path = path;
  Parser p{path};
  OboTerm* term = nullptr;  // the [Term] being read; null in the header and other stanzas
  bool in_stanza = false;
  // A finished term must have an id, which enters the index.
  auto close_term = [&] {
    if (!term) return;
    if (term->id.empty()) fail(path, ":", term->line, ": [Term] stanza without an id");
    const auto [it, fresh] = onto.index.emplace(term->id, onto.terms.size() - 1);
    if (!fresh)
      fail(path, ":", term->line, ": id ", quote(term->id), " already names the term of line ",
           onto.terms[it->second].line);
    term = nullptr;
  };
  for_each_line(text, path, [&](int64_t line_no, std::string_view line) {
    p.line_no = line_no;
    const std::string_view s = trim(line);
    if (s.empty() || s.front() == '!') return;
    if (s.front() == '[') {
      if (s.size() < 3 || s.back() != ']') p.bad("stanza header must be [Name], got ", quote(s));
      close_term();
      in_stanza = true;
      if (s == "[Term]") {
        onto.terms.emplace_back();
        term = &onto.terms.back();
        term->line = line_no;
      }
      return;
    }
    const size_t colon = s.find(':');
    if (colon == std::string_view::npos || colon == 0)
      p.bad("expected a 'tag: value' line, got ", quote(s));
    const std::string_view tag = s.substr(0, colon);
    const std::string_view value = trim(s.substr(colon + 1));
    if (!in_stanza || !term) return;  // header and [Typedef]/[Instance] tags are not kept
    auto once = [&](std::string& field, std::string v) {
      if (!field.empty()) p.bad("second '", tag, "' in the [Term] of line ", term->line);
      if (v.empty()) p.bad("empty '", tag, "'");
      field = std::move(v);
    };
    if (tag == "id")
      once(term->id, first_token(value));
    else if (tag == "name")
      once(term->name, std::string(value));
    else if (tag == "def")
      once(term->def, p.quoted(tag, value));
    else if (tag == "synonym")
      term->synonyms.push_back(p.quoted(tag, value));
    else if (tag == "xref" || tag == "is_a" || tag == "alt_id") {
      std::string id = first_token(value);
      if (id.empty()) p.bad("empty '", tag, "'");
      (tag == "xref" ? term->xrefs : tag == "is_a" ? term->is_a : term->alt_ids).push_back(id);
    } else if (tag == "is_obsolete") {
      if (value != "true" && value != "false")
        p.bad("is_obsolete must be true or false, got ", quote(value));
      term->obsolete = value == "true";
    }
  });
  close_term();
  // alt_ids after every id: the 2016 doid.obo lists live terms' ids as other terms' alt_ids
  // (DOID:13628 favism, also an alt_id of DOID:2862); the term's own id wins.
  for (size_t i = 0; i < onto.terms.size(); ++i)
    for (const std::string& a : onto.terms[i].alt_ids)
      onto.alt_id_conflicts += !onto.index.emplace(a, i).second;
  return onto;
}

Ontology read_obo(const std::string& path) { return parse_obo(read_text_file(path), path); }

}  // namespace memgrad
