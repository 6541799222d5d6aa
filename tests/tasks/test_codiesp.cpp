// The CodiEsp pipeline on small files written here: tokeniser, stop words, vocabulary, the loader
// and its file:line errors, label sets (top-k, min_docs, extended, categories), packed batches,
// and the `codiesp` task (curriculum, evaluation with a perfect and a constant predictor). The
// real data's counted facts: tests/tasks/test_codiesp_real.cpp.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tasks/codiesp.hpp"
#include "tasks/icd_titles.hpp"
#include "tasks/task.hpp"
#include "tasks/text_tokens.hpp"
#include "tests/test_util.hpp"

using namespace memgrad;
using memgrad::test::error_of;
using memgrad::test::TempDir;

namespace {

// Three splits of CodiEsp's layout. train: 4 notes; dev and test: 2 each.
void write_fixture(const TempDir& dir) {
  dir.write("train/text_files_en/a.txt",
            "A 37-year-old man with fever of 40 C.\nHe had diabetes and hypertension.\n");
  dir.write("train/text_files_en/b.txt", "Fever and cough.\nDiabetes mellitus type 2.\n");
  dir.write("train/text_files_en/c.txt", "Hypertension, no fever.\n");
  dir.write("train/text_files_en/d.txt", "Fracture of the femur after a fall.\n");
  dir.write("train/trainD.tsv",
            "a\tr50.9\na\te11.9\na\ti10\nb\tr50.9\nb\te11.9\nb\tr05\nc\ti10\nc\tr50.9\n"
            "d\ts72.001a\na\tr50.9\n");
  dir.write("train/trainP.tsv", "d\t0qs604z\n");
  dir.write("dev/text_files_en/e.txt", "Fever with cough.\n");
  dir.write("dev/text_files_en/f.txt", "Hypertension and diabetes.\n");
  dir.write("dev/devD.tsv", "e\tr50.9\ne\tr05\nf\ti10\nf\te11.9\n");
  dir.write("dev/devP.tsv", "e\tbw03\n");
  dir.write("test/testP.tsv", "");
  dir.write("test/text_files_en/g.txt", "Diabetes, fever and a cough for 3 days.\n");
  dir.write("test/text_files_en/h.txt", "Hypertension.\n");
  dir.write("test/testD.tsv", "g\te11.9\ng\tr50.9\ng\tr05\nh\ti10\n");
}

codiesp::LoadOptions options(const TempDir& dir) {
  codiesp::LoadOptions o;
  o.data_dir = dir.path.string();
  return o;
}

}  // namespace

TEST_CASE("codiesp tokeniser: lower case, numbers folded, punctuation split, stop words") {
  text::TokenOptions o;
  CHECK(text::tokenize("A 37-year-old man, BP 120/80; caf\xc3\xa9 b12.", o) ==
        std::vector<std::string>{"<num>", "year", "old", "man", "bp", "<num>", "<num>", "caf",
                                 "b12"});
  o.keep_punctuation = true;
  o.drop_stop_words = false;
  o.fold_numbers = false;
  CHECK(
      text::tokenize("The 37-year-old; caf\xc3\xa9.", o) ==
      std::vector<std::string>{"the", "37", "-", "year", "-", "old", ";", "caf", "\xc3\xa9", "."});
  CHECK(text::tokenize(" \n\t", o).empty());
  CHECK(text::stop_words().count("the") == 1);
  CHECK(text::stop_words().count("no") == 0);  // negation kept
  CHECK(text::stop_words().size() >= 140);
}

TEST_CASE("codiesp vocabulary: train counts, min_count, <pad> and <unk>") {
  const text::Vocabulary v =
      text::Vocabulary::build({{"fever", "cough", "fever"}, {"cough", "fever", "rash"}}, 2);
  CHECK(v.size() == 4);
  CHECK(v.word(0) == "<pad>");
  CHECK(v.word(1) == "<unk>");
  CHECK(v.id("fever") == 2);  // 3 occurrences
  CHECK(v.id("cough") == 3);  // 2
  CHECK(v.id("rash") == text::Vocabulary::kUnk);
  CHECK(v.encode({"cough", "zzz"}) == std::vector<int64_t>{3, 1});
  CHECK(error_of([&] { (void)v.word(4); }).find("out of range") != std::string::npos);
  CHECK(error_of([] { (void)text::Vocabulary::build({}, 0); }).find("min_count") !=
        std::string::npos);
}

