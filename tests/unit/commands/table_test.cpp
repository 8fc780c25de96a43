// Invariants of the one command table, and the docs page generated from it.
#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "hotkv/commands/table.hpp"

using hotkv::command_table;

TEST_CASE("every command has arity and flags and a group and syntax and summary", "[table]") {
  const auto& t = command_table();
  REQUIRE(t.size() >= 60);
  for (const auto& c : t.all()) {
    INFO(c.name);
    CHECK(c.arity != 0);
    CHECK(c.handler != nullptr);
    CHECK(!c.group.empty());
    CHECK(!c.summary.empty());
    CHECK(c.syntax.rfind(c.name, 0) == 0);
    CHECK(((c.flags & hotkv::kWrite) == 0 || (c.flags & hotkv::kReadOnly) == 0));
    if (c.keys.first > 0) {
      CHECK(c.keys.step > 0);
      CHECK((c.keys.last < 0 || c.keys.last >= c.keys.first));
      CHECK((c.arity < 0 || c.keys.first < c.arity));
    }
    CHECK(t.find(c.name) == &c);
  }
}

TEST_CASE("a connection command a script may call needs no session", "[table]") {
  // Scripts run commands without a client session (scripting's command_allowed_in_scripts
  // tests kNoScript only): every connection command but these must carry kNoScript.
  const std::set<std::string> sessionless = {"PING", "ECHO", "SELECT"};
  for (const auto& c : command_table().all()) {
    INFO(c.name);
    if ((c.flags & hotkv::kConnection) != 0 && (c.flags & hotkv::kNoScript) == 0) {
      CHECK(sessionless.count(c.name) == 1);
    }
  }
}

TEST_CASE("what a busy script lets through is Redis's allow_busy", "[table]") {
  // Redis 7.0's COMMAND INFO: allow_busy on these commands and subcommands (WATCH and UNWATCH
  // too there; here a WATCH would reach the busy script's shard, so they wait).
  const std::set<std::string> whole = {"AUTH", "HELLO", "MULTI", "DISCARD",
                                       "QUIT", "RESET", "SHUTDOWN"};
  for (const auto& c : command_table().all()) {
    INFO(c.name);
    CHECK(((c.flags & hotkv::kAllowBusy) != 0) == (whole.count(c.name) == 1));
    for (const std::string& sub : c.allow_busy_subcommands) {
      CHECK(std::find(c.subcommands.begin(), c.subcommands.end(), sub) != c.subcommands.end());
    }
  }
  CHECK(command_table().find("SCRIPT")->allow_busy_subcommands ==
        std::vector<std::string>{"kill"});
  CHECK(command_table().find("FUNCTION")->allow_busy_subcommands ==
        std::vector<std::string>{"kill", "stats"});
}

TEST_CASE("lookup is case-insensitive and rejects unknown names", "[table]") {
  const auto& t = command_table();
  CHECK(t.find("get") == t.find("GET"));
  CHECK(t.find("gEt") != nullptr);
  CHECK(t.find("nope") == nullptr);
  CHECK(t.find(std::string(200, 'a')) == nullptr);
}

TEST_CASE("key positions follow first, last and step", "[table]") {
  const auto& t = command_table();
  std::vector<std::string_view> argv = {"MSET", "a", "1", "b", "2"};
  std::vector<size_t> idx;
  REQUIRE(hotkv::Table::key_indexes(*t.find("MSET"), argv, idx));
  CHECK(idx == std::vector<size_t>{1, 3});
  idx.clear();
  std::vector<std::string_view> obj = {"OBJECT", "ENCODING", "k"};
  REQUIRE(hotkv::Table::key_indexes(*t.find("OBJECT"), obj, idx));
  CHECK(idx == std::vector<size_t>{2});
}

TEST_CASE("docs/commands.md matches the command table", "[table][docs]") {
  std::ifstream in(HOTKV_SOURCE_DIR "/docs/commands.md");
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  // Regenerate with: build/hotkv --commands-markdown > docs/commands.md
  CHECK(ss.str() == hotkv::render_commands_markdown(command_table()));
}
