// Unit tests for the durability barrier (shard/durability_barrier.hpp): its group commit with
// appendfsync always (callers of one event-loop turn share one write and fsync, later callers
// form the next group, nobody is released before an fsync covering what was logged before
// it), its immediate pass for replies handed to other threads, its pass over a multi-shard
// operation's shards, and the pushes that wait for it.
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/io_context.hpp>
#include <catch2/catch.hpp>

#include "hotkv/commands/table.hpp"
#include "hotkv/scripting/lua_vm.hpp"
#include "hotkv/shard/durability_barrier.hpp"
#include "hotkv/shard/engine.hpp"
#include "hotkv/shard/shard.hpp"

using hotkv::DurabilityBarrier;
using hotkv::FsyncPolicy;
using hotkv::Shard;

namespace {

struct LogFixture {
  std::string path;
  asio::io_context io;
  hotkv::SplitSeals seals;
  Shard shard{0, io, 1, 1'700'000'000'000, 1, seals};
  LogFixture() {
    char tmpl[] = "/tmp/hotkv-group-commit-XXXXXX";
    int fd = ::mkstemp(tmpl);
    REQUIRE(fd >= 0);
    path = tmpl;
    shard.log().attach(fd, 0, FsyncPolicy::kAlways);
  }
  ~LogFixture() { ::unlink(path.c_str()); }
  void append(const std::string& key) {
    shard.log().record().add_put_string(key, "v", 0);
    shard.log().end_record(0, 1);
  }
  // A connection's reply path: wait for the barrier, then check that what was logged before
  // it is written, and with always synced.
  void waiter(std::vector<uint64_t>& synced_at_release) {
    asio::co_spawn(
        io,
        [this, &synced_at_release]() -> asio::awaitable<void> {
          uint64_t logged = shard.log().lsn() + (shard.log().has_unwritten() ? 1 : 0);
          co_await DurabilityBarrier::pass_grouped(shard);
          REQUIRE(shard.log().lsn() >= logged);
          if (shard.log().policy() == FsyncPolicy::kAlways) {
            REQUIRE(shard.log().synced_lsn() >= logged);
          }
          synced_at_release.push_back(shard.log().synced_lsn());
        },
        asio::detached);
  }
};

}  // namespace

TEST_CASE("Callers of one turn share one fsync under appendfsync always", "[durability]") {
  LogFixture f;
  std::vector<uint64_t> released;
  for (int i = 0; i < 5; ++i) {
    f.append("k" + std::to_string(i));
    f.waiter(released);
  }
  f.io.run();
  REQUIRE(released.size() == 5);
  REQUIRE(f.shard.log().fsyncs() == 1);
  REQUIRE(f.shard.log().synced_lsn() == f.shard.log().lsn());
  REQUIRE(f.shard.log().lsn() > 0);
}

TEST_CASE("Writes logged after a group was flushed form the next group", "[durability]") {
  LogFixture f;
  std::vector<uint64_t> released;
  f.append("a");
  f.waiter(released);
  // Runs after the first group's flush: a new record and its waiter, plus a reader whose
  // turn comes after that record was logged.
  asio::post(f.io, [&] {
    asio::post(f.io, [&] {
      f.append("b");
      f.waiter(released);
      f.waiter(released);
    });
  });
  f.io.run();
  REQUIRE(released.size() == 3);
  REQUIRE(f.shard.log().fsyncs() == 2);
  REQUIRE(f.shard.log().synced_lsn() == f.shard.log().lsn());
}

TEST_CASE("Without appendfsync always the barrier writes without syncing", "[durability]") {
  LogFixture f;
  f.shard.log().set_policy(FsyncPolicy::kEverysec);
  std::vector<uint64_t> released;
  f.append("a");
  f.waiter(released);
  f.io.run();
  REQUIRE(released.size() == 1);
  REQUIRE(f.shard.log().fsyncs() == 0);
  REQUIRE_FALSE(f.shard.log().has_unwritten());
}

TEST_CASE("pass_group_now writes and syncs at once and releases the group's waiters",
          "[durability]") {
  // The end-of-batch reply pass holds replies back itself and calls pass_group_now before it
  // writes them; connections waiting in pass_grouped meanwhile are released by the same group.
  LogFixture f;
  std::vector<uint64_t> released;
  f.append("a");
  f.waiter(released);
  f.append("b");
  f.io.poll_one();  // the waiter runs up to the barrier; the flush it posted has not run
  REQUIRE(released.empty());
  DurabilityBarrier::pass_group_now(f.shard);
  REQUIRE(released.size() == 1);
  CHECK(f.shard.log().fsyncs() == 1);
  CHECK(f.shard.log().synced_lsn() == f.shard.log().lsn());
  CHECK_FALSE(f.shard.log().needs_flush());
  // The flush posted for the group finds nothing left to write.
  f.io.run();
  CHECK(f.shard.log().fsyncs() == 1);
  // Nothing pending and nobody waiting: no write, no fsync.
  DurabilityBarrier::pass_group_now(f.shard);
  CHECK(f.shard.log().fsyncs() == 1);
}

