// Unit tests for the pub/sub hub: channel and pattern subscriptions, receiver counts, delivery
// on the subscriber's own io_context in publish order, and the bookkeeping PUBSUB reports.
#include "hotkv/shard/pubsub.hpp"

#include <memory>
#include <string>
#include <vector>

#include <asio/io_context.hpp>
#include <catch2/catch.hpp>

using hotkv::PubSubClient;
using hotkv::PubSubHub;
using hotkv::PubSubMessage;

namespace {

struct Recorder : hotkv::PubSubSink {
  std::shared_ptr<PubSubClient> client;
  std::vector<std::string> seen;  // "pattern|channel|payload"
  std::vector<std::string> wire;  // the RESP2 bytes of each message
  size_t flushes = 0;
  void deliver(const PubSubMessage& m) override {
    seen.push_back(m.pattern + "|" + m.channel + "|" + m.payload);
    wire.push_back(m.wire(2));
  }
  void flush() override { ++flushes; }
};

std::unique_ptr<Recorder> make_recorder(uint64_t id, asio::io_context& io) {
  auto r = std::make_unique<Recorder>();
  r->client = std::make_shared<PubSubClient>();
  r->client->id = id;
  r->client->io = &io;
  r->client->sink = r.get();
  return r;
}

// A hub with two recorders on one io_context (ids 1 and 2), not yet subscribed to anything.
struct TwoSubscribers {
  asio::io_context io;
  PubSubHub hub;
  std::unique_ptr<Recorder> a = make_recorder(1, io);
  std::unique_ptr<Recorder> b = make_recorder(2, io);
};

}  // namespace

TEST_CASE("A published message reaches channel and pattern subscribers", "[pubsub]") {
  TwoSubscribers f;
  auto& [io, hub, a, b] = f;
  REQUIRE(hub.idle());
  REQUIRE(hub.subscribe("orders", a->client));
  REQUIRE_FALSE(hub.subscribe("orders", a->client));  // already subscribed
  REQUIRE(hub.psubscribe("ord*", b->client));
  REQUIRE_FALSE(hub.idle());

  REQUIRE(hub.publish("orders", "o-1") == 2);
  REQUIRE(hub.publish("other", "x") == 0);
  // Delivery happens on the subscriber's io_context, never inline in publish.
  REQUIRE(a->seen.empty());
  io.run();
  REQUIRE(a->seen == std::vector<std::string>{"|orders|o-1"});
  REQUIRE(b->seen == std::vector<std::string>{"ord*|orders|o-1"});
}

TEST_CASE("One publisher's messages arrive in publish order", "[pubsub]") {
  asio::io_context io;
  PubSubHub hub;
  auto a = make_recorder(1, io);
  hub.subscribe("c", a->client);
  for (int i = 0; i < 100; ++i) {
    hub.publish("c", std::to_string(i));
  }
  io.run();
  REQUIRE(a->seen.size() == 100);
  for (int i = 0; i < 100; ++i) {
    REQUIRE(a->seen[static_cast<size_t>(i)] == "|c|" + std::to_string(i));
  }
}

TEST_CASE("Subscribers on different io contexts each get the message on their own", "[pubsub]") {
  asio::io_context io1;
  asio::io_context io2;
  PubSubHub hub;
  auto a = make_recorder(1, io1);
  auto b = make_recorder(2, io2);
  hub.subscribe("c", a->client);
  hub.subscribe("c", b->client);
  REQUIRE(hub.publish("c", "m") == 2);
  io1.run();
  REQUIRE(a->seen.size() == 1);
  REQUIRE(b->seen.empty());
  io2.run();
  REQUIRE(b->seen.size() == 1);
}

TEST_CASE("Unsubscribing stops delivery and PUBSUB counts follow", "[pubsub]") {
  TwoSubscribers f;
  auto& [io, hub, a, b] = f;
  hub.subscribe("news", a->client);
  hub.subscribe("news", b->client);
  hub.subscribe("sport", a->client);
  hub.psubscribe("n*", a->client);
  REQUIRE(hub.numsub("news") == 2);
  REQUIRE(hub.numsub("none") == 0);
  REQUIRE(hub.numpat() == 1);
  auto all = hub.channels("");
  REQUIRE(all.size() == 2);
  REQUIRE(hub.channels("n*") == std::vector<std::string>{"news"});

  REQUIRE(hub.unsubscribe("news", 1));
  REQUIRE_FALSE(hub.unsubscribe("news", 1));
  REQUIRE(hub.punsubscribe("n*", 1));
  REQUIRE(hub.numsub("news") == 1);
  REQUIRE(hub.numpat() == 0);
  REQUIRE(hub.publish("news", "late") == 1);
  io.run();
  REQUIRE(a->seen.empty());
  REQUIRE(b->seen.size() == 1);

  hub.unsubscribe("news", 2);
  hub.unsubscribe("sport", 1);
  REQUIRE(hub.idle());
  REQUIRE(hub.channels("").empty());
}

TEST_CASE("A message carries its wire form for RESP2 and RESP3", "[pubsub]") {
  TwoSubscribers f;
  auto& [io, hub, a, b] = f;
  hub.subscribe("orders", a->client);
  hub.psubscribe("ord*", b->client);
  hub.publish("orders", "o-1");
  io.run();
  REQUIRE(a->wire == std::vector<std::string>{"*3\r\n$7\r\nmessage\r\n$6\r\norders\r\n$3\r\no-1\r\n"});
  REQUIRE(b->wire == std::vector<std::string>{
                         "*4\r\n$8\r\npmessage\r\n$4\r\nord*\r\n$6\r\norders\r\n$3\r\no-1\r\n"});
}

TEST_CASE("A batch of messages is flushed once per subscriber", "[pubsub]") {
  TwoSubscribers f;
  auto& [io, hub, a, b] = f;
  hub.subscribe("c", a->client);
  hub.subscribe("c", b->client);
  hub.psubscribe("*", a->client);
  for (int i = 0; i < 50; ++i) {
    hub.publish("c", std::to_string(i));
  }
  io.run();
  REQUIRE(a->seen.size() == 100);  // channel and pattern
  REQUIRE(b->seen.size() == 50);
  REQUIRE(a->flushes == 1);
  REQUIRE(b->flushes == 1);
  // Channel and pattern copies of one publish stay in publish order.
  REQUIRE(a->seen[0] == "|c|0");
  REQUIRE(a->seen[1] == "*|c|0");
  REQUIRE(a->seen[98] == "|c|49");
  REQUIRE(a->seen[99] == "*|c|49");
}

TEST_CASE("Deliveries queued before a subscriber goes away skip it", "[pubsub]") {
  TwoSubscribers f;
  auto& [io, hub, a, b] = f;
  hub.subscribe("c", a->client);
  hub.subscribe("c", b->client);
  REQUIRE(hub.publish("c", "before") == 2);
  // b leaves before its thread drains: it unsubscribes and clears its sink, as a closing
  // connection does; the message already queued still reaches a.
  REQUIRE(hub.unsubscribe("c", 2));
  b->client->sink = nullptr;
  io.run();
  REQUIRE(a->seen == std::vector<std::string>{"|c|before"});
  REQUIRE(b->seen.empty());
  REQUIRE(b->flushes == 0);
  REQUIRE(hub.numsub("c") == 1);
}
