// Stream commands without consumer groups (XADD, XLEN, XRANGE, XREVRANGE, XDEL, XTRIM, XREAD,
// XSETID, XINFO STREAM) through the real table and shard, checked against Redis 7.2's replies
// and error texts. Consumer groups are in stream_groups_test.cpp.
#include <catch2/catch.hpp>

#include "hotkv/commands/command_call.hpp"
#include "hotkv/commands/context.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/util/clock.hpp"
#include "support/resp_value.hpp"
#include "support/test_server.hpp"

using hotkv::test::arr;
using hotkv::test::ent;
using hotkv::test::error;
using hotkv::test::kNilArray;
using hotkv::test::bulk;
using hotkv::test::integer;
using hotkv::test::kNil;
using hotkv::test::kOk;
using hotkv::test::parse_resp;
using hotkv::test::TestServer;

namespace {

void add_ids(TestServer& s, const std::string& key, int from, int to) {
  for (int i = from; i <= to; ++i) {
    REQUIRE(s.run({"XADD", key, std::to_string(i), "f", "v"}) == bulk(std::to_string(i) + "-0"));
  }
}

// Runs a command as a connection allowed to block would, so a BLOCK read can ask to block.
std::string run_blockable(TestServer& s, std::vector<std::string> argv,
                          hotkv::CommandContext::BlockRequest& req, bool woken = false) {
  std::vector<std::string_view> views(argv.begin(), argv.end());
  std::string out;
  hotkv::ReplyWriter w(out, 2);
  const hotkv::CommandSpec* spec = s.engine().table().find(argv[0]);
  REQUIRE(spec != nullptr);
  hotkv::execute_command(*spec, views, s.engine(), s.engine().shard(0), false, &s.session(),
                         s.session().db, w, &req, woken);
  return out;
}

}  // namespace

TEST_CASE("XADD with auto ids follows the clock and stays increasing when the clock goes back",
          "[streams]") {
  TestServer s;
  CHECK(s.run({"XADD", "s", "*", "f", "v"}) == bulk("1700000000000-0"));
  CHECK(s.run({"XADD", "s", "*", "f", "v"}) == bulk("1700000000000-1"));
  s.advance(5);
  CHECK(s.run({"XADD", "s", "*", "f", "v"}) == bulk("1700000000005-0"));
  s.advance(-1000);
  CHECK(s.run({"XADD", "s", "*", "f", "v"}) == bulk("1700000000005-1"));
  CHECK(s.run({"XLEN", "s"}) == integer(4));
  CHECK(s.run({"TYPE", "s"}) == "+stream\r\n");
  CHECK(s.run({"OBJECT", "ENCODING", "s"}) == bulk("stream"));
}

TEST_CASE("XADD explicit and ms-star ids and their errors", "[streams]") {
  TestServer s;
  CHECK(s.run({"XADD", "s", "5-*", "a", "1"}) == bulk("5-0"));
  CHECK(s.run({"XADD", "s", "5-*", "a", "1"}) == bulk("5-1"));
  CHECK(s.run({"XADD", "s", "6", "a", "1"}) == bulk("6-0"));
  const std::string smaller =
      error("ERR The ID specified in XADD is equal or smaller than the target stream top item");
  CHECK(s.run({"XADD", "s", "4-*", "a", "1"}) == smaller);
  CHECK(s.run({"XADD", "s", "6-0", "a", "1"}) == smaller);
  CHECK(s.run({"XADD", "s", "5-9", "a", "1"}) == smaller);
  CHECK(s.run({"XADD", "t", "0-0", "a", "1"}) ==
        error("ERR The ID specified in XADD must be greater than 0-0"));
  CHECK(s.run({"XADD", "t", "0", "a", "1"}) ==
        error("ERR The ID specified in XADD must be greater than 0-0"));
  CHECK(s.run({"EXISTS", "t"}) == integer(0));
  CHECK(s.run({"XADD", "t", "0-*", "a", "1"}) == bulk("0-1"));
  const std::string bad_id = error("ERR Invalid stream ID specified as stream command argument");
  CHECK(s.run({"XADD", "t", "-", "a", "1"}) == bad_id);
  CHECK(s.run({"XADD", "t", "1-2-3", "a", "1"}) == bad_id);
  CHECK(s.run({"XADD", "t", "abc", "a", "1"}) == bad_id);
  CHECK(s.run({"XADD", "t", "18446744073709551616-0", "a", "1"}) == bad_id);
  CHECK(s.run({"XADD", "t", "*", "a"}) ==
        error("ERR wrong number of arguments for 'xadd' command"));
  CHECK(s.run({"XADD", "t", "*", "a", "1", "b"}) ==
        error("ERR wrong number of arguments for 'xadd' command"));
  CHECK(s.run({"XADD", "t", "NOMKSTREAM", "MAXLEN", "5"}) ==
        error("ERR wrong number of arguments for 'xadd' command"));
  CHECK(s.run({"XSETID", "t", "18446744073709551615-18446744073709551615"}) == kOk);
  CHECK(s.run({"XADD", "t", "*", "a", "1"}) ==
        error("ERR The stream has exhausted the last possible ID, unable to add more items"));
  CHECK(s.run({"XLEN", "t"}) == integer(1));
}

