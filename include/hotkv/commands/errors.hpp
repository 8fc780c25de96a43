// The catalogue of error replies: every error text a command can reply with, word for word as
// Redis 7.0 says it, so clients that match on error strings (and humans reading redis-cli) see
// what they expect. This header holds the texts every family shares and the formatters for the
// texts that name a command or an argument; errors_<family>.hpp hold each family's own
// (server, values, streams, scripting, inventory). A text starts with its code ("ERR",
// "WRONGTYPE", ...), which INFO errorstats counts (shard/error_stats.hpp).
//
// Below the commands layer failures are Status values (util/status.hpp); a command turns one
// into a reply here, so no layer below spells protocol text.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "hotkv/util/status.hpp"

namespace hotkv::err {

inline constexpr const char* kSyntax = "ERR syntax error";
inline constexpr const char* kNotInteger = "ERR value is not an integer or out of range";
inline constexpr const char* kNotFloat = "ERR value is not a valid float";
inline constexpr const char* kOverflow = "ERR increment or decrement would overflow";
inline constexpr const char* kIncrFloatNaN = "ERR increment would produce NaN or Infinity";
inline constexpr const char* kWrongType =
    "WRONGTYPE Operation against a key holding the wrong kind of value";
inline constexpr const char* kNoSuchKey = "ERR no such key";
inline constexpr const char* kNoAuth = "NOAUTH Authentication required.";
inline constexpr const char* kWrongPass =
    "WRONGPASS invalid username-password pair or user is disabled.";
inline constexpr const char* kAuthNotConfigured =
    "ERR AUTH <password> called without any password configured for the default user. Are you "
    "sure your configuration is correct?";
inline constexpr const char* kDbIndexRange = "ERR DB index is out of range";
inline constexpr const char* kStringTooLong = "ERR string exceeds maximum allowed size (proto-max-bulk-len)";
inline constexpr const char* kOffsetRange = "ERR offset is out of range";
inline constexpr const char* kMaxClients = "ERR max number of clients reached";
// protected-mode: a client from outside the loopback interface while the default user has no
// password. Redis's code (DENIED) and the same choices, said in HotKV's words.
inline constexpr const char* kProtectedMode =
    "DENIED HotKV is running in protected mode: protected mode is on and the default user has "
    "no password, so only clients on the loopback interface are served. To let other hosts "
    "in, do one of these: 1) set a password for the default user (CONFIG SET requirepass ..., "
    "or requirepass in the config file); 2) turn protected mode off with CONFIG SET "
    "protected-mode no from the loopback interface (CONFIG REWRITE keeps it), after making "
    "sure the server is not reachable from the internet; 3) start the server with "
    "--protected-mode no. Any one of them is enough.";
inline constexpr const char* kInvalidCursor = "ERR invalid cursor";
inline constexpr const char* kNoProto = "NOPROTO unsupported protocol version";
inline constexpr const char* kTimeoutNotInteger = "ERR timeout is not an integer or out of range";
inline constexpr const char* kCountPositive = "ERR value is out of range, must be positive";
inline constexpr const char* kTimeoutNegative = "ERR timeout is negative";
inline constexpr const char* kTimeoutRange = "ERR timeout is out of range";
inline constexpr const char* kTimeoutNotFloat = "ERR timeout is not a float or out of range";
inline constexpr const char* kNumkeysPositive = "ERR numkeys should be greater than 0";
inline constexpr const char* kCountGreaterThanZero = "ERR count should be greater than 0";
inline constexpr const char* kNxXxGtLt =
    "ERR NX and XX, GT or LT options at the same time are not compatible";
// PF* on a string that is not in the HyperLogLog layout, or whose sparse part is corrupt.
inline constexpr const char* kNotHll = "WRONGTYPE Key is not a valid HyperLogLog string value.";
inline constexpr const char* kHllCorrupt = "INVALIDOBJ Corrupted HLL object detected";
inline constexpr const char* kGtLtNx = "ERR GT, LT, and/or NX options at the same time are not compatible";

// Bitmaps, BITFIELD and LCS.
inline constexpr const char* kBitOffset = "ERR bit offset is not an integer or out of range";
inline constexpr const char* kBitValue = "ERR bit is not an integer or out of range";
inline constexpr const char* kBitArgument = "ERR The bit argument must be 1 or 0.";
inline constexpr const char* kBitopNot = "ERR BITOP NOT must be called with a single source key.";
inline constexpr const char* kBitfieldType =
    "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but "
    "i64 is.";
inline constexpr const char* kBitfieldOverflow = "ERR Invalid OVERFLOW type specified";
inline constexpr const char* kBitfieldReadOnly = "ERR BITFIELD_RO only supports the GET subcommand";
inline constexpr const char* kLcsWrongType = "ERR The specified keys must contain string values";
inline constexpr const char* kLcsLenAndIdx =
    "ERR If you want both the length and indexes, please just use IDX.";
inline constexpr const char* kLcsTooLong = "ERR String too long for LCS";
inline constexpr const char* kLcsMemory =
    "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len";

inline constexpr const char* kOutOfRangeLong =
    "ERR value is out of range, value must between -9223372036854775807 and "
    "9223372036854775807";

// At most this many bytes of a command name or argument are quoted in an error, as Redis.
inline constexpr size_t kMaxQuoted = 128;
// The first kMaxQuoted bytes of `s`.
std::string_view clip(std::string_view s);

// "ERR unknown command '<name>', with args beginning with: '<a1>' '<a2>' " (argv[0] is the name).
std::string unknown_command(std::span<const std::string_view> argv);
// "ERR wrong number of arguments for '<command>' command", the name in lower case.
std::string wrong_arity(std::string_view command);
// A container command's subcommand with the wrong number of arguments:
// "ERR wrong number of arguments for '<command>|<sub>' command", both in lower case.
std::string subcommand_arity(std::string_view command, std::string_view sub);
// "ERR unknown subcommand '<sub>'. Try <COMMAND> HELP."
std::string unknown_subcommand(std::string_view command, std::string_view sub);
// The older catch-all some subcommands still answer with: "ERR unknown subcommand or wrong
// number of arguments for '<sub>'. Try <COMMAND> HELP."
std::string subcommand_syntax(std::string_view command, std::string_view sub);
// "ERR invalid expire time in '<command>' command", the name in lower case.
std::string invalid_expire(std::string_view command);
// A failure from below the commands layer whose message Redis shows after "ERR " (a CONFIG
// SET reason, a tracking prefix clash). REQUIRES: !st.is_ok().
std::string from_status(const Status& st);

}  // namespace hotkv::err
