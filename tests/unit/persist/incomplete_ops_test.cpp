// Unit tests for where replay stops reading each log file: before the first part of an
// operation over several shards that is not whole, repeated while a cut tears off parts of
// operations that were.
#include "hotkv/persist/incomplete_ops.hpp"

#include <catch2/catch.hpp>

using hotkv::cut_incomplete_operations;
using hotkv::PartMark;

TEST_CASE("whole operations keep every file whole", "[persist][incomplete]") {
  std::vector<std::vector<PartMark>> marks = {
      {{10, 1, 2}, {50, 2, 2}},
      {{0, 1, 2}, {30, 2, 2}},
  };
  REQUIRE(cut_incomplete_operations(marks, {100, 80}) == std::vector<uint64_t>{100, 80});
}

TEST_CASE("a file stops before its first operation with a part missing",
          "[persist][incomplete]") {
  // Operation 7 has three parts, only two were written.
  std::vector<std::vector<PartMark>> marks = {
      {{10, 7, 3}},
      {{20, 7, 3}},
      {},
  };
  REQUIRE(cut_incomplete_operations(marks, {100, 100, 100}) ==
          std::vector<uint64_t>{10, 20, 100});
}

TEST_CASE("a part torn off by a cut makes its operation incomplete everywhere",
          "[persist][incomplete]") {
  // File 0: split operation 1 (its part on file 2 is missing), then operation 2, whole in
  // files 0 and 1. Cutting file 0 at operation 1 removes operation 2's part there, so file 1
  // must stop before operation 2 as well, and so before operation 3 after it.
  std::vector<std::vector<PartMark>> marks = {
      {{5, 1, 2}, {40, 2, 2}},
      {{0, 3, 2}, {12, 2, 2}, {60, 4, 2}},
      {{8, 3, 2}, {30, 4, 2}},
  };
  std::vector<uint64_t> cut = cut_incomplete_operations(marks, {90, 90, 90});
  REQUIRE(cut == std::vector<uint64_t>{5, 12, 30});
}

TEST_CASE("a record beyond a torn tail does not count", "[persist][incomplete]") {
  std::vector<std::vector<PartMark>> marks = {
      {{10, 9, 2}},
      {{70, 9, 2}},
  };
  REQUIRE(cut_incomplete_operations(marks, {50, 60}) == std::vector<uint64_t>{10, 60});
}