TEST_CASE("XADD NOMKSTREAM on a missing key replies null and creates nothing", "[streams]") {
  TestServer s;
  CHECK(s.run({"XADD", "s", "NOMKSTREAM", "*", "f", "v"}) == kNil);
  CHECK(s.run({"EXISTS", "s"}) == integer(0));
  CHECK(s.run3({"XADD", "s", "NOMKSTREAM", "*", "f", "v"}) == "_\r\n");
  CHECK(s.run({"XADD", "s", "1-1", "f", "v"}) == bulk("1-1"));
  CHECK(s.run({"XADD", "s", "NOMKSTREAM", "2-1", "f", "v"}) == bulk("2-1"));
  CHECK(s.run({"XLEN", "s"}) == integer(2));
}

TEST_CASE("XADD trims with MAXLEN and MINID both exact and approximate", "[streams]") {
  TestServer s;
  add_ids(s, "s", 1, 5);
  CHECK(s.run({"XADD", "s", "MAXLEN", "3", "6", "f", "v"}) == bulk("6-0"));
  CHECK(s.run({"XLEN", "s"}) == integer(3));
  CHECK(s.run({"XRANGE", "s", "-", "+", "COUNT", "1"}) == arr({ent("4-0", {"f", "v"})}));
  CHECK(s.run({"XADD", "s", "MINID", "=", "5", "7", "f", "v"}) == bulk("7-0"));
  CHECK(s.run({"XRANGE", "s", "-", "+", "COUNT", "1"}) == arr({ent("5-0", {"f", "v"})}));
  // One node holds every entry, so "~" finds no whole node to drop.
  CHECK(s.run({"XADD", "s", "MAXLEN", "~", "1", "8", "f", "v"}) == bulk("8-0"));
  CHECK(s.run({"XLEN", "s"}) == integer(4));
  CHECK(s.run({"XADD", "s", "MAXLEN", "0", "9", "f", "v"}) == bulk("9-0"));
  CHECK(s.run({"XLEN", "s"}) == integer(0));
  CHECK(s.run({"EXISTS", "s"}) == integer(1));
  CHECK(s.run({"XADD", "s", "MAXLEN", "1", "MINID", "1", "*", "f", "v"}) ==
        error("ERR syntax error, MAXLEN and MINID options at the same time are not compatible"));
  CHECK(s.run({"XADD", "s", "MAXLEN", "-1", "*", "f", "v"}) ==
        error("ERR The MAXLEN argument must be >= 0."));
  CHECK(s.run({"XADD", "s", "MAXLEN", "5", "LIMIT", "10", "*", "f", "v"}) ==
        error("ERR syntax error, LIMIT cannot be used without the special ~ option"));
  CHECK(s.run({"XADD", "s", "LIMIT", "10", "*", "f", "v"}) ==
        error("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy"));
  CHECK(s.run({"XADD", "s", "MAXLEN", "~", "x", "*", "f", "v"}) ==
        error("ERR value is not an integer or out of range"));
  CHECK(s.run({"XADD", "s", "MINID", "~", "x", "*", "f", "v"}) ==
        error("ERR Invalid stream ID specified as stream command argument"));
  CHECK(s.run({"XLEN", "s"}) == integer(0));
}

