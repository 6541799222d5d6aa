// A bAbI story generator for tasks 1 (single supporting fact, "Where is Mary?") and 3 (three
// supporting facts, "Where was the football before the kitchen?"), writing the official v1.2
// line format, so that the loader reads its files as it reads Facebook's.
//
// Why: en-10k has no task-3 training file (the notes' qa3 substitute is the 1k file plus 9,000
// generated questions), and the AMN paper's extended bAbI (its §5.3: task 1 with 100 entities
// and 90-sentence stories, several questions per story) exists only as a generator. Facebook's
// public generator is Lua and, its README says, cannot reproduce the released data exactly; this
// is our re-implementation of the two worlds, from the released files (templates, names, question
// rule and supporting facts counted on en/qa1 and en/qa3; docs/babi.md "Generated stories").
//
// The world: actors move between locations; in task 3 they also get and drop objects, which then
// travel with them. Each statement is one action, written with one of the official templates.
// Task 1 asks where an actor is (the last location an actor moved to; support: that move). Task 3
// asks where an object was before a location L it has been in: the location before L's last
// occurrence in the object's location history (the rule every question of en/qa3 follows);
// supports: the last statement naming the object, the move (or get) that took it to L, and the one
// that took it to the answer.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace memgrad::babi_gen {

struct Spec {
  int task = 1;       // 1 or 3
  int actors = 4;     // the first names of actors_list() (official: Mary, John, Sandra, Daniel)
  int locations = 6;  // the first of locations_list() (official: the six rooms)
  int objects = 3;    // task 3: the first of objects_list() (official: football, milk, apple)
  int64_t questions = 1000;  // questions in the file; the last story stops at the last one
  int questions_per_story = 5;
  // Task 1: statements per story (official: 10, a question after every 2). With questions_at_end
  // the story's questions (about distinct actors) all follow its last statement.
  int statements = 10;
  bool questions_at_end = false;
  uint64_t seed = 1;
};

// Names the generator may use, in order (the official ones first).
const std::vector<std::string>& actors_list();
const std::vector<std::string>& locations_list();
const std::vector<std::string>& objects_list();

// Checks a Spec: a clear Error for a setting that cannot be met (more actors than names, a task-1
// story too short for its questions, ...).
void check(const Spec& spec);

// The file's text: stories in the official format ("<id> <statement>.", "<id> <question>?\t
// <answer>\t<support ids>"), ids restarting at 1 in each story. A pure function of the spec.
std::string generate(const Spec& spec);

}  // namespace memgrad::babi_gen
