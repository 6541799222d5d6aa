// Per-question answers as CSV (tasks/babi_answers.hpp).
#include "tasks/babi_answers.hpp"

#include <algorithm>
#include <filesystem>

#include "engine/error.hpp"

namespace memgrad::babi {

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string answers_csv(const Data& data, std::span<const SplitAnswers> splits) {
  std::string out = std::string(kAnswersHeader) + "\n";
  for (const SplitAnswers& s : splits) {
    const std::vector<Example>& set = examples(data, s.split);
    std::vector<Answered> answered = s.answered;
    std::sort(answered.begin(), answered.end(),
              [](const Answered& a, const Answered& b) { return a.example < b.example; });
    for (size_t i = 0; i < answered.size(); ++i) {
      const int64_t k = answered[i].example;
      MG_CHECK(k >= 0 && k < int64_t(set.size()), "babi answers: question ", k, " of split ",
               s.name, " out of range (", set.size(), " questions)");
      MG_CHECK(i == 0 || answered[i - 1].example != k, "babi answers: question ", k, " of split ",
               s.name, " answered twice");
      const Example& e = set[size_t(k)];
      std::string question;
      for (int32_t id : data.sentence(e.query)) {
        if (!question.empty()) question += ' ';
        question += data.vocab.word(id);
      }
      const int predicted = answered[i].predicted;
      out += s.name + "," + std::to_string(e.task) + "," +
             csv_field(std::filesystem::path(data.files[size_t(e.file)]).filename().string()) +
             "," + std::to_string(e.line) + "," + csv_field(question) + "," +
             csv_field(data.vocab.word(e.answer)) + "," + csv_field(data.vocab.answer(predicted)) +
             "," + (predicted == e.answer ? "1" : "0") + "\n";
    }
  }
  return out;
}

}  // namespace memgrad::babi
