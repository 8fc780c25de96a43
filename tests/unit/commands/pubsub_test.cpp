// Command tests for pub/sub and keyspace notifications through the real table: confirmations
// in RESP2 and RESP3, the subscribed-context rule, PUBSUB introspection, and the events the
// string, key and expiry commands publish (including "expired" from active expiry).
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "hotkv/util/clock.hpp"
#include "support/test_server.hpp"

using hotkv::PubSubMessage;
using hotkv::test::bulk;
using hotkv::test::integer;
using hotkv::test::kOk;
using hotkv::test::TestServer;

namespace {

std::vector<std::string> describe(const std::vector<PubSubMessage>& ms) {
  std::vector<std::string> out;
  for (const auto& m : ms) {
    out.push_back(m.pattern + "|" + m.channel + "|" + m.payload);
  }
  return out;
}

}  // namespace

TEST_CASE("SUBSCRIBE confirms each channel with the running count", "[pubsub]") {
  TestServer s;
  REQUIRE(s.run({"SUBSCRIBE", "a", "b"}) ==
          "*3\r\n" + bulk("subscribe") + bulk("a") + integer(1) + "*3\r\n" + bulk("subscribe") +
              bulk("b") + integer(2));
  SECTION("RESP2 subscribers may only run the pub/sub commands and PING") {
    REQUIRE(s.run({"GET", "x"}) ==
            "-ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / "
            "RESET are allowed in this context\r\n");
    REQUIRE(s.run({"PING"}) == "*2\r\n" + bulk("pong") + bulk(""));
  }
  SECTION("UNSUBSCRIBE without arguments leaves every channel") {
    REQUIRE(s.run({"UNSUBSCRIBE"}) == "*3\r\n" + bulk("unsubscribe") + bulk("a") + integer(1) +
                                          "*3\r\n" + bulk("unsubscribe") + bulk("b") +
                                          integer(0));
    REQUIRE(s.run({"UNSUBSCRIBE"}) == "*3\r\n" + bulk("unsubscribe") + "$-1\r\n" + integer(0));
    REQUIRE(s.run({"GET", "x"}) == "$-1\r\n");
  }
}

TEST_CASE("Confirmations bypass a silenced reply (CLIENT REPLY OFF/SKIP)", "[pubsub]") {
  TestServer s;
  // The connection marks the session while it runs a command whose reply it will drop.
  s.session().replies_silenced = true;
  REQUIRE(s.run({"SUBSCRIBE", "a"}).empty());
  REQUIRE(s.session().pushes_while_silenced ==
          "*3\r\n" + bulk("subscribe") + bulk("a") + integer(1));
  s.session().replies_silenced = false;
  s.session().pushes_while_silenced.clear();
  REQUIRE(s.run({"UNSUBSCRIBE"}) == "*3\r\n" + bulk("unsubscribe") + bulk("a") + integer(0));
}

TEST_CASE("RESP3 confirmations are push frames and other commands stay allowed", "[pubsub]") {
  TestServer s;
  REQUIRE(s.run3({"PSUBSCRIBE", "o*"}) ==
          ">3\r\n" + bulk("psubscribe") + bulk("o*") + integer(1));
  REQUIRE(s.run3({"SET", "k", "v"}) == kOk);
}

TEST_CASE("PUBLISH counts receivers and delivers to channels and patterns", "[pubsub]") {
  TestServer s;
  s.run3({"SUBSCRIBE", "orders"});
  s.run3({"PSUBSCRIBE", "ord*"});
  REQUIRE(s.run3({"PUBLISH", "orders", "7781"}) == integer(2));
  REQUIRE(s.run3({"PUBLISH", "nobody", "x"}) == integer(0));
  REQUIRE(describe(s.pushes()) == std::vector<std::string>{"|orders|7781", "ord*|orders|7781"});
  REQUIRE(s.run3({"PUBSUB", "NUMSUB", "orders", "x"}) ==
          "%2\r\n" + bulk("orders") + integer(1) + bulk("x") + integer(0));
  REQUIRE(s.run3({"PUBSUB", "NUMPAT"}) == integer(1));
  REQUIRE(s.run3({"PUBSUB", "CHANNELS"}) == "*1\r\n" + bulk("orders"));
  REQUIRE(s.run3({"PUBSUB", "NOPE"}).rfind("-ERR unknown subcommand", 0) == 0);
  s.run3({"RESET"});
  REQUIRE(s.run({"PUBSUB", "NUMPAT"}) == integer(0));
}

