// libFuzzer target: the Disease Ontology's OBO parser (tasks/kb_obo.hpp) and the CSV/TSV field
// splitter of the knowledge base's tables (tasks/kb_text.hpp). Each input is parsed as a .obo
// file, and each of its lines split as CSV and as TSV. Bad input must be a memgrad::Error.
#include "engine/error.hpp"
#include "tasks/kb_obo.hpp"
#include "tasks/kb_text.hpp"
#include "tests/fuzz/fuzz_util.hpp"

using namespace memgrad;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  try {
    const Ontology o = parse_obo(text, "doid.obo");
    for (const OboTerm& t : o.terms)  // every index entry names a term that has that id
      if (o.find(t.id) != &t) std::abort();
  } catch (const Error&) {
  }
  try {
    for_each_line(text, "table.csv", [](int64_t line, std::string_view s) {
      for (const char sep : {',', '\t'}) try {
          (void)split_fields(s, sep, "table.csv", line);
        } catch (const Error&) {
        }
    });
  } catch (const Error&) {
  }
  return 0;
}
