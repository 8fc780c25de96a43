// Client-side caching through the real table and shards: what CLIENT TRACKING accepts and
// refuses (Redis 7.0's texts), which reads are remembered, which changes invalidate whom, and
// what reaches the client's (or its REDIRECT target's) thread. Messages are collected from the
// ClientInfo::push hook the connection would install.
#include "hotkv/commands/client_tracking.hpp"

#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "hotkv/commands/table.hpp"
#include "support/test_server.hpp"

using hotkv::ClientInfo;
using hotkv::ScopedTrackingCaller;
using hotkv::TrackingCaller;
using hotkv::TrackingMessage;
using hotkv::test::bulk;
using hotkv::test::error;
using hotkv::test::integer;
using hotkv::test::keys_on_distinct_shards;
using hotkv::test::kOk;
using hotkv::test::TestServer;
using Kind = TrackingMessage::Kind;

namespace {

using Inbox = std::vector<std::shared_ptr<const TrackingMessage>>;

// What the connection would do with a message: here, keep it.
struct Collector final : hotkv::ClientControl {
  explicit Collector(Inbox& to) : inbox(to) {}
  void kill() override {}
  void unblock(bool) override {}
  void push(std::shared_ptr<const TrackingMessage> m) override { inbox.push_back(std::move(m)); }
  Inbox& inbox;
};

void collect_into(ClientInfo& info, Inbox& inbox) { info.control = std::make_shared<Collector>(inbox); }

// The test session as a registered, tracking-capable client, and a second client ("other")
// that writes and can be a REDIRECT target.
struct Tracker {
  explicit Tracker(size_t shards = 4) : s(shards) {
    collect_into(*s.session().info, mine);
    s.engine().clients().add(s.session().info);
    other = std::make_shared<ClientInfo>();
    other->id = s.engine().clients().next_id();
    collect_into(*other, theirs);
    s.engine().clients().add(other);
  }
  // A command of the session, as its connection runs it.
  std::string run(const std::vector<std::string>& argv) {
    const hotkv::CommandSpec* spec = s.engine().table().find(argv[0]);
    TrackingCaller caller =
        spec != nullptr ? take_tracking_caller(s.session(), *spec) : TrackingCaller{};
    ScopedTrackingCaller as(caller);
    return s.run(argv);
  }
  // A command of the other client (its reads are not tracked).
  std::string run_other(const std::vector<std::string>& argv) {
    TrackingCaller caller;
    caller.client = other->id;
    ScopedTrackingCaller as(caller);
    return s.run(argv);
  }
  // Runs the posted work (broadcasts, evictions), then hands over what arrived.
  Inbox take_mine() {
    s.pushes();
    Inbox out;
    out.swap(mine);
    return out;
  }
  Inbox take_theirs() {
    s.pushes();
    Inbox out;
    out.swap(theirs);
    return out;
  }
  TestServer s;
  std::shared_ptr<ClientInfo> other;
  Inbox mine;
  Inbox theirs;
};

std::vector<std::string> keys_of(const Inbox& inbox) {
  std::vector<std::string> out;
  for (const auto& m : inbox) {
    out.insert(out.end(), m->keys.begin(), m->keys.end());
  }
  return out;
}

}  // namespace

