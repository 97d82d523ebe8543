// SPDX-License-Identifier: LGPL-2.1-or-later
// The benchmarks' command lines (bench/list_args.hpp): lists, numbers, names and options.
#include <catch2/catch.hpp>

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "bench/list_args.hpp"

namespace starsift::bench {
namespace {

enum class Colour { Red, DarkBlue, Green };

constexpr std::array<std::string_view, 3> kColourNames{"red", "dark-blue", "green"};

std::string_view colour_name(Colour c) {
  return kColourNames[static_cast<std::size_t>(c)];
}

constexpr std::array kColours{Colour::Red, Colour::DarkBlue, Colour::Green};

Colour parse_colour(std::string_view name) {
  return parse_named(name, kColours, colour_name, "--colours", "colour");
}

}  // namespace

TEST_CASE("bench lists: comma-separated items, the empty ones dropped", "[bench]") {
  CHECK(split_nonempty("a,,b,") == std::vector<std::string>{"a", "b"});
  CHECK(split_nonempty("").empty());
  CHECK(split_list("1,,3") == std::vector<std::string>{"1", "", "3"});
  CHECK(parse_ints("4,-2") == std::vector<int>{4, -2});
}

TEST_CASE("bench numbers: the whole value or an error naming the option", "[bench]") {
  CHECK(parse_number<int>("12", "--reps") == 12);
  CHECK(parse_number<double>("2.5", "--sigmas") == 2.5);
  for (const char* bad : {"", "12a", "x", "1 "}) {
    INFO("'" << bad << "'");
    try {
      parse_number<int>(bad, "--reps");
      FAIL("accepted");
    } catch (const Error& e) {
      CHECK(e.problem() == "--reps: '" + std::string(bad) + "' is not a number");
    }
  }
}

TEST_CASE("bench names: any case, '-' and '_' alike; an unknown one lists the known", "[bench]") {
  CHECK(normalized_name("Network_Unpacked") == "networkunpacked");
  CHECK(parse_colour("dark-blue") == Colour::DarkBlue);
  CHECK(parse_colour("DARK_BLUE") == Colour::DarkBlue);
  CHECK(parse_colour("darkblue") == Colour::DarkBlue);
  CHECK(parse_colour("Green") == Colour::Green);
  try {
    parse_colour("purple");
    FAIL("accepted");
  } catch (const Error& e) {
    CHECK(e.problem() == "--colours: unknown colour 'purple'");
    CHECK(e.allowed() == "red, dark-blue, green or all");
  }
  CHECK(parse_names("red,green", parse_colour) == std::vector<Colour>{Colour::Red, Colour::Green});
}

TEST_CASE("bench options: --name value and --name=value alike", "[bench]") {
  std::string words[] = {"bench", "--a=1", "--b", "2", "--c"};
  char* argv[] = {words[0].data(), words[1].data(), words[2].data(), words[3].data(),
                  words[4].data()};
  OptionReader options(5, argv);
  REQUIRE(options.advance());
  CHECK(options.arg() == "--a");
  CHECK(options.value() == "1");
  REQUIRE(options.advance());
  CHECK(options.arg() == "--b");
  CHECK(options.value() == "2");
  REQUIRE(options.advance());
  CHECK(options.arg() == "--c");
  CHECK_THROWS_AS(options.value(), Error);  // none left
  CHECK_FALSE(options.advance());
}

}  // namespace starsift::bench
