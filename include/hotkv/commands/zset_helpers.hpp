// Helpers shared by the sorted-set commands (zset.cpp, zset_range.cpp): lookups that reply
// WRONGTYPE, score and lex interval parsing with Redis's error replies, score replies, and the
// one removal path every deleting command takes (log, notify, drop the emptied key).
// Internal to src/commands. Everything here runs on the thread executing the command (the
// key's owner, or a run_atomic coordinator while the owner is parked).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hotkv/commands/errors_values.hpp"
#include "hotkv/types/zset.hpp"

namespace hotkv {

struct CommandContext;
class ReplyWriter;

// Looks up key for a sorted-set command: `read` counts a keyspace hit or miss. Replies
// WRONGTYPE and returns false if the key holds another type; otherwise `out` is the zset, or
// nullptr if the key does not exist.
bool zset_lookup_or_reply(CommandContext& ctx, std::string_view key, bool read, ZSet*& out);

// "(" makes an end exclusive; values as strtod reads them ("-inf", "+inf", "1e3"), NaN refused.
// Replies "ERR min or max is not a float" and returns false otherwise.
bool parse_score_range_or_reply(CommandContext& ctx, std::string_view min, std::string_view max,
                                ScoreRange& out);
// "[v", "(v", "-" or "+"; replies "ERR min or max not valid string range item" otherwise.
bool parse_lex_range_or_reply(CommandContext& ctx, std::string_view min, std::string_view max,
                              LexRange& out);

// A new, empty zset with the server's zset-max-listpack-entries / -value.
std::unique_ptr<ZSet> new_zset(CommandContext& ctx);

// Replies z's members in ascending order, with their scores if asked (flat in RESP2, pairs in
// RESP3), as ZRANGE WITHSCORES and ZUNION WITHSCORES do.
void reply_zset(CommandContext& ctx, const ZSet& z, bool withscores);

// The end of every command that stores a computed zset (ZRANGESTORE, ZUNIONSTORE, GEOSEARCHSTORE
// ...): dst is replaced by `result` (losing any TTL) and `event` published, or, when result is
// empty, dst is deleted if it existed ("del"). Logs the effect and replies the size.
void zset_store_logged(CommandContext& ctx, std::string_view dst, std::unique_ptr<ZSet> result,
                       const char* event);

struct ZAddFlags {
  bool nx = false;
  bool xx = false;
  bool gt = false;
  bool lt = false;
  bool ch = false;
  bool incr = false;
};

// ZADD's work once its arguments are parsed and valid (flags compatible, scores not NaN; with
// incr exactly one pair): looks up key (WRONGTYPE), adds/updates, logs the final scores,
// publishes `event` if anything changed and replies as ZADD does. GEOADD shares it.
void zadd_apply(CommandContext& ctx, std::string_view key, ZAddFlags f, std::vector<double> scores,
                const std::vector<std::string_view>& members, const char* event);

// Writes [member, score] pairs: flat in RESP2 (scores as bulk strings), as an array of
// two-element arrays in RESP3 when `nested` (scores as doubles), else flat.
void reply_pairs(ReplyWriter& w, const std::vector<std::pair<std::string, double>>& pairs,
                 bool nested);

// After `members` were removed from z under key: logs kZSetRem, publishes `event`, and
// deletes the key (publishing "del") if z is left empty (z is then destroyed). No-op if
// `members` is empty. The caller replies.
void zset_removed_logged(CommandContext& ctx, std::string_view key, ZSet& z,
                         const std::vector<std::string>& members, const char* event);

// Pops up to `count` members with the lowest (or, with `max`, highest) scores of z under key
// into `out` as (member, score), then logs and notifies as zset_removed_logged does.
void zset_pop_logged(CommandContext& ctx, std::string_view key, ZSet& z, bool max, uint64_t count,
                     std::vector<std::pair<std::string, double>>& out);

// Adjusts a [start, stop] rank interval as Redis does (negative counts from the end). Returns
// false if it selects nothing from a set of `len` members.
bool clamp_rank_range(int64_t len, int64_t& start, int64_t& stop);

class Table;
// Registers the range, count, range-removal and ZSCAN commands (zset_range.cpp).
void register_zset_ranges(Table& t);
// Registers ZMPOP and the blocking BZPOPMIN, BZPOPMAX, BZMPOP (zset_pops.cpp).
void register_zset_pops(Table& t);
// Registers ZUNION, ZINTER, ZDIFF, their *STORE forms and ZINTERCARD (zset_ops.cpp).
void register_zset_ops(Table& t);

}  // namespace hotkv
