// Connection and server commands through TestServer: HELLO, AUTH, SELECT, CLIENT, CONFIG,
// COMMAND and INFO.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdlib.h>

#include "support/test_server.hpp"

using hotkv::test::bulk;
using hotkv::test::integer;
using hotkv::test::kNil;
using hotkv::test::kOk;
using hotkv::test::TestServer;

namespace {
bool contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}
}  // namespace

TEST_CASE("PING ECHO SELECT and unknown commands", "[server]") {
  TestServer s;
  CHECK(s.run({"PING"}) == "+PONG\r\n");
  CHECK(s.run({"ping", "hi"}) == bulk("hi"));
  CHECK(s.run({"PING", "a", "b"}) == "-ERR wrong number of arguments for 'ping' command\r\n");
  CHECK(s.run({"ECHO", "x"}) == bulk("x"));
  CHECK(s.run({"SELECT", "0"}) == kOk);
  CHECK(s.run({"SELECT", "16"}) == "-ERR DB index is out of range\r\n");
  CHECK(s.run({"SELECT", "x"}) == "-ERR value is not an integer or out of range\r\n");
  CHECK(s.run({"NOPE", "a", "b"}) ==
        "-ERR unknown command 'NOPE', with args beginning with: 'a' 'b' \r\n");
  CHECK(s.run({"GET"}) == "-ERR wrong number of arguments for 'get' command\r\n");
}

TEST_CASE("HELLO switches protocol and replies with Redis's fields", "[server]") {
  TestServer s;
  std::string r2 = s.run({"HELLO"});
  CHECK(r2.substr(0, 5) == "*14\r\n");
  std::string r3 = s.run({"HELLO", "3"});
  CHECK(r3.substr(0, 4) == "%7\r\n");
  for (const char* field : {"server", "version", "proto", "id", "mode", "role", "modules"}) {
    CHECK(contains(r3, bulk(field)));
  }
  CHECK(contains(r3, bulk("proto") + ":3\r\n"));
  CHECK(s.run({"GET", "missing"}) == "_\r\n");
  CHECK(s.run({"HELLO", "4"}) == "-NOPROTO unsupported protocol version\r\n");
  CHECK(s.run({"HELLO", "x"}) == "-ERR Protocol version is not an integer or out of range\r\n");
  CHECK(s.run({"HELLO", "3", "FOO"}) == "-ERR Syntax error in HELLO option 'FOO'\r\n");
  CHECK(s.run({"HELLO", "2", "SETNAME", "worker-1"}).substr(0, 5) == "*14\r\n");
  CHECK(s.run({"CLIENT", "GETNAME"}) == bulk("worker-1"));
  CHECK(s.run({"GET", "missing"}) == kNil);
}

TEST_CASE("requirepass gates every command until AUTH", "[server]") {
  TestServer s;
  CHECK(s.run({"AUTH", "pw"}).substr(0, 50) ==
        "-ERR AUTH <password> called without any password c");
  REQUIRE(s.config().set("requirepass", "secret", false).is_ok());
  s.session().authenticated = false;
  CHECK(s.run({"GET", "k"}) == "-NOAUTH Authentication required.\r\n");
  CHECK(s.run({"AUTH", "wrong"}) ==
        "-WRONGPASS invalid username-password pair or user is disabled.\r\n");
  CHECK(s.run({"HELLO", "3"}).substr(0, 7) == "-NOAUTH");
  CHECK(s.run({"HELLO", "2", "AUTH", "default", "secret"}).substr(0, 5) == "*14\r\n");
  CHECK(s.run({"GET", "k"}) == kNil);
  CHECK(s.run({"AUTH", "someone", "secret"}) ==
        "-WRONGPASS invalid username-password pair or user is disabled.\r\n");
  CHECK(s.run({"AUTH", "default", "secret"}) == kOk);
}

