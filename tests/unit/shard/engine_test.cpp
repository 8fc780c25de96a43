// The engine's cross-shard mechanisms with real threads: call_on hops to the owning thread and
// back, and run_atomic parks every involved shard so no one observes a half-done update and
// concurrent coordinators on overlapping shard sets never deadlock.
#include <atomic>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <catch2/catch.hpp>

#include "hotkv/shard/engine.hpp"
#include "support/shard_threads.hpp"

namespace {

using Cluster = hotkv::test::ShardThreads;

// Waits for the worker threads to report (bounded: a deadlock fails the test, it never hangs).
template <class Pred>
void wait_until(Pred done) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!done() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
}

// Every shard's "balance": read inside a run_atomic over all shards.
int64_t sum_of_balances(Cluster* c, size_t shards) {
  int64_t sum = 0;
  for (size_t s = 0; s < shards; ++s) {
    sum += c->engine->shard(s).keyspace(0).find("balance", 0)->int_value();
  }
  return sum;
}

// Coroutines are free functions taking their state as parameters (copied into the frame): a
// capturing lambda coroutine would outlive its captures.
asio::awaitable<void> hop_everywhere(Cluster* c, size_t home, std::atomic<int>* done,
                                     std::atomic<bool>* ok) {
  std::thread::id home_thread = std::this_thread::get_id();
  for (size_t target = 0; target < c->ios.size(); ++target) {
    auto task = [c, target] {
      // Runs on the target's thread: it may touch that shard's keyspace.
      c->engine->shard(target).keyspace(0).put("k", hotkv::Value::from_int(1));
      return std::this_thread::get_id();
    };
    std::thread::id ran_on = co_await c->engine->call_on(home, target, std::move(task));
    if (ran_on != c->threads[target].get_id() || std::this_thread::get_id() != home_thread) {
      *ok = false;
    }
  }
  ++*done;
}

asio::awaitable<void> transfer_loop(Cluster* c, size_t home, size_t shards,
                                    std::atomic<int>* finished, std::atomic<int>* bad_sums) {
  std::mt19937 rng(static_cast<unsigned>(home));
  for (int op = 0; op < 300; ++op) {
    size_t a = rng() % shards;
    size_t b = rng() % shards;
    if (op % 10 == 0) {
      // A reader over every shard: it must always see the invariant.
      auto read = [c, shards] { return sum_of_balances(c, shards); };
      int64_t sum = co_await c->engine->run_atomic(home, c->engine->all_shards(), std::move(read));
      if (sum != static_cast<int64_t>(shards) * 1000) {
        ++*bad_sums;
      }
      continue;
    }
    std::vector<size_t> involved = {std::min(a, b), std::max(a, b)};
    if (a == b) {
      involved.pop_back();
    }
    auto transfer = [c, a, b] {
      hotkv::Value* from = c->engine->shard(a).keyspace(0).find("balance", 0);
      hotkv::Value* to = c->engine->shard(b).keyspace(0).find("balance", 0);
      from->set_int(from->int_value() - 1);
      to->set_int(to->int_value() + 1);
      return 0;
    };
    co_await c->engine->run_atomic(home, involved, std::move(transfer));
  }
  ++*finished;
}

}  // namespace

TEST_CASE("call_on runs the task on the target shard's thread and resumes at home", "[engine]") {
  Cluster c(3);
  std::atomic<int> done{0};
  std::atomic<bool> ok{true};
  for (size_t home = 0; home < 3; ++home) {
    asio::co_spawn(*c.ios[home], hop_everywhere(&c, home, &done, &ok), asio::detached);
  }
  wait_until([&] { return done.load() == 3; });
  CHECK(done.load() == 3);
  CHECK(ok.load());
}

TEST_CASE("run_atomic moves value between shards without anyone seeing a partial sum",
          "[engine]") {
  constexpr size_t kShards = 4;
  Cluster c(kShards);
  // One counter per shard; the sum over all shards must stay kShards * 1000 at every instant.
  std::atomic<int> init{0};
  for (size_t s = 0; s < kShards; ++s) {
    asio::post(*c.ios[s], [&, s] {
      c.engine->shard(s).keyspace(0).put("balance", hotkv::Value::from_int(1000));
      ++init;
    });
  }
  wait_until([&] { return init.load() == static_cast<int>(kShards); });
  std::atomic<int> finished{0};
  std::atomic<int> bad_sums{0};
  for (size_t home = 0; home < kShards; ++home) {
    asio::co_spawn(*c.ios[home], transfer_loop(&c, home, kShards, &finished, &bad_sums),
                   asio::detached);
  }
  wait_until([&] { return finished.load() == static_cast<int>(kShards); });
  REQUIRE(finished.load() == static_cast<int>(kShards));  // no deadlock
  CHECK(bad_sums.load() == 0);
  std::atomic<int64_t> total{0};
  std::atomic<int> read{0};
  for (size_t s = 0; s < kShards; ++s) {
    asio::post(*c.ios[s], [&, s] {
      total += c.engine->shard(s).keyspace(0).find("balance", 0)->int_value();
      ++read;
    });
  }
  wait_until([&] { return read.load() == static_cast<int>(kShards); });
  CHECK(total.load() == static_cast<int64_t>(kShards) * 1000);
}

