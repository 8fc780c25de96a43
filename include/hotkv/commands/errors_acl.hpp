// Error texts of ACL checks and of the ACL command, word for word Redis 7.0's.
#pragma once

namespace hotkv::err {

inline constexpr const char* kNoPermCommandPrefix = "NOPERM this user has no permissions to run the '";
inline constexpr const char* kNoPermKey =
    "NOPERM this user has no permissions to access one of the keys used as arguments";
inline constexpr const char* kNoPermChannel =
    "NOPERM this user has no permissions to access one of the channels used as arguments";
// EXEC finds a queued command no longer allowed (the rules changed after it was queued).
inline constexpr const char* kNoPermExecPrefix =
    "NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC "
    "call. This command is no longer allowed for the following reason: ";
inline constexpr const char* kExecReasonCommand =
    "no permission to execute the command or subcommand";
inline constexpr const char* kExecReasonKey = "no permission to touch the specified keys";
inline constexpr const char* kExecReasonChannel =
    "no permission to access one of the channels used as arguments";
// redis.call from a script whose caller may not run it.
inline constexpr const char* kScriptNoPermCommand =
    "ERR The user executing the script can't run this command or subcommand";
inline constexpr const char* kScriptNoPermKey =
    "ERR The user executing the script can't access at least one of the keys mentioned in the "
    "command arguments";
inline constexpr const char* kScriptNoPermChannel =
    "ERR The user executing the script can't publish to the channel mentioned in the command";
inline constexpr const char* kDefaultUserUndeletable = "ERR The 'default' user cannot be removed";
inline constexpr const char* kAclLogCount = "ERR value is out of range, must be positive";
inline constexpr const char* kGenpassBits =
    "ERR ACL GENPASS argument must be the number of bits for the output password, a positive "
    "number up to 4096";
inline constexpr const char* kNoAclFile =
    "ERR This Redis instance is not configured to use an ACL file. You may want to specify "
    "users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a "
    "Redis configuration file set) in order to store users in the Redis configuration.";

}  // namespace hotkv::err
