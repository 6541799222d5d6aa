// memgrad babi-generate: writes the extended bAbI task 1 (tasks/babi_extended.hpp).
#include <cstdio>
#include <limits>

#include "tasks/babi_extended.hpp"
#include "tools/args.hpp"
#include "tools/commands.hpp"

namespace memgrad::cli {

int cmd_babi_generate(const Words& words) {
  Args args(words, {"help"},
            {"out", "actors", "locations", "statements", "question-every", "final-questions",
             "train-stories", "test-stories", "seed"});
  if (args.has("help")) {
    std::puts(
        "usage: memgrad babi-generate --out DIR [--actors 20] [--locations 80]\n"
        "         [--statements 90] [--question-every 2] [--final-questions 0]\n"
        "         [--train-stories 250] [--test-stories 25] [--seed 1]\n\n"
        "Writes bAbI task 1 generated from its rules with more entities and longer stories (the\n"
        "AMN paper's extended bAbI) to DIR/tasks_1-20_v1-2/en/qa1_extended_{train,test}.txt;\n"
        "train on it with `memgrad train --task babi --data-dir DIR --babi-task 1`.\n"
        "Statements move an actor to a location; a question after every --question-every\n"
        "statements asks where an actor is (0: none), and --final-questions Q adds Q questions\n"
        "about distinct actors at the end of each story (the multi-question task). Entities =\n"
        "actors + locations (at most 30 and 98 names). Settings that cannot be met are errors\n"
        "(exit 2).\n\n"
        "  scaled task 1 (100 entities, 90 sentences):  --actors 20 --locations 80 --statements "
        "90\n"
        "  several questions:  --actors 4 --locations 6 --statements 10 --question-every 0\n"
        "                      --final-questions 3");
    return 0;
  }
  if (!args.positional().empty())
    throw UsageError("unexpected argument '" + args.positional().front() + "'");
  const auto out = args.get("out");
  if (!out || out->empty()) throw UsageError("--out DIR is required");
  babi::ExtendedOptions o;
  const auto to_int = [&](const char* name, int fallback) {
    const long v = args.get_int(name, fallback);
    if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
      throw UsageError(std::string("--") + name + " is out of range");
    return int(v);
  };
  o.actors = to_int("actors", o.actors);
  o.locations = to_int("locations", o.locations);
  o.statements = to_int("statements", o.statements);
  o.question_every = to_int("question-every", o.question_every);
  o.final_questions = to_int("final-questions", o.final_questions);
  o.train_stories = args.get_int("train-stories", long(o.train_stories));
  o.test_stories = args.get_int("test-stories", long(o.test_stories));
  const long seed = args.get_int("seed", 1);
  if (seed < 0) throw UsageError("--seed must be >= 0");
  o.seed = uint64_t(seed);
  const std::string train = babi::write_extended(*out, o);
  std::printf("wrote %s and its test file (%d entities: %d actors, %d locations)\n", train.c_str(),
              o.actors + o.locations, o.actors, o.locations);
  return 0;
}

}  // namespace memgrad::cli