TEST_CASE("CLIENT subcommands", "[server]") {
  TestServer s;
  CHECK(s.run({"CLIENT", "ID"}) == integer(static_cast<int64_t>(s.session().info->id)));
  CHECK(s.run({"CLIENT", "GETNAME"}) == kNil);
  CHECK(s.run({"CLIENT", "SETNAME", "bad name"}) ==
        "-ERR Client names cannot contain spaces, newlines or special characters.\r\n");
  CHECK(s.run({"CLIENT", "SETNAME", "good"}) == kOk);
  CHECK(s.run({"CLIENT", "SETINFO", "LIB-NAME", "redis-py"}) == kOk);
  CHECK(s.run({"CLIENT", "SETINFO", "BAD", "x"}) == "-ERR Unrecognized option 'BAD'\r\n");
  CHECK(s.run({"CLIENT", "NO-EVICT", "on"}) == kOk);
  CHECK(s.run({"CLIENT", "FOO"}) ==
        "-ERR unknown subcommand 'FOO'. Try CLIENT HELP.\r\n");
  CHECK(s.run({"CLIENT", "KILL", "1.2.3.4:5"}) == "-ERR No such client\r\n");
  CHECK(s.run({"CLIENT", "KILL", "ID", "999999"}) == integer(0));
}

TEST_CASE("CONFIG GET globs while SET validates and immutables refuse", "[server]") {
  TestServer s;
  CHECK(s.run({"CONFIG", "GET", "maxclients"}) == "*2\r\n" + bulk("maxclients") + bulk("10000"));
  std::string many = s.run({"CONFIG", "GET", "*max*"});
  CHECK(contains(many, bulk("maxclients")));
  CHECK(contains(many, bulk("proto-max-bulk-len")));
  CHECK(s.run({"CONFIG", "SET", "timeout", "30"}) == kOk);
  CHECK(s.run({"CONFIG", "GET", "timeout"}) == "*2\r\n" + bulk("timeout") + bulk("30"));
  CHECK(s.run({"CONFIG", "SET", "timeout", "abc"}) ==
        "-ERR CONFIG SET failed (possibly related to argument 'timeout') - argument couldn't be "
        "parsed into an integer\r\n");
  CHECK(s.run({"CONFIG", "SET", "daemonize", "yes"}) ==
        "-ERR CONFIG SET failed (possibly related to argument 'daemonize') - can't set immutable "
        "config\r\n");
  CHECK(s.run({"CONFIG", "SET", "daemonize", "no"}) == kOk);  // its own value: no change
  CHECK(s.run({"CONFIG", "SET", "nope", "1"}) ==
        "-ERR Unknown option or number of arguments for CONFIG SET - 'nope'\r\n");
  CHECK(s.run({"CONFIG", "SET", "proto-max-bulk-len", "2mb"}) == kOk);
  CHECK(s.config().proto_max_bulk_len.load() == 2 * 1024 * 1024);
  CHECK(s.run({"CONFIG", "RESETSTAT"}) == kOk);
  CHECK(s.run3({"CONFIG", "GET", "timeout"}) == "%1\r\n" + bulk("timeout") + bulk("30"));
}

TEST_CASE("INFO has the fields tools read", "[server]") {
  TestServer s;
  s.run({"SET", "a", "1"});
  s.run({"SET", "b", "1", "EX", "100"});
  s.run({"GET", "a"});
  s.run({"GET", "zz"});
  std::string info = s.run({"INFO"});
  for (const char* f :
       {"redis_version:", "uptime_in_seconds:", "connected_clients:", "used_memory:",
        "used_memory_rss:", "total_commands_processed:", "instantaneous_ops_per_sec:",
        "keyspace_hits:1\r\n", "keyspace_misses:1\r\n", "expired_keys:",
        "db0:keys=2,expires=1,avg_ttl=0", "# CPU", "used_cpu_user:"}) {
    CHECK(contains(info, f));
  }
  CHECK_FALSE(contains(info, "# Commandstats"));
  std::string all = s.run({"INFO", "all"});
  CHECK(contains(all, "cmdstat_set:calls=2,"));
  std::string stats = s.run({"INFO", "stats"});
  CHECK_FALSE(contains(stats, "# Server"));
}

