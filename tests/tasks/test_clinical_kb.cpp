// The Disease Ontology knowledge base: the OBO parser, the ICD/DO tables, the pages per label and
// the coverage report, on fixture files written here; the real files' counts (shared_data suite).
#include <doctest/doctest.h>

#include <string>

#include "engine/error.hpp"
#include "tasks/clinical_kb.hpp"
#include "tasks/kb_text.hpp"
#include "tests/tasks/physionet_fixture.hpp"
#include "tests/test_util.hpp"

using namespace memgrad;

namespace {

// Four terms: a root with a definition, a child linked to K52 by xref, a grandchild linked by an
// ICD-9 xref (reached through the GEM), an obsolete term with an ICD-10 xref, and a Typedef.
const char* kObo = R"(format-version: 1.2
data-version: releases/2016-09-01
! a comment line

[Term]
id: DOID:4
name: disease
def: "A disease is a \"disposition\" to undergo pathological processes." [url:x]

[Term]
id: DOID:10
name: gastroenteritis
alt_id: DOID:11
def: "An inflammation of the stomach and intestines." []
synonym: "gastro" EXACT []
xref: ICD10CM:K52
is_a: DOID:4 ! disease

[Term]
id: DOID:20
name: viral gastroenteritis
synonym: "stomach flu" RELATED []
xref: ICD9CM:008.8
is_a: DOID:10 ! gastroenteritis

[Term]
id: DOID:30
name: old term
xref: ICD10CM:R50
is_obsolete: true

[Typedef]
id: has_symptom
name: has symptom
)";

const char* kMap =
    "id\tlabel\txrefs\n\"DOID:10\"\t\"gastroenteritis\"\t\"ICD10CM:K52.9\"\n"
    "\"DOID:999\"\t\"newer\"\t\"ICD10CM:A00\"\n";
const char* kSymptoms =
    "disease_id\tdisease_label\tsymptom_id\tsymptom_label\nDOID:10\tgastroenteritis\tSYMP:1\t"
    "diarrhea\n";
const char* kTitles =
    "code,billable,short,long\nK52,0,Oth noninfective gastro-enteritis and colitis,\"Other "
    "noninfective gastroenteritis and colitis\"\nK529,1,\"Noninfective gastroenteritis, unsp\","
    "\"Noninfective gastroenteritis and colitis, unspecified\"\nK521,1,Toxic gastroenteritis,"
    "Toxic gastroenteritis and colitis\nA084,1,Viral intestinal infection,\"Viral intestinal "
    "infection, unspecified\"\nR509,1,\"Fever, unspecified\",\"Fever, unspecified\"\n";
const char* kGem = "icd_9,icd_10,flags\n0088,A084,10000\n7806,R509,11000\n";

struct KbFixture {
  test::TempDir dir;
  KbFixture() {
    dir.write("kb/doid.obo", kObo);
    dir.write("kb/ICD10inDO.tsv", kMap);
    dir.write("kb/disease-symptom.tsv", kSymptoms);
    std::filesystem::create_directories(dir.path / "icd");
    test::physionet::write_gz((dir.path / "icd/icd10cm-order-Jan-2021.csv.gz").string(), kTitles);
    test::physionet::write_gz((dir.path / "icd/icd_cm_9_to_10_mapping.csv.gz").string(), kGem);
  }
  KbSources read() const {
    return read_kb_sources((dir.path / "kb").string(), (dir.path / "icd").string());
  }
};

