// Invariants of the one command table, and the docs page generated from it.
#include <fstream>
#include <sstream>

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
