// All primitive ops, one header per family.
#pragma once
#include "ops/elementwise.hpp"
#include "ops/linalg.hpp"
#include "ops/memory.hpp"
#include "ops/nn.hpp"
#include "ops/random.hpp"
#include "ops/reduce.hpp"
#include "ops/shape.hpp"