TEST_CASE("XTRIM removes whole nodes with the approximate form and honours LIMIT", "[streams]") {
  TestServer s;
  add_ids(s, "big", 1, 250);  // nodes of 100 entries: 1-100, 101-200, 201-250
  SECTION("approximate MAXLEN drops whole nodes only") {
    CHECK(s.run({"XTRIM", "big", "MAXLEN", "~", "10"}) == integer(200));
    CHECK(s.run({"XLEN", "big"}) == integer(50));
  }
  SECTION("LIMIT bounds the entries an approximate trim removes") {
    CHECK(s.run({"XTRIM", "big", "MAXLEN", "~", "10", "LIMIT", "150"}) == integer(100));
    CHECK(s.run({"XLEN", "big"}) == integer(150));
  }
  SECTION("exact MAXLEN and MINID") {
    CHECK(s.run({"XTRIM", "big", "MAXLEN", "=", "245"}) == integer(5));
    CHECK(s.run({"XTRIM", "big", "MINID", "101"}) == integer(95));
    CHECK(s.run({"XRANGE", "big", "-", "+", "COUNT", "1"}) == arr({ent("101-0", {"f", "v"})}));
    CHECK(s.run({"XTRIM", "big", "MINID", "~", "150"}) == integer(0));
    CHECK(s.run({"XTRIM", "big", "MINID", "~", "201"}) == integer(100));
    CHECK(s.run({"XLEN", "big"}) == integer(50));
  }
  SECTION("errors and missing keys") {
    CHECK(s.run({"XTRIM", "big", "LIMIT", "5"}) ==
          error("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy"));
    CHECK(s.run({"XTRIM", "big", "LIMIT", "0", "x"}) == error("ERR syntax error"));
    CHECK(s.run({"XTRIM", "big", "FOO", "1"}) == error("ERR syntax error"));
    CHECK(s.run({"XTRIM", "big", "MAXLEN", "1", "LIMIT", "-1"}) ==
          error("ERR The LIMIT argument must be >= 0."));
    CHECK(s.run({"XTRIM", "big", "MAXLEN", "~", "1", "LIMIT"}) == error("ERR syntax error"));
    CHECK(s.run({"XTRIM", "big", "NOMKSTREAM", "1"}) == error("ERR syntax error"));
    CHECK(s.run({"XTRIM", "missing", "MAXLEN", "0"}) == integer(0));
    CHECK(s.run({"XLEN", "big"}) == integer(250));
  }
}

TEST_CASE("XRANGE and XREVRANGE with exclusive bounds and COUNT", "[streams]") {
  TestServer s;
  CHECK(s.run({"XADD", "s", "1-0", "a", "1"}) == bulk("1-0"));
  CHECK(s.run({"XADD", "s", "2-0", "b", "2"}) == bulk("2-0"));
  CHECK(s.run({"XADD", "s", "2-5", "c", "3", "d", "4"}) == bulk("2-5"));
  const std::string e1 = ent("1-0", {"a", "1"});
  const std::string e2 = ent("2-0", {"b", "2"});
  const std::string e3 = ent("2-5", {"c", "3", "d", "4"});
  CHECK(s.run({"XRANGE", "s", "-", "+"}) == arr({e1, e2, e3}));
  CHECK(s.run({"XRANGE", "s", "2", "2"}) == arr({e2, e3}));
  CHECK(s.run({"XRANGE", "s", "(1-0", "+"}) == arr({e2, e3}));
  CHECK(s.run({"XRANGE", "s", "-", "(2-5"}) == arr({e1, e2}));
  CHECK(s.run({"XRANGE", "s", "-", "+", "COUNT", "2"}) == arr({e1, e2}));
  CHECK(s.run({"XRANGE", "s", "-", "+", "count", "2", "COUNT", "1"}) == arr({e1}));
  CHECK(s.run({"XRANGE", "s", "-", "+", "COUNT", "0"}) == kNilArray);
  CHECK(s.run({"XRANGE", "s", "-", "+", "COUNT", "-3"}) == kNilArray);
  CHECK(s.run({"XRANGE", "s", "3", "+"}) == "*0\r\n");
  CHECK(s.run({"XRANGE", "s", "+", "-"}) == "*0\r\n");
  CHECK(s.run({"XREVRANGE", "s", "+", "-"}) == arr({e3, e2, e1}));
  CHECK(s.run({"XREVRANGE", "s", "+", "-", "COUNT", "1"}) == arr({e3}));
  CHECK(s.run({"XREVRANGE", "s", "(2-5", "-"}) == arr({e2, e1}));
  CHECK(s.run({"XRANGE", "missing", "-", "+"}) == "*0\r\n");
  CHECK(s.run({"XLEN", "missing"}) == integer(0));
  const std::string bad_id = error("ERR Invalid stream ID specified as stream command argument");
  CHECK(s.run({"XRANGE", "s", "(-", "+"}) == bad_id);
  CHECK(s.run({"XRANGE", "s", "(", "+"}) == bad_id);
  CHECK(s.run({"XRANGE", "s", "x", "+"}) == bad_id);
  CHECK(s.run({"XRANGE", "s", "(18446744073709551615-18446744073709551615", "+"}) ==
        error("ERR invalid start ID for the interval"));
  CHECK(s.run({"XRANGE", "s", "-", "(0-0"}) == error("ERR invalid end ID for the interval"));
  CHECK(s.run({"XRANGE", "s", "-", "+", "COUNT"}) == error("ERR syntax error"));
  CHECK(s.run({"XRANGE", "s", "-", "+", "COUNT", "x"}) ==
        error("ERR value is not an integer or out of range"));
  CHECK(s.run({"XRANGE", "s", "-"}) == error("ERR wrong number of arguments for 'xrange' command"));
}

