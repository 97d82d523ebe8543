// SPDX-License-Identifier: LGPL-2.1-or-later
// Whole lines only: appends, a torn tail cut back on open, a short write undone.
#include <sys/resource.h>
#include <catch2/catch.hpp>

#include <csignal>

#include "daemon/outputs/line_file.hpp"
#include "outputs_support.hpp"
#include "pipeline/error.hpp"

using namespace starsift::daemon;
using starsift::test::read_file;
using starsift::test::TempDir;

TEST_CASE("line file: lines appended, kept across reopening") {
  TempDir tmp;
  const auto path = tmp.path() / "a.jsonl";
  {
    LineFile file(path);
    file.append("{\"n\":1}\n");
    file.append("{\"n\":2}\n");
    file.sync();
    CHECK(file.bytes() == 16);
  }
  LineFile again(path);
  CHECK(again.repaired_bytes() == 0);
  CHECK(again.bytes() == 16);
  again.append("{\"n\":3}\n");
  CHECK(read_file(path) == "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n");
}

TEST_CASE("line file: a torn last line is cut off when the file is opened") {
  TempDir tmp;
  const auto path = tmp.path() / "a.jsonl";
  starsift::test::write_file(path, "{\"n\":1}\n{\"n\":2}\n{\"n\":3,\"obj");
  LineFile file(path);
  CHECK(file.repaired_bytes() == 11);  // {"n":3,"obj
  CHECK(read_file(path) == "{\"n\":1}\n{\"n\":2}\n");
  file.append("{\"n\":4}\n");
  CHECK(read_file(path) == "{\"n\":1}\n{\"n\":2}\n{\"n\":4}\n");

  // A tail longer than one read of the repair, and zeros as a file system may leave.
  const std::string long_tail(10000, '\0');
  starsift::test::write_file(path, "{\"n\":1}\n" + long_tail);
  LineFile zeros(path);
  CHECK(zeros.repaired_bytes() == 10000);
  CHECK(read_file(path) == "{\"n\":1}\n");

  starsift::test::write_file(path, "no newline at all");
  LineFile none(path);
  CHECK(read_file(path).empty());
}

TEST_CASE("line file: a line the file system takes only part of is undone") {
  TempDir tmp;
  const auto path = tmp.path() / "a.jsonl";
  LineFile file(path);
  file.append("{\"n\":1}\n");
  // A file size limit 10 bytes on: the next line's write(2) stores 2 bytes of it, the next
  // fails with EFBIG.
  struct rlimit old {};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &old) == 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = old;
  small.rlim_cur = 10;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
  std::string error;
  try {
    file.append("{\"n\":2,\"long\":\"enough to pass the limit\"}\n");
  } catch (const starsift::Error& e) {
    error = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, old_handler);
  CHECK(error == "file '" + path.string() + "': cannot write: File too large");
  CHECK(read_file(path) == "{\"n\":1}\n");
  CHECK(file.bytes() == 8);
  file.append("{\"n\":3}\n");  // the file goes on where it was
  CHECK(read_file(path) == "{\"n\":1}\n{\"n\":3}\n");
}

TEST_CASE("line file: a file that cannot be opened is named") {
  TempDir tmp;
  const auto path = tmp.path() / "missing-dir" / "a.jsonl";
  try {
    LineFile file(path);
    FAIL("opened");
  } catch (const starsift::Error& e) {
    CHECK(std::string(e.what()) ==
          "file '" + path.string() + "': cannot open: No such file or directory");
  }
}
