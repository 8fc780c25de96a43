// Generic key commands and TTLs through TestServer, with time moved by the manual clock.
#include <set>

#include <catch2/catch.hpp>

#include "hotkv/resp/parser.hpp"
#include "support/test_server.hpp"

using hotkv::test::bulk;
using hotkv::test::integer;
using hotkv::test::kNil;
using hotkv::test::kOk;
using hotkv::test::TestServer;

namespace {

// Parses a SCAN reply "*2 $cursor *n $key..." into cursor and keys.
std::pair<std::string, std::vector<std::string>> parse_scan(const std::string& reply) {
  std::vector<std::string> parts;
  size_t pos = 0;
  std::string cursor;
  std::vector<std::string> keys;
  int bulk_index = 0;
  while (pos < reply.size()) {
    size_t eol = reply.find("\r\n", pos);
    std::string line = reply.substr(pos, eol - pos);
    pos = eol + 2;
    if (line[0] == '$') {
      size_t len = std::stoul(line.substr(1));
      std::string value = reply.substr(pos, len);
      pos += len + 2;
      if (bulk_index++ == 0) {
        cursor = value;
      } else {
        keys.push_back(value);
      }
    }
  }
  return {cursor, keys};
}

}  // namespace

TEST_CASE("DEL EXISTS TYPE and UNLINK count keys like Redis", "[keys]") {
  TestServer s;
  s.run({"MSET", "a", "1", "b", "2"});
  CHECK(s.run({"EXISTS", "a", "a", "nokey"}) == integer(2));
  CHECK(s.run({"TYPE", "a"}) == "+string\r\n");
  CHECK(s.run({"TYPE", "nokey"}) == "+none\r\n");
  CHECK(s.run({"DEL", "a", "nokey"}) == integer(1));
  CHECK(s.run({"UNLINK", "b"}) == integer(1));
  CHECK(s.run({"DBSIZE"}) == integer(0));
}

TEST_CASE("RENAME RENAMENX and COPY keep values and TTLs", "[keys]") {
  TestServer s;
  s.run({"SET", "src", "v", "EX", "100"});
  CHECK(s.run({"RENAME", "nokey", "x"}) == "-ERR no such key\r\n");
  CHECK(s.run({"RENAME", "src", "dst"}) == kOk);
  CHECK(s.run({"TTL", "dst"}) == integer(100));
  CHECK(s.run({"EXISTS", "src"}) == integer(0));
  CHECK(s.run({"RENAME", "dst", "dst"}) == kOk);
  s.run({"SET", "other", "o"});
  CHECK(s.run({"RENAMENX", "dst", "other"}) == integer(0));
  CHECK(s.run({"RENAMENX", "dst", "fresh"}) == integer(1));
  CHECK(s.run({"COPY", "fresh", "copy"}) == integer(1));
  CHECK(s.run({"COPY", "fresh", "copy"}) == integer(0));
  CHECK(s.run({"COPY", "fresh", "copy", "REPLACE"}) == integer(1));
  CHECK(s.run({"COPY", "fresh", "fresh"}) ==
        "-ERR source and destination objects are the same\r\n");
  CHECK(s.run({"COPY", "fresh", "c2", "DB", "16"}) == "-ERR DB index is out of range\r\n");
  CHECK(s.run({"GET", "copy"}) == bulk("v"));
  CHECK(s.run({"TTL", "copy"}) == integer(100));
}

TEST_CASE("EXPIRE family with NX XX GT LT and negative times", "[expire]") {
  TestServer s;
  s.run({"SET", "k", "v"});
  CHECK(s.run({"EXPIRE", "k", "100", "XX"}) == integer(0));
  CHECK(s.run({"EXPIRE", "k", "100", "NX"}) == integer(1));
  CHECK(s.run({"EXPIRE", "k", "200", "NX"}) == integer(0));
  CHECK(s.run({"EXPIRE", "k", "50", "GT"}) == integer(0));
  CHECK(s.run({"EXPIRE", "k", "200", "GT"}) == integer(1));
  CHECK(s.run({"EXPIRE", "k", "300", "LT"}) == integer(0));
  CHECK(s.run({"PEXPIRE", "k", "1500", "LT"}) == integer(1));
  CHECK(s.run({"PTTL", "k"}) == integer(1500));
  CHECK(s.run({"TTL", "k"}) == integer(2));  // rounded like Redis
  CHECK(s.run({"EXPIRE", "k", "1", "NX", "XX"}) ==
        "-ERR NX and XX, GT or LT options at the same time are not compatible\r\n");
  CHECK(s.run({"EXPIRE", "k", "1", "GT", "LT"}) ==
        "-ERR GT and LT options at the same time are not compatible\r\n");
  CHECK(s.run({"EXPIRE", "k", "1", "FOO"}) == "-ERR Unsupported option FOO\r\n");
  CHECK(s.run({"EXPIRE", "k", "x"}) == "-ERR value is not an integer or out of range\r\n");
  CHECK(s.run({"EXPIRE", "k", "9223372036854775807"}) ==
        "-ERR invalid expire time in 'expire' command\r\n");
  CHECK(s.run({"PERSIST", "k"}) == integer(1));
  CHECK(s.run({"PERSIST", "k"}) == integer(0));
  CHECK(s.run({"TTL", "k"}) == integer(-1));
  CHECK(s.run({"TTL", "nokey"}) == integer(-2));
  CHECK(s.run({"EXPIRETIME", "k"}) == integer(-1));
  CHECK(s.run({"EXPIREAT", "k", std::to_string(s.now() / 1000 + 60)}) == integer(1));
  CHECK(s.run({"EXPIRETIME", "k"}) == integer(s.now() / 1000 + 60));
  CHECK(s.run({"EXPIRE", "k", "-1"}) == integer(1));
  CHECK(s.run({"EXISTS", "k"}) == integer(0));
  CHECK(s.run({"EXPIRE", "nokey", "10"}) == integer(0));
}

