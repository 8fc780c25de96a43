// Helpers shared by the stream family (streams.cpp, stream_groups.cpp, stream_info.cpp): the
// stream error texts, lookups that reply WRONGTYPE, id and interval parsing with Redis's error
// replies, entry reply writing, subcommand dispatch, and the XREAD/XREADGROUP split.
// Internal to src/commands; definitions live in stream_helpers.cpp unless noted. Everything
// here runs on the thread executing the command (the key's owner, or a run_atomic coordinator
// while the owner is parked), like the handlers that call it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hotkv/commands/errors_streams.hpp"
#include "hotkv/resp/writer.hpp"
#include "hotkv/shard/op_args.hpp"
#include "hotkv/shard/op_effects.hpp"
#include "hotkv/types/stream.hpp"

namespace hotkv {

struct CommandContext;

// Looks up key for a stream command: `read` counts a keyspace hit or miss (read commands).
// Replies WRONGTYPE and returns false if the key holds another type; otherwise `out` is the
// stream, or nullptr if the key does not exist.
bool stream_lookup_or_reply(CommandContext& ctx, std::string_view key, bool read, Stream*& out);

// Logs a trim's effect on key (XADD/XTRIM trimming, an inventory's MAXEVENTS): every entry
// before the stream's first remaining one is gone.
void log_trim(CommandContext& ctx, std::string_view key, const Stream& s);

// Parses "ms-seq", "ms" (seq = missing_seq) and, unless strict, "-" and "+". Replies Redis's
// "Invalid stream ID" error and returns false otherwise.
bool parse_id_or_reply(CommandContext& ctx, std::string_view arg, uint64_t missing_seq, bool strict,
                       StreamId& out);
// A range bound of XRANGE/XREVRANGE/XPENDING/XAUTOCLAIM: as parse_id_or_reply (start: seq 0,
// end: seq max), where a "(" prefix makes the bound exclusive (then "-"/"+" are invalid), which
// moves it one id inwards ("invalid start/end ID for the interval" if there is none).
bool parse_range_start_or_reply(CommandContext& ctx, std::string_view arg, StreamId& out);
bool parse_range_end_or_reply(CommandContext& ctx, std::string_view arg, StreamId& out);

// Replies the id as a bulk string "ms-seq".
void reply_id(ReplyWriter& w, StreamId id);
// Replies one entry as Redis does: [id, [field, value, ...]].
void reply_entry(ReplyWriter& w, StreamId id, std::span<const std::string_view> fields);
// Replies the entry with this id, or [id, nil] if it was deleted (XREADGROUP history);
// `scratch` is reused between calls. Returns true if the entry exists.
bool reply_entry_or_nil(ReplyWriter& w, const Stream& s, StreamId id,
                        std::vector<std::string_view>& scratch);
// Replies the live entries with start <= id <= end (descending if reverse), at most count of
// them (0: all), as an array. Returns how many.
size_t reply_range(ReplyWriter& w, const Stream& s, StreamId start, StreamId end, bool reverse,
                   size_t count);

// An array (or map) whose length is only known once its elements are written: elements go to
// a side buffer through writer(), and finish() writes the header and then the elements to
// `out`. Redis's deferred lengths, without patching bytes.
class DeferredReply {
 public:
  explicit DeferredReply(ReplyWriter& out) : out_(out), side_(buf_, out.proto()) {}
  DeferredReply(const DeferredReply&) = delete;
  DeferredReply& operator=(const DeferredReply&) = delete;
  ReplyWriter& writer() { return side_; }
  void finish_array(size_t n);
  void finish_map(size_t n);

 private:
  ReplyWriter& out_;
  std::string buf_;
  ReplyWriter side_;
};

// Redis's streamRangeHasTombstones(s, start, +inf): whether an XDEL-ed id may lie at or after
// start, which makes a group's entries_read counter unknowable by counting. (Stream has the
// same test privately for lag(); this is its public twin for XREADGROUP's counter.)
bool stream_has_tombstones_from(const Stream& s, StreamId start);

// "ERR unknown subcommand or wrong number of arguments for '<sub>'. Try <CMD> HELP." and the
// per-subcommand checks of Redis 7 container commands (XGROUP, XINFO): an unknown name gets
// "ERR unknown subcommand '<sub>'. Try <CMD> HELP.", a wrong count "ERR wrong number of
// arguments for '<cmd>|<sub>' command". `subs` pairs upper-case names with arities (negative:
// at least). Returns the matching index, or nullopt after replying.
void reply_subcommand_syntax_error(CommandContext& ctx);
std::optional<size_t> subcommand_or_reply(CommandContext& ctx,
                                          std::span<const std::pair<const char*, int>> subs);
// Replies a HELP text: the "<CMD> <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
// header, the given lines and the HELP footer, as simple strings.
void reply_help(CommandContext& ctx, std::span<const char* const> lines);

// The per-stream header of an XREAD/XREADGROUP reply: [key, entries] pairs in RESP2, the map
// key in RESP3; the caller writes the entries array next.
void reply_stream_key(ReplyWriter& w, std::string_view key);

// XREAD and XREADGROUP: option parsing, serving each stream, the RESP2 array / RESP3 map
// reply, and blocking (streams.cpp).
void xread_generic(CommandContext& ctx, bool group);

// Serves one stream of an XREADGROUP (stream_groups.cpp): creates the consumer if missing and
// marks it seen, delivers new entries after the group's last id (history: the consumer's
// pending entries after `history_after`), updates the PEL and the group, logs the effects and
// writes the stream's header and entries to `out`. Returns false (writing nothing) when ">"
// finds nothing new.
bool serve_group_stream(CommandContext& ctx, std::string_view key, Stream& s, ConsumerGroup& g,
                        std::string_view group, std::string_view consumer,
                        std::optional<StreamId> history_after, size_t count, bool noack,
                        ReplyWriter& out);

// Handlers defined in stream_groups.cpp and stream_info.cpp, registered by register_streams.
void cmd_xreadgroup(CommandContext& ctx);
void cmd_xgroup(CommandContext& ctx);
void cmd_xack(CommandContext& ctx);
void cmd_xpending(CommandContext& ctx);
void cmd_xclaim(CommandContext& ctx);
void cmd_xautoclaim(CommandContext& ctx);
void cmd_xinfo(CommandContext& ctx);

}  // namespace hotkv
