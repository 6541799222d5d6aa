// Knowledge-base pages per label (see clinical_kb.hpp).
#include "tasks/clinical_kb.hpp"

#include <algorithm>
#include <iomanip>
#include <set>
#include <sstream>

#include "engine/error.hpp"
#include "engine/quote.hpp"

namespace memgrad {
namespace {

int64_t count_words(const std::string& s) {
  std::istringstream in(s);
  int64_t n = 0;
  for (std::string w; in >> w;) ++n;
  return n;
}

// The entries of `table` under the longest prefix (>= 3 characters) of code that it has.
const std::vector<size_t>* longest_prefix(const std::map<std::string, std::vector<size_t>>& table,
                                          const std::string& code) {
  for (size_t n = code.size(); n >= 3; --n) {
    const auto it = table.find(code.substr(0, n));
    if (it != table.end()) return &it->second;
  }
  return nullptr;
}

// The live term an id names (itself or the term absorbing an alt_id); npos for none.
size_t live_term(const Ontology& o, const std::string& id) {
  const auto it = o.index.find(id);
  if (it == o.index.end() || o.terms[it->second].obsolete) return std::string::npos;
  return it->second;
}

}  // namespace

void index_kb_sources(KbSources& s) {
  const Ontology& o = s.ontology;
  s.by_icd10_xref.clear(), s.by_icd9_xref.clear(), s.by_icd10_map.clear();
  for (size_t i = 0; i < o.terms.size(); ++i) {
    if (o.terms[i].obsolete) continue;
    for (const std::string& x : o.terms[i].xrefs) {
      if (x.rfind("ICD10CM:", 0) == 0) s.by_icd10_xref[normalize_icd(x.substr(8))].push_back(i);
      if (x.rfind("ICD9CM:", 0) == 0) s.by_icd9_xref[normalize_icd(x.substr(7))].push_back(i);
    }
  }
  s.map_rows_missing_term = s.map_rows_obsolete_term = 0;
  for (const DoIcdRow& r : s.icd10_in_do) {
    const auto it = o.index.find(r.doid);
    if (it == o.index.end()) {
      ++s.map_rows_missing_term;
      continue;
    }
    if (o.terms[it->second].obsolete) {
      ++s.map_rows_obsolete_term;
      continue;
    }
    for (const std::string& c : r.icd10) s.by_icd10_map[c].push_back(it->second);
  }
}

KbSources read_kb_sources(const std::string& kb_dir, const std::string& icd_dir) {
  KbSources s;
  s.ontology = read_obo(kb_dir + "/doid.obo");
  s.icd10_in_do = read_icd10_in_do(kb_dir + "/ICD10inDO.tsv");
  for (DiseaseSymptom& d : read_disease_symptoms(kb_dir + "/disease-symptom.tsv"))
    s.symptoms[d.doid].push_back(std::move(d.symptom));
  for (auto& [code, title] : icd::read_icd10cm_titles(icd_dir + "/icd10cm-order-Jan-2021.csv.gz"))
    s.titles[normalize_icd(code)] = std::move(title);
  s.gem = read_gem_10_to_9(icd_dir + "/icd_cm_9_to_10_mapping.csv.gz");
  index_kb_sources(s);
  return s;
}

KbVariant parse_kb_variant(const std::string& name) {
  if (name == "paper") return KbVariant::paper;
  if (name == "k1") return KbVariant::k1;
  if (name == "k2") return KbVariant::k2;
  if (name == "k3") return KbVariant::k3;
  if (name == "none") return KbVariant::none;
  fail("kb variant must be paper, k1, k2, k3 or none, got ", quote(name));
}

const char* kb_variant_name(KbVariant v) {
  switch (v) {
    case KbVariant::paper:
      return "paper";
    case KbVariant::k1:
      return "k1";
    case KbVariant::k2:
      return "k2";
    case KbVariant::k3:
      return "k3";
    case KbVariant::none:
      return "none";
  }
  return "?";
}

std::vector<KbPage> build_kb_pages(const KbSources& s, const std::vector<std::string>& codes,
                                   KbVariant variant) {
  const Ontology& o = s.ontology;
  std::vector<KbPage> pages;
  for (const std::string& raw : codes) {
    KbPage p;
    p.code = normalize_icd(raw);
    // Linked terms, by route, in term order.
    std::set<size_t> terms;
    std::vector<std::string> routes;
    auto take = [&](const std::vector<size_t>* hit, const char* route) {
      if (!hit || hit->empty()) return;
      terms.insert(hit->begin(), hit->end());
      routes.emplace_back(route);
    };
    take(longest_prefix(s.by_icd10_xref, p.code), "xref");
    take(longest_prefix(s.by_icd10_map, p.code), "map");
    if (const auto g = s.gem.find(p.code); g != s.gem.end()) {
      std::vector<size_t> via;
      for (const std::string& c9 : g->second)
        if (const auto* hit = longest_prefix(s.by_icd9_xref, c9))
          via.insert(via.end(), hit->begin(), hit->end());
      take(&via, "gem");
    }
    for (size_t i = 0; i < routes.size(); ++i) p.routes += (i ? "+" : "") + routes[i];
    for (const size_t t : terms) {
      p.terms.push_back(o.terms[t].id);
      p.term_names.push_back(o.terms[t].name);
      p.has_definition = p.has_definition || !o.terms[t].def.empty();
    }

    const auto title = s.titles.find(p.code);
    p.has_title = title != s.titles.end();
    p.value = p.has_title ? title->second.short_title : p.code;
    std::ostringstream key;
    auto add = [&](const char* source, const std::string& text) {
      if (text.empty()) return;
      key << (key.tellp() > 0 ? " " : "") << text;
      p.words[source] += count_words(text);
    };
    auto add_terms = [&](bool symptoms) {
      for (const size_t t : terms) {
        const OboTerm& term = o.terms[t];
        add("do_name", term.name);
        add("do_def", term.def);
        for (const std::string& syn : term.synonyms) add("do_synonyms", syn);
        if (!symptoms) continue;
        if (const auto it = s.symptoms.find(term.id); it != s.symptoms.end())
          for (const std::string& sym : it->second) add("symptoms", sym);
      }
    };
    const std::string category = p.code.substr(0, std::min<size_t>(3, p.code.size()));
    const auto cat = s.titles.find(category);
    if (variant == KbVariant::none) {
      p.value.clear();
    } else if (variant == KbVariant::paper) {
      if (!terms.empty())
        add_terms(false);
      else if (p.has_title)
        add("title", title->second.long_title);
    } else {
      if (p.has_title) add("title", title->second.long_title);
      if (cat != s.titles.end() && category != p.code) add("category", cat->second.long_title);
      if (variant != KbVariant::k1) add_terms(true);
      if (variant == KbVariant::k3) {
        for (auto it = s.titles.lower_bound(category);
             it != s.titles.end() && it->first.rfind(category, 0) == 0; ++it)
          if (it->first != p.code && it->first != category) add("siblings", it->second.long_title);
        // Definitions of is_a ancestors, 2 levels up, each once.
        std::set<size_t> seen(terms.begin(), terms.end());
        std::vector<size_t> level(terms.begin(), terms.end());
        for (int depth = 0; depth < 2; ++depth) {
          std::vector<size_t> next;
          for (const size_t t : level)
            for (const std::string& parent : o.terms[t].is_a) {
              const size_t q = live_term(o, parent);
              if (q != std::string::npos && seen.insert(q).second) next.push_back(q);
            }
          for (const size_t q : next) add("ancestors", o.terms[q].def);
          level = std::move(next);
        }
      }
    }
    p.key = key.str();
    pages.push_back(std::move(p));
  }
  return pages;
}

KbCoverage kb_coverage(const std::vector<KbPage>& pages) {
  KbCoverage c;
  c.labels = int64_t(pages.size());
  std::vector<int64_t> lengths;
  for (const KbPage& p : pages) {
    c.with_title += p.has_title;
    c.with_term += !p.terms.empty();
    c.with_definition += p.has_definition;
    c.without_entry += !p.has_title && p.terms.empty();
    std::istringstream routes(p.routes);
    for (std::string r; std::getline(routes, r, '+');) ++c.by_route[r];
    int64_t total = 0;
    for (const auto& [source, n] : p.words) {
      c.labels_with_source[source] += n > 0;
      c.mean_words_by_source[source] += double(n);
      total += n;
    }
    lengths.push_back(total);
  }
  if (pages.empty()) return c;
  for (auto& [source, n] : c.mean_words_by_source) n /= double(pages.size());
  std::sort(lengths.begin(), lengths.end());
  const size_t n = lengths.size();
  c.median_words =
      n % 2 ? double(lengths[n / 2]) : 0.5 * double(lengths[n / 2 - 1] + lengths[n / 2]);
  for (const int64_t l : lengths) c.mean_words += double(l);
  c.mean_words /= double(n);
  c.max_words = lengths.back();
  return c;
}

std::string format_kb_coverage(const KbCoverage& c, const std::string& title) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(1);
  out << title << ": " << c.labels << " labels, " << c.with_title << " with an ICD-10 title, "
      << c.with_term << " with a Disease Ontology term, " << c.with_definition
      << " with a definition, " << c.without_entry << " without any entry\n";
  out << "  routes:";
  for (const auto& [r, n] : c.by_route) out << " " << r << " " << n;
  out << "\n  page words: median " << c.median_words << ", mean " << c.mean_words << ", max "
      << c.max_words << "\n  words per label by source (labels it adds to):";
  for (const auto& [s, w] : c.mean_words_by_source)
    out << " " << s << " " << w << " (" << c.labels_with_source.at(s) << ")";
  out << "\n";
  return out.str();
}

}  // namespace memgrad
