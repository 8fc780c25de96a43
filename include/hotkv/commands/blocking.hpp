// Serving clients blocked on keys (see shard/blocking.hpp for the registry). A write command
// marks the keys it touched as ready on their owning shard; the shard then re-runs, in
// arrival order, the blocked commands waiting on each ready key, on its own thread.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "hotkv/shard/blocking.hpp"
#include "hotkv/shard/engine.hpp"

namespace hotkv {

struct CommandSpec;
struct CommandContext;

// Called by execute_command after a whole-keyspace write (FLUSHALL, FLUSHDB, SWAPDB) that did
// not fail: every key a client waits on is ready again on `shard` (on every shard when
// multi_shard: they are parked). Cheap when nobody is blocked.
void signal_every_waited_key(Engine& engine, Shard& shard, bool multi_shard);

// CommandContext::notify's part for blocked readers: marks `key` of database `db` ready on
// `owner`, the shard that holds it, so whoever waits on it is served next. Cheap when nobody
// is blocked. Handlers call notify(), not this.
void signal_key_written(Engine& engine, Shard& owner, uint32_t db, std::string_view key);

// Owner thread of `shard`: re-runs the commands blocked on its ready keys.
void serve_blocked(Engine& engine, Shard& shard);

// Owner thread of `shard`, between two commands of a pipeline or batch: serves now the clients
// that the last command's writes made ready, instead of when the posted serving task runs, so
// the next command cannot take what they wait for. Redis serves them right after each
// command: a client that pipelines LPUSH and BLPOP of a list others already wait on leaves the
// element to the first of them. Cheap when nothing is ready; does nothing while a busy script
// holds the shard (they are served once it ends).
void serve_blocked_now(Engine& engine, Shard& shard);

// Owner thread of `shard`: completes an in-place client (removes it from the registry and
// cancels its timer). Returns false if it had already been completed.
bool complete_blocked(Shard& shard, BlockedClient& c, WakeResult result);

// The reply a blocked read gets when its timeout passes (a null array, RESP2 or RESP3).
std::string timeout_reply(int proto);

// The blocking commands' shared arguments and answers (BLPOP, BZPOPMIN, BLMPOP, BZMPOP...).
//
// A timeout in seconds (a float, as Redis 6+ takes it) as milliseconds (0 = wait for ever),
// with Redis's error replies.
bool parse_block_timeout_or_reply(CommandContext& ctx, std::string_view arg, int64_t& ms);
// The numkeys argument of LMPOP/ZMPOP and their blocking forms at argv[at], with Redis's error
// replies; the keys follow, then at least one more argument.
bool parse_numkeys_or_reply(CommandContext& ctx, size_t at, int64_t& numkeys);
// The key indexes of such a command (numkeys at argv[at]); none if numkeys is bad (the command
// then replies its error wherever it runs).
void numkeys_keys(std::span<const std::string_view> argv, size_t at, std::vector<size_t>& out);
// The key finders of LMPOP/ZMPOP (numkeys at argv[1]) and BLMPOP/BZMPOP (at argv[2]).
void numkeys_at1_keys(std::span<const std::string_view> argv, std::vector<size_t>& out);
void numkeys_at2_keys(std::span<const std::string_view> argv, std::vector<size_t>& out);
// The optional [COUNT count] that ends LMPOP/ZMPOP and their blocking forms, from argv[from]
// (count 1 without it), with Redis's error replies.
bool parse_mpop_count_or_reply(CommandContext& ctx, size_t from, int64_t& count);
// Nothing to serve now: block (re-run later) or, where a client cannot block (MULTI, scripts),
// answer as a timeout does: a null array, or a null bulk for BLMOVE/BRPOPLPUSH. A woken re-run
// that still finds nothing leaves the client blocked.
void block_or_timeout(CommandContext& ctx, int64_t timeout_ms, bool null_bulk_when_denied);

}  // namespace hotkv