TEST_CASE("XDEL removes entries and keeps the emptied stream", "[streams]") {
  TestServer s;
  add_ids(s, "s", 1, 3);
  CHECK(s.run({"XDEL", "s", "2-0", "9-0"}) == integer(1));
  CHECK(s.run({"XLEN", "s"}) == integer(2));
  CHECK(s.run({"XDEL", "s", "1", "x"}) ==
        error("ERR Invalid stream ID specified as stream command argument"));
  CHECK(s.run({"XLEN", "s"}) == integer(2));  // nothing deleted when an id is invalid
  CHECK(s.run({"XDEL", "missing", "x"}) == integer(0));
  CHECK(s.run({"XDEL", "s", "1-0", "3-0", "1-0"}) == integer(2));
  CHECK(s.run({"XLEN", "s"}) == integer(0));
  CHECK(s.run({"EXISTS", "s"}) == integer(1));
  auto info = parse_resp(s.run({"XINFO", "STREAM", "s"}));
  CHECK(info["max-deleted-entry-id"].str == "3-0");
  CHECK(info["recorded-first-entry-id"].str == "0-0");
  CHECK(info["entries-added"].num == 3);
  CHECK(info["first-entry"].null);
}

TEST_CASE("XSETID sets the last id and counters and validates them", "[streams]") {
  TestServer s;
  add_ids(s, "s", 1, 3);
  CHECK(s.run({"XSETID", "missing", "1-0"}) == error("ERR no such key"));
  CHECK(s.run({"XSETID", "s", "2-0"}) ==
        error("ERR The ID specified in XSETID is smaller than the target stream top item"));
  CHECK(s.run({"XSETID", "s", "10-0", "ENTRIESADDED", "-1"}) ==
        error("ERR entries_added must be positive"));
  CHECK(
      s.run({"XSETID", "s", "10-0", "ENTRIESADDED", "2"}) ==
      error("ERR The entries_added specified in XSETID is smaller than the target stream length"));
  CHECK(s.run({"XSETID", "s", "10-0", "MAXDELETEDID", "11-0"}) ==
        error("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id"));
  CHECK(s.run({"XSETID", "s", "10-0", "FOO", "1"}) == error("ERR syntax error"));
  CHECK(s.run({"XSETID", "s", "+"}) ==
        error("ERR Invalid stream ID specified as stream command argument"));
  CHECK(s.run({"XSETID", "s", "10-0", "ENTRIESADDED", "100", "MAXDELETEDID", "2-0"}) == kOk);
  auto info = parse_resp(s.run({"XINFO", "STREAM", "s"}));
  CHECK(info["last-generated-id"].str == "10-0");
  CHECK(info["entries-added"].num == 100);
  CHECK(info["max-deleted-entry-id"].str == "2-0");
  CHECK(s.run({"XADD", "s", "10-0", "f", "v"}) ==
        error("ERR The ID specified in XADD is equal or smaller than the target stream top item"));
  CHECK(s.run({"XADD", "s", "10-*", "f", "v"}) == bulk("10-1"));

  CHECK(s.run({"XADD", "e", "5-0", "f", "v"}) == bulk("5-0"));
  CHECK(s.run({"XDEL", "e", "5-0"}) == integer(1));
  CHECK(s.run({"XSETID", "e", "3-0"}) ==
        error("ERR The ID specified in XSETID is smaller than current max_deleted_entry_id"));
  CHECK(s.run({"XSETID", "e", "6-0", "ENTRIESADDED", "0"}) == kOk);  // empty: no length check
  CHECK(s.run({"XADD", "e", "*", "f", "v"}) == bulk("1700000000000-0"));
}

