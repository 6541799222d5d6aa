// Runs a memgrad subcommand in the test process with its stdout captured, and maps its errors to
// exit codes as main.cpp does (2 bad input, 3 anything else).
#pragma once
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "engine/error.hpp"
#include "tests/test_util.hpp"
#include "tools/args.hpp"
#include "tools/commands.hpp"

namespace memgrad::test {

struct Run {
  int code = 0;       // as main.cpp maps the intended error types: 2 bad input, 3 anything else
  std::string error;  // what() of the exception, if any
  std::string out;    // everything printed on stdout
};

// Runs a command with stdout (printf and std::cout) captured in a file.
inline Run run(int (*command)(const cli::Words&), const cli::Words& words) {
  TempDir tmp;
  const std::string path = (tmp.path / "stdout").string();
  std::cout.flush();
  std::fflush(stdout);
  const int saved = ::dup(STDOUT_FILENO);
  std::FILE* file = std::fopen(path.c_str(), "w");
  REQUIRE(file != nullptr);
  ::dup2(::fileno(file), STDOUT_FILENO);
  Run r;
  try {
    r.code = command(words);
  } catch (const cli::UsageError& e) {
    r = {2, e.what(), ""};
  } catch (const memgrad::Error& e) {
    r = {2, e.what(), ""};
  } catch (const std::exception& e) {  // a defect even where main.cpp has a fallback for it
    r = {3, e.what(), ""};
  }
  std::cout.flush();
  std::fflush(stdout);
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  std::fclose(file);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  r.out = text.str();
  return r;
}

}  // namespace memgrad::test
