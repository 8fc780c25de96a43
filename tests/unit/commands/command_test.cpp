// COMMAND through TestServer: GETKEYS and GETKEYSANDFLAGS in Redis 7's order of checks, the
// movablekeys flag, LIST filters, DOCS's argument trees; and MODULE without module support.
#include <catch2/catch.hpp>

#include "support/test_server.hpp"

using hotkv::test::arr;
using hotkv::test::bulk;
using hotkv::test::TestServer;

namespace {
bool contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}
std::string key_with_flags(const std::string& key, std::initializer_list<const char*> flags) {
  std::string out = "*2\r\n" + bulk(key) + "~" + std::to_string(flags.size()) + "\r\n";
  for (const char* f : flags) {
    out += std::string("+") + f + "\r\n";
  }
  return out;
}
}  // namespace

TEST_CASE("COMMAND GETKEYS follows Redis's order of checks", "[command]") {
  TestServer s;
  CHECK(s.run({"COMMAND", "GETKEYS", "EVAL", "return 1", "1", "k"}) == arr({bulk("k")}));
  // EVAL's keys all come from its arguments: none is a valid answer.
  CHECK(s.run({"COMMAND", "GETKEYS", "EVAL", "return 1", "0"}) == "*0\r\n");
  CHECK(s.run({"COMMAND", "GETKEYS", "MEMORY", "USAGE", "k"}) == arr({bulk("k")}));
  CHECK(s.run({"COMMAND", "GETKEYS", "MEMORY", "HELP"}) ==
        "-ERR Invalid arguments specified for command\r\n");
  CHECK(s.run({"COMMAND", "GETKEYS", "PING", "x"}) == "-ERR The command has no key arguments\r\n");
  CHECK(s.run({"COMMAND", "GETKEYS", "GET", "a", "b"}) ==
        "-ERR Invalid number of arguments specified for command\r\n");
  CHECK(s.run({"COMMAND", "GETKEYS", "NOPE", "x"}) == "-ERR Invalid command specified\r\n");
}

TEST_CASE("COMMAND GETKEYSANDFLAGS names what the call does with each key", "[command]") {
  TestServer s;
  CHECK(s.run3({"COMMAND", "GETKEYSANDFLAGS", "SET", "k1", "v1"}) ==
        "*1\r\n" + key_with_flags("k1", {"OW", "update"}));
  CHECK(s.run3({"COMMAND", "GETKEYSANDFLAGS", "SET", "k1", "v1", "GET"}) ==
        "*1\r\n" + key_with_flags("k1", {"RW", "access", "update"}));
  CHECK(s.run3({"COMMAND", "GETKEYSANDFLAGS", "LMOVE", "k1", "k2", "left", "right"}) ==
        "*2\r\n" + key_with_flags("k1", {"RW", "access", "delete"}) +
            key_with_flags("k2", {"RW", "insert"}));
  CHECK(s.run3({"COMMAND", "GETKEYSANDFLAGS", "SORT", "k1", "STORE", "k2"}) ==
        "*2\r\n" + key_with_flags("k1", {"RO", "access"}) + key_with_flags("k2", {"OW", "update"}));
  CHECK(s.run3({"COMMAND", "GETKEYSANDFLAGS", "DEL", "a"}) ==
        "*1\r\n" + key_with_flags("a", {"RM", "delete"}));
  CHECK(s.run3({"COMMAND", "GETKEYSANDFLAGS", "INV.RESERVE", "i", "h", "1", "100"}) ==
        "*1\r\n" + key_with_flags("i", {"RW", "access", "update"}));
}

TEST_CASE("COMMAND INFO marks movable keys", "[command]") {
  TestServer s;
  auto movable = [&](const std::string& name) {
    return contains(s.run({"COMMAND", "INFO", name}), "+movablekeys\r\n");
  };
  for (const char* name : {"ZUNIONSTORE", "XREAD", "EVAL", "SORT", "SORT_RO", "GEORADIUS"}) {
    INFO(name);
    CHECK(movable(name));
  }
  for (const char* name : {"SET", "GET", "MSET", "LMOVE", "BLPOP", "MEMORY", "OBJECT", "PING"}) {
    INFO(name);
    CHECK_FALSE(movable(name));
  }
  CHECK(s.run({"COMMAND", "INFO", "get|key"}) == "*1\r\n*-1\r\n");
}

