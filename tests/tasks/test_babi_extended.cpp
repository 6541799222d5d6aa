// Extended bAbI task 1 (tasks/babi_extended.hpp): the files parse as bAbI, every answer is the
// asked actor's last location with that move as its supporting fact, the sizes are the settings',
// the seed decides the text, and settings that cannot be met are errors.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <sstream>

#include "engine/error.hpp"
#include "tasks/babi.hpp"
#include "tasks/babi_extended.hpp"

using namespace memgrad;

TEST_CASE("extended babi: stories follow task 1's rules and an oracle answers every question") {
  babi::ExtendedOptions o;  // the scaled task: 20 actors, 80 locations, 90 statements
  o.final_questions = 3;
  std::istringstream in(babi::extended_text(o, 12, 1));
  const babi::RawFile f = babi::read_stream(in, "generated");
  REQUIRE(f.stories.size() == 12);
  std::set<std::string> actors, places;
  for (const auto& story : f.stories) {
    CHECK(story.size() == 90);
    for (const auto& s : story) {
      REQUIRE(s.size() == 5);  // "<actor> <verb> to the <place>"
      actors.insert(s[0]), places.insert(s[4]);
    }
  }
  CHECK(actors.size() == 20);
  CHECK(places.size() == 80);
  size_t per_story = 0;
  for (const babi::RawQuestion& q : f.questions) {
    per_story += q.story == 0;
    const auto& story = f.stories[size_t(q.story)];
    const std::string actor = q.words.back();
    std::string where;
    int last = -1;
    for (int s = 0; s < int(q.statements); ++s)
      if (story[size_t(s)][0] == actor) where = story[size_t(s)][4], last = s;
    CHECK(q.answer == where);
    REQUIRE(q.supporting.size() == 1);
    CHECK(q.supporting[0] == last);
  }
  CHECK(per_story == 45 + 3);  // one every 2 statements, then the final 3
  // The final questions ask about distinct actors.
  std::set<std::string> last_three;
  for (size_t i = 45; i < 48; ++i) last_three.insert(f.questions[i].words.back());
  CHECK(last_three.size() == 3);
  CHECK(babi::extended_text(o, 12, 1) == babi::extended_text(o, 12, 1));
  CHECK(babi::extended_text(o, 12, 1) != babi::extended_text(o, 12, 2));
  o.seed = 2;
  CHECK(babi::extended_text(o, 12, 1) != babi::extended_text(babi::ExtendedOptions{}, 12, 1));
}

TEST_CASE("extended babi: settings that cannot be met are errors naming the setting") {
  babi::ExtendedOptions o;
  o.actors = 31;
  CHECK_THROWS_WITH_AS(babi::check_extended(o), doctest::Contains("actors = 31 must be in [1, 30]"),
                       Error);
  o = {};
  o.locations = 99;
  CHECK_THROWS_WITH_AS(babi::check_extended(o), doctest::Contains("locations = 99"), Error);
  o = {};
  o.statements = 2, o.final_questions = 3;
  CHECK_THROWS_WITH_AS(babi::check_extended(o), doctest::Contains("mentions at most 2"), Error);
  o = {};
  o.question_every = 0;
  CHECK_THROWS_WITH_AS(babi::check_extended(o), doctest::Contains("no questions"), Error);
}
