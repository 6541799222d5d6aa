// The one error type of memgrad. Its message carries the context a user needs to fix the problem:
// the op and the shapes involved, or the file and line of bad data.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace memgrad {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Builds a message from any streamable pieces: fail("matmul: ", a.shape(), " vs ", b.shape()).
template <class... Parts>
[[noreturn]] void fail(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  throw Error(out.str());
}

// Throws Error(parts...) unless cond holds. Cheap when it holds: the message is built only on
// failure.
#define MG_CHECK(cond, ...)                    \
  do {                                         \
    if (!(cond)) ::memgrad::fail(__VA_ARGS__); \
  } while (0)

}  // namespace memgrad
