// The C-MemNN knowledge base over the Disease Ontology: one key/value page per diagnosis label.
//
// The paper (C-MemNN, "Knowledge base") stores one Wikipedia page per diagnosis: key = the page's
// text, value = its title. We hold no Wikipedia; each label (an ICD-10-CM code) is linked to
// Disease Ontology terms (tasks/kb_obo.hpp) by three routes, all taken (their union):
//   xref  the term's "xref: ICD10CM:c" with c the longest prefix (>= 3 characters) of the code
//         that any live term carries (R10.9 reaches a term of R10 when none has R10.9);
//   map   ICD10inDO.tsv, the same longest-prefix rule;
//   gem   the CMS GEM's ICD-9 codes for the code, each to the terms whose "xref: ICD9CM:" is its
//         longest prefix.
// Obsolete terms are dropped; an alt_id names the term that absorbed it.
//
// Pages, by variant (docs/codiesp-kb.md):
//   paper  key = each linked term's name, definition and synonyms (the paper's page), or the
//          code's long ICD-10 title when no term is linked; value = the short title;
//   k1     key = the code's long title + its 3-character category's long title;
//   k2     k1 + each linked term's name, definition, synonyms and symptoms (disease-symptom.tsv);
//   k3     k2 + the long titles of the other codes of the category + the definitions of each
//          linked term's is_a ancestors up to 2 levels.
//   none   key and value empty: the control that shows what the pages add (a model's memory then
//          holds nothing; coverage is still counted).
// A label with neither a title nor a term has an empty key and its code as value: counted in the
// coverage report, not an error.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tasks/icd_titles.hpp"
#include "tasks/kb_obo.hpp"
#include "tasks/kb_tables.hpp"

namespace memgrad {

struct KbSources {
  Ontology ontology;
  std::vector<DoIcdRow> icd10_in_do;
  std::map<std::string, icd::Title> titles;                  // normalised ICD-10-CM code -> titles
  std::map<std::string, std::vector<std::string>> gem;       // ICD-10 -> ICD-9
  std::map<std::string, std::vector<std::string>> symptoms;  // DOID -> symptom labels
  int64_t map_rows_missing_term = 0;   // ICD10inDO rows whose DOID the ontology lacks
  int64_t map_rows_obsolete_term = 0;  // ... or holds as obsolete
  // Live-term lookups by normalised code, built by read_kb_sources.
  std::map<std::string, std::vector<size_t>> by_icd10_xref, by_icd9_xref, by_icd10_map;
};

// Reads <kb_dir>/{doid.obo, ICD10inDO.tsv, disease-symptom.tsv} and
// <icd_dir>/{icd10cm-order-Jan-2021.csv.gz (tasks/icd_titles.hpp), icd_cm_9_to_10_mapping.csv.gz}.
// Bad input is an Error naming file and line. ICD10inDO.tsv (a 2026 report) names 1,115 DOIDs that
// the 2016 ontology does not hold: those rows are counted (map_rows_missing_term), not fatal.
KbSources read_kb_sources(const std::string& kb_dir, const std::string& icd_dir);
// The same from sources already read (tests); builds the lookups.
void index_kb_sources(KbSources& s);

enum class KbVariant { paper, k1, k2, k3, none };
KbVariant parse_kb_variant(const std::string& name);  // "paper" | "k1" | "k2" | "k3" | "none"
const char* kb_variant_name(KbVariant v);

struct KbPage {
  std::string code;                // the label, normalised (R509)
  std::string value;               // the title: short ICD-10 title, else the code
  std::string key;                 // the page's text
  std::vector<std::string> terms;  // linked live DOIDs
  std::vector<std::string> term_names;
  std::string routes;  // which routes linked a term: "xref+gem", "" for none
  bool has_title = false, has_definition = false;
  // Words of the key added by each source (title, category, do_name, do_def, do_synonyms,
  // symptoms, siblings, ancestors).
  std::map<std::string, int64_t> words;
};

// One page per code (codes in any case, dotted or not), in the order given.
std::vector<KbPage> build_kb_pages(const KbSources& s, const std::vector<std::string>& codes,
                                   KbVariant variant);

struct KbCoverage {
  int64_t labels = 0, with_title = 0, with_term = 0, with_definition = 0, without_entry = 0;
  std::map<std::string, int64_t> by_route;             // labels a route links ("xref", ...)
  std::map<std::string, int64_t> labels_with_source;   // labels a source adds words to
  std::map<std::string, double> mean_words_by_source;  // over all labels
  double median_words = 0, mean_words = 0;
  int64_t max_words = 0;
};
// Counted over pages (words: white-space separated tokens of the key).
KbCoverage kb_coverage(const std::vector<KbPage>& pages);
// A few lines for a terminal or a log.
std::string format_kb_coverage(const KbCoverage& c, const std::string& title);

}  // namespace memgrad
