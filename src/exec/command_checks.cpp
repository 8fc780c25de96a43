// The checks before a command's handler (see command_checks.hpp).
#include "hotkv/exec/command_checks.hpp"

#include <algorithm>

#include "hotkv/commands/acl_session.hpp"
#include "hotkv/commands/command_call.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/errors_server.hpp"
#include "hotkv/commands/pubsub_session.hpp"
#include "hotkv/commands/script_store.hpp"
#include "hotkv/util/strings.hpp"

namespace hotkv {
namespace {

bool is_subcommand(const CommandSpec& spec, std::string_view name) {
  for (const std::string& sub : spec.subcommands) {
    if (ascii_lower(name) == sub) {
      return true;
    }
  }
  return false;
}

// Whether a command would need a shard a busy script holds. Keyed commands whose keys all
// live on other shards are served as usual; commands without keys (PING, INFO, ...), those
// that need every shard, and everything inside MULTI (a transaction's shards are only known
// at EXEC) are refused as Redis refuses them.
bool needs_busy_shard(const Plan& plan, const ClientSession& session, Engine& engine) {
  if (session.multi.active || plan.every_shard || plan.shards.empty() ||
      engine.shard_count() == 1) {
    return true;
  }
  return std::any_of(plan.shards.begin(), plan.shards.end(),
                     [&engine](size_t s) { return engine.shard(s).script_busy(); });
}

}  // namespace

const CommandSpec* check_command(const Table& table, std::span<const std::string_view> argv,
                                 ClientSession& session, Engine& engine, size_t home, Plan& plan,
                                 ReplyWriter& reply) {
  const CommandSpec* spec = table.find(argv[0]);
  if (spec == nullptr) {
    reply.error(err::unknown_command(argv));
    return nullptr;
  }
  // Redis 7 looks container subcommands up like commands: an unknown one is refused before
  // anything else, whatever the arguments.
  if (!spec->subcommands.empty() && argv.size() >= 2 && !is_subcommand(*spec, argv[1])) {
    reply.error(err::unknown_subcommand(argv[0], argv[1]));
    return nullptr;
  }
  int argc = static_cast<int>(argv.size());
  if ((spec->arity > 0 && argc != spec->arity) || (spec->arity < 0 && argc < -spec->arity)) {
    reply.error(err::wrong_arity(argv[0]));
    return nullptr;
  }
  plan_command(*spec, argv, engine, home, session.db, plan);
  if (!session.authenticated && (spec->flags & kNoAuth) == 0) {
    reply.error(err::kNoAuth);
    return nullptr;
  }
  if (!acl_allows_or_reply(session, engine, *spec, argv, plan.key_indexes, reply)) {
    return nullptr;
  }
  if (engine.scripts().busy() && !allowed_while_script_busy(*spec, argv) &&
      needs_busy_shard(plan, session, engine)) {
    reply.error(engine.scripts().busy_error());
    return nullptr;
  }
  if (engine.loading() && (spec->flags & kLoading) == 0) {
    reply.error(err::kLoading);
    return nullptr;
  }
  if (session.resp == 2 && session.subscriptions() > 0 && !allowed_while_subscribed(argv[0])) {
    reply.error(subscribed_context_error(argv[0]));
    return nullptr;
  }
  if ((spec->flags & kWrite) != 0) {
    if (int e = engine.persistence_errno()) {
      reply.error(err::misconf_aof(e));
      return nullptr;
    }
    if (const char* refusal = replication_write_refusal(engine, session.master_link)) {
      reply.error(refusal);
      return nullptr;
    }
  }
  // replica-serve-stale-data no: while the link to the master is not up, only the commands
  // flagged stale (INFO, REPLICAOF, PING, CONFIG...) are served, as on Redis.
  if ((spec->flags & kStale) == 0 && engine.replication().is_replica() &&
      !engine.config().replica_serve_stale_data.load(std::memory_order_relaxed) &&
      engine.replication().link_state() != LinkState::kConnected) {
    reply.error(err::kMasterDown);
    return nullptr;
  }
  return spec;
}

}  // namespace hotkv