// The Error message of parsing `text` as OBO.
std::string obo_error(const std::string& text) {
  try {
    parse_obo(text, "x.obo");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("obo parser: terms, names, definitions, synonyms, xrefs, is_a, alt_id, obsolete") {
  const Ontology o = parse_obo(kObo, "doid.obo");
  REQUIRE(o.terms.size() == 4);  // the Typedef is not a term
  const OboTerm& root = o.terms[0];
  CHECK(root.id == "DOID:4");
  CHECK(root.def == "A disease is a \"disposition\" to undergo pathological processes.");
  CHECK(root.line == 5);
  const OboTerm* g = o.find("DOID:11");  // by alt_id
  REQUIRE(g);
  CHECK(g->id == "DOID:10");
  CHECK(g->synonyms == std::vector<std::string>{"gastro"});
  CHECK(g->xrefs == std::vector<std::string>{"ICD10CM:K52"});
  CHECK(g->is_a == std::vector<std::string>{"DOID:4"});
  CHECK(o.find("DOID:20")->def.empty());
  CHECK(o.find("DOID:30")->obsolete);
  CHECK_FALSE(o.find("DOID:10")->obsolete);
  CHECK(o.find("has_symptom") == nullptr);
}

TEST_CASE("obo parser: malformed input is an error naming file and line") {
  CHECK(obo_error("[Term]\nid: DOID:1\nname x\n") ==
        "x.obo:3: expected a 'tag: value' line, got 'name x'");
  CHECK(obo_error("[Term]\nid: DOID:1\ndef: \"open [x]\n") ==
        "x.obo:3: def: quoted string not closed: '\"open [x]'");
  CHECK(obo_error("[Term]\nid: DOID:1\nsynonym: plain EXACT []\n") ==
        "x.obo:3: synonym: value must start with a quoted string, got 'plain EXACT []'");
  CHECK(obo_error("[Term]\nname: lost\n") == "x.obo:1: [Term] stanza without an id");
  CHECK(obo_error("[Term]\nid: DOID:1\nname: a\nname: b\n") ==
        "x.obo:4: second 'name' in the [Term] of line 1");
  CHECK(obo_error("[Term]\nid: DOID:1\nis_obsolete: yes\n") ==
        "x.obo:3: is_obsolete must be true or false, got 'yes'");
  CHECK(obo_error("[Term]\nid: DOID:1\n\n[Term]\nid: DOID:1\n") ==
        "x.obo:4: id 'DOID:1' already names the term of line 1");
  // An alt_id naming another term's id is counted; the id wins.
  const Ontology o = parse_obo("[Term]\nid: DOID:1\n[Term]\nid: DOID:2\nalt_id: DOID:1\n", "x");
  CHECK(o.alt_id_conflicts == 1);
  CHECK(o.find("DOID:1")->id == "DOID:1");
  CHECK(obo_error("[Term\nid: DOID:1\n") == "x.obo:1: stanza header must be [Name], got '[Term'");
  CHECK(obo_error(std::string("[Term]\nid: DOID:1\0\n", 19)) ==
        "x.obo:2: NUL byte (not a text file?)");
  CHECK_THROWS_WITH_AS(read_obo("/nonexistent/doid.obo"),
                       "/nonexistent/doid.obo: cannot open (missing or unreadable file)", Error);
}

TEST_CASE("kb tables: quoted fields, codes normalised, malformed rows name file and line") {
  CHECK(normalize_icd("r50.9") == "R509");
  CHECK(split_fields("a,\"b,\"\"c\"\"\",", ',', "f", 1) ==
        std::vector<std::string>{"a", "b,\"c\"", ""});
  CHECK_THROWS_WITH_AS(split_fields("\"open", ',', "f.csv", 7),
                       "f.csv:7: quoted field not closed: '\"open'", Error);
  test::TempDir dir;
  const std::string map = dir.write("ICD10inDO.tsv", "id\tlabel\txrefs\nDOID:1\tx\tICD9CM:1\n");
  CHECK_THROWS_WITH_AS(read_icd10_in_do(map),
                       (map + ":2: xref 'ICD9CM:1' is not ICD10CM:<code>").c_str(), Error);
  const std::string bad_id = dir.write("m2.tsv", "id\tlabel\txrefs\nDO:1\tx\tICD10CM:A00\n");
  CHECK_THROWS_WITH_AS(read_icd10_in_do(bad_id),
                       (bad_id + ":2: id 'DO:1' is not DOID:<digits>").c_str(), Error);
  const std::string header = dir.write("h.tsv", "id\tname\txrefs\n");
  CHECK_THROWS_AS(read_icd10_in_do(header), Error);
  const std::string titles = dir.write("t.csv", "code,billable,short,long\nA00,2,a,b\n");
  CHECK_THROWS_WITH_AS(read_icd10cm_titles(titles),
                       (titles + ":2: billable must be 0 or 1, got '2'").c_str(), Error);
  const std::string narrow = dir.write("s.tsv",
                                       "disease_id\tdisease_label\tsymptom_id\tsymptom_label\n"
                                       "DOID:1\tx\tSYMP:1\n");
  CHECK_THROWS_WITH_AS(read_disease_symptoms(narrow),
                       (narrow + ":2: 3 fields, want 4: 'DOID:1\\x09x\\x09SYMP:1'").c_str(), Error);
}

TEST_CASE("kb pages: the three link routes, the variants, and the coverage report") {
  const KbFixture fx;
  const KbSources s = fx.read();
  CHECK(s.map_rows_missing_term == 1);  // DOID:999: counted, not fatal
  const std::vector<std::string> codes = {"k52.9", "A08.4", "r50.9", "z99.9"};

  const std::vector<KbPage> paper = build_kb_pages(s, codes, KbVariant::paper);
  REQUIRE(paper.size() == 4);
  // K52.9: DOID:10 by its xref (prefix K52) and by ICD10inDO (K529).
  CHECK(paper[0].code == "K529");
  CHECK(paper[0].routes == "xref+map");
  CHECK(paper[0].terms == std::vector<std::string>{"DOID:10"});
  CHECK(paper[0].value == "Noninfective gastroenteritis, unsp");
  CHECK(paper[0].key == "gastroenteritis An inflammation of the stomach and intestines. gastro");
  // A08.4: the GEM gives ICD-9 0088, the xref of DOID:20 (no definition).
  CHECK(paper[1].routes == "gem");
  CHECK(paper[1].terms == std::vector<std::string>{"DOID:20"});
  CHECK_FALSE(paper[1].has_definition);
  CHECK(paper[1].key == "viral gastroenteritis stomach flu");
  // R50.9: only an obsolete term and a no-map GEM row: the long title is the page.
  CHECK(paper[2].terms.empty());
  CHECK(paper[2].key == "Fever, unspecified");
  // Z99.9: nothing at all.
  CHECK(paper[3].key.empty());
  CHECK(paper[3].value == "Z999");

  const std::vector<KbPage> k1 = build_kb_pages(s, codes, KbVariant::k1);
  CHECK(k1[0].key ==
        "Noninfective gastroenteritis and colitis, unspecified Other noninfective "
        "gastroenteritis and colitis");
  const std::vector<KbPage> k2 = build_kb_pages(s, codes, KbVariant::k2);
  CHECK(k2[0].key == k1[0].key +
                         " gastroenteritis An inflammation of the stomach and "
                         "intestines. gastro diarrhea");
  CHECK(k2[0].words.at("symptoms") == 1);
  const std::vector<KbPage> k3 = build_kb_pages(s, codes, KbVariant::k3);
  // + the category's other code (K52.1) and DOID:10's parent's definition.
  CHECK(k3[0].key == k2[0].key +
                         " Toxic gastroenteritis and colitis A disease is a \"disposition\" to "
                         "undergo pathological processes.");
  // DOID:20's ancestors: DOID:10 then DOID:4.
  CHECK(k3[1].words.at("ancestors") == 7 + 9);

  const KbCoverage c = kb_coverage(paper);
  CHECK(c.labels == 4);
  CHECK(c.with_title == 3);
  CHECK(c.with_term == 2);
  CHECK(c.with_definition == 1);
  CHECK(c.without_entry == 1);
  CHECK(c.by_route.at("xref") == 1);
  CHECK(c.by_route.at("map") == 1);
  CHECK(c.by_route.at("gem") == 1);
  CHECK(c.max_words == 9);
  CHECK(c.median_words == doctest::Approx(3));  // 0, 2, 4, 9
  CHECK(format_kb_coverage(c, "LS").find("4 labels, 3 with an ICD-10 title") != std::string::npos);
}

TEST_CASE("kb: the real Disease Ontology and ICD tables, counted" *
          doctest::test_suite(test::kSharedData)) {
  if (!test::shared_data_present(test::shared_path("data/disease-ontology")) ||
      !test::shared_data_present(test::shared_path("data/icd-code-tables")))
    return;
  const KbSources s = read_kb_sources(test::shared_path("data/disease-ontology"),
                                      test::shared_path("data/icd-code-tables"));
  // disease-ontology/SOURCE.md: 9,344 [Term] stanzas, 6,971 live, 2,765 live with a definition.
  int64_t live = 0, defined = 0;
  for (const OboTerm& t : s.ontology.terms) {
    live += !t.obsolete;
    defined += !t.obsolete && !t.def.empty();
  }
  CHECK(s.ontology.terms.size() == 9344);
  CHECK(s.ontology.alt_id_conflicts == 3);  // e.g. DOID:13628, also DOID:2862's alt_id
  CHECK(live == 6971);
  CHECK(defined == 2765);
  CHECK(s.icd10_in_do.size() == 3571);
  CHECK(s.map_rows_missing_term == 1115);  // the 2026 report names terms newer than 2016
  CHECK(s.titles.size() == 95358);
  int64_t pairs = 0;
  for (const auto& [doid, list] : s.symptoms) pairs += int64_t(list.size());
  CHECK(pairs == 2222);
}
