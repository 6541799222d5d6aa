// models/layers/config: a model's defaults merged with the user's keys, read back with checks.
#include <doctest/doctest.h>

#include "engine/error.hpp"
#include "models/layers/config.hpp"

using namespace memgrad;

TEST_CASE("config: merge_config puts the user's keys over the defaults and refuses strangers") {
  const nlohmann::json defaults = {{"hops", 3}, {"loss", "sum"}, {"shared", true}};
  const nlohmann::json c = layers::merge_config("m", defaults, {{"hops", 2}, {"variant", "x"}});
  CHECK(c.at("hops") == 2);
  CHECK(c.at("loss") == "sum");
  CHECK(c.find("variant") == c.end());
  CHECK_THROWS_WITH_AS(layers::merge_config("m", defaults, {{"hop", 2}}),
                       doctest::Contains("m: unknown config key 'hop'"), Error);
  CHECK_THROWS_WITH_AS(layers::merge_config("m", defaults, {{"shared", "yes"}}),
                       doctest::Contains("m: config key 'shared' must be like true"), Error);
  CHECK(layers::config_int(c, "m", "hops") == 2);
  CHECK_THROWS_WITH_AS(layers::config_int(c, "m", "hops", 3),
                       doctest::Contains("'hops' must be at least 3, got 2"), Error);
}

TEST_CASE("config: config_choice returns one of the options or names them all") {
  const nlohmann::json c = {{"loss", "mean"}, {"gate", "cosine"}};
  CHECK(layers::config_choice(c, "m", "loss", {"sum", "mean"}) == "mean");
  CHECK_THROWS_WITH_AS(layers::config_choice(c, "m", "gate", {"dot", "literal"}),
                       doctest::Contains("m: gate must be \"dot\" or \"literal\", got \"cosine\""),
                       Error);
  CHECK_THROWS_WITH_AS(
      layers::config_choice(c, "m", "gate", {"a", "b", "c"}),
      doctest::Contains("m: gate must be one of \"a\", \"b\" or \"c\", got \"cosine\""), Error);
}
