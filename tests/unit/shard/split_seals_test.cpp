// Unit tests for the seals of split operations: the sealed prefix moves only over whole runs of
// closed numbers, and a shard's waiters run, in order, once the prefix passes the taint they
// waited at; a shard that ran no part waits for nothing.
#include "hotkv/shard/split_seals.hpp"

#include <string>
#include <vector>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/io_context.hpp>

#include <catch2/catch.hpp>

using hotkv::SealGate;
using hotkv::SplitSeals;

namespace {
// A free function, not a capturing lambda: the coroutine outlives the expression spawning it.
asio::awaitable<void> wait_then_mark(SealGate* gate, bool* resumed) {
  co_await gate->wait();
  *resumed = true;
}
}  // namespace

TEST_CASE("the sealed prefix moves over whole runs of closed operations", "[shard][seals]") {
  SplitSeals seals;
  uint64_t a = seals.open();
  uint64_t b = seals.open();
  uint64_t c = seals.open();
  REQUIRE(seals.sealed_below() == a);
  CHECK_FALSE(seals.close(c));  // a and b still open
  CHECK(seals.sealed_below() == a);
  CHECK(seals.close(a));
  CHECK(seals.sealed_below() == b);
  CHECK(seals.close(b));
  CHECK(seals.sealed_below() == c + 1);
}

TEST_CASE("replies wait for the operations up to their shard's taint", "[shard][seals]") {
  asio::io_context io;
  SplitSeals seals;
  SealGate gate(io, seals);
  std::vector<std::string> ran;

  // No part ran here: nothing to wait for.
  CHECK_FALSE(gate.pending());
  gate.when_sealed([&] { ran.push_back("untainted"); });
  REQUIRE(ran == std::vector<std::string>{"untainted"});

  uint64_t first = seals.open();
  uint64_t second = seals.open();
  gate.absorb(first);
  CHECK(gate.pending());
  gate.when_sealed([&] { ran.push_back("after first"); });
  gate.absorb(second);
  gate.when_sealed([&] { ran.push_back("after second"); });
  io.restart();
  io.poll();
  CHECK(ran.size() == 1);

  // The second closes first: the prefix does not move, nobody runs.
  CHECK_FALSE(seals.close(second));
  gate.advanced(seals.sealed_below());
  io.restart();
  io.poll();
  CHECK(ran.size() == 1);

  // Closing the first seals both; the waiters run on the gate's thread, in order.
  CHECK(seals.close(first));
  gate.advanced(seals.sealed_below());
  CHECK(ran.size() == 1);  // posted, not run inline on the closing thread
  io.restart();
  io.poll();
  CHECK(ran == std::vector<std::string>{"untainted", "after first", "after second"});
  CHECK_FALSE(gate.pending());

  // A lower taint taken in later changes nothing.
  gate.absorb(first);
  CHECK(gate.taint() == second);
}

TEST_CASE("a waiter that began after its operation was sealed runs at once", "[shard][seals]") {
  asio::io_context io;
  SplitSeals seals;
  SealGate gate(io, seals);
  uint64_t op = seals.open();
  gate.absorb(op);
  CHECK(seals.close(op));
  // advanced() was never called for this gate: the waiter must not depend on it.
  bool ran = false;
  gate.when_sealed([&] { ran = true; });
  CHECK(ran);

  // The awaitable form, too.
  uint64_t next = seals.open();
  gate.absorb(next);
  bool resumed = false;
  asio::co_spawn(io, wait_then_mark(&gate, &resumed), asio::detached);
  io.restart();
  io.poll();
  CHECK_FALSE(resumed);
  CHECK(seals.close(next));
  gate.advanced(seals.sealed_below());
  io.restart();
  io.poll();
  CHECK(resumed);
}
