// The Human Disease Ontology as distributed: an OBO 1.2 text file (doid.obo), read into its
// [Term] stanzas (the C-MemNN knowledge base's pages are built from them: tasks/clinical_kb.hpp).
//
// Format (OBO 1.2): a header of "tag: value" lines, then stanzas opened by "[Term]", "[Typedef]"
// or "[Instance]", each a run of "tag: value" lines; blank lines and lines starting with "!" are
// skipped; a trailing "! comment" after an identifier (is_a: DOID:4 ! disease) is dropped. Kept
// tags of a [Term]: id, name, def ("text" [sources]), synonym ("text" SCOPE [sources]), xref
// (DB:code, an optional quoted description dropped), is_a (an id), alt_id, is_obsolete
// (true|false); other tags and other stanza kinds are checked for syntax and skipped. Quoted
// text takes backslash escapes (\" \\ and \n as a space).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace memgrad {

struct OboTerm {
  std::string id, name, def;  // def empty when the term has none
  std::vector<std::string> synonyms, xrefs, is_a, alt_ids;
  bool obsolete = false;
  int64_t line = 0;  // line of the stanza's "[Term]" (from 1)
};

struct Ontology {
  std::string path;            // for messages
  std::vector<OboTerm> terms;  // every [Term] stanza, in file order (obsolete ones included)
  // Term index by id and by alt_id (an alt_id names the term that absorbed it).
  std::unordered_map<std::string, size_t> index;
  // alt_ids left out of the index because an id (or an earlier alt_id) already names a term.
  int64_t alt_id_conflicts = 0;
  // The term with this id or alt_id; null when there is none.
  const OboTerm* find(std::string_view id) const;
};

// Parses OBO text. Throws memgrad::Error "path:line: ..." for a line that is not "tag: value", a
// stanza header that is not "[Name]", a [Term] without an id or with a second id, name or def, a
// def or synonym whose value is not a closed quoted string, an is_obsolete value other than
// true/false, an id used by two terms. An alt_id that names another term is counted in
// alt_id_conflicts, not an error (the distributed 2016 file has such).
Ontology parse_obo(std::string_view text, const std::string& path);

// Reads and parses a .obo file; a missing or unreadable file is an Error naming it.
Ontology read_obo(const std::string& path);

}  // namespace memgrad