TEST_CASE("A shard that ran a split part answers only once its operation is sealed",
          "[durability]") {
  // The part is written here, but a sibling part on another shard is not yet: the replies
  // after it wait, in the connection's path and in the end-of-batch pass alike.
  LogFixture f;
  f.shard.log().set_policy(FsyncPolicy::kEverysec);
  uint64_t op = f.seals.open();
  f.append("part");
  f.shard.seal_gate().absorb(op);
  std::vector<uint64_t> released;
  f.waiter(released);
  bool batch_written = false;
  DurabilityBarrier::pass_group_now(f.shard);
  REQUIRE(DurabilityBarrier::pending(f.shard));
  REQUIRE_FALSE(DurabilityBarrier::sealed(f.shard));
  DurabilityBarrier::when_sealed(f.shard, [&] { batch_written = true; });
  f.io.poll();
  CHECK_FALSE(f.shard.log().needs_flush());  // written, still held
  CHECK(released.empty());
  CHECK_FALSE(batch_written);
  // The sibling part is written: the operation is sealed.
  REQUIRE(f.seals.close(op));
  f.shard.seal_gate().advanced(f.seals.sealed_below());
  f.io.restart();
  f.io.poll();
  CHECK(released.size() == 1);
  CHECK(batch_written);
  CHECK_FALSE(DurabilityBarrier::pending(f.shard));
}

namespace {
struct EventSink : hotkv::PubSubSink {
  std::vector<std::string> seen;
  void deliver(const hotkv::PubSubMessage& m) override { seen.push_back(m.channel + "|" + m.payload); }
};

// A subscriber of `channel` on the fixture's thread, hearing through `sink`.
std::shared_ptr<hotkv::PubSubClient> subscribe(hotkv::PubSubHub& hub, LogFixture& f,
                                               EventSink& sink, const std::string& channel) {
  auto client = std::make_shared<hotkv::PubSubClient>();
  client->id = 1;
  client->io = &f.io;
  client->sink = &sink;
  REQUIRE(hub.subscribe(channel, client));
  return client;
}
}  // namespace

TEST_CASE("A keyspace event waits until its write's record is written and synced",
          "[durability]") {
  LogFixture f;
  hotkv::PubSubHub hub;
  EventSink sink;
  auto client = subscribe(hub, f, sink, "__keyspace@0__:k");
  f.append("k");
  f.shard.publish_after_log(hub, "__keyspace@0__:k", "set");
  f.io.poll();
  CHECK(sink.seen.empty());  // the record is only in memory: nobody hears of the write yet
  DurabilityBarrier::pass_group_now(f.shard);
  REQUIRE(f.shard.log().synced_lsn() == f.shard.log().lsn());
  f.io.restart();
  f.io.poll();
  CHECK(sink.seen == std::vector<std::string>{"__keyspace@0__:k|set"});
  // With nothing waiting to be written, an event goes out at once.
  f.shard.publish_after_log(hub, "__keyspace@0__:k", "del");
  f.io.restart();
  f.io.poll();
  CHECK(sink.seen.size() == 2);
}

TEST_CASE("A PUBLISH after a write reaches its receivers once the write is durable",
          "[durability]") {
  LogFixture f;
  hotkv::PubSubHub hub;
  EventSink sink;
  auto client = subscribe(hub, f, sink, "orders");
  f.append("stock");
  REQUIRE(f.shard.pushes_wait());
  // The receivers are counted when it is published (PUBLISH's reply), delivered after.
  auto prepared = std::make_shared<hotkv::PubSubHub::Prepared>(hub.prepare("orders", "o1"));
  CHECK(prepared->receivers == 1);
  f.shard.after_log([&hub, prepared] { hub.send(*prepared); });
  // A keyspace event held behind it keeps its place.
  f.shard.publish_after_log(hub, "orders", "o2");
  f.io.poll();
  CHECK(sink.seen.empty());
  DurabilityBarrier::pass_group_now(f.shard);
  f.io.restart();
  f.io.poll();
  CHECK(sink.seen == std::vector<std::string>{"orders|o1", "orders|o2"});
  CHECK_FALSE(f.shard.pushes_wait());
}

TEST_CASE("A push held for a multi-shard operation leaves at release_pushes",
          "[durability]") {
  // The operation's writes are pending on other shards: the home shard holds the push even
  // with its own log clean, and the operation releases it after flushing them.
  LogFixture f;
  int sent = 0;
  f.shard.after_log([&sent] { ++sent; }, true);
  CHECK(sent == 0);
  CHECK(f.shard.pushes_wait());
  f.shard.release_pushes();
  CHECK(sent == 1);
  // With records of its own pending, release_pushes leaves them to the flush.
  f.append("k");
  f.shard.after_log([&sent] { ++sent; }, true);
  f.shard.release_pushes();
  CHECK(sent == 1);
  DurabilityBarrier::pass_group_now(f.shard);
  CHECK(sent == 2);
}

