// Tokeniser, stop words and vocabulary (see text_tokens.hpp).
#include "tasks/text_tokens.hpp"

#include <algorithm>
#include <map>

#include "engine/error.hpp"

namespace memgrad::text {
namespace {

bool is_word_char(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
bool is_space(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}
// Bytes of the UTF-8 sequence that starts with lead byte c (1 for a stray byte).
size_t utf8_length(unsigned char c) {
  if (c >= 0xF0 && c < 0xF8) return 4;
  if (c >= 0xE0) return c < 0xF0 ? 3 : 1;
  if (c >= 0xC0) return 2;
  return 1;
}

}  // namespace

std::vector<std::string> tokenize(std::string_view text, const TokenOptions& options) {
  std::vector<std::string> out;
  const auto& stop = stop_words();
  auto emit_word = [&](std::string word) {
    if (options.drop_stop_words && stop.count(word)) return;
    if (options.fold_numbers &&
        std::all_of(word.begin(), word.end(), [](char c) { return c >= '0' && c <= '9'; }))
      word = kNumberToken;
    out.push_back(std::move(word));
  };
  size_t i = 0;
  while (i < text.size()) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (is_space(c)) {
      ++i;
    } else if (is_word_char(c)) {
      std::string word;
      while (i < text.size() && is_word_char(static_cast<unsigned char>(text[i]))) {
        const char ch = text[i++];
        word += (ch >= 'A' && ch <= 'Z') ? char(ch - 'A' + 'a') : ch;
      }
      emit_word(std::move(word));
    } else {
      const size_t n = std::min(utf8_length(c), text.size() - i);
      if (options.keep_punctuation) out.emplace_back(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

const std::unordered_set<std::string>& stop_words() {
  // English function words (no negations: "no", "not", "nor", "without" carry clinical meaning).
  static const std::unordered_set<std::string> words = {
      "a",        "about",      "above",   "after",  "again",   "against", "all",     "am",
      "an",       "and",        "any",     "are",    "as",      "at",      "be",      "because",
      "been",     "before",     "being",   "below",  "between", "both",    "but",     "by",
      "can",      "could",      "did",     "do",     "does",    "doing",   "down",    "during",
      "each",     "few",        "for",     "from",   "further", "had",     "has",     "have",
      "having",   "he",         "her",     "here",   "hers",    "herself", "him",     "himself",
      "his",      "how",        "i",       "if",     "in",      "into",    "is",      "it",
      "its",      "itself",     "just",    "me",     "more",    "most",    "my",      "myself",
      "of",       "off",        "on",      "once",   "only",    "or",      "other",   "our",
      "ours",     "ourselves",  "out",     "over",   "own",     "same",    "she",     "should",
      "so",       "some",       "such",    "than",   "that",    "the",     "their",   "theirs",
      "them",     "themselves", "then",    "there",  "these",   "they",    "this",    "those",
      "through",  "to",         "too",     "under",  "until",   "up",      "very",    "was",
      "we",       "were",       "what",    "when",   "where",   "which",   "while",   "who",
      "whom",     "why",        "will",    "with",   "would",   "you",     "your",    "yours",
      "yourself", "yourselves", "also",    "may",    "might",   "must",    "shall",   "upon",
      "whose",    "within",     "s",       "t",      "via",     "thus",    "however", "therefore",
      "although", "though",     "whether", "either", "neither", "among",   "since",   "onto"};
  return words;
}

Vocabulary::Vocabulary() : words_{"<pad>", "<unk>"} {
  ids_["<pad>"] = kPad;
  ids_["<unk>"] = kUnk;
}

Vocabulary Vocabulary::build(const std::vector<std::vector<std::string>>& documents,
                             int64_t min_count) {
  MG_CHECK(min_count >= 1, "vocabulary: min_count must be >= 1, got ", min_count);
  std::map<std::string, int64_t> counts;  // ordered: ties below are broken by the word's bytes
  for (const auto& doc : documents)
    for (const auto& w : doc) ++counts[w];
  std::vector<std::pair<std::string, int64_t>> kept;
  for (const auto& [w, n] : counts)
    if (n >= min_count && w != "<pad>" && w != "<unk>") kept.emplace_back(w, n);
  std::stable_sort(kept.begin(), kept.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  Vocabulary v;
  for (auto& [w, n] : kept) {
    v.ids_[w] = int64_t(v.words_.size());
    v.words_.push_back(w);
  }
  return v;
}

int64_t Vocabulary::id(const std::string& word) const {
  const auto it = ids_.find(word);
  return it == ids_.end() ? kUnk : it->second;
}

const std::string& Vocabulary::word(int64_t id) const {
  MG_CHECK(id >= 0 && id < size(), "vocabulary: word id ", id, " out of range [0, ", size(), ")");
  return words_[size_t(id)];
}

std::vector<int64_t> Vocabulary::encode(const std::vector<std::string>& tokens) const {
  std::vector<int64_t> ids;
  ids.reserve(tokens.size());
  for (const auto& t : tokens) ids.push_back(id(t));
  return ids;
}

}  // namespace memgrad::text
