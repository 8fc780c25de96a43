// Error texts of the server, connection, client, transaction and persistence commands and of
// the dispatcher's checks before a command runs (commands/errors.hpp has the common ones).
// Word for word Redis 7.0's, except where a text names HotKV's own behaviour.
#pragma once

#include <string>
#include <string_view>

#include "hotkv/util/status.hpp"

namespace hotkv::err {

inline constexpr const char* kTrackingOneRedirect =
    "ERR A client can only redirect to a single other client";
inline constexpr const char* kTrackingNoRedirectClient =
    "ERR The client ID you want redirect to does not exist";
inline constexpr const char* kTrackingPrefixNeedsBcast =
    "ERR PREFIX option requires BCAST mode to be enabled";
inline constexpr const char* kTrackingOptInOutBcast =
    "ERR OPTIN and OPTOUT are not compatible with BCAST";
inline constexpr const char* kTrackingOptInAndOut =
    "ERR You can't specify both OPTIN mode and OPTOUT mode";
inline constexpr const char* kCachingYesNeedsOptIn =
    "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.";
inline constexpr const char* kCachingNoNeedsOptOut =
    "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.";
inline constexpr const char* kProtoNotInteger =
    "ERR Protocol version is not an integer or out of range";
inline constexpr const char* kClientNameChars =
    "ERR Client names cannot contain spaces, newlines or special characters.";
inline constexpr const char* kInvalidClientId = "ERR Invalid client ID";
inline constexpr const char* kUnblockReason =
    "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR";
inline constexpr const char* kClientIdPositive = "ERR client-id should be greater than 0";
inline constexpr const char* kNoSuchClient = "ERR No such client";
inline constexpr const char* kSlowlogCount = "ERR count should be greater than or equal to -1";
inline constexpr const char* kPauseTimeout = "ERR timeout is not an integer or out of range";
inline constexpr const char* kPauseNegative = "ERR timeout is negative";
inline constexpr const char* kMonitorInMulti = "ERR MONITOR isn't allowed for DENY BLOCKING client";
inline constexpr const char* kPauseMode = "ERR CLIENT PAUSE mode must be WRITE or ALL";
inline constexpr const char* kLoading = "LOADING HotKV is loading the dataset in memory";
inline constexpr const char* kAppendOnlyDisabled =
    "ERR Append only file is disabled (appendonly no)";
inline constexpr const char* kBackgroundSaveRunning = "ERR Background save already in progress";
inline constexpr const char* kInvalidCommand = "ERR Invalid command specified";
inline constexpr const char* kInvalidCommandArgs =
    "ERR Invalid number of arguments specified for command";
inline constexpr const char* kNoKeyArguments = "ERR The command has no key arguments";
inline constexpr const char* kInvalidGetkeysArgs = "ERR Invalid arguments specified for command";
// MODULE LOAD/LOADEX/UNLOAD: Redis 7's reply while enable-module-command is "no".
inline constexpr const char* kModuleCommandNotAllowed =
    "ERR MODULE command not allowed. If the enable-module-command option is set to \"local\", "
    "you can run it from a local connection, otherwise you need to set this option in the "
    "configuration file, and then restart the server.";
inline constexpr const char* kClusterDisabled = "ERR This instance has cluster support disabled";
inline constexpr const char* kNoShutdown = "ERR No shutdown in progress.";
inline constexpr const char* kNotInMulti = "ERR Command not allowed inside a transaction";
inline constexpr const char* kMultiNested = "ERR MULTI calls can not be nested";
inline constexpr const char* kExecWithoutMulti = "ERR EXEC without MULTI";
inline constexpr const char* kDiscardWithoutMulti = "ERR DISCARD without MULTI";
inline constexpr const char* kWatchInMulti = "ERR WATCH inside MULTI is not allowed";
inline constexpr const char* kFirstDbIndex = "ERR invalid first DB index";
inline constexpr const char* kSecondDbIndex = "ERR invalid second DB index";

inline constexpr const char* kTrackingBcastSwitch =
    "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and "
    "then re-enabling it with a different mode.";
inline constexpr const char* kTrackingOptSwitch =
    "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and "
    "then re-enabling it with a different mode.";
inline constexpr const char* kCachingNeedsTracking =
    "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or "
    "OPTOUT mode enabled";
inline constexpr const char* kHelloNoAuth =
    "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO "
    "<proto> AUTH <user> <pass> option can be used to authenticate the client and select the "
    "RESP protocol version at the same time";
inline constexpr const char* kReplicaofFromReplica =
    "ERR Command is not valid when client is a replica.";
inline constexpr const char* kInvalidMasterPort = "ERR Invalid master port";
inline constexpr const char* kNoReplicas = "NOREPLICAS Not enough good replicas to write.";
// A denyoom command (or a script that may write and did not declare allow-oom) while used
// memory is over maxmemory and nothing more can be evicted.
inline constexpr const char* kOom = "OOM command not allowed when used memory > 'maxmemory'.";
inline constexpr const char* kReadOnlyReplica = "READONLY You can't write against a read only replica.";
inline constexpr const char* kMasterDown =
    "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.";

// Texts that name an argument or a command.
// "MISCONF Errors writing to the AOF file: <strerror>": writes are refused while the log is
// broken.
std::string misconf_aof(int error_number);
// A command other than (P|S)SUBSCRIBE, PING, QUIT, RESET from a RESP2 subscriber.
std::string subscribed_context(std::string_view command);
std::string hello_option(std::string_view option);
std::string unknown_client_type(std::string_view type);
// CLIENT KILL USER with a user that does not exist.
std::string no_such_user(std::string_view user);
// CLIENT SETINFO LIB-NAME / LIB-VER with a space or newline in the value.
std::string client_attribute_chars(std::string_view attribute);
std::string unrecognized_option(std::string_view option);
std::string config_set_unknown(std::string_view name);
// CONFIG SET refused by Config::set; the reason is the Status's message.
std::string config_set_failed(std::string_view name, const Status& st);
std::string latency_no_samples(std::string_view event);
std::string unrecognized_replconf(std::string_view option);
// CONFIG REWRITE: "ERR The server is running without a config file", or the I/O failure.
std::string config_rewrite_failed(const Status& st);

}  // namespace hotkv::err
