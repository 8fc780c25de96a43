// The syntax-string parser behind COMMAND DOCS: every syntax string of the table parses, and
// the trees have the shapes Redis 7's COMMAND DOCS gives for the same syntax.
#include "hotkv/commands/command_docs.hpp"

#include <catch2/catch.hpp>

#include "hotkv/commands/table.hpp"

using hotkv::DocArg;
using hotkv::parse_command_syntax;

namespace {

std::vector<DocArg> args_of(std::string_view syntax) {
  auto tree = parse_command_syntax(syntax);
  INFO(syntax << ": " << tree.error);
  REQUIRE(tree.ok);
  return tree.arguments;
}

// "name:type[token]{flags}(children)" in one line, to compare whole trees.
std::string show(const std::vector<DocArg>& args) {
  std::string out;
  for (const DocArg& a : args) {
    out += (out.empty() ? "" : " ") + a.name + ":" + a.type;
    if (!a.token.empty()) {
      out += "[" + a.token + "]";
    }
    std::string flags = std::string(a.optional ? "o" : "") + (a.multiple ? "m" : "") +
                        (a.multiple_token ? "t" : "");
    if (!flags.empty()) {
      out += "{" + flags + "}";
    }
    if (!a.arguments.empty()) {
      out += "(" + show(a.arguments) + ")";
    }
  }
  return out;
}

}  // namespace

TEST_CASE("every syntax string of the command table parses", "[command_docs]") {
  for (const auto& c : hotkv::command_table().all()) {
    auto tree = parse_command_syntax(c.syntax);
    INFO(c.syntax << ": " << tree.error);
    CHECK(tree.ok);
  }
}

TEST_CASE("tokens, arguments, optional groups and one-ofs", "[command_docs]") {
  CHECK(show(args_of("GET key")) == "key:key");
  CHECK(show(args_of("PING")) == "");
  CHECK(show(args_of("SET key value [NX|XX] [GET] [EX seconds | PX milliseconds | KEEPTTL]")) ==
        "key:key value:string nx_xx:oneof{o}(nx:pure-token[NX] xx:pure-token[XX]) "
        "get:pure-token[GET]{o} "
        "seconds_milliseconds_keepttl:oneof{o}(seconds:integer[EX] milliseconds:integer[PX] "
        "keepttl:pure-token[KEEPTTL])");
  CHECK(show(args_of("LMOVE source destination LEFT|RIGHT LEFT|RIGHT")) ==
        "source:key destination:key left_right:oneof(left:pure-token[LEFT] "
        "right:pure-token[RIGHT]) left_right:oneof(left:pure-token[LEFT] "
        "right:pure-token[RIGHT])");
}

TEST_CASE("a token with one argument, a token with several, and repeats", "[command_docs]") {
  CHECK(
      show(args_of("SORT key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]]")) ==
      "key:key pattern:pattern[BY]{o} offset_count:block[LIMIT]{o}(offset:integer "
      "count:integer) pattern:pattern[GET]{omt}");
  CHECK(show(args_of("DEL key [key ...]")) == "key:key{m}");
  CHECK(show(args_of("INFO [section [section ...]]")) == "section:string{om}");
  CHECK(show(args_of("MSET key value [key value ...]")) ==
        "key_value:block{m}(key:key value:string)");
  CHECK(show(args_of("EVAL script numkeys [key [key ...]] [arg [arg ...]]")) ==
        "script:string numkeys:integer key:key{om} arg:string{om}");
  CHECK(show(args_of("BITFIELD_RO key [GET encoding offset ...]")) ==
        "key:key encoding_offset:block[GET]{omt}(encoding:string offset:integer)");
  CHECK(show(args_of("ZINTERSTORE destination numkeys key [key ...] [AGGREGATE SUM|MIN|MAX]")) ==
        "destination:key numkeys:integer key:key{m} sum_min_max:oneof[AGGREGATE]{o}("
        "sum:pure-token[SUM] min:pure-token[MIN] max:pure-token[MAX])");
  CHECK(show(args_of("ZUNION numkeys key [key ...] [WEIGHTS weight [weight ...]]")) ==
        "numkeys:integer key:key{m} weight:integer[WEIGHTS]{om}");
}

TEST_CASE("parenthesised alternatives and spaced alternatives at the top", "[command_docs]") {
  CHECK(show(args_of("GEOSEARCH key (FROMMEMBER member | FROMLONLAT longitude latitude)")) ==
        "key:key member_longitude_latitude:oneof(member:string[FROMMEMBER] "
        "longitude_latitude:block[FROMLONLAT](longitude:double latitude:double))");
  CHECK(show(args_of("REPLICAOF host port | NO ONE")) ==
        "host_port_one:oneof(host_port:block(host:string port:integer) "
        "one:block[NO](one:pure-token[ONE]))");
}

TEST_CASE("malformed syntax is reported, not guessed", "[command_docs]") {
  CHECK_FALSE(parse_command_syntax("X [a").ok);
  CHECK_FALSE(parse_command_syntax("X a]").ok);
  CHECK_FALSE(parse_command_syntax("X []").ok);
  CHECK_FALSE(parse_command_syntax("X a ...").ok);
  CHECK_FALSE(parse_command_syntax("X a |").ok);
  CHECK_FALSE(parse_command_syntax("X a||b").ok);
}
