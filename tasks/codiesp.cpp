// CodiEsp loader, label sets, encoding and batches (see codiesp.hpp).
#include "tasks/codiesp.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "engine/error.hpp"
#include "engine/quote.hpp"
#include "engine/utf8.hpp"

namespace memgrad::codiesp {
namespace fs = std::filesystem;
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  MG_CHECK(in, path, ": cannot read");
  std::ostringstream s;
  s << in.rdbuf();
  MG_CHECK(!in.bad(), path, ": read error");
  return s.str();
}

// Each line of `text` (a trailing CR allowed) must be text: UTF-8 without control characters.
void check_text(const std::string& text, const std::string& path) {
  size_t start = 0, line = 1;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string_view l(text.data() + start, end - start);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    const size_t bad = first_non_text_byte(l);
    MG_CHECK(bad == std::string_view::npos, path, ":", line, ": ", describe_non_text_byte(l, bad));
    start = end + 1;
    ++line;
  }
}

bool alnum_lower(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// Reads {split}D.tsv or {split}P.tsv into the documents' code lists (distinct, in file order).
// Returns the number of rows.
int64_t read_codes(const std::string& path, Split& split, bool diagnoses) {
  const std::string text = read_file(path);
  check_text(text, path);
  std::map<std::string, size_t> by_id;
  for (size_t i = 0; i < split.docs.size(); ++i) by_id[split.docs[i].id] = i;
  std::istringstream in(text);
  std::string line;
  int64_t rows = 0, number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const size_t tab = line.find('\t');
    MG_CHECK(tab != std::string::npos && line.find('\t', tab + 1) == std::string::npos, path, ":",
             number, ": expected two tab-separated fields (articleID, code), got ", quote(line));
    const std::string id = line.substr(0, tab), code = line.substr(tab + 1);
    const auto it = by_id.find(id);
    MG_CHECK(it != by_id.end(), path, ":", number, ": document ", quote(id),
             " has no text file in ", split.name, "/");
    MG_CHECK(diagnoses ? valid_diagnosis_code(code) : valid_procedure_code(code), path, ":", number,
             ": malformed ", diagnoses ? "ICD-10-CM" : "ICD-10-PCS", " code ", quote(code));
    auto& codes = diagnoses ? split.docs[it->second].diagnoses : split.docs[it->second].procedures;
    if (std::find(codes.begin(), codes.end(), code) == codes.end()) codes.push_back(code);
    ++rows;
  }
  return rows;
}

}  // namespace

bool valid_diagnosis_code(const std::string& c) {
  if (c.size() < 3 || !(c[0] >= 'a' && c[0] <= 'z') || !(c[1] >= '0' && c[1] <= '9') ||
      !alnum_lower(c[2]))
    return false;
  if (c.size() == 3) return true;
  if (c[3] != '.' || c.size() < 5 || c.size() > 8) return false;
  return std::all_of(c.begin() + 4, c.end(), alnum_lower);
}

bool valid_procedure_code(const std::string& c) {
  return (c.size() == 4 || c.size() == 7) && std::all_of(c.begin(), c.end(), alnum_lower);
}

std::vector<std::string> ancestors(const std::string& code) {
  std::vector<std::string> out;
  if (code.empty()) return out;
  out.push_back(code.substr(0, 1));
  for (size_t n = 3; n <= code.size(); ++n)
    if (code[n - 1] != '.') out.push_back(code.substr(0, n));
  return out;
}

const Split& Corpus::split(const std::string& name) const {
  for (const Split& s : splits)
    if (s.name == name) return s;
  fail("codiesp: no split ", quote(name), " (train, dev, test)");
}