TEST_CASE("Keyspace notifications follow notify-keyspace-events", "[pubsub]") {
  // pushes() runs the shards' io contexts, whose expiry timers follow the real clock: start
  // the manual clock far ahead of it so only expire_cycle() expires anything.
  TestServer s(1, hotkv::unix_ms() + 100'000'000);
  s.run3({"PSUBSCRIBE", "__key*__:*"});
  s.run3({"SET", "quiet", "1"});
  REQUIRE(s.pushes().empty());  // disabled by default

  REQUIRE(s.run3({"CONFIG", "SET", "notify-keyspace-events", "KEA"}) == kOk);
  REQUIRE(s.run3({"CONFIG", "GET", "notify-keyspace-events"}) ==
          "%1\r\n" + bulk("notify-keyspace-events") + bulk("AKE"));
  s.run3({"SET", "stock", "500", "EX", "60"});
  s.run3({"DECR", "stock"});
  s.run3({"DEL", "stock"});
  auto seen = describe(s.pushes());
  REQUIRE(seen == std::vector<std::string>{
                      "__key*__:*|__keyspace@0__:stock|set",
                      "__key*__:*|__keyevent@0__:set|stock",
                      "__key*__:*|__keyspace@0__:stock|expire",
                      "__key*__:*|__keyevent@0__:expire|stock",
                      "__key*__:*|__keyspace@0__:stock|incrby",
                      "__key*__:*|__keyevent@0__:incrby|stock",
                      "__key*__:*|__keyspace@0__:stock|del",
                      "__key*__:*|__keyevent@0__:del|stock",
                  });
  SECTION("only the selected classes and channel kinds are published") {
    REQUIRE(s.run3({"CONFIG", "SET", "notify-keyspace-events", "Ex"}) == kOk);
    s.run3({"SET", "hold", "c42", "PX", "100"});
    REQUIRE(s.pushes().empty());
    s.advance(150);
    REQUIRE(s.expire_cycle() == 1);
    REQUIRE(describe(s.pushes()) ==
            std::vector<std::string>{"__key*__:*|__keyevent@0__:expired|hold"});
  }
  SECTION("n: a key's creation is announced, its overwrite is not") {
    REQUIRE(s.run3({"CONFIG", "SET", "notify-keyspace-events", "En"}) == kOk);
    s.run3({"SET", "foo", "bar"});
    s.run3({"SET", "foo", "baz"});
    s.run3({"SET", "bar", "bar"});
    REQUIRE(describe(s.pushes()) == std::vector<std::string>{"__key*__:*|__keyevent@0__:new|foo",
                                                             "__key*__:*|__keyevent@0__:new|bar"});
  }
  SECTION("an unknown letter is refused") {
    REQUIRE(s.run3({"CONFIG", "SET", "notify-keyspace-events", "KEQ"}).rfind("-ERR", 0) == 0);
  }
}

TEST_CASE("client-output-buffer-limit accepts Redis syntax and validates it", "[pubsub]") {
  TestServer s;
  REQUIRE(s.run({"CONFIG", "SET", "client-output-buffer-limit", "pubsub 1mb 512kb 10"}) == kOk);
  REQUIRE(s.engine().config().pubsub_buffer_hard.load() == 1024 * 1024);
  REQUIRE(s.engine().config().pubsub_buffer_soft_seconds.load() == 10);
  REQUIRE(s.run({"CONFIG", "SET", "client-output-buffer-limit", "pubsub 1mb"}).rfind("-ERR", 0) ==
          0);
  REQUIRE(s.run({"CONFIG", "SET", "client-output-buffer-limit", "bogus 0 0 0"}).rfind("-ERR", 0) ==
          0);
}
