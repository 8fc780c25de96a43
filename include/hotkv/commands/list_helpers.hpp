// Helpers shared by the list commands (lists.cpp, list_moves.cpp): the lookup that replies
// WRONGTYPE, the one path every push and every pop takes (mutate, log the effect, publish the
// keyspace event, drop an emptied key), and Redis's LEFT|RIGHT argument.
// Internal to src/commands. Everything here runs on the thread executing the command (the
// key's owner, or a run_atomic coordinator while the owner is parked).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hotkv/commands/errors_values.hpp"
#include "hotkv/types/list.hpp"

namespace hotkv {

struct CommandContext;
class Table;

// Looks up key for a list command: `read` counts a keyspace hit or miss. Replies WRONGTYPE and
// returns false if the key holds another type; otherwise `out` is the list, or nullptr.
bool list_lookup_or_reply(CommandContext& ctx, std::string_view key, bool read, List*& out);

// The list under key, created empty (with list-max-listpack-size) when missing. REQUIRES:
// the key holds no other type. The caller pushes at least one element before it returns.
List& list_create(CommandContext& ctx, std::string_view key);

// Pushes `elements` in order at the head (LPUSH order: the last ends up first) or the tail,
// logs the effect and publishes "lpush"/"rpush"; returns the list's new length. REQUIRES: the
// key holds a list or nothing.
size_t list_push_logged(CommandContext& ctx, std::string_view key, bool head,
                        const std::vector<std::string_view>& elements);

// Pops up to `count` elements from the head or tail of l (under key) into `out`, logs the
// effect, publishes "lpop"/"rpop" and, once the list is empty, deletes the key ("del").
void list_pop_logged(CommandContext& ctx, std::string_view key, List& l, bool head, int64_t count,
                     std::vector<std::string>& out);

// LEFT or RIGHT (any case): true for LEFT. Replies "ERR syntax error" otherwise.
bool parse_side_or_reply(CommandContext& ctx, std::string_view arg, bool& left);

// Registers LMOVE, RPOPLPUSH, LMPOP and the blocking family (list_moves.cpp).
void register_list_moves(Table& t);

}  // namespace hotkv
