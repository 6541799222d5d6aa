// Where the tests on the real PhysioNet 2012 data find it: ../shared/data/physionet-challenge-2012
// beside the source tree, or the folder named by MEMGRAD_PHYSIONET_DIR.
#pragma once
#include <cstdlib>
#include <string>

namespace memgrad::test {
inline const std::string kPhysionetDir =
    std::getenv("MEMGRAD_PHYSIONET_DIR")
        ? std::string(std::getenv("MEMGRAD_PHYSIONET_DIR"))
        : std::string(MEMGRAD_SOURCE_DIR) + "/../shared/data/physionet-challenge-2012";
}  // namespace memgrad::test
