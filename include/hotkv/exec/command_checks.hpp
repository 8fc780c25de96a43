// The checks every command passes before its handler, in Redis 7's order, and its plan
// (plan.hpp), which they read: the ACL check takes the plan's key positions, the busy-script
// check its shards.
#pragma once

#include <span>
#include <string_view>

#include "hotkv/commands/client_session.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/exec/plan.hpp"
#include "hotkv/resp/writer.hpp"
#include "hotkv/shard/engine.hpp"

namespace hotkv {

// Looks the command up, checks that it and its subcommand exist and its arity, plans it for a
// client on shard `home` (into `plan`), then checks authentication, ACL permissions (which may
// refresh the session's user), a busy script, loading, the RESP2 subscribed context, a broken
// log and replication's refusal of writes. On failure writes the error reply (Redis's texts)
// and returns nullptr; the caller counts it (count_error_reply), since a refused command never
// reaches execute_command.
const CommandSpec* check_command(const Table& table, std::span<const std::string_view> argv,
                                 ClientSession& session, Engine& engine, size_t home, Plan& plan,
                                 ReplyWriter& reply);

}  // namespace hotkv
