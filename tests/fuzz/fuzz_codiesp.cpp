// libFuzzer target: the CodiEsp loader (tasks/codiesp.hpp). The input's first line is written as
// a note's text, the rest as the split's diagnosis file (and, with an odd length, also as its
// procedure file); the split is loaded, its label sets made and its documents encoded and batched.
// Bad input must be a memgrad::Error.
#include <filesystem>
#include <fstream>

#include "engine/error.hpp"
#include "tasks/codiesp.hpp"
#include "tests/fuzz/fuzz_util.hpp"

using namespace memgrad;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  const size_t nl = text.find('\n');
  const std::string_view note = text.substr(0, nl), codes = nl == std::string_view::npos
                                                                ? std::string_view()
                                                                : text.substr(nl + 1);
  namespace fs = std::filesystem;
  const fs::path root = fuzz::scratch_dir() / "codiesp";
  fs::remove_all(root);
  fs::create_directories(root / "train" / "text_files_en");
  std::ofstream(root / "train" / "text_files_en" / "n1.txt", std::ios::binary) << note;
  std::ofstream(root / "train" / "text_files_en" / "n2.txt") << "Fever and cough.\n";
  std::ofstream(root / "train" / "trainD.tsv", std::ios::binary) << codes;
  std::ofstream(root / "train" / "trainP.tsv", std::ios::binary) << codes;
  try {
    codiesp::LoadOptions o;
    o.procedures = size % 2 == 1;
    codiesp::Corpus c;
    c.root = root.string();
    c.splits.push_back(codiesp::load_split(c.root, "train", o));
    for (const char* kind : {"top", "extended"}) {
      codiesp::LabelOptions lo;
      lo.kind = kind;
      lo.min_docs = 1;
      lo.procedures = o.procedures;
      const codiesp::Encoded e = codiesp::encode(c, codiesp::make_label_set(c, lo), {});
      Batch batch;
      const int64_t rows[] = {0, 1};
      codiesp::fill_batch(e.split("train"), int64_t(e.labels.codes.size()), rows, 8, DType::f32,
                          batch);
    }
  } catch (const Error&) {
  }
  return 0;
}
