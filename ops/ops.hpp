// All primitive ops, one header per family.
#pragma once
#include "ops/elementwise.hpp"