TEST_CASE("codiesp loader: documents, distinct codes, procedures") {
  TempDir dir;
  write_fixture(dir);
  codiesp::LoadOptions o = options(dir);
  o.procedures = true;
  const codiesp::Corpus c = codiesp::load(o);
  const codiesp::Split& train = c.split("train");
  REQUIRE(train.docs.size() == 4);
  CHECK(train.docs[0].id == "a");
  CHECK(train.docs[0].diagnoses == std::vector<std::string>{"r50.9", "e11.9", "i10"});  // dup once
  CHECK(train.diagnosis_rows == 10);
  CHECK(train.docs[3].procedures == std::vector<std::string>{"0qs604z"});
  CHECK(c.split("test").docs.size() == 2);
  CHECK(error_of([&] { (void)c.split("valid"); }).find("no split") != std::string::npos);
  CHECK(codiesp::valid_diagnosis_code("z20.818"));
  CHECK(codiesp::valid_diagnosis_code("r05"));
  CHECK_FALSE(codiesp::valid_diagnosis_code("R05"));
  CHECK_FALSE(codiesp::valid_diagnosis_code("r05."));
  CHECK_FALSE(codiesp::valid_diagnosis_code("5r0"));
  CHECK_FALSE(codiesp::valid_diagnosis_code("r05.12345"));
  CHECK(codiesp::valid_procedure_code("bw03zzz"));
  CHECK(codiesp::valid_procedure_code("bn20"));
  CHECK_FALSE(codiesp::valid_procedure_code("bw03zz"));
  CHECK(codiesp::ancestors("s72.001a") ==
        std::vector<std::string>{"s", "s72", "s72.0", "s72.00", "s72.001", "s72.001a"});
  CHECK(codiesp::ancestors("i10") == std::vector<std::string>{"i", "i10"});
}

TEST_CASE("codiesp loader: bad input names the file and line") {
  auto error_with = [](const std::string& rel, const std::string& text) {
    TempDir dir;
    write_fixture(dir);
    dir.write(rel, text);
    return error_of([&] { (void)codiesp::load(options(dir)); });
  };
  std::string e = error_with("dev/devD.tsv", "e\tr50.9\nzz\tr05\n");
  CHECK(e.find("devD.tsv:2: document 'zz' has no text file") != std::string::npos);
  e = error_with("dev/devD.tsv", "e\tR50.9\n");
  CHECK(e.find("devD.tsv:1: malformed ICD-10-CM code 'R50.9'") != std::string::npos);
  e = error_with("dev/devD.tsv", "e r50.9\n");
  CHECK(e.find("devD.tsv:1: expected two tab-separated fields") != std::string::npos);
  e = error_with("dev/devD.tsv", "e\tr50.9\tx\n");
  CHECK(e.find("devD.tsv:1: expected two") != std::string::npos);
  e = error_with("test/text_files_en/h.txt", "Fine line.\nCaf\xe9.\n");
  CHECK(e.find("h.txt:2: column 4: byte 0xe9") != std::string::npos);
  e = error_with("test/text_files_en/h.txt", " \n\n");
  CHECK(e.find("h.txt: empty document") != std::string::npos);
  TempDir empty;
  CHECK(error_of([&] { (void)codiesp::load(options(empty)); }).find("no such folder") !=
        std::string::npos);
  // Nothing but stop words: no word left to read.
  TempDir dir;
  write_fixture(dir);
  dir.write("test/text_files_en/h.txt", "The and of.\n");
  const codiesp::Corpus c = codiesp::load(options(dir));
  const codiesp::LabelSet ls = codiesp::make_label_set(c, {});
  CHECK(error_of([&] { (void)codiesp::encode(c, ls, {}); }).find("h.txt: no words left") !=
        std::string::npos);
}

