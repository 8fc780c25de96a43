// INFO's replication section (commands/replication.cpp holds the replication commands).
#pragma once

#include <string>

namespace hotkv {

class Engine;

// Appends "# Replication" with Redis 7.0's fields for this server's role.
void info_replication(Engine& engine, std::string& out);

}  // namespace hotkv
