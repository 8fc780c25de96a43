// A command's plan (see plan.hpp).
#include "hotkv/exec/plan.hpp"

#include <algorithm>

#include "hotkv/commands/script_helpers.hpp"
#include "hotkv/exec/split_run.hpp"
#include "hotkv/shard/slot.hpp"

namespace hotkv {
namespace {

void sort_unique(std::vector<size_t>& shards) {
  std::sort(shards.begin(), shards.end());
  shards.erase(std::unique(shards.begin(), shards.end()), shards.end());
}

void clear(Plan& plan) {
  plan.mode = RunMode::kLocal;
  plan.shards.clear();
  plan.key_indexes.clear();
  plan.key_slots.clear();
  plan.key_shards.clear();
  plan.keyed = false;
  plan.every_shard = false;
  plan.splits = false;
}

}  // namespace

void plan_from(size_t home, Plan& plan) {
  plan.home = home;
  plan.shard = home;
  if (plan.every_shard) {
    plan.mode = plan.shards.size() > 1 ? RunMode::kAtomic : RunMode::kLocal;
  } else if (plan.shards.size() > 1) {
    plan.mode = RunMode::kAtomic;
  } else if (plan.shards.size() == 1 && plan.shards[0] != home && !plan.session_only) {
    plan.mode = RunMode::kHop;
    plan.shard = plan.shards[0];
  } else {
    plan.mode = RunMode::kLocal;
  }
}

void plan_command(const CommandSpec& spec, std::span<const std::string_view> argv, Engine& engine,
                  size_t home, uint32_t db, Plan& plan) {
  clear(plan);
  plan.spec = &spec;
  plan.db = db;
  plan.session_only = (spec.flags & kConnection) != 0;
  plan.blocking = (spec.flags & kBlocking) != 0;
  Table::key_indexes(spec, argv, plan.key_indexes);
  const size_t shard_count = engine.shard_count();
  if (shard_count == 1) {
    // Every key lives on the one shard: no slot to hash (a tenth of a pipelined MSET's CPU).
    plan.key_shards.assign(plan.key_indexes.size(), 0);
  } else {
    for (size_t idx : plan.key_indexes) {
      const int slot = key_slot(argv[idx]);
      plan.key_slots.push_back(slot);
      plan.key_shards.push_back(slot_shard(slot, shard_count));
    }
  }
  if (needs_every_shard(spec, argv) ||
      // A script that touched (or may touch) keys it did not declare may reach any shard.
      (shard_count > 1 && (spec.flags & kNoScript) != 0 &&
       script_needs_every_shard(spec, argv, engine))) {
    plan.every_shard = true;
    plan.shards = engine.all_shards();
  } else if (!plan.session_only) {
    // With one shard nothing is squashed: every command runs where the client is.
    plan.keyed = shard_count > 1 && !plan.key_indexes.empty();
    if (shard_count == 1) {
      plan.shards.assign(plan.key_indexes.empty() ? 0 : 1, 0);
    } else {
      plan.shards = plan.key_shards;
      sort_unique(plan.shards);
    }
  }
  plan_from(home, plan);
  plan.splits = plan.mode == RunMode::kAtomic && !plan.every_shard &&
                SplitRun::splits(spec, argv, engine);
}

void plan_transaction(std::span<const QueuedCommand> queue, Engine& engine, size_t home,
                      bool watching, TransactionPlan& plan) {
  plan.shards.clear();
  plan.needs_home = false;
  plan.command_shard.clear();
  plan.command_shard.reserve(queue.size());
  bool one_shard_each = true;
  bool every_shard = false;
  thread_local Plan one;
  thread_local std::vector<std::string_view> views;
  for (const QueuedCommand& q : queue) {
    views.assign(q.args.begin(), q.args.end());
    plan_command(*q.spec, views, engine, home, 0, one);
    // A script may reach beyond its KEYS; undone there, it would take the transaction's
    // earlier commands with it, so a transaction with a script holds every shard.
    if (one.every_shard || ((q.spec->flags & kRunsScript) != 0 && engine.shard_count() > 1)) {
      every_shard = true;
      break;
    }
    if (one.session_only) {
      plan.needs_home = true;
      plan.command_shard.push_back(home);
      continue;
    }
    one_shard_each = one_shard_each && one.shards.size() <= 1;
    plan.command_shard.push_back(one.shards.empty() ? home : one.shards[0]);
    plan.shards.insert(plan.shards.end(), one.shards.begin(), one.shards.end());
  }
  if (every_shard) {
    plan.shards = engine.all_shards();
    one_shard_each = false;
  }
  sort_unique(plan.shards);
  plan.shard = home;
  plan.splits = false;
  if (plan.shards.size() > 1 && one_shard_each && !watching && !plan.needs_home &&
      SplitRun::events_allow_split(engine)) {
    plan.mode = RunMode::kAtomic;
    plan.splits = true;
  } else if (plan.shards.empty() || (plan.shards.size() == 1 && plan.shards[0] == home)) {
    plan.mode = RunMode::kLocal;
  } else if (plan.shards.size() == 1 && !plan.needs_home) {
    plan.mode = RunMode::kHop;
    plan.shard = plan.shards[0];
  } else {
    plan.mode = RunMode::kAtomic;
  }
}

}  // namespace hotkv
