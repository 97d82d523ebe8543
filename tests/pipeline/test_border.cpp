// SPDX-License-Identifier: LGPL-2.1-or-later
#include <catch2/catch.hpp>

#include "pipeline/border.hpp"
#include "pipeline/error.hpp"

using namespace starsift;

TEST_CASE("border_index follows the documented patterns", "[border]") {
  // abcd = 0123
  // replicate aaa|abcd|ddd
  REQUIRE(border_index(-3, 4, BorderMode::Replicate) == 0);
  REQUIRE(border_index(6, 4, BorderMode::Replicate) == 3);
  // reflect-101 dcb|abcd|cba
  REQUIRE(border_index(-1, 4, BorderMode::Reflect101) == 1);
  REQUIRE(border_index(-3, 4, BorderMode::Reflect101) == 3);
  REQUIRE(border_index(4, 4, BorderMode::Reflect101) == 2);
  REQUIRE(border_index(6, 4, BorderMode::Reflect101) == 0);
  REQUIRE(border_index(7, 4, BorderMode::Reflect101) == 1);  // folds again
  REQUIRE(border_index(-5, 2, BorderMode::Reflect101) == 1);
  REQUIRE(border_index(-7, 1, BorderMode::Reflect101) == 0);
  // constant: outside is -1 (the border value)
  REQUIRE(border_index(-1, 4, BorderMode::Constant) == -1);
  REQUIRE(border_index(4, 4, BorderMode::Constant) == -1);
  for (int i = 0; i < 4; ++i) REQUIRE(border_index(i, 4, BorderMode::Constant) == i);
}

TEST_CASE("border modes parse by name and reject others", "[border]") {
  REQUIRE(parse_border_mode("reflect-101") == BorderMode::Reflect101);
  REQUIRE(parse_border_mode("replicate") == BorderMode::Replicate);
  REQUIRE_THROWS_WITH(
      parse_border_mode("wrap"),
      Catch::Contains("'wrap'") && Catch::Contains("replicate, reflect-101, constant"));
}
