// LATENCY through TestServer: the reply shapes of LATEST, HISTORY, RESET, GRAPH, DOCTOR and
// HELP over the engine's monitor, and HISTOGRAM over the per-command (and per-subcommand)
// statistics, with CONFIG RESETSTAT clearing them.
#include <catch2/catch.hpp>

#include "support/test_server.hpp"

using hotkv::test::arr;
using hotkv::test::bulk;
using hotkv::test::integer;
using hotkv::test::TestServer;

namespace {
bool contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}
}  // namespace

TEST_CASE("LATENCY LATEST and HISTORY show the monitor's samples", "[latency]") {
  TestServer s;
  CHECK(s.run({"LATENCY", "LATEST"}) == "*0\r\n");
  CHECK(s.run({"CONFIG", "GET", "latency-monitor-threshold"}) ==
        arr({bulk("latency-monitor-threshold"), bulk("0")}));
  s.engine().latency().add("command", 1000, 300);
  s.engine().latency().add("command", 1002, 200);
  CHECK(s.run({"LATENCY", "LATEST"}) ==
        arr({arr({bulk("command"), integer(1002), integer(200), integer(300)})}));
  CHECK(s.run({"LATENCY", "HISTORY", "command"}) ==
        arr({arr({integer(1000), integer(300)}), arr({integer(1002), integer(200)})}));
  CHECK(s.run({"LATENCY", "HISTORY", "blabla"}) == "*0\r\n");
  SECTION("RESET answers how many events it forgot") {
    CHECK(s.run({"LATENCY", "RESET", "blabla"}) == integer(0));
    CHECK(s.run({"LATENCY", "RESET"}) == integer(1));
    CHECK(s.run({"LATENCY", "LATEST"}) == "*0\r\n");
  }
  SECTION("GRAPH and DOCTOR are text reports") {
    CHECK(contains(s.run({"LATENCY", "GRAPH", "command"}), "command - high 300 ms"));
    CHECK(s.run({"LATENCY", "GRAPH", "nope"}) ==
          "-ERR No samples available for event 'nope'\r\n");
    CHECK(s.run({"LATENCY", "DOCTOR"}).rfind("$", 0) == 0);
    CHECK(s.run3({"LATENCY", "DOCTOR"}).rfind("=", 0) == 0);  // RESP3: a verbatim string
  }
}

TEST_CASE("latency-monitor-threshold is a setting of its own", "[latency]") {
  TestServer s;
  CHECK(s.run({"CONFIG", "SET", "latency-monitor-threshold", "1"}) == "+OK\r\n");
  CHECK(s.engine().latency().wanted(1));
  CHECK_FALSE(s.engine().latency().wanted(0));
  CHECK(s.run({"CONFIG", "SET", "latency-monitor-threshold", "-1"}).rfind("-ERR", 0) == 0);
}

TEST_CASE("LATENCY HISTOGRAM reports calls per command and subcommand", "[latency]") {
  TestServer s;
  CHECK(s.run({"CONFIG", "RESETSTAT"}) == "+OK\r\n");
  std::string after_reset = s.run({"LATENCY", "HISTOGRAM"});
  CHECK(after_reset.rfind("*2\r\n" + bulk("config|resetstat"), 0) == 0);
  s.run({"SET", "a", "b"});
  s.run({"SET", "c", "d"});
  s.run({"CLIENT", "ID"});
  std::string set = s.run({"LATENCY", "HISTOGRAM", "set"});
  CHECK(set.rfind("*2\r\n" + bulk("set") + "*4\r\n" + bulk("calls") + integer(2) +
                      bulk("histogram_usec"),
                  0) == 0);
  SECTION("a container command stands for its subcommands") {
    std::string client = s.run({"LATENCY", "HISTOGRAM", "client"});
    CHECK(contains(client, bulk("client|id")));
    CHECK(client.rfind("*2\r\n", 0) == 0);
    CHECK(s.run({"LATENCY", "HISTOGRAM", "client|id"}) == client);
    CHECK(contains(s.run({"INFO", "commandstats"}), "cmdstat_client|id:calls=1,"));
  }
  SECTION("unknown and uncalled commands are skipped") {
    CHECK(s.run({"LATENCY", "HISTOGRAM", "blabla", "zadd"}) == "*0\r\n");
  }
  SECTION("RESP3 replies maps") {
    CHECK(s.run3({"LATENCY", "HISTOGRAM", "set"}).rfind("%1\r\n", 0) == 0);
  }
}

TEST_CASE("LATENCY checks its subcommands' arity", "[latency]") {
  TestServer s;
  CHECK(s.run({"LATENCY", "HELP", "xxx"}) ==
        "-ERR wrong number of arguments for 'latency|help' command\r\n");
  CHECK(s.run({"LATENCY", "HISTORY"}) ==
        "-ERR wrong number of arguments for 'latency|history' command\r\n");
  CHECK(s.run({"LATENCY", "NOPE"}) == "-ERR unknown subcommand 'NOPE'. Try LATENCY HELP.\r\n");
  CHECK(s.run({"LATENCY", "HELP"}).rfind("*16\r\n", 0) == 0);
}
