// The main of the tests on the real PhysioNet 2012 data: exits 77, which ctest reports as
// SKIPPED (SKIP_RETURN_CODE), when ../shared/data/physionet-challenge-2012 is absent.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>

#include "tests/data/physionet_real.hpp"

int main(int argc, char** argv) {
  if (!std::filesystem::exists(memgrad::test::kPhysionetDir + "/Outcomes-a.txt")) {
    std::printf("SKIPPED: %s not found\n", memgrad::test::kPhysionetDir.c_str());
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