Split load_split(const std::string& root, const std::string& name, const LoadOptions& options) {
  MG_CHECK(options.language == "en" || options.language == "es",
           "codiesp: language must be \"en\" or \"es\", got ", quote(options.language));
  Split split;
  split.name = name;
  const fs::path dir = fs::path(root) / name;
  const fs::path texts = dir / (options.language == "en" ? "text_files_en" : "text_files");
  std::error_code ec;
  MG_CHECK(fs::is_directory(texts, ec), texts.string(), ": no such folder (CodiEsp layout: ", name,
           "/text_files_en/<id>.txt; see ../shared/data/codiesp/SOURCE.md)");
  for (const auto& entry : fs::directory_iterator(texts)) {
    const fs::path& p = entry.path();
    if (p.extension() != ".txt" || !entry.is_regular_file()) continue;
    Document d;
    d.id = p.stem().string();
    d.path = p.string();
    d.text = read_file(d.path);
    check_text(d.text, d.path);
    MG_CHECK(d.text.find_first_not_of(" \t\r\n") != std::string::npos, d.path, ": empty document");
    split.docs.push_back(std::move(d));
  }
  MG_CHECK(!split.docs.empty(), texts.string(), ": no .txt documents");
  std::sort(split.docs.begin(), split.docs.end(),
            [](const Document& a, const Document& b) { return a.id < b.id; });
  split.diagnosis_rows = read_codes((dir / (name + "D.tsv")).string(), split, true);
  if (options.procedures)
    split.procedure_rows = read_codes((dir / (name + "P.tsv")).string(), split, false);
  return split;
}

Corpus load(const LoadOptions& options) {
  Corpus c;
  const fs::path nested = fs::path(options.data_dir) / "final_dataset_v4_to_publish";
  std::error_code ec;
  c.root = fs::is_directory(nested, ec) ? nested.string() : options.data_dir;
  for (const char* name : kSplits) c.splits.push_back(load_split(c.root, name, options));
  return c;
}

// ---------------------------------------------------------------------------------- label sets

std::vector<std::string> document_codes(const Document& doc, const LabelOptions& o) {
  std::set<std::string> out;
  auto add = [&](const std::string& code) {
    if (o.kind == "extended") {
      for (auto& a : ancestors(code)) out.insert(a);
    } else {
      out.insert(code);
    }
  };
  for (const auto& c : doc.diagnoses) add(o.categories ? c.substr(0, 3) : c);
  if (o.procedures)
    for (const auto& c : doc.procedures) out.insert(o.categories ? c.substr(0, 3) : c);
  return {out.begin(), out.end()};
}

LabelSet make_label_set(const Corpus& corpus, const LabelOptions& o) {
  MG_CHECK(o.kind == "top" || o.kind == "min_docs" || o.kind == "extended",
           "codiesp: label set must be \"top\", \"min_docs\" or \"extended\", got ", quote(o.kind));
  MG_CHECK(o.top_k >= 1 && o.min_docs >= 1, "codiesp: top_k and min_docs must be >= 1");
  std::map<std::string, int64_t> docs;
  for (const Document& d : corpus.split("train").docs)
    for (const auto& c : document_codes(d, o)) ++docs[c];
  std::vector<std::pair<std::string, int64_t>> ranked(docs.begin(), docs.end());
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  LabelSet ls;
  ls.options = o;
  for (size_t i = 0; i < ranked.size(); ++i) {
    const bool keep = o.kind == "top" ? int64_t(i) < o.top_k : ranked[i].second >= o.min_docs;
    if (!keep) continue;
    ls.codes.push_back(ranked[i].first);
    ls.train_docs.push_back(ranked[i].second);
  }
  MG_CHECK(!ls.codes.empty(), "codiesp: the label set is empty (no training code has ", o.min_docs,
           " documents)");
  return ls;
}

int64_t LabelSet::index(const std::string& code) const {
  const auto it = std::find(codes.begin(), codes.end(), code);
  return it == codes.end() ? -1 : int64_t(it - codes.begin());
}

std::vector<int64_t> LabelSet::of(const Document& doc) const {
  std::vector<int64_t> out;
  for (const auto& c : document_codes(doc, options))
    if (const int64_t l = index(c); l >= 0) out.push_back(l);
  std::sort(out.begin(), out.end());
  return out;
}

// ------------------------------------------------------------------------------------- encoding