TEST_CASE("XREAD returns entries after the given ids from several streams", "[streams]") {
  TestServer s;
  add_ids(s, "a", 1, 2);
  add_ids(s, "b", 5, 5);
  const std::string a1 = ent("1-0", {"f", "v"});
  const std::string a2 = ent("2-0", {"f", "v"});
  const std::string b5 = ent("5-0", {"f", "v"});
  CHECK(s.run({"XREAD", "STREAMS", "a", "b", "0", "0"}) ==
        arr({arr({bulk("a"), arr({a1, a2})}), arr({bulk("b"), arr({b5})})}));
  CHECK(s.run({"XREAD", "COUNT", "1", "STREAMS", "a", "b", "1-0", "0"}) ==
        arr({arr({bulk("a"), arr({a2})}), arr({bulk("b"), arr({b5})})}));
  CHECK(s.run({"XREAD", "STREAMS", "a", "b", "1", "5"}) == arr({arr({bulk("a"), arr({a2})})}));
  CHECK(s.run({"XREAD", "STREAMS", "a", "missing", "0", "0"}) ==
        arr({arr({bulk("a"), arr({a1, a2})})}));
  CHECK(s.run({"XREAD", "STREAMS", "a", "b", "$", "$"}) == kNilArray);
  CHECK(s.run({"XREAD", "COUNT", "-1", "STREAMS", "a", "1-0"}) ==
        arr({arr({bulk("a"), arr({a2})})}));
  SECTION("RESP3 replies a map keyed by stream name") {
    CHECK(s.run3({"XREAD", "STREAMS", "a", "b", "1-0", "0"}) ==
          "%2\r\n" + bulk("a") + arr({a2}) + bulk("b") + arr({b5}));
    CHECK(s.run3({"XREAD", "STREAMS", "a", "$"}) == "_\r\n");
  }
  SECTION("argument errors") {
    CHECK(s.run({"XREAD", "STREAMS", "a", "b", "0"}) ==
          error("ERR Unbalanced 'xread' list of streams: for each stream key an ID or '$' must "
                "be specified."));
    CHECK(s.run({"XREAD", "STREAMS", "a", ">"}) ==
          error("ERR The > ID can be specified only when calling XREADGROUP using the GROUP "
                "<group> <consumer> option."));
    CHECK(s.run({"XREAD", "GROUP", "g", "c", "STREAMS", "a", "0"}) ==
          error("ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead."));
    CHECK(s.run({"XREAD", "NOACK", "STREAMS", "a", "0"}) ==
          error("ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead."));
    CHECK(s.run({"XREAD", "COUNT", "1", "a", "0"}) == error("ERR syntax error"));
    CHECK(s.run({"XREAD", "COUNT", "1", "STREAMS"}) == error("ERR syntax error"));
    CHECK(s.run({"XREAD", "STREAMS", "a", "+"}) ==
          error("ERR Invalid stream ID specified as stream command argument"));
    CHECK(s.run({"XREAD", "COUNT", "x", "STREAMS", "a", "0"}) ==
          error("ERR value is not an integer or out of range"));
    CHECK(s.run({"XREAD", "BLOCK", "x", "STREAMS", "a", "0"}) ==
          error("ERR timeout is not an integer or out of range"));
    CHECK(s.run({"XREAD", "BLOCK", "-1", "STREAMS", "a", "0"}) == error("ERR timeout is negative"));
    CHECK(s.run({"XREAD", "BLOCK", "9223372036854775807", "STREAMS", "a", "0"}) ==
          error("ERR timeout is out of range"));
  }
}

TEST_CASE("XREAD BLOCK replies null at once where the client may not block", "[streams]") {
  TestServer s;
  add_ids(s, "a", 1, 1);
  // TestServer runs commands as MULTI or a script would: blocking is not possible.
  CHECK(s.run({"XREAD", "BLOCK", "0", "STREAMS", "a", "$"}) == kNilArray);
  CHECK(s.run({"XREAD", "BLOCK", "100", "STREAMS", "a", "0"}) ==
        arr({arr({bulk("a"), arr({ent("1-0", {"f", "v"})})})}));
}