TEST_CASE("codiesp label sets: top-k, min_docs, extended, categories") {
  TempDir dir;
  write_fixture(dir);
  const codiesp::Corpus c = codiesp::load(options(dir));
  codiesp::LabelOptions o;
  o.top_k = 2;  // r50.9: 3 docs; e11.9, i10: 2 each (tie by code: e11.9 first)
  codiesp::LabelSet ls = codiesp::make_label_set(c, o);
  CHECK(ls.codes == std::vector<std::string>{"r50.9", "e11.9"});
  CHECK(ls.train_docs == std::vector<int64_t>{3, 2});
  CHECK(ls.of(c.split("test").docs[0]) == std::vector<int64_t>{0, 1});
  CHECK(ls.of(c.split("test").docs[1]).empty());
  o.kind = "min_docs";
  o.min_docs = 2;
  CHECK(codiesp::make_label_set(c, o).codes == std::vector<std::string>{"r50.9", "e11.9", "i10"});
  o.kind = "extended";  // adds the prefixes: r, r50, e, e11, i (and i10)
  ls = codiesp::make_label_set(c, o);
  CHECK(ls.codes == std::vector<std::string>{"r", "r50", "r50.9", "e", "e11", "e11.9", "i", "i10"});
  CHECK(ls.train_docs[0] == 3);
  o.kind = "top";
  o.top_k = 1;
  o.categories = true;  // r50 and r05 merge at "r" only with extended; here r50: 3 docs
  CHECK(codiesp::make_label_set(c, o).codes == std::vector<std::string>{"r50"});
  o.kind = "nope";
  CHECK(error_of([&] { (void)codiesp::make_label_set(c, o); }).find("label set must be") !=
        std::string::npos);
}

TEST_CASE("codiesp batches: longest first, prefix masks, truncation, labels") {
  TempDir dir;
  write_fixture(dir);
  const codiesp::Corpus c = codiesp::load(options(dir));
  codiesp::LabelOptions lo;
  lo.top_k = 3;
  codiesp::EncodeOptions eo;
  eo.min_count = 1;
  const codiesp::Encoded e = codiesp::encode(c, codiesp::make_label_set(c, lo), eo);
  const codiesp::EncodedSplit& train = e.split("train");
  // a: "<num> year old man fever <num> c diabetes hypertension" = 9 words; c: "hypertension no
  // fever" = 3.
  REQUIRE(train.docs[0].ids.size() == 9);
  REQUIRE(train.docs[2].ids.size() == 3);
  Batch batch;
  const int64_t rows[] = {2, 0};
  codiesp::fill_batch(train, 3, rows, 0, DType::f32, batch);
  CHECK(batch.size == 2);
  CHECK(batch.get("tokens").shape() == Shape{2, 9});
  CHECK(batch.get("doc_index").to_vector() == std::vector<double>{0, 2});  // a first
  const std::vector<double> m = batch.get("tokens_mask").to_vector();
  CHECK(m[9 + 2] == 1);
  CHECK(m[9 + 3] == 0);
  CHECK(batch.get("tokens").at(9 + 3) == 0);  // padding id
  CHECK(batch.get("tokens").at(9) == double(e.vocab.id("hypertension")));
  // labels: r50.9, e11.9, i10; a has all three, c has r50.9 and i10.
  CHECK(batch.get("labels").to_vector() == std::vector<double>{1, 1, 1, 1, 0, 1});
  codiesp::fill_batch(train, 3, rows, 4, DType::f64, batch);
  CHECK(batch.get("tokens").shape() == Shape{2, 4});
  CHECK(batch.get("tokens_mask").to_vector() == std::vector<double>{1, 1, 1, 1, 1, 1, 1, 0});
  const int64_t bad[] = {7};
  CHECK(error_of([&] {
          codiesp::fill_batch(train, 3, bad, 0, DType::f32, batch);
        }).find("out of range") != std::string::npos);
}

