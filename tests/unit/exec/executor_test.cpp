// The executor the server's connections and replica link use (exec/executor.hpp), with real
// threads: one per shard, the client's executor and its courier on shard 0's. A pipeline of
// planned commands over several shards (hops squashed per shard, a split run, an atomic run,
// local commands between them) answers in request order, and EXEC runs its queue where the
// transaction's plan says, WATCH included.
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <catch2/catch.hpp>

#include "hotkv/commands/client_session.hpp"
#include "hotkv/commands/command_call.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/exec/command_checks.hpp"
#include "hotkv/exec/executor.hpp"
#include "hotkv/exec/shard_courier.hpp"
#include "hotkv/shard/engine.hpp"
#include "support/shard_threads.hpp"

namespace {

using hotkv::Executor;
using hotkv::Plan;

using Threads = hotkv::test::ShardThreads;

// Keys on distinct shards, found by the engine's own placement.
std::vector<std::string> keys_on_distinct_shards(hotkv::Engine& engine, const std::string& prefix,
                                                 size_t count) {
  std::vector<std::string> out;
  std::vector<bool> used(engine.shard_count(), false);
  for (int i = 0; i < 10000 && out.size() < count; ++i) {
    std::string k = prefix + std::to_string(i);
    if (!used[engine.shard_of(k)]) {
      used[engine.shard_of(k)] = true;
      out.push_back(k);
    }
  }
  REQUIRE(out.size() == count);
  return out;
}

// One client on shard 0's thread: its session and its executor, fed the way a connection
// feeds it (plan by the checks, take what may wait, flush before what runs alone).
struct Client {
  explicit Client(hotkv::Engine& e) : engine(e), courier(e, 0), executor(e, 0, courier, session) {
    session.info = std::make_shared<hotkv::ClientInfo>();
    session.info->id = e.clients().next_id();
    session.authenticated = true;
  }
  hotkv::Engine& engine;
  hotkv::ClientSession session;
  hotkv::ShardCourier courier;
  Executor executor;
  Plan plan;
};

asio::awaitable<void> submit(Client* c, std::vector<std::string> argv, std::string* out) {
  std::vector<std::string_view> views(argv.begin(), argv.end());
  std::string rejected;
  hotkv::ReplyWriter check(rejected, c->session.resp);
  const hotkv::CommandSpec* spec = hotkv::check_command(c->engine.table(), views, c->session,
                                                        c->engine, 0, c->plan, check);
  if (spec == nullptr) {
    co_await c->executor.flush(*out);
    *out += rejected;
    co_return;
  }
  const hotkv::TrackingCaller caller;
  if ((spec->flags & hotkv::kExec) != 0) {
    co_await c->executor.flush(*out);
    *out += co_await c->executor.exec_transaction(caller);
    co_return;
  }
  Executor::Take take = c->executor.take(c->plan, views, caller);
  if (take == Executor::Take::kFlushFirst) {
    co_await c->executor.flush(*out);
    take = c->executor.take(c->plan, views, caller);
  }
  if (take == Executor::Take::kTaken) {
    co_return;
  }
  co_await c->executor.flush(*out);
  if (c->plan.mode == hotkv::RunMode::kLocal) {
    hotkv::ReplyWriter w(*out, c->session.resp);
    hotkv::execute_command(*spec, views, c->engine, c->engine.shard(0), false, &c->session,
                           c->session.db, w);
  } else {
    c->executor.add_to_window(c->plan.shard, *spec, views, c->plan.db, caller);
    co_await c->executor.flush(*out);
  }
}

// Runs `commands` as one pipeline on shard 0's thread and returns the replies.
asio::awaitable<void> pipeline(Client* c, std::vector<std::vector<std::string>> commands,
                               std::string* out, std::atomic<bool>* done) {
  for (auto& argv : commands) {
    co_await submit(c, std::move(argv), out);
  }
  co_await c->executor.flush(*out);
  done->store(true);
}

std::string run_pipeline(Threads& t, Client& c, std::vector<std::vector<std::string>> commands) {
  std::string out;
  std::atomic<bool> done{false};
  asio::co_spawn(*t.ios[0], pipeline(&c, std::move(commands), &out, &done), asio::detached);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!done.load() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  REQUIRE(done.load());
  return out;
}

// Queues commands in the client's transaction, as MULTI's queueing does.
void queue(Client& c, std::initializer_list<std::vector<std::string>> commands) {
  c.session.multi.active = true;
  for (const auto& argv : commands) {
    c.session.multi.queue.push_back({c.engine.table().find(argv[0]), argv});
  }
}

}  // namespace

