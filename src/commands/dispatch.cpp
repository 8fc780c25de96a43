// Command checks, routing and execution (see dispatch.hpp).
#include "hotkv/commands/dispatch.hpp"

#include <algorithm>
#include <cctype>

#include "hotkv/commands/context.hpp"
#include "hotkv/util/clock.hpp"
#include "hotkv/util/numbers.hpp"

namespace hotkv {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

// Redis shows at most 128 bytes of a name or argument in "unknown command" errors.
std::string clip(std::string_view s) {
  return std::string(s.substr(0, std::min<size_t>(s.size(), 128)));
}

}  // namespace

bool CommandContext::int_arg_or_reply(size_t i, int64_t& out) {
  auto v = parse_int64(argv[i]);
  if (!v) {
    reply.error(err::kNotInteger);
    return false;
  }
  out = *v;
  return true;
}

void CommandContext::wrong_arity() {
  reply.error("ERR wrong number of arguments for '" + lower(argv[0]) + "' command");
}

const CommandSpec* check_command(const Table& table, std::span<const std::string_view> argv,
                                 const ClientSession& session, Engine& engine,
                                 ReplyWriter& reply) {
  const CommandSpec* spec = table.find(argv[0]);
  if (spec == nullptr) {
    std::string msg = "ERR unknown command '";
    msg.append(clip(argv[0])).append("', with args beginning with: ");
    for (size_t i = 1; i < argv.size(); ++i) {
      msg.append("'").append(clip(argv[i])).append("' ");
    }
    reply.error(msg);
    return nullptr;
  }
  if (!session.authenticated && (spec->flags & kNoAuth) == 0 &&
      !engine.config().requirepass().empty()) {
    reply.error(err::kNoAuth);
    return nullptr;
  }
  int argc = static_cast<int>(argv.size());
  if ((spec->arity > 0 && argc != spec->arity) || (spec->arity < 0 && argc < -spec->arity)) {
    reply.error("ERR wrong number of arguments for '" + lower(argv[0]) + "' command");
    return nullptr;
  }
  return spec;
}

void route_command(const CommandSpec& spec, std::span<const std::string_view> argv,
                   Engine& engine, size_t home, Route& route, std::vector<size_t>& scratch) {
  route.kind = RouteKind::kLocal;
  route.shards.clear();
  if ((spec.flags & kAllShards) != 0) {
    if (engine.shard_count() > 1) {
      route.kind = RouteKind::kAtomic;
      route.shards = engine.all_shards();
    }
    return;
  }
  if (engine.shard_count() == 1 || (spec.flags & kConnection) != 0) {
    return;
  }
  scratch.clear();
  Table::key_indexes(spec, argv, scratch);
  if (scratch.empty()) {
    return;
  }
  size_t first = engine.shard_of(argv[scratch[0]]);
  bool several = false;
  for (size_t i = 1; i < scratch.size(); ++i) {
    if (engine.shard_of(argv[scratch[i]]) != first) {
      several = true;
      break;
    }
  }
  if (!several) {
    if (first != home) {
      route.kind = RouteKind::kRemote;
      route.shard = first;
    }
    return;
  }
  route.kind = RouteKind::kAtomic;
  for (size_t idx : scratch) {
    route.shards.push_back(engine.shard_of(argv[idx]));
  }
  std::sort(route.shards.begin(), route.shards.end());
  route.shards.erase(std::unique(route.shards.begin(), route.shards.end()), route.shards.end());
}

void execute_command(const CommandSpec& spec, std::span<const std::string_view> argv,
                     Engine& engine, Shard& shard, bool multi_shard, ClientSession* session,
                     ReplyWriter& reply) {
  int64_t start = mono_us();
  CommandContext ctx{argv, reply, engine, shard, multi_shard, session, spec, engine.now_ms(), {}};
  size_t before = reply.buffer().size();
  spec.handler(ctx);
  int64_t elapsed = mono_us() - start;
  CommandStat& stat = shard.command_stat(spec.id);
  KeyspaceStats::bump(stat.calls);
  KeyspaceStats::bump(stat.usec, static_cast<uint64_t>(elapsed));
  KeyspaceStats::bump(shard.commands_processed());
  // A reply that starts with '-' is an error reply: count it like Redis's failed_calls.
  const std::string& buf = reply.buffer();
  if (buf.size() > before && buf[before] == '-') {
    KeyspaceStats::bump(stat.failed);
    engine.stats().total_error_replies.fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace hotkv