const EncodedSplit& Encoded::split(const std::string& name) const {
  for (const EncodedSplit& s : splits)
    if (s.name == name) return s;
  fail("codiesp: no split ", quote(name), " (train, dev, test)");
}

Encoded encode(const Corpus& corpus, const LabelSet& labels, const EncodeOptions& o) {
  std::vector<std::vector<std::vector<std::string>>> tokens(corpus.splits.size());
  for (size_t s = 0; s < corpus.splits.size(); ++s)
    for (const Document& d : corpus.splits[s].docs) {
      tokens[s].push_back(text::tokenize(d.text, o.tokens));
      MG_CHECK(!tokens[s].back().empty(), d.path,
               ": no words left after tokenising (stop words and punctuation dropped)");
    }
  Encoded e;
  for (size_t s = 0; s < corpus.splits.size(); ++s)
    if (corpus.splits[s].name == "train") e.vocab = text::Vocabulary::build(tokens[s], o.min_count);
  e.labels = labels;
  for (size_t s = 0; s < corpus.splits.size(); ++s) {
    EncodedSplit& out = e.splits.emplace_back();
    out.name = corpus.splits[s].name;
    for (size_t i = 0; i < tokens[s].size(); ++i)
      out.docs.push_back({e.vocab.encode(tokens[s][i]), labels.of(corpus.splits[s].docs[i])});
  }
  return e;
}

// -------------------------------------------------------------------------------------- batches

void fill_batch(const EncodedSplit& split, int64_t labels, std::span<const int64_t> rows,
                int64_t max_length, DType dtype, Batch& batch) {
  const int64_t B = int64_t(rows.size());
  MG_CHECK(B >= 1, "codiesp: a batch needs at least one document");
  // Longest first (ties in the given order): the rows that still step are the leading ones.
  thread_local std::vector<std::pair<int64_t, int64_t>> order;  // (length, row)
  order.clear();
  auto length = [&](int64_t r) {
    MG_CHECK(r >= 0 && r < int64_t(split.docs.size()), "codiesp: document ", r,
             " out of range for ", split.name, " (", split.docs.size(), " documents)");
    const int64_t n = int64_t(split.docs[size_t(r)].ids.size());
    return max_length > 0 ? std::min(n, max_length) : n;
  };
  for (int64_t r : rows) order.emplace_back(length(r), r);
  // Stable by position, without std::stable_sort's buffer (a heap allocation every step).
  thread_local std::vector<int64_t> position;
  position.clear();
  for (size_t i = 0; i < order.size(); ++i) position.push_back(int64_t(i));
  std::sort(position.begin(), position.end(), [&](int64_t a, int64_t b) {
    const int64_t la = order[size_t(a)].first, lb = order[size_t(b)].first;
    return la != lb ? la > lb : a < b;
  });
  thread_local std::vector<std::pair<int64_t, int64_t>> sorted;
  sorted.clear();
  for (int64_t i : position) sorted.push_back(order[size_t(i)]);
  order.swap(sorted);
  const int64_t T = order.front().first;
  Tensor& tokens = batch.field("tokens", Shape{B, T}, dtype);
  Tensor& mask = batch.field("tokens_mask", Shape{B, T}, dtype);
  Tensor& y = batch.field("labels", Shape{B, labels}, dtype);
  Tensor& index = batch.field("doc_index", Shape{B}, dtype);
  for (int64_t b = 0; b < B; ++b) {
    const auto [n, r] = order[size_t(b)];
    const EncodedDoc& d = split.docs[size_t(r)];
    for (int64_t t = 0; t < n; ++t) {
      tokens.set(b * T + t, double(d.ids[size_t(t)]));
      mask.set(b * T + t, 1.0);
    }
    for (int64_t l : d.labels) {
      MG_CHECK(l >= 0 && l < labels, "codiesp: label ", l, " out of range [0, ", labels, ")");
      y.set(b * labels + l, 1.0);
    }
    index.set(b, double(r));
  }
  batch.size = B;
}

}  // namespace memgrad::codiesp