TEST_CASE("active expiry removes keys at their deadline and counts them", "[expire]") {
  TestServer s;
  for (int i = 0; i < 1000; ++i) {
    s.run({"SET", "k" + std::to_string(i), "v", "PX", std::to_string(100 + i % 10)});
  }
  s.run({"SET", "forever", "v"});
  s.advance(99);
  CHECK(s.expire_cycle() == 0);
  s.advance(11);
  CHECK(s.expire_cycle() == 1000);
  CHECK(s.run({"DBSIZE"}) == integer(1));
  CHECK(s.run({"INFO", "stats"}).find("expired_keys:1000\r\n") != std::string::npos);
}

TEST_CASE("a replica's shards expire nothing until it is a master again", "[expire]") {
  TestServer s;
  s.run({"SET", "k", "v", "PX", "100"});
  s.engine().replication().become_replica("127.0.0.1", 1);
  s.advance(200);
  // The shard's timer round, as its expiry timer runs it: the master's DEL is awaited.
  s.engine().shard(0).run_expiry();
  CHECK(s.engine().shard(0).keyspace(0).size() == 1);
  s.engine().replication().become_master();
  s.engine().shard(0).run_expiry();
  CHECK(s.engine().shard(0).keyspace(0).size() == 0);
}

TEST_CASE("a rewritten TTL is honoured, not the stale one", "[expire]") {
  TestServer s;
  s.run({"SET", "k", "v", "PX", "100"});
  s.run({"PEXPIRE", "k", "500"});
  s.advance(200);
  CHECK(s.expire_cycle() == 0);
  CHECK(s.run({"GET", "k"}) == bulk("v"));
  s.advance(300);
  CHECK(s.expire_cycle() == 1);
}

TEST_CASE("SCAN visits every key across shards while the table grows", "[keys]") {
  for (size_t shards : {1, 3}) {
    TestServer s(shards);
    std::set<std::string> original;
    for (int i = 0; i < 2000; ++i) {
      std::string k = "key:" + std::to_string(i);
      s.run({"SET", k, "v"});
      original.insert(k);
    }
    std::set<std::string> seen;
    std::string cursor = "0";
    int calls = 0;
    int extra = 0;
    do {
      auto [next, keys] = parse_scan(s.run({"SCAN", cursor, "COUNT", "50"}));
      seen.insert(keys.begin(), keys.end());
      cursor = next;
      for (int j = 0; j < 20; ++j) {
        s.run({"SET", "grow:" + std::to_string(extra++), "v"});
      }
      REQUIRE(++calls < 10000);
    } while (cursor != "0");
    for (const auto& k : original) {
      CHECK(seen.count(k) == 1);
    }
  }
}

TEST_CASE("SCAN MATCH TYPE and bad arguments", "[keys]") {
  TestServer s;
  s.run({"MSET", "user:1", "a", "user:2", "b", "item:1", "c"});
  auto [cursor, keys] = parse_scan(s.run({"SCAN", "0", "MATCH", "user:*", "COUNT", "1000"}));
  CHECK(cursor == "0");
  CHECK(keys.size() == 2);
  auto [c2, typed] = parse_scan(s.run({"SCAN", "0", "TYPE", "hash", "COUNT", "1000"}));
  CHECK(typed.empty());
  CHECK(s.run({"SCAN", "abc"}) == "-ERR invalid cursor\r\n");
  CHECK(s.run({"SCAN", "0", "COUNT", "0"}) == "-ERR syntax error\r\n");
  CHECK(s.run({"SCAN", "0", "MATCH"}) == "-ERR syntax error\r\n");
  CHECK(s.run({"KEYS", "user:?"}).substr(0, 4) == "*2\r\n");
  CHECK(s.run({"RANDOMKEY"}).substr(0, 1) == "$");
  s.run({"FLUSHALL"});
  CHECK(s.run({"RANDOMKEY"}) == kNil);
  CHECK(s.run({"FLUSHALL", "ASYNC"}) == kOk);
  CHECK(s.run({"FLUSHALL", "LATER"}) == "-ERR syntax error\r\n");
}
