// A command's plan (exec/plan.hpp) through the real table and engine: its keys with their
// positions, hash slots and shards, the shards it touches and how it runs; a transaction's
// plan at EXEC; and the checks, which plan the command and read that plan.
#include <string>
#include <string_view>
#include <vector>

#include <catch2/catch.hpp>

#include "hotkv/commands/client_session.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/exec/command_checks.hpp"
#include "hotkv/exec/plan.hpp"
#include "hotkv/shard/slot.hpp"
#include "support/test_server.hpp"

using hotkv::Plan;
using hotkv::RunMode;
using hotkv::TransactionPlan;
using hotkv::test::keys_on_distinct_shards;
using hotkv::test::kOk;
using hotkv::test::TestServer;

namespace {

Plan plan_of(TestServer& s, std::vector<std::string> argv, size_t home = 0, uint32_t db = 0) {
  std::vector<std::string_view> views(argv.begin(), argv.end());
  const hotkv::CommandSpec* spec = s.engine().table().find(views[0]);
  REQUIRE(spec != nullptr);
  Plan plan;
  hotkv::plan_command(*spec, views, s.engine(), home, db, plan);
  return plan;
}

hotkv::QueuedCommand queued(TestServer& s, std::vector<std::string> argv) {
  const hotkv::CommandSpec* spec = s.engine().table().find(argv[0]);
  REQUIRE(spec != nullptr);
  return hotkv::QueuedCommand{spec, std::move(argv)};
}

}  // namespace

TEST_CASE("a single-key command runs where its key lives", "[plan]") {
  TestServer s(4);
  const size_t owner = s.engine().shard_of("foo");
  const size_t other = (owner + 1) % 4;

  Plan here = plan_of(s, {"GET", "foo"}, owner, 3);
  CHECK(here.mode == RunMode::kLocal);
  CHECK(here.shard == owner);
  CHECK(here.db == 3);
  CHECK(here.key_indexes == std::vector<size_t>{1});
  // Redis Cluster's slot of "foo" (CLUSTER KEYSLOT foo answers 12182).
  CHECK(here.key_slots == std::vector<int>{12182});
  CHECK(here.key_shards == std::vector<size_t>{owner});
  CHECK(here.shards == std::vector<size_t>{owner});
  CHECK(here.keyed);
  CHECK_FALSE(here.blocking);

  Plan away = plan_of(s, {"SET", "foo", "1"}, other);
  CHECK(away.mode == RunMode::kHop);
  CHECK(away.shard == owner);

  // The same plan seen from the key's own thread.
  hotkv::plan_from(owner, away);
  CHECK(away.mode == RunMode::kLocal);
  CHECK(away.shard == owner);
}

TEST_CASE("hash tags put keys in one slot, so on one shard", "[plan]") {
  TestServer s(4);
  Plan plan = plan_of(s, {"MSET", "{user1}.a", "1", "{user1}.b", "2"});
  CHECK(plan.key_indexes == std::vector<size_t>{1, 3});
  CHECK(plan.key_slots[0] == hotkv::key_slot("user1"));
  CHECK(plan.key_slots[1] == plan.key_slots[0]);
  CHECK(plan.shards.size() == 1);
  CHECK(plan.mode != RunMode::kAtomic);
}

TEST_CASE("keys on several shards run atomically, split by key where the command allows",
          "[plan]") {
  TestServer s(4);
  std::vector<std::string> k = keys_on_distinct_shards(s, "k", 3);
  Plan mset = plan_of(s, {"MSET", k[0], "1", k[1], "2", k[2], "3"});
  CHECK(mset.mode == RunMode::kAtomic);
  CHECK(mset.shards.size() == 3);
  CHECK(mset.key_shards.size() == 3);
  CHECK(mset.splits);

  // A key without its value runs whole (its handler answers the arity error).
  Plan odd = plan_of(s, {"MSET", k[0], "1", k[1]});
  CHECK(odd.mode == RunMode::kAtomic);
  CHECK_FALSE(odd.splits);

  // A command that does not split by key keeps its shards parked.
  Plan sunion = plan_of(s, {"SUNIONSTORE", k[0], k[1], k[2]});
  CHECK(sunion.mode == RunMode::kAtomic);
  CHECK_FALSE(sunion.splits);

  // With keyspace events on, parts would raise them out of key order: no split.
  REQUIRE(s.run({"CONFIG", "SET", "notify-keyspace-events", "KEA"}) == kOk);
  CHECK_FALSE(plan_of(s, {"MSET", k[0], "1", k[1], "2"}).splits);
}

TEST_CASE("whole-keyspace, connection, keyless and blocking commands", "[plan]") {
  TestServer s(4);
  Plan flush = plan_of(s, {"FLUSHALL"});
  CHECK(flush.every_shard);
  CHECK(flush.mode == RunMode::kAtomic);
  CHECK(flush.shards == std::vector<size_t>{0, 1, 2, 3});
  CHECK_FALSE(flush.keyed);

  Plan select = plan_of(s, {"SELECT", "2"}, 1);
  CHECK(select.session_only);
  CHECK(select.mode == RunMode::kLocal);
  CHECK(select.shard == 1);
  CHECK_FALSE(select.keyed);

  Plan ping = plan_of(s, {"PING"}, 2);
  CHECK(ping.mode == RunMode::kLocal);
  CHECK(ping.shards.empty());
  CHECK(ping.key_indexes.empty());

  const size_t owner = s.engine().shard_of("jobs");
  Plan pop = plan_of(s, {"BLPOP", "jobs", "0"}, (owner + 1) % 4);
  CHECK(pop.blocking);
  CHECK(pop.mode == RunMode::kHop);
  CHECK(pop.shard == owner);
  CHECK(pop.key_indexes == std::vector<size_t>{1});

  // One shard: every command runs where the client is, and nothing is squashed.
  TestServer one(1);
  CHECK(plan_of(one, {"FLUSHALL"}).mode == RunMode::kLocal);
  Plan get = plan_of(one, {"GET", "foo"});
  CHECK(get.mode == RunMode::kLocal);
  CHECK_FALSE(get.keyed);
  CHECK(get.key_shards == std::vector<size_t>{0});
  CHECK(get.shards == std::vector<size_t>{0});
  CHECK(get.key_slots.empty());
}

