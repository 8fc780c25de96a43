// SyncPayloadReader: both framings of a full sync's RDB image, keep-alives before the header,
// the end mark found wherever the reads split it, and the bytes after the payload left over.
#include "hotkv/net/sync_payload.hpp"

#include <string>

#include <catch2/catch.hpp>

namespace hotkv {
namespace {

const std::string kMark(40, 'a');

// Feeds `wire` in two reads split at `split`; returns the bytes not consumed.
std::string feed_split(SyncPayloadReader& r, const std::string& wire, size_t split) {
  std::string left;
  std::string_view first(wire.data(), split);
  std::string_view second(wire.data() + split, wire.size() - split);
  size_t used = r.feed(first);
  left.append(first.substr(used));
  if (left.empty()) {
    used = r.feed(second);
    left.append(second.substr(used));
  } else {
    left.append(second);
  }
  return left;
}

}  // namespace

TEST_CASE("A sized payload is read to its length and what follows is left over", "[replication]") {
  const std::string body = "REDIS0009\xff" + std::string("12345678");
  const std::string wire = "\n\n$" + std::to_string(body.size()) + "\r\n" + body + "*1\r\n$4\r\nPING\r\n";
  for (size_t split = 0; split <= wire.size(); ++split) {
    SyncPayloadReader r;
    std::string left = feed_split(r, wire, split);
    INFO("split at " << split);
    REQUIRE(r.done());
    CHECK_FALSE(r.diskless());
    CHECK(r.keepalives() == 2);
    CHECK(r.expected_size() == body.size());
    CHECK(r.body() == body);
    CHECK(left == "*1\r\n$4\r\nPING\r\n");
  }
}

TEST_CASE("An EOF-marked payload ends at its mark wherever the reads split it", "[replication]") {
  // The body holds a near miss of the mark, which must not end it.
  const std::string body = "REDIS0009" + std::string(39, 'a') + "b" + "tail";
  const std::string wire = "\n$EOF:" + kMark + "\r\n" + body + kMark;
  for (size_t split = 0; split <= wire.size(); ++split) {
    SyncPayloadReader r;
    std::string left = feed_split(r, wire, split);
    INFO("split at " << split);
    REQUIRE(r.done());
    CHECK(r.diskless());
    CHECK(r.body() == body);
    CHECK(left.empty());
  }
  SECTION("bytes after the mark in the same read are not swallowed") {
    SyncPayloadReader r;
    std::string more = wire + "*1\r\n$4\r\nPING\r\n";
    size_t used = r.feed(more);
    REQUIRE(r.done());
    CHECK(more.substr(used) == "*1\r\n$4\r\nPING\r\n");
  }
  SECTION("one byte at a time") {
    SyncPayloadReader r;
    for (char c : wire) {
      REQUIRE_FALSE(r.done());
      CHECK(r.feed(std::string_view(&c, 1)) == 1);
    }
    CHECK(r.done());
    CHECK(r.body() == body);
  }
}

TEST_CASE("A payload header that is not one fails the sync", "[replication]") {
  SECTION("the master's error") {
    SyncPayloadReader r;
    r.feed("-ERR no space\r\n");
    REQUIRE(r.failed());
    CHECK(r.error().find("ERR no space") != std::string::npos);
  }
  SECTION("something else") {
    SyncPayloadReader r;
    r.feed("+OK\r\n");
    CHECK(r.failed());
  }
  SECTION("a bad length") {
    SyncPayloadReader r;
    r.feed("$12x\r\n");
    CHECK(r.failed());
  }
  SECTION("a line that never ends") {
    SyncPayloadReader r;
    r.feed(std::string(SyncPayloadReader::kMaxHeaderLine + 1, '$'));
    CHECK(r.failed());
  }
  SECTION("an empty sized payload is done at once") {
    SyncPayloadReader r;
    CHECK(r.feed("$0\r\n") == 4);
    CHECK(r.done());
  }
}

}  // namespace hotkv
