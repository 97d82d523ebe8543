// SPDX-License-Identifier: LGPL-2.1-or-later
// FITS header text: ASCII only, the date forms, the file name, the chain as HISTORY cards.
#include <catch2/catch.hpp>

#include <ctime>

#include "daemon/outputs/fits_text.hpp"

using namespace starsift::daemon;

namespace {

std::int64_t utc_us(int year, int month, int day, int hour, int minute, int second,
                    int micros = 0) {
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  return static_cast<std::int64_t>(timegm(&tm)) * 1000000 + micros;
}

// The reading rule of chain_history_cards(), as a reader of the header applies it.
std::string chain_from_cards(const std::vector<std::string>& cards) {
  std::string yaml;
  for (std::size_t i = 1; i < cards.size(); ++i) {
    const std::string& card = cards[i];
    if (card == "|" || card.rfind("| ", 0) == 0) {
      if (i > 1) yaml += '\n';
      if (card.size() > 2) yaml += card.substr(2);
    } else if (card.rfind("+ ", 0) == 0) {
      yaml += card.substr(2);
    } else {
      FAIL("a card with neither marker: " << card);
    }
  }
  return yaml + "\n";
}

}  // namespace

TEST_CASE("fits text: printable ASCII only") {
  CHECK(fits_ascii("cam\t1 \xc3\xa9\x01~") == "cam 1 ???~");
  CHECK(fits_ascii("") == "");
}

TEST_CASE("fits text: DATE-OBS, MJD-OBS and the file name") {
  const auto t = utc_us(2026, 11, 25, 1, 30, 0, 123456);
  CHECK(fits_date_obs(t) == "2026-11-25T01:30:00.123456");
  CHECK(fits_frame_file_name(t, 42) == "20261125T013000.123456Z_42.fits");
  CHECK(modified_julian_date(0) == 40587.0);
  CHECK(modified_julian_date(utc_us(2000, 1, 1, 12, 0, 0)) == 51544.5);  // J2000.0
  // A microsecond still shows at today's MJD: double carries it.
  CHECK(modified_julian_date(t + 1) > modified_julian_date(t));
}

TEST_CASE("fits text: the chain as HISTORY cards, read back whole") {
  const std::string long_value(150, 'g');
  const std::string yaml =
      "# the roof camera\n"
      "stages:\n"
      "  - median: {radius: 1}\n"
      "\n"
      "  - whiten: {history: 20, note: \"" +
      long_value +
      "\"}\n"
      "  - detect:\n"
      "      threshold: 5\n";
  const auto cards = chain_history_cards(yaml);
  REQUIRE(cards.size() == 10);  // a header card, 7 lines, the long one in 3 cards
  CHECK(cards[0] == "starsift chain: 7 YAML lines, '| ' starts one, '+ ' goes on");
  CHECK(cards[1] == "| # the roof camera");
  CHECK(cards[3] == "|   - median: {radius: 1}");
  CHECK(cards[4] == "| ");
  for (const auto& card : cards) CHECK(card.size() <= 72);
  CHECK(chain_from_cards(cards) == yaml);

  // A long line whose cut would fall on spaces: the cut moves so no card ends in one.
  const std::string spaced = std::string(69, 'a') + "   b\n";
  const auto spaced_cards = chain_history_cards(spaced);
  for (const auto& card : spaced_cards) CHECK(card.back() != ' ');
  CHECK(chain_from_cards(spaced_cards) == spaced);

  CHECK(chain_history_cards("").size() == 1);
}
