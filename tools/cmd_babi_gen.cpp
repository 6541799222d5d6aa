// memgrad babi-gen: writes a generated bAbI task 1 or task 3 file (tasks/babi_gen.hpp).
#include <cstdio>
#include <iostream>
#include <string>

#include "engine/checkpoint.hpp"
#include "tasks/babi_gen.hpp"
#include "tools/args.hpp"
#include "tools/commands.hpp"

namespace memgrad::cli {

namespace {

constexpr const char* kHelp =
    R"(usage: memgrad babi-gen --task 1|3 [--questions N] [--seed S] [--out FILE]
                        [--actors A] [--locations L] [--objects O]
                        [--questions-per-story Q] [--statements K] [--questions-at-end]

Generates bAbI stories in the official v1.2 format (the loader reads them as it reads Facebook's
files): task 1, "Where is Mary?" (single supporting fact), or task 3, "Where was the football
before the kitchen?" (three supporting facts). The worlds, templates and question rules are
re-implemented from the released en/qa1 and en/qa3 files (docs/babi.md, "Generated stories").

  --task 1|3              the task (required)
  --questions N           questions in the file (default 1000, the 1k files' count)
  --seed S                the same seed gives the same file (default 1)
  --out FILE              written atomically (default: standard output)
  --actors A              actors (default 4: Mary, John, Sandra, Daniel; at most 100)
  --locations L           locations (default 6: the official rooms; at most 100)
  --objects O             task 3: objects (default 3: football, milk, apple; at most 21)
  --questions-per-story Q default 5
  --statements K          task 1: statements per story (default 10; a question after every 2,
                          so K = 2 Q)
  --questions-at-end      task 1: the story's Q questions, about distinct actors, all after
                          its K statements (the AMN paper's several-questions stories)

The AMN paper's extended task 1 (100 entities, 90-sentence stories):
  memgrad babi-gen --task 1 --actors 20 --locations 80 --statements 90 --questions-per-story 45
)";

}  // namespace

int cmd_babi_gen(const Words& words) {
  Args args(words, {"help", "questions-at-end"},
            {"task", "questions", "seed", "out", "actors", "locations", "objects",
             "questions-per-story", "statements", "threads"});
  if (args.has("help")) {
    std::fputs(kHelp, stdout);
    return 0;
  }
  if (!args.positional().empty())
    throw UsageError("unexpected argument '" + args.positional().front() + "'");
  if (!args.has("task")) throw UsageError("--task 1|3 is required");
  babi_gen::Spec spec;
  spec.task = int(args.get_int("task", 1));
  spec.questions = args.get_int("questions", 1000);
  const long seed = args.get_int("seed", 1);
  if (seed < 0) throw UsageError("--seed must be >= 0");
  spec.seed = uint64_t(seed);
  spec.actors = int(args.get_int("actors", spec.actors));
  spec.locations = int(args.get_int("locations", spec.locations));
  spec.objects = int(args.get_int("objects", spec.objects));
  spec.questions_per_story = int(args.get_int("questions-per-story", spec.questions_per_story));
  spec.statements = int(args.get_int("statements", spec.statements));
  spec.questions_at_end = args.has("questions-at-end");
  if (spec.task == 3)
    for (const char* name : {"statements", "questions-at-end"})
      if (args.has(name))
        throw UsageError(std::string("--") + name + " applies to task 1 (task 3's stories run " +
                         "until their questions are asked)");
  if (spec.task == 1 && args.has("objects")) throw UsageError("--objects applies to task 3");
  const std::string text = babi_gen::generate(spec);
  if (const auto out = args.get("out"))
    write_file_atomically(*out, text);
  else
    std::cout << text;
  return 0;
}

}  // namespace memgrad::cli
