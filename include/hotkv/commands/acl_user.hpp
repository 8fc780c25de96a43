// ACL users as Redis 7 has them: a user is on or off, has SHA-256 password hashes (or nopass)
// and one root selector plus any number of extra selectors. A selector allows commands (a bit
// per command table statistics slot, so a container's subcommands have bits of their own),
// key patterns with read/write permissions and channel patterns. A call is allowed when one
// selector allows the command, all its keys and all its channels.
//
// Rules are applied to a copy and the copy is published whole (acl_store.hpp), so an AclUser
// is immutable once other threads can see it. Pure functions of the command table: no engine.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hotkv/util/status.hpp"

namespace hotkv {

class Table;
struct CommandSpec;

// Redis's category names, plus HotKV's own (inventory, ratelimit).
const std::vector<std::string>& acl_category_names();
// Whether the command (or every subcommand of it: they share its entry) is in the category
// (a name from acl_category_names(), without '@'). Derived from the entry's flags and group.
bool acl_command_in_category(const CommandSpec& spec, std::string_view category);

enum AclKeyPerm : uint8_t { kAclKeyRead = 1, kAclKeyWrite = 2 };

struct AclKeyPattern {
  std::string pattern;
  uint8_t perms = kAclKeyRead | kAclKeyWrite;
};

struct AclSelector {
  std::vector<uint64_t> allowed;  // one bit per Table::stat_slot
  // +@all (or allcommands) and nothing removed since: the check skips the bits.
  bool all_commands = false;
  // +@all (or allcommands) since the last -@all: the rules start from "+@all" (Redis keeps a
  // reserved command bit for this, so "+@all -set" reads back as such).
  bool from_all = false;
  bool all_keys = false;
  std::vector<AclKeyPattern> keys;
  bool all_channels = false;
  std::vector<std::string> channels;
  // The command rules in the order given, compacted as Redis 7.2 keeps them: a rule replaces
  // an earlier one for the same command (and a command's rule its subcommands' ones).
  std::string command_rules;

  bool allows_slot(size_t slot) const {
    return all_commands || (slot / 64 < allowed.size() && (allowed[slot / 64] >> (slot % 64)) & 1);
  }
};

// Why a call is refused, ordered as Redis ranks them when several selectors refuse it
// (the higher one, then the later argument, is reported).
enum class AclDenial : uint8_t { kNone = 0, kCommand = 1, kKey = 2, kAuth = 3, kChannel = 4 };

struct AclCheckResult {
  AclDenial denial = AclDenial::kNone;
  size_t arg = 0;  // the argument (key or channel) refused
};

struct AclUser {
  std::string name;
  bool enabled = false;
  bool nopass = false;
  // Redis 7 shows "sanitize-payload" once a reset (or the rule) set it; accepted, no effect.
  int sanitize_payload = 0;  // 0 unset, 1 sanitize-payload, -1 skip-sanitize-payload
  std::vector<std::string> passwords;  // lower-case hex SHA-256 digests, in insertion order
  AclSelector root;
  std::vector<AclSelector> selectors;
  // Enabled and the root selector allows every command, key and channel: the dispatcher's
  // whole check is this flag (computed by acl_finish()).
  bool unrestricted = false;
};

// A new user as ACL SETUSER creates it: off, no passwords, no keys, no channels, -@all.
AclUser acl_new_user(std::string name);
// The default user of a server without ACL rules: on nopass ~* &* +@all.
AclUser acl_default_user();

// Applies one rule (a word of ACL SETUSER, or a whole "(...)" selector). On failure `user` is
// left partly changed (callers apply rules to a copy) and the message is Redis's reason text
// ("Syntax error", "Unknown command or category name in ACL", ...).
Status acl_apply_rule(AclUser& user, std::string_view rule, const Table& table);
// ACL SETUSER's arguments with "(" ... ")" selectors spread over several words merged back.
// Fails (message: Redis's whole error text) on an unmatched parenthesis.
Status acl_merge_selector_args(std::span<const std::string_view> args,
                               std::vector<std::string>& out);
// Applies every rule to a copy of `user` and stores it back when all succeed. The error
// message is the full ERR text ("Error in ACL SETUSER modifier '<rule>': <reason>").
Status acl_apply_rules(AclUser& user, std::span<const std::string_view> rules, const Table& table);
// Recomputes derived fields (unrestricted). Called after rules are applied.
void acl_finish(AclUser& user, const Table& table);

// ACL LIST's line for the user ("user alice on #<hash> ~k* resetchannels -@all +get").
std::string acl_describe_user(const AclUser& user);
// The parts ACL GETUSER shows for one selector.
std::string acl_describe_commands(const AclSelector& s);
std::string acl_describe_keys(const AclSelector& s);
std::string acl_describe_channels(const AclSelector& s);

// Lower-case hex SHA-256 of the password.
std::string acl_hash_password(std::string_view password);
// Whether the password opens this user (enabled, and nopass or a matching hash).
bool acl_password_ok(const AclUser& user, std::string_view password);

// Checks one call (argv[0] is the command) against every selector of the user.
// REQUIRES: spec is argv[0]'s entry and the call passed its arity check.
AclCheckResult acl_check(const AclUser& user, const CommandSpec& spec,
                         std::span<const std::string_view> argv, const Table& table);
// The same with the call's key positions already known (the command's plan has them).
AclCheckResult acl_check(const AclUser& user, const CommandSpec& spec,
                         std::span<const std::string_view> argv, const Table& table,
                         std::span<const size_t> key_indexes);

// Redis's lower-case full name of the call's command ("get", "config|get").
std::string acl_command_fullname(const CommandSpec& spec, std::span<const std::string_view> argv);

}  // namespace hotkv