TEST_CASE("a script is planned by what its runs learned of its keys", "[plan]") {
  TestServer s(4);
  const std::string other = hotkv::test::key_on_another_shard(s, "a");
  // A body never run before may reach any key: its first run holds every shard.
  const std::string keeps = "return redis.call('SET', KEYS[1], 1)";
  CHECK(plan_of(s, {"EVAL", keeps, "1", "a"}).every_shard);
  REQUIRE(s.run({"EVAL", keeps, "1", "a"}) == kOk);
  // It kept to its KEYS: from then on it runs where they live.
  Plan declared = plan_of(s, {"EVAL", keeps, "1", "a"});
  CHECK_FALSE(declared.every_shard);
  CHECK(declared.shards == std::vector<size_t>{s.engine().shard_of("a")});

  // One that reached a key it did not declare stays planned over every shard.
  const std::string reaches = "redis.call('SET', KEYS[1], 1); return redis.call('SET', ARGV[1], 1)";
  REQUIRE(s.run({"EVAL", reaches, "1", "a", other}) == kOk);
  Plan after = plan_of(s, {"EVAL", reaches, "1", "a", other});
  CHECK(after.every_shard);
  CHECK(after.mode == RunMode::kAtomic);
  CHECK(after.shards.size() == 4);
}

TEST_CASE("a transaction's plan: one shard, another, split or parked", "[plan]") {
  TestServer s(4);
  std::vector<std::string> k = keys_on_distinct_shards(s, "t", 2);
  const size_t a = s.engine().shard_of(k[0]);
  const size_t b = s.engine().shard_of(k[1]);
  TransactionPlan plan;

  std::vector<hotkv::QueuedCommand> here{queued(s, {"INCR", k[0]}), queued(s, {"GET", k[0]})};
  hotkv::plan_transaction(here, s.engine(), a, false, plan);
  CHECK(plan.mode == RunMode::kLocal);
  hotkv::plan_transaction(here, s.engine(), b, false, plan);
  CHECK(plan.mode == RunMode::kHop);
  CHECK(plan.shard == a);

  std::vector<hotkv::QueuedCommand> two{queued(s, {"INCR", k[0]}), queued(s, {"INCR", k[1]})};
  hotkv::plan_transaction(two, s.engine(), a, false, plan);
  CHECK(plan.mode == RunMode::kAtomic);
  CHECK(plan.splits);
  CHECK(plan.command_shard == std::vector<size_t>{a, b});
  CHECK(plan.shards.size() == 2);

  // WATCH is checked at one instant, which parts lack: the shards are parked instead.
  hotkv::plan_transaction(two, s.engine(), a, true, plan);
  CHECK(plan.mode == RunMode::kAtomic);
  CHECK_FALSE(plan.splits);

  // So are they for a command over both shards, and for a SELECT (the client's own thread).
  std::vector<hotkv::QueuedCommand> wide{queued(s, {"MSET", k[0], "1", k[1], "2"})};
  hotkv::plan_transaction(wide, s.engine(), a, false, plan);
  CHECK_FALSE(plan.splits);
  std::vector<hotkv::QueuedCommand> selects{queued(s, {"INCR", k[0]}), queued(s, {"SELECT", "1"}),
                                            queued(s, {"INCR", k[1]})};
  hotkv::plan_transaction(selects, s.engine(), a, false, plan);
  CHECK(plan.needs_home);
  CHECK_FALSE(plan.splits);
  CHECK(plan.mode == RunMode::kAtomic);

  // A script may reach any shard: the transaction holds them all.
  std::vector<hotkv::QueuedCommand> script{queued(s, {"EVAL", "return 1", "1", k[0]})};
  hotkv::plan_transaction(script, s.engine(), a, false, plan);
  CHECK(plan.shards.size() == 4);
  CHECK(plan.mode == RunMode::kAtomic);
}

TEST_CASE("the checks plan the command, and the ACL check reads the plan's keys", "[plan]") {
  TestServer s(4);
  REQUIRE(s.run({"ACL", "SETUSER", "shopper", "on", "nopass", "+@all", "~cart:*"}) == kOk);
  hotkv::ClientSession session = s.new_session();
  session.user_name = "shopper";
  Plan plan;
  std::string out;
  hotkv::ReplyWriter w(out, 2);
  std::vector<std::string_view> ok{"SET", "cart:1", "x"};
  const hotkv::CommandSpec* spec =
      hotkv::check_command(s.engine().table(), ok, session, s.engine(), 2, plan, w);
  REQUIRE(spec != nullptr);
  CHECK(out.empty());
  CHECK(plan.spec == spec);
  CHECK(plan.home == 2);
  CHECK(plan.key_indexes == std::vector<size_t>{1});

  std::vector<std::string_view> denied{"MSET", "cart:1", "x", "stock:1", "y"};
  CHECK(hotkv::check_command(s.engine().table(), denied, session, s.engine(), 2, plan, w) ==
        nullptr);
  CHECK(out.rfind("-NOPERM", 0) == 0);
  CHECK(plan.key_indexes == std::vector<size_t>{1, 3});
}