TEST_CASE("A PUBLISH after a split part waits until its operation is sealed", "[durability]") {
  // The part's record is written here, a sibling part elsewhere is not: a message announcing
  // the write could outlive a crash that takes the write back, as a reply could.
  LogFixture f;
  f.shard.log().set_policy(FsyncPolicy::kEverysec);
  hotkv::PubSubHub hub;
  EventSink sink;
  auto client = subscribe(hub, f, sink, "orders");
  uint64_t op = f.seals.open();
  f.append("part");
  f.shard.seal_gate().absorb(op);
  f.shard.publish_after_log(hub, "orders", "o1");
  DurabilityBarrier::pass_group_now(f.shard);
  CHECK_FALSE(f.shard.log().needs_flush());
  CHECK(f.shard.pushes_wait());
  f.io.poll();
  CHECK(sink.seen.empty());
  REQUIRE(f.seals.close(op));
  f.shard.seal_gate().advanced(f.seals.sealed_below());
  f.io.restart();
  f.io.poll();
  CHECK(sink.seen == std::vector<std::string>{"orders|o1"});
  CHECK_FALSE(f.shard.pushes_wait());
}

TEST_CASE("pass writes now, syncs under always, and costs nothing with nothing pending",
          "[durability]") {
  // A hop's batch or a woken waiter's reply leaves for another thread right after: no group
  // to wait for, the write happens inside the call.
  LogFixture f;
  CHECK_FALSE(DurabilityBarrier::pending(f.shard));
  f.append("a");
  f.append("b");
  CHECK(DurabilityBarrier::pending(f.shard));
  DurabilityBarrier::pass(f.shard);
  CHECK_FALSE(DurabilityBarrier::pending(f.shard));
  CHECK(f.shard.log().lsn() > 0);
  CHECK(f.shard.log().synced_lsn() == f.shard.log().lsn());
  CHECK(f.shard.log().fsyncs() == 1);
  DurabilityBarrier::pass(f.shard);
  CHECK(f.shard.log().fsyncs() == 1);
  // everysec: written at once, synced by the everysec thread later.
  f.shard.log().set_policy(FsyncPolicy::kEverysec);
  f.append("c");
  DurabilityBarrier::pass(f.shard);
  CHECK_FALSE(f.shard.log().has_unwritten());
  CHECK(f.shard.log().fsyncs() == 1);
}

TEST_CASE("A multi-shard operation passes on every shard it wrote, then its pushes leave",
          "[durability]") {
  // Three shards on io_contexts that never run: the operation's thread (the test) owns them
  // all, as run_atomic's coordinator does while they are parked.
  std::vector<std::unique_ptr<asio::io_context>> ios;
  std::vector<asio::io_context*> ptrs;
  for (int i = 0; i < 3; ++i) {
    ios.push_back(std::make_unique<asio::io_context>(1));
    ptrs.push_back(ios.back().get());
  }
  hotkv::Config config;
  auto engine =
      hotkv::make_engine(config, hotkv::command_table(), ptrs, hotkv::lua_vm_factory());
  std::vector<std::string> paths;
  for (size_t i = 0; i < 3; ++i) {
    char tmpl[] = "/tmp/hotkv-barrier-XXXXXX";
    int fd = ::mkstemp(tmpl);
    REQUIRE(fd >= 0);
    paths.emplace_back(tmpl);
    engine->shard(i).log().attach(fd, 0, FsyncPolicy::kAlways);
    engine->shard(i).log().record().add_put_string("k" + std::to_string(i), "v", 0);
    engine->shard(i).log().end_record(0, 1);
  }
  int sent = 0;
  engine->shard(2).after_log([&sent] { ++sent; }, true);  // held by the operation's home
  DurabilityBarrier::pass(*engine, {0, 1}, 2);
  CHECK_FALSE(DurabilityBarrier::pending(engine->shard(0)));
  CHECK_FALSE(DurabilityBarrier::pending(engine->shard(1)));
  CHECK(engine->shard(0).log().synced_lsn() == engine->shard(0).log().lsn());
  // Shard 2 was not written by this operation: its record waits, and so does its push.
  CHECK(DurabilityBarrier::pending(engine->shard(2)));
  CHECK(sent == 0);
  DurabilityBarrier::pass_all(*engine);
  CHECK_FALSE(DurabilityBarrier::pending(engine->shard(2)));
  CHECK(sent == 1);
  for (const std::string& p : paths) {
    ::unlink(p.c_str());
  }
}