TEST_CASE("XREAD BLOCK asks to block with dollar pinned to the last id", "[streams]") {
  TestServer s;
  add_ids(s, "a", 1, 2);
  hotkv::CommandContext::BlockRequest req;
  CHECK(
      run_blockable(s, {"XREAD", "BLOCK", "500", "STREAMS", "a", "nokey", "$", "$"}, req).empty());
  REQUIRE(req.requested);
  CHECK(req.timeout_ms == 500);
  CHECK(req.argv ==
        std::vector<std::string>{"XREAD", "BLOCK", "500", "STREAMS", "a", "nokey", "2-0", "0-0"});

  SECTION("a woken re-run with nothing new stays blocked") {
    hotkv::CommandContext::BlockRequest again;
    CHECK(run_blockable(s, req.argv, again, true).empty());
    CHECK(!again.requested);
  }
  SECTION("a woken re-run waits on while the key holds another type (Redis 7)") {
    CHECK(s.run({"LPUSH", "nokey", "foo"}) == ":1\r\n");
    hotkv::CommandContext::BlockRequest again;
    CHECK(run_blockable(s, req.argv, again, true).empty());
    CHECK(s.run({"DEL", "nokey"}) == ":1\r\n");
    CHECK(s.run({"XADD", "nokey", "8-0", "x", "y"}) == bulk("8-0"));
    CHECK(run_blockable(s, req.argv, again, true) ==
          arr({arr({bulk("nokey"), arr({ent("8-0", {"x", "y"})})})}));
  }
  SECTION("a woken re-run serves what arrived") {
    CHECK(s.run({"XADD", "nokey", "7-0", "x", "y"}) == bulk("7-0"));
    hotkv::CommandContext::BlockRequest again;
    CHECK(run_blockable(s, req.argv, again, true) ==
          arr({arr({bulk("nokey"), arr({ent("7-0", {"x", "y"})})})}));
  }
  SECTION("without BLOCK nothing to read is a null array even where blocking is possible") {
    hotkv::CommandContext::BlockRequest none;
    CHECK(run_blockable(s, {"XREAD", "STREAMS", "a", "$"}, none) == kNilArray);
    CHECK(!none.requested);
  }
}

TEST_CASE("XINFO STREAM reports counters and first and last entries in RESP2 and RESP3",
          "[streams]") {
  TestServer s;
  CHECK(s.run({"XADD", "s", "1-0", "f", "v"}) == bulk("1-0"));
  CHECK(s.run({"XADD", "s", "2-0", "g", "w"}) == bulk("2-0"));
  const std::string body = bulk("length") + integer(2) + bulk("radix-tree-keys") + integer(1) +
                           bulk("radix-tree-nodes") + integer(2) + bulk("last-generated-id") +
                           bulk("2-0") + bulk("max-deleted-entry-id") + bulk("0-0") +
                           bulk("entries-added") + integer(2) + bulk("recorded-first-entry-id") +
                           bulk("1-0") + bulk("groups") + integer(0) + bulk("first-entry") +
                           ent("1-0", {"f", "v"}) + bulk("last-entry") + ent("2-0", {"g", "w"});
  CHECK(s.run({"XINFO", "STREAM", "s"}) == "*20\r\n" + body);
  CHECK(s.run3({"XINFO", "STREAM", "s"}) == "%10\r\n" + body);

  CHECK(s.run({"XGROUP", "CREATE", "e", "g", "$", "MKSTREAM"}) == kOk);
  auto empty = parse_resp(s.run3({"XINFO", "STREAM", "e"}));
  CHECK(empty.type == '%');
  CHECK(empty["first-entry"].type == '_');
  CHECK(empty["last-entry"].type == '_');
  CHECK(empty["groups"].num == 1);

  CHECK(s.run({"XINFO", "STREAM", "missing"}) == error("ERR no such key"));
  CHECK(s.run({"XINFO", "STREAM", "s", "FULL", "COUNT"}) ==
        error("ERR unknown subcommand or wrong number of arguments for 'STREAM'. Try XINFO HELP."));
  CHECK(s.run({"XINFO", "STREAM", "s", "PARTIAL"}) ==
        error("ERR unknown subcommand or wrong number of arguments for 'STREAM'. Try XINFO HELP."));
  CHECK(s.run({"XINFO", "STREAM", "s", "FULL", "COUNT", "x"}) ==
        error("ERR value is not an integer or out of range"));
}

