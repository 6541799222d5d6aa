// Words from English clinical text, and a vocabulary of them: the text pipeline the CodiEsp task
// (tasks/codiesp.hpp) and every text model share.
//
// Tokeniser (tokenize): ASCII letters are lower-cased; a token is a maximal run of ASCII letters
// and digits; every other printable ASCII character is a punctuation token of its own, and every
// non-ASCII code point (UTF-8) is one too (the English notes have 314 such characters in
// 148,833 words: degree signs, accented names). Whitespace separates. Options:
//   fold_numbers       a token of digits only becomes "<num>" (mixed tokens such as "b12" stay);
//   keep_punctuation   punctuation tokens are kept (default: dropped);
//   drop_stop_words    the words of stop_words() are dropped.
// With every option off except dropping punctuation, the tokens are the runs [a-z0-9]+ of the
// lower-cased text (the planning notes' vocabulary counts; tests/tasks/test_codiesp_real.cpp).
//
// Vocabulary: ids 0 = "<pad>" (never a word), 1 = "<unk>", then the training words with at least
// min_count occurrences, most frequent first (ties by the word's bytes), so ids are a pure
// function of the training text.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace memgrad::text {

struct TokenOptions {
  bool fold_numbers = true;
  bool keep_punctuation = false;
  bool drop_stop_words = true;
};

inline constexpr const char* kNumberToken = "<num>";

// The tokens of `text` (valid UTF-8 expected: the loaders check it first).
std::vector<std::string> tokenize(std::string_view text, const TokenOptions& options);

// A fixed English stop-word list (about 150 function words: articles, pronouns, auxiliaries,
// prepositions, conjunctions), written in text_tokens.cpp. Clinical words that some lists
// contain ("no", "not", "without") are kept: they negate findings.
const std::unordered_set<std::string>& stop_words();

class Vocabulary {
 public:
  static constexpr int64_t kPad = 0, kUnk = 1;
  Vocabulary();  // <pad> and <unk> only
  // From the training documents' tokens; words seen fewer than min_count times map to <unk>.
  static Vocabulary build(const std::vector<std::vector<std::string>>& documents,
                          int64_t min_count);
  int64_t size() const { return int64_t(words_.size()); }
  int64_t id(const std::string& word) const;  // kUnk for a word not in the vocabulary
  const std::string& word(int64_t id) const;  // an Error for an id out of range
  std::vector<int64_t> encode(const std::vector<std::string>& tokens) const;

 private:
  std::vector<std::string> words_;
  std::unordered_map<std::string, int64_t> ids_;
};

}  // namespace memgrad::text