TEST_CASE("codiesp task: dimensions, curriculum, evaluation") {
  TempDir dir;
  write_fixture(dir);
  const auto task = create_task("codiesp", {{"data_dir", dir.path.string()},
                                            {"titles", ""},
                                            {"top_k", 3},
                                            {"min_count", 1},
                                            {"curriculum_start", 2},
                                            {"curriculum_growth", 1.5}});
  CHECK(task->model_dims().at("labels") == 3);
  CHECK(task->steps_per_epoch(2) == 2);
  Batch b;
  task->train_batch(0, 2, DType::f32, b);  // epoch 0: at most 2 words
  CHECK(b.get("tokens").dim(1) == 2);
  task->train_batch(2, 2, DType::f32, b);  // epoch 1: 3 (every note has 3 words or more)
  CHECK(b.get("tokens").dim(1) == 3);
  task->largest_train_batch(2, DType::f32, b);  // full length
  CHECK(b.get("tokens").dim(1) == 9);
  CHECK(task->validation_batches(1) == 2);
  // A perfect predictor: the gold labels as logits +-5.
  const Predictor perfect = [](const Batch& batch) {
    Tensor t = batch.get("labels").clone();
    for (int64_t i = 0; i < t.numel(); ++i) t.set(i, t.at(i) > 0 ? 5.0 : -5.0);
    return t;
  };
  nlohmann::json m = task->evaluate(perfect, 1, DType::f64);
  CHECK(m.at("auc_roc_micro") == 1.0);
  CHECK(m.at("auc_pr_micro") == 1.0);
  CHECK(m.at("f1_micro") == 1.0);
  CHECK(m.at("r_at_8") == 1.0);
  CHECK(m.at("p_at_8") == doctest::Approx((2 + 1) / 16.0));  // g: 2 gold of 3 labels, h: 1
  CHECK(m.at("dev").at("auc_roc_macro") == 1.0);
  CHECK(task->format_metrics(m).find("CodiEsp") != std::string::npos);
  // Per test label (the GRNN paper's Fig. 3 left): code, training documents, test positives
  // (3 in all: g has 2 gold labels, h 1), AUC-PR 1 where a positive exists, null where none.
  const nlohmann::json& per = m.at("per_label");
  REQUIRE(per.at("code").size() == 3);
  CHECK(per.at("train_docs").size() == 3);
  CHECK(per.at("train_docs").at(0).get<int64_t>() >= per.at("train_docs").at(2).get<int64_t>());
  int64_t positives = 0;
  for (size_t l = 0; l < 3; ++l) {
    const int64_t p = per.at("positives").at(l).get<int64_t>();
    positives += p;
    CHECK(per.at("auc_pr").at(l) == (p > 0 ? nlohmann::json(1.0) : nlohmann::json(nullptr)));
  }
  CHECK(positives == 3);
  CHECK_FALSE(m.at("dev").contains("per_label"));
  const Predictor constant = [](const Batch& batch) {
    return Tensor::zeros(Shape{batch.size, 3}, DType::f64);
  };
  m = task->evaluate(constant, 2, DType::f64);
  CHECK(m.at("auc_roc_micro") == 0.5);
  const Predictor wrong = [](const Batch& batch) {
    return Tensor::zeros(Shape{batch.size, 2}, DType::f64);
  };
  CHECK(error_of([&] {
          (void)task->evaluate(wrong, 2, DType::f64);
        }).find("predictions must be logits") != std::string::npos);
  task->text_example("g", DType::f32, b);
  const auto lines = task->describe_example(b, perfect(b));
  CHECK(lines[0].second.find("g (test") == 0);
  CHECK(lines[2].second.find("(gold)") != std::string::npos);
  // The label positions a figure reads (grnn-fig4): the gold label of "g" and the top 3 labels.
  REQUIRE(lines.size() >= 2);
  CHECK(lines[lines.size() - 2].first == "gold label indices");
  CHECK(lines.back().first == "predicted label indices");
  CHECK(lines.back().second.size() == 5);  // three indices, e.g. "0 1 2"
  CHECK(error_of([&] { task->text_example("zz", DType::f32, b); }).find("no document") !=
        std::string::npos);
}

TEST_CASE("icd titles: CSV with quoted fields, dotted lower-case codes") {
  TempDir dir;
  const std::string path = dir.write("t.csv",
                                     "code,billable,short,long\nA00,0,Cholera,Cholera\nA000,1,"
                                     "\"Cholera, vibrio\",\"Long, one\"\n");
  const auto titles = icd::read_icd10cm_titles(path);
  REQUIRE(titles.size() == 2);
  CHECK(titles.at("a00.0").short_title == "Cholera, vibrio");
  CHECK(titles.at("a00").long_title == "Cholera");
  dir.write("t.csv", "code,billable,short,long\nA00,0,\"Chol\n");
  CHECK(error_of([&] { (void)icd::read_icd10cm_titles(path); }).find("t.csv:2:") !=
        std::string::npos);
}
