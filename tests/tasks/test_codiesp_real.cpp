// The counted facts of the real CodiEsp data (SOURCE.md; planning notes P5 section 2): documents,
// annotation rows and distinct codes per split, codes per document, note lengths, the train
// vocabulary, and the label sets LS-50, LS-100, LS-ext (606) and the 3-character top 50.
// Skipped (ctest entry tasks_shared_data) when ../shared/data/codiesp is absent.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "tasks/codiesp.hpp"
#include "tasks/icd_titles.hpp"
#include "tests/test_util.hpp"

using namespace memgrad;

namespace {
const std::string kCodiespDir = memgrad::test::shared_path("data/codiesp");

double per_doc(const codiesp::Split& s, const codiesp::LabelSet& ls) {
  int64_t n = 0;
  for (const auto& d : s.docs) n += int64_t(ls.of(d).size());
  return double(n) / double(s.docs.size());
}
int64_t docs_with_label(const codiesp::Split& s, const codiesp::LabelSet& ls) {
  int64_t n = 0;
  for (const auto& d : s.docs) n += ls.of(d).empty() ? 0 : 1;
  return n;
}
}  // namespace

TEST_CASE("codiesp real data: splits, codes, lengths, vocabulary, label sets" *
          doctest::test_suite(memgrad::test::kSharedData)) {
  if (!memgrad::test::shared_data_present(kCodiespDir)) return;
  codiesp::LoadOptions o;
  o.data_dir = kCodiespDir;
  o.procedures = true;
  const codiesp::Corpus c = codiesp::load(o);
  const int64_t docs[] = {500, 250, 250}, rows[] = {5639, 2677, 2842},
                distinct[] = {1767, 1158, 1143}, p_rows[] = {1550, 817, 879};
  const double codes_per_doc[] = {11.3, 10.7, 11.4};
  std::set<std::string> all;
  for (size_t s = 0; s < 3; ++s) {
    const codiesp::Split& split = c.splits[s];
    INFO(split.name);
    CHECK(int64_t(split.docs.size()) == docs[s]);
    CHECK(split.diagnosis_rows == rows[s]);
    CHECK(split.procedure_rows == p_rows[s]);
    std::set<std::string> codes;
    int64_t n = 0;
    for (const auto& d : split.docs) {
      CHECK(!d.diagnoses.empty());  // every note has a diagnosis
      codes.insert(d.diagnoses.begin(), d.diagnoses.end());
      n += int64_t(d.diagnoses.size());
    }
    all.insert(codes.begin(), codes.end());
    CHECK(int64_t(codes.size()) == distinct[s]);
    CHECK(double(n) / double(docs[s]) == doctest::Approx(codes_per_doc[s]).epsilon(0.005));
  }
  CHECK(all.size() == 2557);

  // Lengths in whitespace-separated words (SOURCE.md: 148,833 English words in train).
  const codiesp::Split& train = c.split("train");
  std::vector<int64_t> len;
  int64_t words = 0;
  for (const auto& d : train.docs) {
    std::istringstream in(d.text);
    std::string w;
    int64_t k = 0;
    while (in >> w) ++k;
    len.push_back(k);
    words += k;
  }
  std::sort(len.begin(), len.end());
  CHECK(words == 148833);
  CHECK(len.back() == 955);
  CHECK(len[len.size() / 2] == 274);  // the upper median; both middle values are 274
  CHECK(len[size_t(0.9 * double(len.size()))] == 485);

  // Vocabulary: the runs [a-z0-9]+ of the lower-cased train notes (the notes call them
  // "alphabetic tokens", but their counts are those of letters and digits: 153,945 tokens,
  // 11,804 types, 6,421 seen twice or more, 4,635 three times).
  text::TokenOptions raw;
  raw.fold_numbers = false;
  raw.drop_stop_words = false;
  std::map<std::string, int64_t> counts;
  int64_t tokens = 0;
  for (const auto& d : train.docs)
    for (const auto& t : text::tokenize(d.text, raw)) ++counts[t], ++tokens;
  CHECK(tokens == 153945);
  CHECK(counts.size() == 11804);
  int64_t two = 0, three = 0;
  for (const auto& [w, n] : counts) two += n >= 2, three += n >= 3;
  CHECK(two == 6421);
  CHECK(three == 4635);
  std::vector<std::vector<std::string>> docs_tokens;
  for (const auto& d : train.docs) docs_tokens.push_back(text::tokenize(d.text, raw));
  CHECK(text::Vocabulary::build(docs_tokens, 2).size() == 6421 + 2);

  // LS-50: the 50th code has 15 training documents; 440 / 207 / 227 notes have one of the
  // labels, 3.42 / 2.88 / 3.24 per note.
  codiesp::LabelOptions lo;
  const codiesp::LabelSet ls50 = codiesp::make_label_set(c, lo);
  REQUIRE(ls50.codes.size() == 50);
  CHECK(ls50.train_docs.back() == 15);
  const int64_t with50[] = {440, 207, 227};
  const double per50[] = {3.42, 2.88, 3.24};
  for (size_t s = 0; s < 3; ++s) {
    CHECK(docs_with_label(c.splits[s], ls50) == with50[s]);
    CHECK(per_doc(c.splits[s], ls50) == doctest::Approx(per50[s]).epsilon(0.002));
  }
  lo.top_k = 100;
  const codiesp::LabelSet ls100 = codiesp::make_label_set(c, lo);
  CHECK(ls100.train_docs.back() == 10);
  // The notes count 464 notes with an LS-100 label; which codes of 10 documents make the top 100
  // depends on how ties are broken, and ours (by code) gives 462.
  CHECK(docs_with_label(train, ls100) == 462);
  // LS-ext: 3,206 extended labels in train, 606 with 5 documents or more, 29.0 per note.
  lo.kind = "extended";
  lo.min_docs = 1;
  const codiesp::LabelSet ext_all = codiesp::make_label_set(c, lo);
  CHECK(ext_all.codes.size() == 3206);
  CHECK(per_doc(train, ext_all) == doctest::Approx(29.04).epsilon(0.001));
  lo.min_docs = 5;
  CHECK(codiesp::make_label_set(c, lo).codes.size() == 606);
  lo.min_docs = 2;
  CHECK(codiesp::make_label_set(c, lo).codes.size() == 1597);
  // Top-50 3-character categories: the 50th has 20 training documents.
  lo.kind = "top";
  lo.top_k = 50;
  lo.categories = true;
  const codiesp::LabelSet cat = codiesp::make_label_set(c, lo);
  CHECK(cat.train_docs.back() == 20);
  CHECK(docs_with_label(train, cat) == 460);

  // Every LS-50 code has a title in the ICD-10-CM order file.
  const std::string titles =
      memgrad::test::shared_path("data/icd-code-tables/icd10cm-order-Jan-2021.csv.gz");
  const auto t = icd::read_icd10cm_titles(titles);
  int64_t found = 0;
  for (const auto& code : ls50.codes) found += t.count(code);
  CHECK(found == 50);
}
