// Where ACL users meet connections: authentication, the per-command check with its -NOPERM
// reply and ACL LOG entry, and the checks EXEC and scripts make again. Every function runs on
// the thread of the connection (or the script) it is given.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "hotkv/commands/acl_user.hpp"

namespace hotkv {

class Config;
class Engine;
class ReplyWriter;
class Table;
struct ClientSession;
struct CommandSpec;

// Gives a new engine its ACL store, with requirepass as the default user's password, and
// makes CONFIG SET requirepass follow.
void install_acl(Engine& engine, Config& config, const Table& table);

// Loads the aclfile, or the config file's `user` lines, at start-up. Returns "" or the reason
// the server cannot start (both given, as Redis refuses; a bad line).
std::string load_acl_at_startup(Engine& engine, const Config& config);

// A new connection: runs as default, authenticated when default is on and needs no password.
void acl_start_session(ClientSession& session, Engine& engine);

// AUTH / HELLO AUTH: on success the session runs as that user (and is authenticated). On
// failure an "auth" ACL LOG entry is added, its object the command as the client spelled it
// (AUTH or HELLO), as Redis logs it.
bool acl_authenticate(ClientSession& session, Engine& engine, std::string_view command,
                      std::string_view user, std::string_view password);

// The check before a command runs (queued in MULTI or not). Refreshes the session's user
// snapshot when the store changed (one atomic load otherwise). On refusal writes -NOPERM,
// adds an ACL LOG entry and returns false. `key_indexes`: the call's key positions (its plan).
bool acl_allows_or_reply(ClientSession& session, Engine& engine, const CommandSpec& spec,
                         std::span<const std::string_view> argv,
                         std::span<const size_t> key_indexes, ReplyWriter& reply);

// EXEC's second check of a queued command: "" when allowed, else the error text to put in the
// EXEC reply (after logging it with context "multi").
std::string acl_exec_refusal(ClientSession& session, Engine& engine, const CommandSpec& spec,
                             std::span<const std::string_view> argv);

// redis.call inside a script: null when the running command's user may run the call, else
// the script error text (logged with context "lua").
const char* acl_script_refusal(Engine& engine, const CommandSpec& spec,
                               std::span<const std::string_view> argv);

// redis.acl_check_cmd: whether the running command's user may run the call (logs nothing).
bool acl_script_allows(Engine& engine, const CommandSpec& spec,
                       std::span<const std::string_view> argv);

// ACL LOG: a denial by `user` (reason "command", "key", "channel" or "auth").
void acl_log_denial(Engine& engine, const ClientSession* session, std::string_view username,
                    AclDenial denial, std::string_view context, std::string object,
                    std::string_view cmd_name);

}  // namespace hotkv
