// Extended bAbI (AMN paper §5.3): task 1 ("WhereIsActor", single supporting fact) generated from
// its rules with more entities, longer stories and several questions per story, seeded, written in
// the official text format (tasks/babi.hpp) so that the `babi` task reads it:
//     DIR/tasks_1-20_v1-2/en/qa1_extended_{train,test}.txt    (train with --data-dir DIR)
// A statement is "<Actor> <moved|went|journeyed|travelled> to the <location>."; a question
// "Where is <actor>?" answered by the location of that actor's last move, its supporting fact the
// id of that statement. Entities = actors + locations, drawn from fixed name lists (kActorNames,
// kLocationNames). The AMN paper's "100 entities instead of the existing 38" does not say how they
// split: our default for the scaled task is 20 actors + 80 locations, 90 statements.
#pragma once
#include <cstdint>
#include <string>

namespace memgrad::babi {

struct ExtendedOptions {
  int actors = 20;
  int locations = 80;
  int statements = 90;      // statements per story
  int question_every = 2;   // a question after every k statements (task 1's rule: 2); 0 = none
  int final_questions = 0;  // questions about distinct actors at the end of the story
  int64_t train_stories = 250, test_stories = 25;
  uint64_t seed = 1;
};

// Names available: 30 actors, 98 locations.
int actor_names();
int location_names();

// Throws an Error naming the setting that cannot be met: more actors or locations than names, fewer
// than 1 actor or 2 locations (a move must change place), fewer than 1 statement or 1 story, a
// negative question setting, no question at all, or more final questions than the actors a story
// of that length can mention (min(actors, statements)).
void check_extended(const ExtendedOptions& o);

// One split's file text: `stories` stories drawn from the seeded generator (the split's own
// stream: key 1 train, 2 test).
std::string extended_text(const ExtendedOptions& o, int64_t stories, uint64_t split_key);

// Writes both files under dir (created), each atomically; returns the train file's path.
std::string write_extended(const std::string& dir, const ExtendedOptions& o);

}  // namespace memgrad::babi
