// INFO's replication section, and the replication link's own REPLCONF messages
// (commands/replication.cpp holds the replication commands).
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace hotkv {

class Engine;

// Appends "# Replication" with Redis 7.0's fields for this server's role.
void info_replication(Engine& engine, std::string& out);

// True for `REPLCONF <sub> ...` in any case (`sub` given in upper case): the replication link's
// own messages, GETACK from a master and ACK from a replica, which the link reads itself
// rather than running them.
bool is_replconf(std::span<const std::string_view> argv, const char* sub);

}  // namespace hotkv
