// CodiEsp (CLEF eHealth 2020; ../shared/data/codiesp/SOURCE.md): clinical case reports coded with
// ICD-10-CM diagnoses and ICD-10-PCS procedures, read as distributed, and turned into multi-label
// batches. The text pipeline every text model shares (task `codiesp`, tasks/codiesp_task.cpp).
//
// Interface (stable; the knowledge-base task builds on it):
//   Corpus c = load({.data_dir = ..., .language = "en"});    // train / dev / test Documents
//   LabelSet ls = make_label_set(c, {.kind = "top", .top_k = 50});  // from train only
//   Encoded e = encode(c, ls, {.min_count = 2, ...});        // tokens -> ids, labels -> 0/1
//   fill_batch(e.split("train"), L, rows, max_length, dtype, batch);  // packed, longest first
//   e.vocab (text::Vocabulary), e.labels (LabelSet), e.splits[i].docs[j].{id, ids, labels}
//
// Files, in DIR or DIR/final_dataset_v4_to_publish:
//   {train,dev,test}/text_files_en/<id>.txt  English text (language "es": text_files/)
//   {train,dev,test}/{split}D.tsv            <id> TAB <ICD-10-CM code, lower case, dotted>
//   {train,dev,test}/{split}P.tsv            <id> TAB <ICD-10-PCS code> (read with procedures)
// Bad input is an Error naming the file (and line): a row for a document without a text file, a
// row without exactly two fields, a malformed code, a text that is not UTF-8 or has control
// characters, an empty text, a split folder without texts.
//
// Label sets (make_label_set), always counted in documents of the training split:
//   "top"       the top_k most frequent codes (ties by code), e.g. 50 (LS-50) or 100;
//   "min_docs"  every code of at least min_docs training documents;
//   "extended"  each code extended with its ancestors (ICD-10 prefixes from the 3-character
//               category on, "i10" -> "i", "i10"; "s72.001a" -> "s", "s72", "s72.0", ...,
//               "s72.001a": the chapter letter and every longer prefix), then the labels of at
//               least min_docs training documents (the GRNN paper's "extend with parents", made
//               ICD-10);
// and codes read as their 3-character categories first with `categories`; procedures added to
// the diagnoses with `procedures`.
//
// Batches (fill_batch): rows sorted longest first, so that a recurrent model packs its state to
// the rows still stepping (layers::RetiringRows) and spends nothing on padding:
//   tokens       [B, T]  word ids (Vocabulary: 0 = padding, 1 = <unk>), T = the longest row
//   tokens_mask  [B, T]  1 on the words of each row (a prefix)
//   labels       [B, L]  0/1, one column per label of the label set
//   doc_index    [B]     each row's document index in its split
// A document longer than max_length (> 0) is cut to its first max_length words.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/batch.hpp"
#include "tasks/text_tokens.hpp"

namespace memgrad::codiesp {

inline constexpr const char* kSplits[] = {"train", "dev", "test"};

struct Document {
  std::string id;                       // articleID, e.g. "S0004-06142005000700014-1"
  std::string path;                     // its text file
  std::string text;                     // as in the file
  std::vector<std::string> diagnoses;   // distinct codes, in file order
  std::vector<std::string> procedures;  // distinct codes, in file order (empty unless read)
};

struct Split {
  std::string name;            // "train", "dev" or "test"
  std::vector<Document> docs;  // sorted by id
  int64_t diagnosis_rows = 0;  // rows of {split}D.tsv (duplicates included)
  int64_t procedure_rows = 0;  // rows of {split}P.tsv (0 unless read)
};

struct LoadOptions {
  std::string data_dir = "../shared/data/codiesp";
  std::string language = "en";  // "en": text_files_en; "es": text_files (the Spanish originals)
  bool procedures = false;      // read {split}P.tsv as well
};

struct Corpus {
  std::string root;                                   // the folder holding train/, dev/, test/
  std::vector<Split> splits;                          // train, dev, test
  const Split& split(const std::string& name) const;  // an Error for another name
};

// Reads the three splits. Errors as the header says.
Corpus load(const LoadOptions& options);
// One split from its folder (`root`/`name`), for tests and the fuzz target.
Split load_split(const std::string& root, const std::string& name, const LoadOptions& options);

// Whether `code` is an ICD-10-CM code as CodiEsp writes it: a lower-case letter, a digit, a
// letter or digit, then optionally '.' and 1-4 letters or digits ("n44.8", "z20.818", "c64.9").
bool valid_diagnosis_code(const std::string& code);
// ICD-10-PCS: 7 lower-case letters or digits ("bw03zzz"), or the first 4 of them ("bn20": CodiEsp
// gives 1,723 of its 3,246 procedure rows so).
bool valid_procedure_code(const std::string& code);
// "s72.001a" -> {"s", "s72", "s72.0", "s72.00", "s72.001", "s72.001a"}.
std::vector<std::string> ancestors(const std::string& code);

struct LabelOptions {
  std::string kind = "top";  // "top", "min_docs" or "extended"
  int64_t top_k = 50;
  int64_t min_docs = 5;     // "min_docs" and "extended"
  bool categories = false;  // codes cut to their 3-character category first
  bool procedures = false;  // procedure codes are labels too (load with procedures)
};

struct LabelSet {
  LabelOptions options;
  std::vector<std::string> codes;                // label l's code
  std::vector<int64_t> train_docs;               // label l's number of training documents
  int64_t index(const std::string& code) const;  // -1 when not a label
  // The labels of a document (sorted label indices), under the options' mapping.
  std::vector<int64_t> of(const Document& doc) const;
};

// The document's codes under the options (categories, procedures, ancestors), distinct, sorted.
std::vector<std::string> document_codes(const Document& doc, const LabelOptions& options);
LabelSet make_label_set(const Corpus& corpus, const LabelOptions& options);

struct EncodeOptions {
  text::TokenOptions tokens;
  int64_t min_count = 2;  // vocabulary: training words seen at least this often
};

struct EncodedDoc {
  std::vector<int64_t> ids;     // word ids (never empty)
  std::vector<int64_t> labels;  // label indices, sorted
};
struct EncodedSplit {
  std::string name;
  std::vector<EncodedDoc> docs;  // in the Split's order
};
struct Encoded {
  text::Vocabulary vocab;
  LabelSet labels;
  std::vector<EncodedSplit> splits;  // train, dev, test
  const EncodedSplit& split(const std::string& name) const;
};

// Tokenises every document, builds the vocabulary on train only and encodes all splits. An Error
// names the file of a document with no word left after tokenising.
Encoded encode(const Corpus& corpus, const LabelSet& labels, const EncodeOptions& options);

// A batch of the documents `rows` of `split` (any order; the batch holds them longest first), each
// cut to max_length words when max_length > 0. Fields as the header says.
void fill_batch(const EncodedSplit& split, int64_t labels, std::span<const int64_t> rows,
                int64_t max_length, DType dtype, Batch& batch);

}  // namespace memgrad::codiesp