TEST_CASE("COMMAND replies come from the table", "[server]") {
  TestServer s;
  std::string count = s.run({"COMMAND", "COUNT"});
  CHECK(count.size() > 3);
  CHECK(s.run({"COMMAND", "GETKEYS", "MSET", "a", "1", "b", "2"}) ==
        "*2\r\n" + bulk("a") + bulk("b"));
  CHECK(s.run({"COMMAND", "GETKEYS", "PING", "x"}) == "-ERR The command has no key arguments\r\n");
  CHECK(s.run({"COMMAND", "GETKEYS", "NOPE", "x"}) == "-ERR Invalid command specified\r\n");
  CHECK(s.run({"COMMAND", "GETKEYS", "GET", "a", "b"}) ==
        "-ERR Invalid number of arguments specified for command\r\n");
  std::string info = s.run({"COMMAND", "INFO", "get", "nope"});
  CHECK(info.substr(0, 4) == "*2\r\n");
  CHECK(contains(info, bulk("get") + ":2\r\n"));
  CHECK(contains(info, "*-1\r\n"));
  std::string docs = s.run({"COMMAND", "DOCS", "set"});
  CHECK(contains(docs, bulk("summary")));
  CHECK(contains(docs, bulk("group") + bulk("string")));
}

TEST_CASE("persistence commands answer without a log configured", "[server][persist]") {
  TestServer s;
  const std::string disabled = "-ERR Append only file is disabled (appendonly no)\r\n";
  CHECK(s.run({"BGREWRITEAOF"}) == disabled);
  CHECK(s.run({"BGREWRITEAOF", "x"}) ==
        "-ERR wrong number of arguments for 'bgrewriteaof' command\r\n");
  CHECK(s.run({"BGSAVE", "x"}) == "-ERR syntax error\r\n");
  CHECK(s.run({"BGSAVE", "SCHEDULE", "x"}) == "-ERR syntax error\r\n");
  CHECK(s.run({"LASTSAVE"}).substr(0, 1) == ":");
  std::string info = s.run({"INFO", "persistence"});
  CHECK(contains(info, "aof_enabled:0\r\n"));
  CHECK(contains(info, "aof_last_write_status:ok\r\n"));
  CHECK(contains(info, "loading:0\r\n"));
}

TEST_CASE("SAVE writes dir/dbfilename as an RDB file through a temporary file",
          "[server][persist][rdb]") {
  TestServer s;
  char tmpl[] = "/tmp/hotkv-save-XXXXXX";
  REQUIRE(::mkdtemp(tmpl) != nullptr);
  const std::string dir = tmpl;
  REQUIRE(s.config().set("dir", dir, true).is_ok());
  CHECK(s.run({"CONFIG", "GET", "dbfilename"}) == "*2\r\n" + bulk("dbfilename") + bulk("dump.rdb"));
  CHECK(s.run({"CONFIG", "SET", "dbfilename", "a/b.rdb"}).substr(0, 4) == "-ERR");
  CHECK(s.run({"CONFIG", "SET", "dbfilename", "snap.rdb"}) == kOk);
  s.run({"SET", "k", "v"});
  s.run({"RPUSH", "l", "a", "b"});
  CHECK(contains(s.run({"INFO", "persistence"}), "rdb_changes_since_last_save:2\r\n"));
  CHECK(s.run({"SAVE"}) == kOk);
  std::ifstream in(dir + "/snap.rdb", std::ios::binary);
  std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(file.substr(0, 9) == "REDIS0010");
  CHECK(file.find("redis-ver") != std::string::npos);
  std::string info = s.run({"INFO", "persistence"});
  CHECK(contains(info, "rdb_changes_since_last_save:0\r\n"));
  CHECK(contains(info, "rdb_saves:1\r\n"));
  CHECK(contains(info, "rdb_bgsave_in_progress:0\r\n"));
  CHECK(contains(info, "rdb_last_bgsave_status:ok\r\n"));
  // Only the file itself is left: the temporary one was renamed.
  size_t entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    (void)e;
    ++entries;
  }
  CHECK(entries == 1);
  std::filesystem::remove_all(dir);
}
