// Extended bAbI task 1; see tasks/babi_extended.hpp.
#include "tasks/babi_extended.hpp"

#include <algorithm>
#include <filesystem>
#include <vector>

#include "engine/checkpoint.hpp"
#include "engine/error.hpp"
#include "engine/rng.hpp"
#include "tasks/babi.hpp"

namespace memgrad::babi {
namespace {

const char* const kActorNames[] = {"Mary",  "John",    "Sandra",   "Daniel", "Bill",  "Fred",
                                   "Julie", "Jeff",    "Emily",    "Winona", "Lily",  "Bernhard",
                                   "Greg",  "Brian",   "Gertrude", "Jason",  "Yann",  "Antoine",
                                   "Sumit", "Jessica", "Alice",    "Bob",    "Carol", "Dave",
                                   "Erin",  "Frank",   "Grace",    "Heidi",  "Ivan",  "Judy"};
const char* const kLocationNames[] = {
    "kitchen",    "garden",     "bathroom",    "bedroom",    "office",   "hallway",    "cellar",
    "attic",      "library",    "garage",      "park",       "school",   "cinema",     "theater",
    "museum",     "station",    "airport",     "harbor",     "beach",    "forest",     "desert",
    "mountain",   "valley",     "river",       "lake",       "island",   "castle",     "tower",
    "palace",     "temple",     "church",      "chapel",     "market",   "bakery",     "pharmacy",
    "hospital",   "clinic",     "bank",        "hotel",      "motel",    "restaurant", "cafe",
    "bar",        "pub",        "stadium",     "gym",        "pool",     "court",      "prison",
    "farm",       "barn",       "stable",      "field",      "meadow",   "orchard",    "vineyard",
    "greenhouse", "laboratory", "factory",     "warehouse",  "workshop", "studio",     "gallery",
    "arcade",     "mall",       "store",       "shop",       "kiosk",    "bridge",     "tunnel",
    "harbour",    "pier",       "dock",        "lighthouse", "cabin",    "cottage",    "mansion",
    "villa",      "apartment",  "basement",    "balcony",    "terrace",  "porch",      "patio",
    "courtyard",  "plaza",      "square",      "avenue",     "alley",    "campus",     "dormitory",
    "classroom",  "auditorium", "observatory", "zoo",        "aquarium", "canyon",     "glacier"};
const char* const kVerbs[] = {"moved", "went", "journeyed", "travelled"};

}  // namespace

int actor_names() { return int(std::size(kActorNames)); }
int location_names() { return int(std::size(kLocationNames)); }

void check_extended(const ExtendedOptions& o) {
  MG_CHECK(o.actors >= 1 && o.actors <= actor_names(), "extended babi: actors = ", o.actors,
           " must be in [1, ", actor_names(), "] (the names available)");
  MG_CHECK(o.locations >= 2 && o.locations <= location_names(),
           "extended babi: locations = ", o.locations, " must be in [2, ", location_names(),
           "] (the names available)");
  MG_CHECK(o.statements >= 1, "extended babi: statements = ", o.statements, " must be >= 1");
  MG_CHECK(o.question_every >= 0 && o.final_questions >= 0,
           "extended babi: question_every and final_questions must be >= 0");
  MG_CHECK(o.question_every > 0 || o.final_questions > 0,
           "extended babi: no questions (question_every = 0 and final_questions = 0)");
  const int mentionable = std::min(o.actors, o.statements);
  MG_CHECK(o.final_questions <= mentionable, "extended babi: ", o.final_questions,
           " final questions about distinct actors need as many actors in the story, but a story "
           "of ",
           o.statements, " statements with ", o.actors, " actors mentions at most ", mentionable);
  MG_CHECK(o.train_stories >= 1 && o.test_stories >= 1,
           "extended babi: train_stories and test_stories must be >= 1");
}

std::string extended_text(const ExtendedOptions& o, int64_t stories, uint64_t split_key) {
  check_extended(o);
  Rng rng(o.seed, split_key);
  std::string out;
  std::vector<int> where(size_t(o.actors)), fact(size_t(o.actors)), order(size_t(o.actors));
  for (int64_t story = 0; story < stories; ++story) {
    std::fill(where.begin(), where.end(), -1);
    int line = 0;
    auto question = [&](int a) {
      out += std::to_string(++line) + " Where is " + kActorNames[a] + "? \t" +
             kLocationNames[where[size_t(a)]] + "\t" + std::to_string(fact[size_t(a)]) + "\n";
    };
    // The first final_questions statements introduce distinct actors (so that each final
    // question has its answer); later ones pick any actor.
    for (int i = 0; i < o.actors; ++i) order[size_t(i)] = i;
    for (int i = o.actors - 1; i > 0; --i)
      std::swap(order[size_t(i)], order[size_t(rng.below(uint64_t(i + 1)))]);
    for (int s = 0; s < o.statements; ++s) {
      const int a = s < o.final_questions ? order[size_t(s)] : int(rng.below(uint64_t(o.actors)));
      int loc = int(rng.below(uint64_t(o.locations)));
      if (loc == where[size_t(a)]) loc = (loc + 1) % o.locations;  // a move changes place
      where[size_t(a)] = loc;
      fact[size_t(a)] = ++line;
      out += std::to_string(line) + " " + kActorNames[a] + " " + kVerbs[rng.below(4)] + " to the " +
             kLocationNames[loc] + ".\n";
      if (o.question_every > 0 && (s + 1) % o.question_every == 0) {
        // Task 1's rule: ask about an actor who has moved.
        int asked = int(rng.below(uint64_t(o.actors)));
        while (where[size_t(asked)] < 0) asked = (asked + 1) % o.actors;
        question(asked);
      }
    }
    for (int q = 0; q < o.final_questions; ++q) question(order[size_t(q)]);
  }
  return out;
}

std::string write_extended(const std::string& dir, const ExtendedOptions& o) {
  check_extended(o);
  namespace fs = std::filesystem;
  const fs::path folder = fs::path(dir) / kDataFolder / "en";
  std::error_code ec;
  fs::create_directories(folder, ec);
  MG_CHECK(!ec, "extended babi: cannot create ", folder.string(), ": ", ec.message());
  const std::string train = (folder / "qa1_extended_train.txt").string();
  write_file_atomically(train, extended_text(o, o.train_stories, 1));
  write_file_atomically((folder / "qa1_extended_test.txt").string(),
                        extended_text(o, o.test_stories, 2));
  return train;
}

}  // namespace memgrad::babi