TEST_CASE("CLIENT TRACKING refuses what Redis 7.0 refuses", "[tracking]") {
  Tracker t;
  REQUIRE(t.run({"CLIENT", "TRACKING", "on", "PREFIX", "a"}) ==
          error("ERR PREFIX option requires BCAST mode to be enabled"));
  REQUIRE(t.run({"CLIENT", "TRACKING", "on", "OPTIN", "OPTOUT"}) ==
          error("ERR You can't specify both OPTIN mode and OPTOUT mode"));
  REQUIRE(t.run({"CLIENT", "TRACKING", "on", "BCAST", "OPTIN"}) ==
          error("ERR OPTIN and OPTOUT are not compatible with BCAST"));
  REQUIRE(t.run({"CLIENT", "TRACKING", "on", "REDIRECT", "999999"}) ==
          error("ERR The client ID you want redirect to does not exist"));
  REQUIRE(t.run({"CLIENT", "TRACKING", "on", "REDIRECT", "x"}) ==
          error("ERR value is not an integer or out of range"));
  REQUIRE(t.run({"CLIENT", "TRACKING", "maybe"}) == error("ERR syntax error"));
  REQUIRE(t.run({"CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "FOOBAR", "PREFIX", "FOO"}) ==
          error("ERR Prefix 'FOOBAR' overlaps with another provided prefix 'FOO'. Prefixes for "
                "a single client must not overlap."));
  REQUIRE(t.run({"CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "FOO"}) == kOk);
  REQUIRE(t.run({"CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "FO"}) ==
          error("ERR Prefix 'FO' overlaps with an existing prefix 'FOO'. Prefixes for a single "
                "client must not overlap."));
  REQUIRE(t.run({"CLIENT", "TRACKING", "on"}) ==
          error("ERR You can't switch BCAST mode on/off before disabling tracking for this "
                "client, and then re-enabling it with a different mode."));
  REQUIRE(t.run({"CLIENT", "TRACKING", "off"}) == kOk);
  REQUIRE(t.run({"CLIENT", "CACHING", "yes"}) ==
          error("ERR CLIENT CACHING can be called only when the client is in tracking mode with "
                "OPTIN or OPTOUT mode enabled"));
  REQUIRE(t.run({"CLIENT", "TRACKING", "on", "OPTIN"}) == kOk);
  REQUIRE(t.run({"CLIENT", "CACHING", "no"}) ==
          error("ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode."));
  REQUIRE(t.run({"CLIENT", "TRACKING", "on", "OPTOUT"}) ==
          error("ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this "
                "client, and then re-enabling it with a different mode."));
  REQUIRE(t.s.engine().tracking().clients() == 1);
  REQUIRE(t.run({"CLIENT", "TRACKING", "off"}) == kOk);
  REQUIRE(t.s.engine().tracking().clients() == 0);
  REQUIRE(t.s.engine().tracking().total_prefixes() == 0);
}

TEST_CASE("A read is invalidated once, by the first change, wherever its key lives", "[tracking]") {
  Tracker t;
  std::vector<std::string> keys = keys_on_distinct_shards(t.s, "k", 4);
  REQUIRE(t.run({"CLIENT", "TRACKING", "on"}) == kOk);
  std::vector<std::string> mget = {"MGET"};
  mget.insert(mget.end(), keys.begin(), keys.end());
  t.run(mget);
  REQUIRE(t.s.engine().tracking().total_keys() == 4);
  REQUIRE(t.s.engine().tracking().total_items() == 4);
  for (const std::string& k : keys) {
    t.run_other({"SET", k, "1"});
  }
  Inbox got = t.take_mine();
  REQUIRE(keys_of(got) == keys);
  for (const auto& m : got) {
    REQUIRE(m->kind == Kind::kInvalidate);
    REQUIRE(m->cause == t.other->id);
    REQUIRE_FALSE(m->redirected);
  }
  for (const std::string& k : keys) {
    t.run_other({"SET", k, "2"});  // not read again: nothing to say
  }
  REQUIRE(t.take_mine().empty());
  REQUIRE(t.s.engine().tracking().total_keys() == 0);

  SECTION("a write is not a read") {
    t.run({"INCR", "counter"});
    t.run_other({"INCR", "counter"});
    REQUIRE(t.take_mine().empty());
  }
  SECTION("its own write invalidates too, unless NOLOOP") {
    t.run({"GET", "mine"});
    t.run({"SET", "mine", "1"});
    Inbox own = t.take_mine();
    REQUIRE(keys_of(own) == std::vector<std::string>{"mine"});
    REQUIRE(own[0]->cause == t.s.session().info->id);
    REQUIRE(t.run({"CLIENT", "TRACKING", "on", "NOLOOP"}) == kOk);
    t.run({"GET", "mine"});
    t.run({"SET", "mine", "2"});
    REQUIRE(t.take_mine().empty());
  }
  SECTION("expiry invalidates, NOLOOP or not") {
    REQUIRE(t.run({"CLIENT", "TRACKING", "on", "NOLOOP"}) == kOk);
    t.run({"SET", "ttl", "v", "PX", "10"});
    t.run({"GET", "ttl"});
    t.s.advance(20);
    t.s.expire_cycle();
    REQUIRE(keys_of(t.take_mine()) == std::vector<std::string>{"ttl"});
  }
}

TEST_CASE("OPTIN remembers only the command after CLIENT CACHING yes", "[tracking]") {
  Tracker t;
  REQUIRE(t.run({"CLIENT", "TRACKING", "on", "OPTIN"}) == kOk);
  t.run({"GET", "a"});
  REQUIRE(t.run({"CLIENT", "CACHING", "yes"}) == kOk);
  t.run({"GET", "b"});
  t.run({"GET", "c"});
  t.run_other({"MSET", "a", "1", "b", "1", "c", "1"});
  REQUIRE(keys_of(t.take_mine()) == std::vector<std::string>{"b"});
}

TEST_CASE("A REDIRECT target gets the messages, and its going away is reported", "[tracking]") {
  Tracker t;
  std::string id = std::to_string(t.other->id);
  REQUIRE(t.run({"CLIENT", "TRACKING", "on", "REDIRECT", id}) == kOk);
  REQUIRE(t.run({"CLIENT", "GETREDIR"}) == integer(static_cast<int64_t>(t.other->id)));
  t.run({"GET", "k"});
  t.run_other({"SET", "k", "1"});
  Inbox got = t.take_theirs();
  REQUIRE(keys_of(got) == std::vector<std::string>{"k"});
  REQUIRE(got[0]->redirected);
  REQUIRE(t.take_mine().empty());

  t.s.engine().clients().remove(t.other->id);
  t.run({"GET", "k"});
  t.run_other({"SET", "k", "2"});
  Inbox broken = t.take_mine();
  REQUIRE(broken.size() == 1);
  REQUIRE(broken[0]->kind == Kind::kRedirBroken);
  REQUIRE(broken[0]->redirect == t.other->id);
  REQUIRE((t.s.session().info->tracking.load() & hotkv::kTrackingBrokenRedirect) != 0);
}

TEST_CASE("BCAST sends one message per prefix for the keys changed in one turn", "[tracking]") {
  Tracker t(1);
  REQUIRE(t.run({"CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "a:", "PREFIX", "b:"}) == kOk);
  REQUIRE(t.s.engine().tracking().total_prefixes() == 2);
  t.run_other({"MSET", "a:1", "1", "a:2", "1", "b:1", "1", "c:1", "1"});
  Inbox got = t.take_mine();
  REQUIRE(got.size() == 2);
  REQUIRE(got[0]->keys == std::vector<std::string>{"a:1", "a:2"});
  REQUIRE(got[1]->keys == std::vector<std::string>{"b:1"});

  SECTION("NOLOOP leaves out the client's own changes") {
    REQUIRE(t.run({"CLIENT", "TRACKING", "off"}) == kOk);
    REQUIRE(t.run({"CLIENT", "TRACKING", "on", "BCAST", "NOLOOP"}) == kOk);
    t.run({"SET", "own", "1"});
    t.run_other({"SET", "theirs", "1"});
    REQUIRE(keys_of(t.take_mine()) == std::vector<std::string>{"theirs"});
  }
}

TEST_CASE("FLUSHALL tells every tracking client and forgets every key", "[tracking]") {
  Tracker t;
  REQUIRE(t.run({"CLIENT", "TRACKING", "on"}) == kOk);
  t.run({"GET", "x"});
  t.run({"GET", "y"});
  REQUIRE(t.s.engine().tracking().total_keys() == 2);
  t.run_other({"FLUSHALL"});
  REQUIRE(t.s.engine().tracking().total_keys() == 0);
  Inbox got = t.take_mine();
  REQUIRE(got.size() == 1);
  REQUIRE(got[0]->kind == Kind::kFlush);
}

TEST_CASE("A script remembers its declared keys once it reads", "[tracking]") {
  Tracker t(1);
  REQUIRE(t.run({"CLIENT", "TRACKING", "on"}) == kOk);
  t.run({"EVAL", "redis.call('set', 'other', 'v')", "2", "k1", "k2"});
  REQUIRE(t.s.engine().tracking().total_keys() == 0);
  t.run({"EVAL", "redis.call('get', 'other')", "2", "k1", "k2"});
  REQUIRE(t.s.engine().tracking().total_keys() == 2);
  t.run_other({"MSET", "k2", "1", "k1", "1", "other", "2"});
  REQUIRE(keys_of(t.take_mine()) == std::vector<std::string>{"k2", "k1"});
}

TEST_CASE("tracking-table-max-keys forgets keys down to the limit and tells their readers",
          "[tracking]") {
  Tracker t;
  REQUIRE(t.run({"CLIENT", "TRACKING", "on"}) == kOk);
  for (int i = 0; i < 50; ++i) {
    t.run({"GET", "key" + std::to_string(i)});
  }
  REQUIRE(t.s.engine().tracking().total_keys() == 50);
  REQUIRE(t.run({"CONFIG", "SET", "tracking-table-max-keys", "1"}) == kOk);
  Inbox got = t.take_mine();
  REQUIRE(got.size() == 49);
  REQUIRE(t.s.engine().tracking().total_keys() == 1);
  REQUIRE(t.run({"CONFIG", "SET", "tracking-table-max-keys", "1000000"}) == kOk);
}

TEST_CASE("CLIENT TRACKINGINFO reports the flags, the redirect and the prefixes", "[tracking]") {
  Tracker t;
  std::string off = t.s.run3({"CLIENT", "TRACKINGINFO"});
  REQUIRE(off == "%3\r\n" + bulk("flags") + "~1\r\n" + bulk("off") + bulk("redirect") +
                     integer(-1) + bulk("prefixes") + "*0\r\n");
  REQUIRE(t.run({"CLIENT", "TRACKING", "on", "OPTOUT", "NOLOOP"}) == kOk);
  REQUIRE(t.run({"CLIENT", "CACHING", "no"}) == kOk);
  std::string on = t.s.run3({"CLIENT", "TRACKINGINFO"});
  REQUIRE(on == "%3\r\n" + bulk("flags") + "~4\r\n" + bulk("on") + bulk("optout") +
                    bulk("caching-no") + bulk("noloop") + bulk("redirect") + integer(0) +
                    bulk("prefixes") + "*0\r\n");
}
