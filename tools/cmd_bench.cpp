#include "tools/commands.hpp"
#include "tools/args.hpp"
namespace memgrad::cli {
int cmd_bench(const Words&) { throw UsageError("bench: not built yet"); }
}
