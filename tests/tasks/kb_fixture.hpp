// Hand-made knowledge-base files for tests: a small doid.obo, ICD10inDO.tsv, disease-symptom.tsv
// and the gzipped ICD-10-CM titles and GEM tables, written into a temporary folder
// (kb/ and icd/), as tasks/clinical_kb.hpp reads them.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "tasks/clinical_kb.hpp"
#include "tests/tasks/physionet_fixture.hpp"
#include "tests/test_util.hpp"

namespace memgrad::test {

// Four terms: a root with a definition, a child linked to K52 by xref, a grandchild linked by an
// ICD-9 xref (reached through the GEM), an obsolete term with an ICD-10 xref, and a Typedef.
inline const char* kObo = R"(format-version: 1.2
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

inline const char* kMap =
    "id\tlabel\txrefs\n\"DOID:10\"\t\"gastroenteritis\"\t\"ICD10CM:K52.9\"\n"
    "\"DOID:999\"\t\"newer\"\t\"ICD10CM:A00\"\n";
inline const char* kSymptoms =
    "disease_id\tdisease_label\tsymptom_id\tsymptom_label\nDOID:10\tgastroenteritis\tSYMP:1\t"
    "diarrhea\n";
inline const char* kTitles =
    "code,billable,short,long\nK52,0,Oth noninfective gastro-enteritis and colitis,\"Other "
    "noninfective gastroenteritis and colitis\"\nK529,1,\"Noninfective gastroenteritis, unsp\","
    "\"Noninfective gastroenteritis and colitis, unspecified\"\nK521,1,Toxic gastroenteritis,"
    "Toxic gastroenteritis and colitis\nA084,1,Viral intestinal infection,\"Viral intestinal "
    "infection, unspecified\"\nR509,1,\"Fever, unspecified\",\"Fever, unspecified\"\n";
inline const char* kGem = "icd_9,icd_10,flags\n0088,A084,10000\n7806,R509,11000\n";

struct KbFixture {
  TempDir dir;
  KbFixture() {
    dir.write("kb/doid.obo", kObo);
    dir.write("kb/ICD10inDO.tsv", kMap);
    dir.write("kb/disease-symptom.tsv", kSymptoms);
    std::filesystem::create_directories(dir.path / "icd");
    physionet::write_gz((dir.path / "icd/icd10cm-order-Jan-2021.csv.gz").string(), kTitles);
    physionet::write_gz((dir.path / "icd/icd_cm_9_to_10_mapping.csv.gz").string(), kGem);
  }
  KbSources read() const {
    return read_kb_sources((dir.path / "kb").string(), (dir.path / "icd").string());
  }
};

// A tiny CodiEsp folder (notes/) for task codiesp-kb on the fixture knowledge base: four
// training notes coded with K52.9 (gastroenteritis), R50.9 (fever) and A08.4, two dev and two
// test notes.
inline void write_kb_notes(const TempDir& dir) {
  dir.write("notes/train/text_files_en/a.txt", "Stomach inflammation and fever.\n");
  dir.write("notes/train/text_files_en/b.txt", "Fever, fever and diarrhea.\n");
  dir.write("notes/train/text_files_en/c.txt", "Viral stomach infection with fever.\n");
  dir.write("notes/train/text_files_en/d.txt", "Inflammation of the intestines.\n");
  dir.write("notes/train/trainD.tsv",
            "a\tk52.9\na\tr50.9\nb\tr50.9\nc\ta08.4\nc\tr50.9\nd\tk52.9\n");
  dir.write("notes/dev/text_files_en/e.txt", "Fever and stomach pain.\n");
  dir.write("notes/dev/text_files_en/f.txt", "Intestines inflammation.\n");
  dir.write("notes/dev/devD.tsv", "e\tr50.9\nf\tk52.9\n");
  dir.write("notes/test/text_files_en/g.txt", "Fever.\n");
  dir.write("notes/test/text_files_en/h.txt", "Stomach infection.\n");
  dir.write("notes/test/testD.tsv", "g\tr50.9\nh\ta08.4\n");
}

// The words of `memgrad train` for a tiny knowledge-base model on those notes (write_kb_notes)
// and the fixture's knowledge base: 8-dimensional embeddings, batches of 2 (two steps an epoch).
inline std::vector<std::string> kb_train_words(const TempDir& dir, const std::string& out,
                                               const std::string& model, int hops, int epochs) {
  const std::string icd = (dir.path / "icd").string();
  return {"--task",          "codiesp-kb",
          "--data",          (dir.path / "notes").string(),
          "--kb-dir",        (dir.path / "kb").string(),
          "--icd-dir",       icd,
          "--titles",        icd + "/icd10cm-order-Jan-2021.csv.gz",
          "--top-k",         "3",
          "--min-count",     "1",
          "--model",         model,
          "--hops",          std::to_string(hops),
          "--embedding-dim", "8",
          "--gate-hidden",   "4",
          "--batch",         "2",
          "--epochs",        std::to_string(epochs),
          "--out",           out,
          "--quiet"};
}

}  // namespace memgrad::test