TEST_CASE("XINFO STREAM FULL lists entries up to COUNT", "[streams]") {
  TestServer s;
  add_ids(s, "s", 1, 15);
  auto full = parse_resp(s.run3({"XINFO", "STREAM", "s", "FULL"}));
  CHECK(full.type == '%');
  CHECK(full.size() == 18);
  CHECK(full["entries"].size() == 10);
  CHECK(full["groups"].size() == 0);
  CHECK(parse_resp(s.run({"XINFO", "STREAM", "s", "FULL", "COUNT", "0"}))["entries"].size() == 15);
  CHECK(parse_resp(s.run({"XINFO", "STREAM", "s", "FULL", "COUNT", "3"}))["entries"].size() == 3);
  CHECK(parse_resp(s.run({"XINFO", "STREAM", "s", "full", "count", "-1"}))["entries"].size() == 10);
}

TEST_CASE("XINFO HELP and unknown subcommands and arity", "[streams]") {
  TestServer s;
  auto help = parse_resp(s.run({"XINFO", "HELP"}));
  REQUIRE(help.size() > 3);
  CHECK(help.at(0).str == "XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:");
  CHECK(help.at(help.size() - 2).str == "HELP");
  CHECK(s.run({"XINFO", "FOO", "k"}) == error("ERR unknown subcommand 'FOO'. Try XINFO HELP."));
  CHECK(s.run({"XINFO", "GROUPS"}) ==
        error("ERR wrong number of arguments for 'xinfo|groups' command"));
  CHECK(s.run({"XINFO", "HELP", "x"}) ==
        error("ERR wrong number of arguments for 'xinfo|help' command"));
  CHECK(s.run({"XINFO"}) == error("ERR wrong number of arguments for 'xinfo' command"));
}

TEST_CASE("stream commands reject keys holding another type", "[streams]") {
  TestServer s;
  CHECK(s.run({"SET", "str", "x"}) == kOk);
  const std::string wrong =
      error("WRONGTYPE Operation against a key holding the wrong kind of value");
  CHECK(s.run({"XADD", "str", "*", "f", "v"}) == wrong);
  CHECK(s.run({"XLEN", "str"}) == wrong);
  CHECK(s.run({"XRANGE", "str", "-", "+"}) == wrong);
  CHECK(s.run({"XREVRANGE", "str", "+", "-"}) == wrong);
  CHECK(s.run({"XDEL", "str", "1-0"}) == wrong);
  CHECK(s.run({"XTRIM", "str", "MAXLEN", "0"}) == wrong);
  CHECK(s.run({"XREAD", "STREAMS", "str", "0"}) == wrong);
  CHECK(s.run({"XSETID", "str", "1-0"}) == wrong);
  CHECK(s.run({"XGROUP", "CREATE", "str", "g", "$"}) == wrong);
  CHECK(s.run({"XREADGROUP", "GROUP", "g", "c", "STREAMS", "str", ">"}) == wrong);
  CHECK(s.run({"XACK", "str", "g", "1-0"}) == wrong);
  CHECK(s.run({"XPENDING", "str", "g"}) == wrong);
  CHECK(s.run({"XCLAIM", "str", "g", "c", "0", "1-0"}) == wrong);
  CHECK(s.run({"XAUTOCLAIM", "str", "g", "c", "0", "0"}) == wrong);
  CHECK(s.run({"XINFO", "STREAM", "str"}) == wrong);
  CHECK(s.run({"GET", "str"}) == bulk("x"));
}

TEST_CASE("XREAD and XREADGROUP keys are the first half of the arguments after STREAMS",
          "[streams]") {
  const auto& t = hotkv::command_table();
  std::vector<size_t> idx;
  std::vector<std::string_view> xread = {"XREAD", "COUNT", "2", "STREAMS", "a", "b", "0", "$"};
  REQUIRE(hotkv::Table::key_indexes(*t.find("XREAD"), xread, idx));
  CHECK(idx == std::vector<size_t>{4, 5});
  idx.clear();
  std::vector<std::string_view> group = {"XREADGROUP", "GROUP",   "streams", "STREAMS",
                                         "NOACK",      "STREAMS", "k",       ">"};
  REQUIRE(hotkv::Table::key_indexes(*t.find("XREADGROUP"), group, idx));
  CHECK(idx == std::vector<size_t>{6});
  idx.clear();
  std::vector<std::string_view> xgroup = {"XGROUP", "CREATE", "k", "g", "$"};
  REQUIRE(hotkv::Table::key_indexes(*t.find("XGROUP"), xgroup, idx));
  CHECK(idx == std::vector<size_t>{2});
  idx.clear();
  std::vector<std::string_view> help = {"XINFO", "HELP"};
  REQUIRE(hotkv::Table::key_indexes(*t.find("XINFO"), help, idx));
  CHECK(idx.empty());
}

