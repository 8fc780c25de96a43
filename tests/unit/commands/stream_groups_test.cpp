// Stream consumer groups (XGROUP, XREADGROUP, XACK, XPENDING, XCLAIM, XAUTOCLAIM, XINFO GROUPS
// and CONSUMERS) through the real table and shard with a manual clock, checked against Redis
// 7.2's replies, error texts and consumer-group accounting.
#include <catch2/catch.hpp>

#include "hotkv/commands/command_call.hpp"
#include "hotkv/commands/context.hpp"
#include "hotkv/commands/table.hpp"
#include "support/resp_value.hpp"
#include "support/test_server.hpp"

using hotkv::test::arr;
using hotkv::test::ent;
using hotkv::test::error;
using hotkv::test::kNilArray;
using hotkv::test::bulk;
using hotkv::test::integer;
using hotkv::test::kOk;
using hotkv::test::parse_resp;
using hotkv::test::Resp;
using hotkv::test::TestServer;

namespace {

// A stream "s" with entries 1-0 .. n-0 (field "n", value the number) and group "g" at 0.
void setup(TestServer& s, int n) {
  for (int i = 1; i <= n; ++i) {
    REQUIRE(s.run({"XADD", "s", std::to_string(i), "n", std::to_string(i)}) ==
            bulk(std::to_string(i) + "-0"));
  }
  REQUIRE(s.run({"XGROUP", "CREATE", "s", "g", "0"}) == kOk);
}

std::string e(int i) { return ent(std::to_string(i) + "-0", {"n", std::to_string(i)}); }

// One XPENDING extended record: [id, consumer, idle, deliveries].
std::string pending(int i, const std::string& consumer, int64_t idle, int64_t count) {
  return arr({bulk(std::to_string(i) + "-0"), bulk(consumer), integer(idle), integer(count)});
}

Resp group_info(TestServer& s, const std::string& group) {
  Resp groups = parse_resp(s.run({"XINFO", "GROUPS", "s"}));
  for (const Resp& g : groups.items) {
    if (g["name"].str == group) {
      return g;
    }
  }
  FAIL("no group " << group);
  return {};
}

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

TEST_CASE("XGROUP CREATE with MKSTREAM and ENTRIESREAD and its errors", "[streams]") {
  TestServer s;
  CHECK(s.run({"XGROUP", "CREATE", "s", "g", "$"}) ==
        error("ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may "
              "want to use the MKSTREAM option to create an empty stream automatically."));
  CHECK(s.run({"XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"}) == kOk);
  CHECK(s.run({"XLEN", "s"}) == integer(0));
  CHECK(s.run({"XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"}) ==
        error("BUSYGROUP Consumer Group name already exists"));
  CHECK(s.run({"XGROUP", "CREATE", "s", "g", "0"}) ==
        error("BUSYGROUP Consumer Group name already exists"));
  CHECK(s.run({"XGROUP", "CREATE", "s", "h", "bad"}) ==
        error("ERR Invalid stream ID specified as stream command argument"));
  CHECK(s.run({"XGROUP", "CREATE", "s", "h", "-"}) ==
        error("ERR Invalid stream ID specified as stream command argument"));
  CHECK(s.run({"XGROUP", "CREATE", "s", "h", "$", "ENTRIESREAD", "-2"}) ==
        error("ERR value for ENTRIESREAD must be positive or -1"));
  CHECK(s.run({"XGROUP", "CREATE", "s", "h", "$", "ENTRIESREAD", "x"}) ==
        error("ERR value is not an integer or out of range"));
  CHECK(
      s.run({"XGROUP", "CREATE", "s", "h", "$", "FOO"}) ==
      error("ERR unknown subcommand or wrong number of arguments for 'CREATE'. Try XGROUP HELP."));
  CHECK(
      s.run({"XGROUP", "CREATE", "s", "h", "$", "MKSTREAM", "MKSTREAM", "ENTRIESREAD", "1"}) ==
      error("ERR unknown subcommand or wrong number of arguments for 'CREATE'. Try XGROUP HELP."));
  CHECK(s.run({"XGROUP", "CREATE", "s"}) ==
        error("ERR wrong number of arguments for 'xgroup|create' command"));
  CHECK(s.run({"XGROUP", "FOO", "s", "g"}) ==
        error("ERR unknown subcommand 'FOO'. Try XGROUP HELP."));
  CHECK(s.run({"XGROUP"}) == error("ERR wrong number of arguments for 'xgroup' command"));
  CHECK(s.run({"XADD", "s", "3-0", "f", "v"}) == bulk("3-0"));
  CHECK(s.run({"xgroup", "create", "s", "h", "$", "ENTRIESREAD", "1"}) == kOk);
  Resp h = group_info(s, "h");
  CHECK(h["last-delivered-id"].str == "3-0");
  CHECK(h["entries-read"].num == 1);
  CHECK(h["lag"].num == 0);
  auto help = parse_resp(s.run({"XGROUP", "HELP"}));
  CHECK(help.at(0).str == "XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:");
}

TEST_CASE("XGROUP SETID DESTROY CREATECONSUMER and DELCONSUMER", "[streams]") {
  TestServer s;
  setup(s, 3);
  CHECK(s.run({"XGROUP", "SETID", "s", "nog", "0"}) ==
        error("NOGROUP No such consumer group 'nog' for key name 's'"));
  CHECK(s.run({"XGROUP", "SETID", "missing", "g", "0"}) ==
        error("ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may "
              "want to use the MKSTREAM option to create an empty stream automatically."));
  CHECK(s.run({"XGROUP", "SETID", "s", "g", "$"}) == kOk);
  Resp g = group_info(s, "g");
  CHECK(g["last-delivered-id"].str == "3-0");
  CHECK(g["entries-read"].null);  // SETID without ENTRIESREAD forgets the counter
  CHECK(s.run({"XGROUP", "SETID", "s", "g", "1-0", "ENTRIESREAD", "1"}) == kOk);
  g = group_info(s, "g");
  CHECK(g["last-delivered-id"].str == "1-0");
  CHECK(g["entries-read"].num == 1);
  CHECK(g["lag"].num == 2);
  CHECK(s.run({"XGROUP", "SETID", "s", "g", "-"}) == kOk);  // SETID accepts - and +
  CHECK(group_info(s, "g")["last-delivered-id"].str == "0-0");
  CHECK(s.run({"XGROUP", "SETID", "s", "g", "0", "ENTRIESREAD"}) ==
        error("ERR unknown subcommand or wrong number of arguments for 'SETID'. Try XGROUP HELP."));
  CHECK(s.run({"XGROUP", "SETID", "s", "g", "0", "MKSTREAM"}) ==
        error("ERR unknown subcommand or wrong number of arguments for 'SETID'. Try XGROUP HELP."));

  CHECK(s.run({"XGROUP", "CREATECONSUMER", "s", "g", "alice"}) == integer(1));
  CHECK(s.run({"XGROUP", "CREATECONSUMER", "s", "g", "alice"}) == integer(0));
  CHECK(s.run({"XGROUP", "CREATECONSUMER", "s", "nog", "alice"}) ==
        error("NOGROUP No such consumer group 'nog' for key name 's'"));
  CHECK(s.run({"XREADGROUP", "GROUP", "g", "bob", "COUNT", "2", "STREAMS", "s", ">"}) ==
        arr({arr({bulk("s"), arr({e(1), e(2)})})}));
  CHECK(group_info(s, "g")["consumers"].num == 2);
  CHECK(s.run({"XGROUP", "DELCONSUMER", "s", "g", "bob"}) == integer(2));
  CHECK(s.run({"XGROUP", "DELCONSUMER", "s", "g", "bob"}) == integer(0));
  CHECK(s.run({"XPENDING", "s", "g"}) == arr({integer(0), "$-1\r\n", "$-1\r\n", kNilArray}));
  CHECK(group_info(s, "g")["consumers"].num == 1);

  CHECK(s.run({"XGROUP", "DESTROY", "s", "nog"}) == integer(0));
  CHECK(s.run({"XGROUP", "DESTROY", "s", "g"}) == integer(1));
  CHECK(s.run({"XINFO", "GROUPS", "s"}) == "*0\r\n");
  CHECK(s.run({"XGROUP", "DESTROY", "missing", "g"}) ==
        error("ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may "
              "want to use the MKSTREAM option to create an empty stream automatically."));
}

TEST_CASE("XREADGROUP delivers each entry once and acknowledged entries are never redelivered",
          "[streams]") {
  TestServer s;
  setup(s, 3);
  CHECK(s.run({"XREADGROUP", "GROUP", "g", "alice", "COUNT", "2", "STREAMS", "s", ">"}) ==
        arr({arr({bulk("s"), arr({e(1), e(2)})})}));
  CHECK(s.run({"XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", ">"}) ==
        arr({arr({bulk("s"), arr({e(3)})})}));
  CHECK(s.run({"XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", ">"}) == kNilArray);
  CHECK(s.run({"XPENDING", "s", "g"}) ==
        arr({integer(3), bulk("1-0"), bulk("3-0"),
             arr({arr({bulk("alice"), bulk("2")}), arr({bulk("bob"), bulk("1")})})}));
  CHECK(s.run({"XACK", "s", "g", "1-0", "9-0"}) == integer(1));
  CHECK(s.run({"XACK", "s", "g", "1-0"}) == integer(0));
  CHECK(s.run({"XACK", "s", "g", "bad"}) ==
        error("ERR Invalid stream ID specified as stream command argument"));
  CHECK(s.run({"XACK", "s", "nog", "bad"}) == integer(0));
  CHECK(s.run({"XACK", "missing", "g", "1-0"}) == integer(0));
  CHECK(s.run({"XADD", "s", "4-0", "n", "4"}) == bulk("4-0"));
  CHECK(s.run({"XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">"}) ==
        arr({arr({bulk("s"), arr({e(4)})})}));
  s.advance(50);
  CHECK(s.run({"XPENDING", "s", "g", "-", "+", "10"}) ==
        arr({pending(2, "alice", 50, 1), pending(3, "bob", 50, 1), pending(4, "alice", 50, 1)}));
  CHECK(s.run({"XACK", "s", "g", "2-0", "3-0", "4-0"}) == integer(3));
  CHECK(s.run({"XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0"}) ==
        arr({arr({bulk("s"), "*0\r\n"})}));
  CHECK(s.run({"XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">"}) == kNilArray);
  Resp g = group_info(s, "g");
  CHECK(g["pending"].num == 0);
  CHECK(g["last-delivered-id"].str == "4-0");
  CHECK(g["entries-read"].num == 4);
  CHECK(g["lag"].num == 0);
}

TEST_CASE("XREADGROUP history reads the consumer's own pending entries with deleted ones as nil",
          "[streams]") {
  TestServer s;
  setup(s, 4);
  CHECK(s.run({"XREADGROUP", "GROUP", "g", "alice", "COUNT", "3", "STREAMS", "s", ">"}) ==
        arr({arr({bulk("s"), arr({e(1), e(2), e(3)})})}));
  CHECK(s.run({"XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", ">"}) ==
        arr({arr({bulk("s"), arr({e(4)})})}));
  CHECK(s.run({"XDEL", "s", "2-0"}) == integer(1));
  s.advance(100);
  const std::string deleted = arr({bulk("2-0"), kNilArray});
  CHECK(s.run({"XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0"}) ==
        arr({arr({bulk("s"), arr({e(1), deleted, e(3)})})}));
  CHECK(s.run({"XREADGROUP", "GROUP", "g", "alice", "COUNT", "1", "STREAMS", "s", "1-0"}) ==
        arr({arr({bulk("s"), arr({deleted})})}));
  CHECK(s.run3({"XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "2-0"}) ==
        "%1\r\n" + bulk("s") + arr({e(3)}));
  // Served history entries get a new delivery time and count; the deleted one does not.
  CHECK(s.run({"XPENDING", "s", "g", "-", "+", "10", "alice"}) ==
        arr({pending(1, "alice", 0, 2), pending(2, "alice", 100, 1), pending(3, "alice", 0, 3)}));
  CHECK(s.run({"XPENDING", "s", "g", "-", "+", "10", "bob"}) == arr({pending(4, "bob", 100, 1)}));
}

TEST_CASE("XREADGROUP NOACK moves the group without pending entries", "[streams]") {
  TestServer s;
  setup(s, 2);
  CHECK(s.run({"XREADGROUP", "GROUP", "g", "c", "NOACK", "STREAMS", "s", ">"}) ==
        arr({arr({bulk("s"), arr({e(1), e(2)})})}));
  CHECK(s.run({"XPENDING", "s", "g"}) == arr({integer(0), "$-1\r\n", "$-1\r\n", kNilArray}));
  CHECK(s.run3({"XPENDING", "s", "g"}) == "*4\r\n:0\r\n_\r\n_\r\n_\r\n");
  Resp g = group_info(s, "g");
  CHECK(g["last-delivered-id"].str == "2-0");
  CHECK(g["entries-read"].num == 2);
  Resp consumers = parse_resp(s.run({"XINFO", "CONSUMERS", "s", "g"}));
  REQUIRE(consumers.size() == 1);
  CHECK(consumers.at(0)["inactive"].num == -1);  // NOACK reads do not make a consumer active
}

TEST_CASE("XREADGROUP argument and group errors", "[streams]") {
  TestServer s;
  setup(s, 1);
  CHECK(s.run({"XREADGROUP", "GROUP", "g", "c", "STREAMS", "missing", ">"}) ==
        error("NOGROUP No such key 'missing' or consumer group 'g' in XREADGROUP with GROUP "
              "option"));
  CHECK(s.run({"XREADGROUP", "GROUP", "nog", "c", "STREAMS", "s", ">"}) ==
        error("NOGROUP No such key 's' or consumer group 'nog' in XREADGROUP with GROUP option"));
  CHECK(s.run({"XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "$"}) ==
        error("ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the "
              "history of this consumer by specifying a proper ID, or use the > ID to get new "
              "messages. The $ ID would just return an empty result set."));
  CHECK(s.run({"XREADGROUP", "COUNT", "1", "BLOCK", "0", "STREAMS", "s", ">"}) ==
        error("ERR Missing GROUP option for XREADGROUP"));
  CHECK(s.run({"XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "t", ">"}) ==
        error("ERR Unbalanced 'xreadgroup' list of streams: for each stream key an ID or '>' "
              "must be specified."));
  CHECK(s.run({"XREADGROUP", "GROUP", "g", "STREAMS", "s", ">"}) ==
        error("ERR wrong number of arguments for 'xreadgroup' command"));
  CHECK(s.run({"XINFO", "CONSUMERS", "s", "g"}) == "*0\r\n");  // failed reads create nobody
  // An explicit max id is Redis's internal spelling of ">".
  CHECK(s.run({"XREADGROUP", "GROUP", "g", "c", "STREAMS", "s",
               "18446744073709551615-18446744073709551615"}) ==
        arr({arr({bulk("s"), arr({e(1)})})}));
}

TEST_CASE("XPENDING extended form filters by range idle time and consumer", "[streams]") {
  TestServer s;
  setup(s, 5);
  CHECK(s.run({"XREADGROUP", "GROUP", "g", "alice", "COUNT", "2", "STREAMS", "s", ">"}) != "");
  s.advance(1000);
  CHECK(s.run({"XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", ">"}) != "");
  s.advance(10);
  CHECK(s.run({"XPENDING", "s", "g", "IDLE", "500", "-", "+", "10"}) ==
        arr({pending(1, "alice", 1010, 1), pending(2, "alice", 1010, 1)}));
  CHECK(s.run({"XPENDING", "s", "g", "(1-0", "4", "2"}) ==
        arr({pending(2, "alice", 1010, 1), pending(3, "bob", 10, 1)}));
  CHECK(s.run({"XPENDING", "s", "g", "-", "+", "10", "bob"}) ==
        arr({pending(3, "bob", 10, 1), pending(4, "bob", 10, 1), pending(5, "bob", 10, 1)}));
  CHECK(s.run({"XPENDING", "s", "g", "IDLE", "5", "4", "+", "10", "bob"}) ==
        arr({pending(4, "bob", 10, 1), pending(5, "bob", 10, 1)}));
  CHECK(s.run({"XPENDING", "s", "g", "-", "+", "10", "nobody"}) == "*0\r\n");
  CHECK(s.run({"XPENDING", "s", "g", "-", "+", "0"}) == "*0\r\n");
  CHECK(s.run({"XPENDING", "s", "g", "-", "+", "-5"}) == "*0\r\n");
  CHECK(s.run({"XPENDING", "s", "g", "-", "+"}) == error("ERR syntax error"));
  CHECK(s.run({"XPENDING", "s", "g", "IDLE", "10", "-", "+"}) == error("ERR syntax error"));
  CHECK(s.run({"XPENDING", "s", "g", "IDLE", "x", "-", "+", "1"}) ==
        error("ERR value is not an integer or out of range"));
  CHECK(s.run({"XPENDING", "s", "g", "-", "+", "x"}) ==
        error("ERR value is not an integer or out of range"));
  CHECK(s.run({"XPENDING", "s", "g", "x", "+", "1"}) ==
        error("ERR Invalid stream ID specified as stream command argument"));
  CHECK(s.run({"XPENDING", "s", "nog"}) ==
        error("NOGROUP No such key 's' or consumer group 'nog'"));
  CHECK(s.run({"XPENDING", "missing", "g", "-", "+", "1"}) ==
        error("NOGROUP No such key 'missing' or consumer group 'g'"));
}

TEST_CASE("XCLAIM takes idle entries and drops deleted ones from the PEL", "[streams]") {
  TestServer s;
  setup(s, 5);
  CHECK(s.run({"XREADGROUP", "GROUP", "g", "alice", "COUNT", "4", "STREAMS", "s", ">"}) != "");
  s.advance(1000);
  CHECK(s.run({"XCLAIM", "s", "g", "bob", "500", "1-0", "2-0"}) == arr({e(1), e(2)}));
  CHECK(s.run({"XCLAIM", "s", "g", "carol", "500", "1-0"}) == "*0\r\n");  // not idle enough
  CHECK(s.run({"XPENDING", "s", "g", "-", "+", "10", "bob"}) ==
        arr({pending(1, "bob", 0, 2), pending(2, "bob", 0, 2)}));
  SECTION("JUSTID keeps the delivery count and replies ids") {
    CHECK(s.run({"XCLAIM", "s", "g", "carol", "0", "3-0", "JUSTID"}) == arr({bulk("3-0")}));
    CHECK(s.run({"XPENDING", "s", "g", "3", "3", "1"}) == arr({pending(3, "carol", 0, 1)}));
  }
  SECTION("IDLE TIME and RETRYCOUNT set the record") {
    CHECK(s.run({"XCLAIM", "s", "g", "carol", "0", "3-0", "IDLE", "300", "RETRYCOUNT", "7"}) ==
          arr({e(3)}));
    CHECK(s.run({"XPENDING", "s", "g", "3", "3", "1"}) == arr({pending(3, "carol", 300, 7)}));
    CHECK(s.run({"XCLAIM", "s", "g", "carol", "0", "3-0", "TIME", std::to_string(s.now() - 200),
                 "JUSTID"}) == arr({bulk("3-0")}));
    CHECK(s.run({"XPENDING", "s", "g", "3", "3", "1"}) == arr({pending(3, "carol", 200, 7)}));
    // A time in the future (or a negative idle) is taken as now.
    CHECK(s.run({"XCLAIM", "s", "g", "carol", "0", "3-0", "IDLE", "-5", "JUSTID"}) ==
          arr({bulk("3-0")}));
    CHECK(s.run({"XPENDING", "s", "g", "3", "3", "1"}) == arr({pending(3, "carol", 0, 7)}));
  }
  SECTION("FORCE creates pending records for undelivered entries") {
    CHECK(s.run({"XCLAIM", "s", "g", "dave", "0", "5-0", "9-0"}) == "*0\r\n");
    CHECK(s.run({"XCLAIM", "s", "g", "dave", "0", "5-0", "9-0", "FORCE"}) == arr({e(5)}));
    CHECK(s.run({"XPENDING", "s", "g", "5", "5", "1"}) == arr({pending(5, "dave", 0, 2)}));
  }
  SECTION("LASTID moves the group forward only") {
    CHECK(s.run({"XCLAIM", "s", "g", "bob", "0", "LASTID", "9-0"}) == "*0\r\n");
    CHECK(group_info(s, "g")["last-delivered-id"].str == "9-0");
    CHECK(s.run({"XCLAIM", "s", "g", "bob", "0", "LASTID", "1-0"}) == "*0\r\n");
    CHECK(group_info(s, "g")["last-delivered-id"].str == "9-0");
  }
  SECTION("deleted entries leave the PEL instead of being claimed") {
    CHECK(s.run({"XDEL", "s", "4-0"}) == integer(1));
    CHECK(s.run({"XCLAIM", "s", "g", "bob", "0", "4-0", "3-0", "JUSTID"}) == arr({bulk("3-0")}));
    CHECK(s.run({"XPENDING", "s", "g", "-", "+", "10"}) ==
          arr({pending(1, "bob", 0, 2), pending(2, "bob", 0, 2), pending(3, "bob", 0, 1)}));
  }
  SECTION("errors") {
    CHECK(s.run({"XCLAIM", "s", "nog", "c", "0", "1-0"}) ==
          error("NOGROUP No such key 's' or consumer group 'nog'"));
    CHECK(s.run({"XCLAIM", "s", "g", "c", "x", "1-0"}) ==
          error("ERR Invalid min-idle-time argument for XCLAIM"));
    CHECK(s.run({"XCLAIM", "s", "g", "c", "0", "1-0", "BOGUS"}) ==
          error("ERR Unrecognized XCLAIM option 'BOGUS'"));
    CHECK(s.run({"XCLAIM", "s", "g", "c", "0", "1-0", "IDLE", "x"}) ==
          error("ERR Invalid IDLE option argument for XCLAIM"));
    CHECK(s.run({"XCLAIM", "s", "g", "c", "0", "1-0", "TIME", "x"}) ==
          error("ERR Invalid TIME option argument for XCLAIM"));
    CHECK(s.run({"XCLAIM", "s", "g", "c", "0", "1-0", "RETRYCOUNT", "x"}) ==
          error("ERR Invalid RETRYCOUNT option argument for XCLAIM"));
    CHECK(s.run({"XCLAIM", "s", "g", "c", "0", "1-0", "LASTID", "x"}) ==
          error("ERR Invalid stream ID specified as stream command argument"));
    CHECK(s.run({"XCLAIM", "s", "g", "c", "0", "1-0", "IDLE"}) ==
          error("ERR Unrecognized XCLAIM option 'IDLE'"));
    // alice and bob: claims that claimed nothing (carol's, dave's) and failed claims ("c")
    // create no consumer, as on Redis.
    CHECK(parse_resp(s.run({"XINFO", "CONSUMERS", "s", "g"})).size() == 2);
  }
}

TEST_CASE("XAUTOCLAIM scans from a cursor and reports deleted ids", "[streams]") {
  TestServer s;
  setup(s, 5);
  CHECK(s.run({"XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">"}) != "");
  CHECK(s.run({"XDEL", "s", "2-0"}) == integer(1));
  s.advance(1000);
  // COUNT 2: 1-0 is claimed, then the deleted 2-0 uses up the rest of the count.
  CHECK(s.run({"XAUTOCLAIM", "s", "g", "bob", "500", "0-0", "COUNT", "2"}) ==
        arr({bulk("3-0"), arr({e(1)}), arr({bulk("2-0")})}));
  CHECK(s.run({"XAUTOCLAIM", "s", "g", "bob", "2000", "3-0"}) ==
        arr({bulk("0-0"), "*0\r\n", "*0\r\n"}));
  CHECK(s.run({"XAUTOCLAIM", "s", "g", "bob", "500", "3-0", "COUNT", "10", "JUSTID"}) ==
        arr({bulk("0-0"), arr({bulk("3-0"), bulk("4-0"), bulk("5-0")}), "*0\r\n"}));
  CHECK(s.run({"XPENDING", "s", "g", "-", "+", "10"}) ==
        arr({pending(1, "bob", 0, 2), pending(3, "bob", 0, 1), pending(4, "bob", 0, 1),
             pending(5, "bob", 0, 1)}));
  CHECK(s.run({"XAUTOCLAIM", "s", "g", "carol", "0", "(1-0", "COUNT", "1"}) ==
        arr({bulk("4-0"), arr({e(3)}), "*0\r\n"}));
  CHECK(s.run({"XAUTOCLAIM", "s", "g", "c", "0", "0", "COUNT", "0"}) ==
        error("ERR COUNT must be > 0"));
  CHECK(s.run({"XAUTOCLAIM", "s", "g", "c", "0", "0", "COUNT", "x"}) ==
        error("ERR COUNT must be > 0"));
  CHECK(s.run({"XAUTOCLAIM", "s", "g", "c", "0", "0", "COUNT"}) == error("ERR syntax error"));
  CHECK(s.run({"XAUTOCLAIM", "s", "g", "c", "x", "0"}) ==
        error("ERR Invalid min-idle-time argument for XAUTOCLAIM"));
  CHECK(s.run({"XAUTOCLAIM", "s", "g", "c", "0", "x"}) ==
        error("ERR Invalid stream ID specified as stream command argument"));
  CHECK(s.run({"XAUTOCLAIM", "s", "nog", "c", "0", "0"}) ==
        error("NOGROUP No such key 's' or consumer group 'nog'"));
}

TEST_CASE("XAUTOCLAIM examines at most ten times COUNT records", "[streams]") {
  TestServer s;
  setup(s, 30);
  CHECK(s.run({"XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">"}) != "");
  s.advance(10);
  CHECK(s.run({"XAUTOCLAIM", "s", "g", "bob", "1000", "0", "COUNT", "2", "JUSTID"}) ==
        arr({bulk("21-0"), "*0\r\n", "*0\r\n"}));
}

TEST_CASE("XINFO GROUPS tracks entries-read and lag through deletions", "[streams]") {
  TestServer s;
  setup(s, 5);
  Resp g = group_info(s, "g");
  CHECK(g["entries-read"].null);
  CHECK(g["lag"].num == 5);
  CHECK(s.run({"XREADGROUP", "GROUP", "g", "c", "COUNT", "2", "STREAMS", "s", ">"}) != "");
  g = group_info(s, "g");
  CHECK(g["entries-read"].num == 2);
  CHECK(g["lag"].num == 3);
  CHECK(s.run({"XDEL", "s", "4-0"}) == integer(1));
  g = group_info(s, "g");
  CHECK(g["lag"].null);  // a tombstone ahead of the group makes the lag unknowable
  CHECK(s.run({"XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"}) ==
        arr({arr({bulk("s"), arr({e(3), e(5)})})}));
  g = group_info(s, "g");
  CHECK(g["entries-read"].num == 5);
  CHECK(g["lag"].num == 0);
  CHECK(s.run({"XADD", "s", "6-0", "n", "6"}) == bulk("6-0"));
  CHECK(group_info(s, "g")["lag"].num == 1);
  auto r3 = parse_resp(s.run3({"XINFO", "GROUPS", "s"}));
  REQUIRE(r3.size() == 1);
  CHECK(r3.at(0).type == '%');
  CHECK(r3.at(0).size() == 12);
  CHECK(s.run({"XINFO", "GROUPS", "missing"}) == error("ERR no such key"));
}

TEST_CASE("XINFO CONSUMERS reports pending idle and inactive times", "[streams]") {
  TestServer s;
  setup(s, 3);
  CHECK(s.run({"XGROUP", "CREATECONSUMER", "s", "g", "idle"}) == integer(1));
  CHECK(s.run({"XREADGROUP", "GROUP", "g", "reader", "STREAMS", "s", ">"}) != "");
  s.advance(100);
  CHECK(s.run({"XREADGROUP", "GROUP", "g", "reader", "STREAMS", "s", ">"}) == kNilArray);
  s.advance(20);
  const std::string expected =
      "*2\r\n*8\r\n" + bulk("name") + bulk("idle") + bulk("pending") + integer(0) + bulk("idle") +
      integer(120) + bulk("inactive") + integer(-1) + "*8\r\n" + bulk("name") + bulk("reader") +
      bulk("pending") + integer(3) + bulk("idle") + integer(20) + bulk("inactive") + integer(120);
  CHECK(s.run({"XINFO", "CONSUMERS", "s", "g"}) == expected);
  auto r3 = parse_resp(s.run3({"XINFO", "CONSUMERS", "s", "g"}));
  CHECK(r3.at(0).type == '%');
  CHECK(s.run({"XINFO", "CONSUMERS", "s", "nog"}) ==
        error("NOGROUP No such consumer group 'nog' for key name 's'"));
}

TEST_CASE("XINFO STREAM FULL shows groups consumers and pending entries", "[streams]") {
  TestServer s;
  setup(s, 3);
  CHECK(s.run({"XREADGROUP", "GROUP", "g", "alice", "COUNT", "2", "STREAMS", "s", ">"}) != "");
  int64_t read_at = s.now();
  s.advance(7);
  auto full = parse_resp(s.run3({"XINFO", "STREAM", "s", "FULL"}));
  REQUIRE(full.type == '%');
  const Resp& groups = full["groups"];
  REQUIRE(groups.size() == 1);
  const Resp& g = groups.at(0);
  CHECK(g.type == '%');
  CHECK(g["name"].str == "g");
  CHECK(g["last-delivered-id"].str == "2-0");
  CHECK(g["entries-read"].num == 2);
  CHECK(g["lag"].num == 1);
  CHECK(g["pel-count"].num == 2);
  REQUIRE(g["pending"].size() == 2);
  CHECK(g["pending"].at(0).at(0).str == "1-0");
  CHECK(g["pending"].at(0).at(1).str == "alice");
  CHECK(g["pending"].at(0).at(2).num == read_at);
  CHECK(g["pending"].at(0).at(3).num == 1);
  REQUIRE(g["consumers"].size() == 1);
  const Resp& c = g["consumers"].at(0);
  CHECK(c.type == '%');
  CHECK(c["name"].str == "alice");
  CHECK(c["seen-time"].num == read_at);
  CHECK(c["active-time"].num == read_at);
  CHECK(c["pel-count"].num == 2);
  CHECK(c["pending"].size() == 2);
  auto limited = parse_resp(s.run({"XINFO", "STREAM", "s", "FULL", "COUNT", "1"}));
  CHECK(limited["entries"].size() == 1);
  CHECK(limited["groups"].at(0)["pending"].size() == 1);
  CHECK(limited["groups"].at(0)["consumers"].at(0)["pending"].size() == 1);
}

TEST_CASE("XREADGROUP BLOCK asks to block and a woken re-run reports a vanished key or group",
          "[streams]") {
  TestServer s;
  setup(s, 1);
  CHECK(s.run({"XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"}) != "");
  const std::vector<std::string> argv = {"XREADGROUP", "GROUP",   "g", "c", "BLOCK",
                                         "0",          "STREAMS", "s", ">"};
  hotkv::CommandContext::BlockRequest req;
  CHECK(run_blockable(s, argv, req).empty());
  REQUIRE(req.requested);
  CHECK(req.timeout_ms == 0);
  CHECK(req.argv == argv);
  SECTION("new entries are delivered on the re-run") {
    CHECK(s.run({"XADD", "s", "2-0", "n", "2"}) == bulk("2-0"));
    hotkv::CommandContext::BlockRequest again;
    CHECK(run_blockable(s, req.argv, again, true) == arr({arr({bulk("s"), arr({e(2)})})}));
  }
  SECTION("the group was destroyed") {
    CHECK(s.run({"XGROUP", "DESTROY", "s", "g"}) == integer(1));
    hotkv::CommandContext::BlockRequest again;
    CHECK(run_blockable(s, req.argv, again, true) ==
          error("NOGROUP the consumer group this client was blocked on no longer exists"));
  }
  SECTION("the key was deleted") {
    CHECK(s.run({"DEL", "s"}) == integer(1));
    hotkv::CommandContext::BlockRequest again;
    CHECK(run_blockable(s, req.argv, again, true) ==
          error("UNBLOCKED the stream key no longer exists"));
  }
  SECTION("the key now holds another type: to the reader the stream no longer exists") {
    CHECK(s.run({"SET", "s", "x"}) == kOk);
    hotkv::CommandContext::BlockRequest again;
    CHECK(run_blockable(s, req.argv, again, true) ==
          error("UNBLOCKED the stream key no longer exists"));
  }
}

TEST_CASE("XREADGROUP across shards delivers from every stream in one reply", "[streams]") {
  TestServer s(4);
  std::vector<std::string> argv = {"XREADGROUP", "GROUP", "g", "c", "STREAMS"};
  for (int i = 0; i < 6; ++i) {
    std::string key = "k" + std::to_string(i);
    REQUIRE(s.run({"XADD", key, "1-0", "n", std::to_string(i)}) == bulk("1-0"));
    REQUIRE(s.run({"XGROUP", "CREATE", key, "g", "0"}) == kOk);
    argv.insert(argv.begin() + 5 + i, key);
    argv.push_back(">");
  }
  Resp r = parse_resp(s.run(argv));
  REQUIRE(r.size() == 6);
  for (int i = 0; i < 6; ++i) {
    std::string key = "k" + std::to_string(i);
    CHECK(r.at(i).at(0).str == key);
    CHECK(r.at(i).at(1).at(0).at(1).at(1).str == std::to_string(i));
    CHECK(s.run({"XPENDING", key, "g"}) ==
          arr({integer(1), bulk("1-0"), bulk("1-0"), arr({arr({bulk("c"), bulk("1")})})}));
  }
  CHECK(s.run(argv) == kNilArray);
}
