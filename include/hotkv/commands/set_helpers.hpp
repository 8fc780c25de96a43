// Helpers shared by the set family (sets.cpp: single-key commands; set_ops.cpp: SMOVE and the
// set algebra): lookups that reply WRONGTYPE, member replies, logging members as effects, and
// removing a set that became empty. Internal to src/commands. Everything here runs on the
// thread executing the command (the key's owner, or a run_atomic coordinator while the owners
// are parked), like the handlers that call it.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hotkv/resp/writer.hpp"
#include "hotkv/shard/op_effects.hpp"
#include "hotkv/types/set.hpp"

namespace hotkv {

struct CommandContext;

// Looks up key for a set command: `read` counts a keyspace hit or miss (read commands).
// Replies WRONGTYPE and returns false if the key holds another type; otherwise `out` is the
// set, or nullptr if the key does not exist.
bool set_lookup_or_reply(CommandContext& ctx, std::string_view key, bool read, Set*& out);

// Replies every member as a RESP3 set ('~'; an array in RESP2), as SMEMBERS and SINTER do.
void reply_members(ReplyWriter& w, const Set& s);

// Logs `op` (kSetAdd or kSetRem) with these members, if the key's shard logs and there are any.
void log_members(CommandContext& ctx, std::string_view key, OpCode op,
                 std::span<const std::string> members);

// A key never holds an empty set: if `s` (the set under key) is empty, deletes the key and
// publishes Redis's "del" event. The caller has already logged the removal that emptied it
// (replaying that kSetRem deletes the key too). Returns true if the key was deleted.
bool delete_if_empty(CommandContext& ctx, std::string_view key, const Set& s);

// The handlers of set_ops.cpp, registered by register_sets (sets.cpp).
void cmd_smove(CommandContext& ctx);
void cmd_sinter(CommandContext& ctx);
void cmd_sunion(CommandContext& ctx);
void cmd_sdiff(CommandContext& ctx);
void cmd_sinterstore(CommandContext& ctx);
void cmd_sunionstore(CommandContext& ctx);
void cmd_sdiffstore(CommandContext& ctx);
void cmd_sintercard(CommandContext& ctx);
// SINTERCARD's keys: numkeys of them after numkeys (none if numkeys is not a valid count, so
// the handler, run locally, replies the error).
void sintercard_keys(std::span<const std::string_view> argv, std::vector<size_t>& out);

}  // namespace hotkv
