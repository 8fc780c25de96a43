// What a call does with each of its keys, as COMMAND GETKEYSANDFLAGS reports it with Redis 7's
// key-specification flags: one of RO (read only), RW (read and write), OW (overwritten without
// being read), RM (removed), then what happens to the value: access (its data is read or
// returned), update, insert, delete.
#pragma once

#include <span>
#include <string_view>
#include <vector>

namespace hotkv {

struct CommandSpec;

// The flags of argv[key_index], the `nth` key of the call (0 first) out of `key_count`.
// Derived from the command's kind (a read, a store into a destination, a move between two
// keys, a push or a pop ...) rather than listed per command; a write that fits none of the
// kinds reads and updates its keys ("RW access update").
std::vector<std::string_view> key_flags(const CommandSpec& spec,
                                        std::span<const std::string_view> argv, size_t nth,
                                        size_t key_count);

}  // namespace hotkv