namespace {

// Schedules `count` split transfers from `home` (one part on each of two shards, no thread
// parked) and, every tenth, a run_atomic reader of every shard's balance.
asio::awaitable<void> split_transfer_loop(Cluster* c, size_t home, size_t shards, int count,
                                          std::atomic<int>* parts_done,
                                          std::atomic<int>* finished,
                                          std::atomic<int>* bad_sums) {
  std::mt19937 rng(static_cast<unsigned>(home) + 17);
  for (int op = 0; op < count; ++op) {
    if (op % 10 == 0) {
      auto read = [c, shards] { return sum_of_balances(c, shards); };
      int64_t sum = co_await c->engine->run_atomic(home, c->engine->all_shards(), std::move(read));
      if (sum != static_cast<int64_t>(shards) * 1000) {
        ++*bad_sums;
      }
      continue;
    }
    size_t a = rng() % shards;
    size_t b = (a + 1 + rng() % (shards - 1)) % shards;
    auto change = [c](size_t s, int64_t by) {
      hotkv::Value* v = c->engine->shard(s).keyspace(0).find("balance", 0);
      v->set_int(v->int_value() + by);
    };
    auto done = [parts_done] { ++*parts_done; };
    std::vector<hotkv::Engine::ShardPart> parts;
    parts.push_back({a, [change, a] { change(a, -1); }, done});
    parts.push_back({b, [change, b] { change(b, 1); }, done});
    c->engine->schedule_parts(home, std::move(parts));
  }
  ++*finished;
}

}  // namespace

TEST_CASE("split operations run a part per shard and no atomic reader sees half of one",
          "[engine]") {
  constexpr size_t kShards = 4;
  constexpr int kOps = 400;
  Cluster c(kShards);
  std::atomic<int> init{0};
  for (size_t s = 0; s < kShards; ++s) {
    asio::post(*c.ios[s], [&, s] {
      c.engine->shard(s).keyspace(0).put("balance", hotkv::Value::from_int(1000));
      ++init;
    });
  }
  wait_until([&] { return init.load() == static_cast<int>(kShards); });
  std::atomic<int> parts_done{0};
  std::atomic<int> finished{0};
  std::atomic<int> bad_sums{0};
  for (size_t home = 0; home < kShards; ++home) {
    asio::co_spawn(*c.ios[home],
                   split_transfer_loop(&c, home, kShards, kOps, &parts_done, &finished,
                                       &bad_sums),
                   asio::detached);
  }
  const int transfers = static_cast<int>(kShards) * (kOps - kOps / 10);
  wait_until([&] { return finished.load() == static_cast<int>(kShards) &&
                          parts_done.load() == 2 * transfers; });
  REQUIRE(parts_done.load() == 2 * transfers);  // every part ran and finished
  CHECK(bad_sums.load() == 0);
  std::atomic<int64_t> total{0};
  std::atomic<int> read{0};
  for (size_t s = 0; s < kShards; ++s) {
    asio::post(*c.ios[s], [&, s] {
      total += c.engine->shard(s).keyspace(0).find("balance", 0)->int_value();
      ++read;
    });
  }
  wait_until([&] { return read.load() == static_cast<int>(kShards); });
  CHECK(total.load() == static_cast<int64_t>(kShards) * 1000);
}

TEST_CASE("a part queue keeps the global order and holds parts past a cut", "[engine]") {
  hotkv::PartQueue q;
  std::vector<int> ran;
  for (int i = 1; i <= 4; ++i) {
    q.push({static_cast<uint64_t>(i), [&ran, i] { ran.push_back(i); }, [] {}});
  }
  q.hold(3);  // parts numbered 3 and on wait for the atomic run
  std::vector<hotkv::PartQueue::Part> ready;
  q.take(ready);
  REQUIRE(ready.size() == 2);
  CHECK(q.pending());
  q.release();
  q.take(ready);
  REQUIRE(ready.size() == 4);
  CHECK_FALSE(q.pending());
  for (auto& p : ready) {
    p.run();
  }
  CHECK(ran == std::vector<int>{1, 2, 3, 4});
  CHECK(q.claim_wake());
  CHECK_FALSE(q.claim_wake());  // one wake-up in flight is enough
  q.wake_arrived();
  CHECK(q.claim_wake());
}