TEST_CASE("COMMAND LIST filters by pattern, category and module", "[command]") {
  TestServer s;
  CHECK(s.run({"COMMAND", "LIST", "FILTERBY", "PATTERN", "set"}) == arr({bulk("set")}));
  std::string cl = s.run({"COMMAND", "LIST", "FILTERBY", "PATTERN", "cl*help"});
  CHECK(contains(cl, bulk("client|help")));
  CHECK(contains(cl, bulk("cluster|help")));
  std::string scripting = s.run({"COMMAND", "LIST", "FILTERBY", "ACLCAT", "scripting"});
  CHECK(contains(scripting, bulk("eval")));
  CHECK(contains(scripting, bulk("script|kill")));
  CHECK_FALSE(contains(scripting, bulk("set")));
  CHECK(s.run({"COMMAND", "LIST", "FILTERBY", "MODULE", "x"}) == "*0\r\n");
  CHECK(s.run({"COMMAND", "LIST", "FILTERBY", "ACLCAT", "nope"}) == "*0\r\n");
  CHECK(s.run({"COMMAND", "LIST", "bad"}) == "-ERR syntax error\r\n");
  CHECK(s.run({"COMMAND", "LIST", "FILTERBY", "bad", "x"}) == "-ERR syntax error\r\n");
}

TEST_CASE("COMMAND DOCS gives Redis 7's shape with argument trees", "[command]") {
  TestServer s;
  std::string docs = s.run3({"COMMAND", "DOCS", "SET"});
  CHECK(docs.rfind("%1\r\n" + bulk("set") + "%4\r\n" + bulk("summary"), 0) == 0);
  CHECK(contains(docs, bulk("group") + bulk("string")));
  CHECK(contains(docs, bulk("arguments") + "*5\r\n%2\r\n" + bulk("name") + bulk("key") +
                           bulk("type") + bulk("key")));
  // [NX|XX]: an optional oneof of two tokens.
  CHECK(contains(docs, bulk("type") + bulk("oneof") + bulk("flags") + "~1\r\n+optional\r\n"));
  CHECK(contains(docs, bulk("name") + bulk("nx") + bulk("type") + bulk("pure-token") +
                           bulk("token") + bulk("NX")));
  // A command without arguments has no "arguments" field; unknown names are skipped.
  CHECK(s.run3({"COMMAND", "DOCS", "PING", "NOPE"}).rfind("%1\r\n" + bulk("ping") + "%4\r\n", 0) ==
        0);
  CHECK(s.run3({"COMMAND", "DOCS", "TIME"}).rfind("%1\r\n" + bulk("time") + "%3\r\n", 0) == 0);
  CHECK(s.run({"COMMAND", "DOCS", "NOPE"}) == "*0\r\n");
}

TEST_CASE("MODULE lists none and refuses to load", "[command]") {
  TestServer s;
  CHECK(s.run({"MODULE", "LIST"}) == "*0\r\n");
  CHECK(s.run({"MODULE", "HELP"}).rfind("*11\r\n+MODULE <subcommand>", 0) == 0);
  CHECK(s.run({"MODULE", "LOAD", "/x.so"}).rfind("-ERR MODULE command not allowed.", 0) == 0);
  CHECK(s.run({"MODULE", "UNLOAD", "x"}).rfind("-ERR MODULE command not allowed.", 0) == 0);
  CHECK(s.run({"MODULE", "LIST", "x"}) ==
        "-ERR wrong number of arguments for 'module|list' command\r\n");
  CHECK(s.run({"MODULE", "NOPE"}) == "-ERR unknown subcommand 'NOPE'. Try MODULE HELP.\r\n");
}
