// Error texts of EVAL, SCRIPT, FCALL, FUNCTION and of the Lua side (redis.call, shebangs,
// library metadata), word for word Redis 7.0's (commands/errors.hpp has the common ones).
#pragma once

#include <string>
#include <string_view>

namespace hotkv::err {

inline constexpr const char* kFcallBadNumkeys = "ERR Bad number of keys provided";
inline constexpr const char* kFunctionNotFound = "ERR Function not found";
inline constexpr const char* kWriteFunctionReadOnly =
    "ERR Can not execute a script with write flag using *_ro command.";
inline constexpr const char* kFunctionPayload = "ERR payload version or checksum are wrong";
inline constexpr const char* kRestorePolicy =
    "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.";
inline constexpr const char* kNotAFunction = "ERR given type is not a function";
inline constexpr const char* kLibraryNameMissing = "ERR library name argument was not given";
inline constexpr const char* kLibraryNotFound = "ERR Library not found";
inline constexpr const char* kFunctionFlushOption =
    "ERR FUNCTION FLUSH only supports SYNC|ASYNC option";
inline constexpr const char* kNoScript = "NOSCRIPT No matching script. Please use EVAL.";
inline constexpr const char* kScriptFlushOption = "ERR SCRIPT FLUSH only support SYNC|ASYNC option";
inline constexpr const char* kNumkeysNegative = "ERR Number of keys can't be negative";
inline constexpr const char* kCallOutsideScript =
    "ERR redis.call is only available while a script runs";
inline constexpr const char* kCallNoArgs =
    "ERR Please specify at least one argument for this redis lib call";
inline constexpr const char* kCallArgType =
    "ERR Lua redis lib command arguments must be strings or integers";
inline constexpr const char* kCallUnknownCommand = "ERR Unknown Redis command called from script";
inline constexpr const char* kCallNotAllowed = "ERR This Redis command is not allowed from script";
inline constexpr const char* kCallArity =
    "ERR Wrong number of args calling Redis command from script";
inline constexpr const char* kCallWriteReadOnly =
    "ERR Write commands are not allowed from read-only scripts.";
inline constexpr const char* kCallReplyUnreadable =
    "ERR could not read the reply of the command called from script";
inline constexpr const char* kScriptKilled = "ERR Script killed by user with SCRIPT KILL...";
inline constexpr const char* kUnknownScriptError = "ERR unknown error";
inline constexpr const char* kLuaStackLimit = "ERR reached lua stack limit";
inline constexpr const char* kNoFunctionsRegistered = "ERR No functions registered";
inline constexpr const char* kNotBusy = "NOTBUSY No scripts in execution right now.";
inline constexpr const char* kLibraryMetadataMissing = "ERR Missing library metadata";
inline constexpr const char* kLibraryNameTwice =
    "ERR Invalid metadata value, name argument was given multiple times";
inline constexpr const char* kLibraryNameNotGiven = "ERR Library name was not given";

// Raised inside a script whose run is being undone to run again with every shard; no client
// ever reads it (the undone run answers nothing).
inline constexpr const char* kScriptRerun = "ERR script is being run again with every shard";
// Answered for a script that asked to run again while already holding every shard: cannot
// happen (nothing is out of reach then), but should it, each command still gets one reply.
inline constexpr const char* kScriptRerunFailed =
    "ERR the script could not be run with every shard";
inline constexpr const char* kBusyScript =
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
inline constexpr const char* kBusyFunction =
    "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.";

inline constexpr const char* kUnkillable =
    "UNKILLABLE Sorry the script already executed write commands against the dataset. You can "
    "either wait the script termination or kill the server in a hard way using the SHUTDOWN "
    "NOSAVE command.";
inline constexpr const char* kLibraryNameChars =
    "ERR Library names can only contain letters, numbers, or underscores(_) and must be at "
    "least one character long";
inline constexpr const char* kReplicationFlags =
    "ERR Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.";

// Texts that name an argument or a command.
std::string function_option(std::string_view option);
std::string function_argument(std::string_view argument);
// redis.call of XREAD / XREADGROUP with BLOCK.
std::string call_with_block(std::string_view command);
std::string compile_script(std::string_view message);
std::string compile_function(std::string_view message);
std::string register_functions(std::string_view message);
// A Lua runtime error raised as a plain string: "ERR <message>".
std::string script_runtime(std::string_view message);
std::string shebang_engine(std::string_view engine);
std::string shebang_option(std::string_view option);
std::string shebang_flag(std::string_view flag);
std::string engine_not_found(std::string_view engine);
std::string metadata_value(std::string_view word);
// FUNCTION LOAD quotes the name ('lib'), FUNCTION RESTORE does not.
std::string library_exists(std::string_view name, bool quoted);
std::string function_exists(std::string_view name);
std::string cannot_write(std::string_view file, int error_number);

}  // namespace hotkv::err