TEST_CASE("a pipeline over several shards answers in request order", "[executor]") {
  Threads t(4);
  Client c(*t.engine);
  std::vector<std::string> k = keys_on_distinct_shards(*t.engine, "p", 4);
  const std::string reply = run_pipeline(
      t, c,
      {{"SET", k[0], "a"},                                 // window: k[0]'s shard
       {"SET", k[1], "b"},                                 // window: another shard
       {"INCR", "counter"},                                // keyed, joins the window
       {"MSET", k[2], "c", k[3], "d"},                     // split run: one part per shard
       {"MGET", k[0], k[1], k[2], k[3]},                   // split run, gathered in key order
       {"SUNIONSTORE", "u", k[0], k[1]},                   // atomic run, shards parked
       {"PING"},                                           // connection command: runs alone
       {"GET", k[3]},
       {"DEL", k[0], k[1], k[2], k[3]},                    // split, added up
       {"NOSUCH"}});                                       // refused after the replies before it
  CHECK(reply ==
        "+OK\r\n+OK\r\n:1\r\n+OK\r\n*4\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n"
        "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n+PONG\r\n"
        "$1\r\nd\r\n:4\r\n-ERR unknown command 'NOSUCH', with args beginning with: \r\n");
}

TEST_CASE("EXEC runs its queue where the transaction's plan says", "[executor]") {
  Threads t(4);
  Client c(*t.engine);
  std::vector<std::string> k = keys_on_distinct_shards(*t.engine, "x", 2);

  // Both keys' shards: a split run (one part per shard, nothing parked).
  queue(c, {{"INCR", k[0]}, {"INCR", k[1]}, {"INCRBY", k[0], "5"}});
  CHECK(run_pipeline(t, c, {{"EXEC"}}) == "*3\r\n:1\r\n:1\r\n:6\r\n");
  CHECK_FALSE(c.session.multi.active);

  // One command over both shards: they are parked.
  queue(c, {{"MSET", k[0], "1", k[1], "2"}, {"MGET", k[0], k[1]}});
  CHECK(run_pipeline(t, c, {{"EXEC"}}) == "*2\r\n+OK\r\n*2\r\n$1\r\n1\r\n$1\r\n2\r\n");

  // A SELECT inside moves the commands after it, on the client's own thread.
  queue(c, {{"SELECT", "1"}, {"SET", k[1], "in1"}, {"SELECT", "0"}, {"GET", k[1]}});
  CHECK(run_pipeline(t, c, {{"EXEC"}}) == "*4\r\n+OK\r\n+OK\r\n+OK\r\n$1\r\n2\r\n");

  // WATCH: a write by another client between WATCH and EXEC voids the transaction.
  Client other(*t.engine);
  CHECK(run_pipeline(t, c, {{"WATCH", k[0]}}) == "+OK\r\n");
  CHECK(run_pipeline(t, other, {{"SET", k[0], "changed"}}) == "+OK\r\n");
  queue(c, {{"SET", k[0], "mine"}, {"SET", k[1], "mine"}});
  CHECK(run_pipeline(t, c, {{"EXEC"}}) == "*-1\r\n");
  CHECK(run_pipeline(t, c, {{"MGET", k[0], k[1]}}) == "*2\r\n$7\r\nchanged\r\n$1\r\n2\r\n");
}
