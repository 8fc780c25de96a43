// A shard's part of a pipeline (ShardBatch) through the real table and shards: it runs its
// commands in order, and stops at a script that has to run again with every shard, leaving
// the commands after it for that run.
#include <string>
#include <string_view>
#include <vector>

#include <catch2/catch.hpp>

#include "hotkv/commands/command_call.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/exec/shard_batch.hpp"
#include "support/test_server.hpp"

using hotkv::Engine;
using hotkv::ShardBatch;
using hotkv::test::bulk;
using hotkv::test::integer;
using hotkv::test::key_on_another_shard;
using hotkv::test::kOk;
using hotkv::test::TestServer;

namespace {

void add(ShardBatch& batch, Engine& engine, std::vector<std::string> argv) {
  std::vector<std::string_view> views(argv.begin(), argv.end());
  const hotkv::CommandSpec* spec = engine.table().find(views[0]);
  REQUIRE(spec != nullptr);
  batch.add(*spec, views, 0);
}

}  // namespace

TEST_CASE("A batch stops at a script that must run with every shard, in order", "[batch]") {
  TestServer s(4);
  Engine& engine = s.engine();
  const std::string stock = "stock";
  const std::string hold = key_on_another_shard(s, stock);
  const std::string body =
      "local n = redis.call('DECR', KEYS[1]) "
      "if ARGV[1] == '1' then redis.call('SET', ARGV[2], n) end return n";
  CHECK(s.run({"SET", stock, "5"}) == kOk);
  // Known to keep to its KEYS: its first run holds every shard, the second runs on its shard.
  CHECK(s.run({"EVAL", body, "1", stock, "0", hold}) == integer(4));
  CHECK(s.run({"EVAL", body, "1", stock, "0", hold}) == integer(3));

  ShardBatch batch;
  add(batch, engine, {"INCR", stock});
  add(batch, engine, {"EVAL", body, "1", stock, "1", hold});
  add(batch, engine, {"GET", stock});
  hotkv::Shard& home = engine.shard(engine.shard_of(stock));
  batch.run(engine, home, 2, nullptr);
  REQUIRE(batch.stopped());
  CHECK(batch.reply(0) == integer(4));
  // The script's attempt was undone and the GET after it did not run.
  CHECK(s.run({"GET", stock}) == bulk("4"));
  CHECK(s.run({"EXISTS", hold}) == integer(0));

  // The rest runs with every shard held, as the connection runs it, and completes the replies.
  ShardBatch rest;
  rest.add_unrun_of(batch);
  REQUIRE(rest.size() == 2);
  std::vector<size_t> all = engine.all_shards();
  {
    Engine::HeldShards held(&all);
    rest.run(engine, engine.shard(0), 2, nullptr, true);
  }
  CHECK_FALSE(rest.stopped());
  batch.append_replies_of(rest);
  CHECK_FALSE(batch.stopped());
  CHECK(batch.reply(1) == integer(3));
  CHECK(batch.reply(2) == bulk("3"));
  CHECK(s.run({"GET", hold}) == bulk("3"));
  CHECK_FALSE(hotkv::take_rerun_request());
}