TEST_CASE("XREAD across shards reads every stream in one reply", "[streams]") {
  TestServer s(4);
  for (int i = 0; i < 8; ++i) {
    std::string key = "k" + std::to_string(i);
    REQUIRE(s.run({"XADD", key, "1-0", "n", std::to_string(i)}) == bulk("1-0"));
  }
  auto r = parse_resp(s.run({"XREAD", "STREAMS", "k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7",
                             "0", "0", "0", "0", "0", "0", "0", "0"}));
  REQUIRE(r.size() == 8);
  for (size_t i = 0; i < 8; ++i) {
    CHECK(r.at(i).at(0).str == "k" + std::to_string(i));
    CHECK(r.at(i).at(1).at(0).at(1).at(1).str == std::to_string(i));
  }
}

TEST_CASE("stream commands publish Redis's keyspace events", "[streams]") {
  // pushes() runs the shards' io contexts, whose timers follow the real clock: keep the manual
  // clock far ahead of it so nothing expires behind the test's back.
  TestServer s(1, hotkv::unix_ms() + 100'000'000);
  s.run3({"PSUBSCRIBE", "__keyevent@0__:*"});
  REQUIRE(s.run3({"CONFIG", "SET", "notify-keyspace-events", "Et"}) == kOk);
  s.run3({"XADD", "s", "1-0", "f", "v"});
  s.run3({"XADD", "s", "MAXLEN", "1", "2-0", "f", "v"});
  s.run3({"XDEL", "s", "2-0", "9-0"});
  s.run3({"XDEL", "s", "9-0"});
  s.run3({"XTRIM", "s", "MAXLEN", "0"});
  s.run3({"XSETID", "s", "5-0"});
  s.run3({"XGROUP", "CREATE", "s", "g", "$"});
  s.run3({"XGROUP", "CREATECONSUMER", "s", "g", "c"});
  s.run3({"XREADGROUP", "GROUP", "g", "d", "STREAMS", "s", ">"});
  s.run3({"XGROUP", "SETID", "s", "g", "0"});
  s.run3({"XCLAIM", "s", "g", "e", "0", "1-0"});
  s.run3({"XAUTOCLAIM", "s", "g", "e", "0", "0"});
  s.run3({"XGROUP", "DELCONSUMER", "s", "g", "c"});
  s.run3({"XGROUP", "DESTROY", "s", "g"});
  s.run3({"XGROUP", "CREATE", "n", "g", "$", "MKSTREAM"});
  std::vector<std::string> seen;
  for (const auto& m : s.pushes()) {
    seen.push_back(m.channel.substr(std::string("__keyevent@0__:").size()) + " " + m.payload);
  }
  // XREADGROUP creates its consumer even when it serves nothing; XCLAIM and XAUTOCLAIM that
  // claim nothing create none (and announce none).
  CHECK(seen == std::vector<std::string>{
                    "xadd s", "xadd s", "xtrim s", "xdel s", "xsetid s", "xgroup-create s",
                    "xgroup-createconsumer s", "xgroup-createconsumer s", "xgroup-setid s",
                    "xgroup-delconsumer s", "xgroup-destroy s", "xgroup-create n"});
}

TEST_CASE("COPY and RENAME carry a stream with its groups", "[streams]") {
  TestServer s;
  add_ids(s, "s", 1, 3);
  CHECK(s.run({"XGROUP", "CREATE", "s", "g", "0"}) == kOk);
  CHECK(s.run({"XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s", ">"}) != "");
  std::string before = s.run({"XINFO", "STREAM", "s", "FULL"});
  CHECK(s.run({"COPY", "s", "copy"}) == integer(1));
  CHECK(s.run({"XINFO", "STREAM", "copy", "FULL"}) == before);
  CHECK(s.run({"XADD", "copy", "4-0", "f", "v"}) == bulk("4-0"));
  CHECK(s.run({"XLEN", "s"}) == integer(3));  // the copy is independent
  CHECK(s.run({"RENAME", "s", "moved"}) == kOk);
  CHECK(s.run({"XINFO", "STREAM", "moved", "FULL"}) == before);
  CHECK(s.run({"EXISTS", "s"}) == integer(0));
}
