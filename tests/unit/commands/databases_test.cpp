// Databases through TestServer: SELECT, MOVE, COPY ... DB, SWAPDB, FLUSHDB/FLUSHALL, and the
// log those write replayed into a fresh server (every effect lands in its own database).
#include <catch2/catch.hpp>

#include "support/replay.hpp"
#include "support/test_server.hpp"

using hotkv::test::bulk;
using hotkv::test::integer;
using hotkv::test::kNil;
using hotkv::test::kOk;
using hotkv::test::LogFile;
using hotkv::test::TestServer;

TEST_CASE("SELECT keeps databases apart and checks its index", "[databases]") {
  TestServer s;
  s.run({"SET", "k", "zero"});
  CHECK(s.run({"SELECT", "3"}) == kOk);
  CHECK(s.run({"GET", "k"}) == kNil);
  s.run({"SET", "k", "three"});
  CHECK(s.run({"DBSIZE"}) == integer(1));
  CHECK(s.run({"SELECT", "16"}) == "-ERR DB index is out of range\r\n");
  CHECK(s.run({"SELECT", "-1"}) == "-ERR DB index is out of range\r\n");
  CHECK(s.run({"SELECT", "x"}) == "-ERR value is not an integer or out of range\r\n");
  CHECK(s.session().db == 3);
  CHECK(s.run({"SELECT", "0"}) == kOk);
  CHECK(s.run({"GET", "k"}) == bulk("zero"));
}

TEST_CASE("MOVE and COPY DB carry the value and its deadline", "[databases]") {
  TestServer s;
  s.run({"SET", "k", "v", "EX", "100"});
  CHECK(s.run({"MOVE", "k", "0"}) == "-ERR source and destination objects are the same\r\n");
  CHECK(s.run({"MOVE", "k", "99"}) == "-ERR DB index is out of range\r\n");
  CHECK(s.run({"MOVE", "k", "2"}) == integer(1));
  CHECK(s.run({"EXISTS", "k"}) == integer(0));
  CHECK(s.run({"MOVE", "k", "2"}) == integer(0));
  s.run({"SELECT", "2"});
  CHECK(s.run({"TTL", "k"}) == integer(100));
  CHECK(s.run({"COPY", "k", "k", "DB", "5"}) == integer(1));
  CHECK(s.run({"COPY", "k", "k", "DB", "5"}) == integer(0));
  s.run({"SELECT", "5"});
  CHECK(s.run({"GET", "k"}) == bulk("v"));
  CHECK(s.run({"TTL", "k"}) == integer(100));
}

TEST_CASE("SWAPDB trades contents, FLUSHDB empties one database, FLUSHALL all", "[databases]") {
  TestServer s;
  s.run({"SET", "a", "0"});
  s.run({"SELECT", "1"});
  s.run({"RPUSH", "l", "x"});
  CHECK(s.run({"SWAPDB", "0", "x"}) == "-ERR invalid second DB index\r\n");
  CHECK(s.run({"SWAPDB", "0", "1"}) == kOk);
  CHECK(s.run({"GET", "a"}) == bulk("0"));
  CHECK(s.run({"FLUSHDB"}) == kOk);
  CHECK(s.run({"DBSIZE"}) == integer(0));
  s.run({"SELECT", "0"});
  CHECK(s.run({"LLEN", "l"}) == integer(1));
  CHECK(s.run({"FLUSHALL"}) == kOk);
  CHECK(s.run({"DBSIZE"}) == integer(0));
}

TEST_CASE("The log replays every database's effects into that database", "[databases]") {
  TestServer s;
  LogFile log(s);
  s.run({"SET", "k", "zero"});
  s.run({"SELECT", "4"});
  s.run({"SET", "k", "four", "PX", "50000"});
  s.run({"HSET", "h", "f", "v"});
  s.run({"MOVE", "h", "6"});
  s.run({"SELECT", "7"});
  s.run({"SET", "gone", "1"});
  s.run({"FLUSHDB"});
  s.run({"SET", "x", "7"});
  s.run({"SWAPDB", "7", "8"});
  TestServer r;
  hotkv::test::replay(log.contents(), r);
  CHECK(r.run({"GET", "k"}) == bulk("zero"));
  r.run({"SELECT", "4"});
  CHECK(r.run({"GET", "k"}) == bulk("four"));
  CHECK(r.run({"PTTL", "k"}) == integer(50000));
  CHECK(r.run({"EXISTS", "h"}) == integer(0));
  r.run({"SELECT", "6"});
  CHECK(r.run({"HGET", "h", "f"}) == bulk("v"));
  r.run({"SELECT", "7"});
  CHECK(r.run({"DBSIZE"}) == integer(0));
  r.run({"SELECT", "8"});
  CHECK(r.run({"GET", "x"}) == bulk("7"));
  CHECK(r.run({"EXISTS", "gone"}) == integer(0));
}
