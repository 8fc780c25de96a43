// keys_on_distinct_shards (see test_server.hpp): apart from test_server.cpp because it asserts
// with Catch2, which only the unit tests link.
#include "support/test_server.hpp"

#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace hotkv::test {

std::vector<std::string> keys_on_distinct_shards(TestServer& s, const std::string& prefix,
                                                 size_t count) {
  std::vector<std::string> out;
  std::set<size_t> used;
  for (int i = 0; i < 10000 && out.size() < count; ++i) {
    std::string k = prefix + std::to_string(i);
    if (used.insert(s.engine().shard_of(k)).second) {
      out.push_back(k);
    }
  }
  REQUIRE(out.size() == count);
  return out;
}

}  // namespace hotkv::test
