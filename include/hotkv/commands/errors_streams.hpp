// Error texts of the stream commands and their consumer groups, word for word Redis 7.0's
// (commands/errors.hpp has the common ones).
#pragma once

#include <string>
#include <string_view>

namespace hotkv::err {

inline constexpr const char* kEntriesReadRange = "ERR value for ENTRIESREAD must be positive or -1";
inline constexpr const char* kBusyGroup = "BUSYGROUP Consumer Group name already exists";
inline constexpr const char* kXclaimMinIdle = "ERR Invalid min-idle-time argument for XCLAIM";
inline constexpr const char* kXclaimIdle = "ERR Invalid IDLE option argument for XCLAIM";
inline constexpr const char* kXclaimTime = "ERR Invalid TIME option argument for XCLAIM";
inline constexpr const char* kXclaimRetryCount =
    "ERR Invalid RETRYCOUNT option argument for XCLAIM";
inline constexpr const char* kXautoclaimMinIdle =
    "ERR Invalid min-idle-time argument for XAUTOCLAIM";
inline constexpr const char* kMaxlenAndMinid =
    "ERR syntax error, MAXLEN and MINID options at the same time are not compatible";
inline constexpr const char* kMaxlenArgNegative = "ERR The MAXLEN argument must be >= 0.";
inline constexpr const char* kLimitArgNegative = "ERR The LIMIT argument must be >= 0.";
inline constexpr const char* kLimitWithoutStrategy =
    "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy";
inline constexpr const char* kXtrimNeedsStrategy =
    "ERR syntax error, XTRIM must be called with a trimming strategy";
inline constexpr const char* kLimitWithoutTilde =
    "ERR syntax error, LIMIT cannot be used without the special ~ option";
inline constexpr const char* kXaddIdZero = "ERR The ID specified in XADD must be greater than 0-0";
inline constexpr const char* kStreamExhausted =
    "ERR The stream has exhausted the last possible ID, unable to add more items";
inline constexpr const char* kXaddIdTooSmall =
    "ERR The ID specified in XADD is equal or smaller than the target stream top item";
inline constexpr const char* kEntriesAddedPositive = "ERR entries_added must be positive";
inline constexpr const char* kXsetidBelowGivenMaxDeleted =
    "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id";
inline constexpr const char* kXsetidBelowMaxDeleted =
    "ERR The ID specified in XSETID is smaller than current max_deleted_entry_id";
inline constexpr const char* kXsetidBelowTop =
    "ERR The ID specified in XSETID is smaller than the target stream top item";
inline constexpr const char* kXsetidEntriesAdded =
    "ERR The entries_added specified in XSETID is smaller than the target stream length";
inline constexpr const char* kXreadGroupOption =
    "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.";
inline constexpr const char* kXreadNoackOption =
    "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.";
inline constexpr const char* kXreadgroupMissingGroup = "ERR Missing GROUP option for XREADGROUP";
inline constexpr const char* kStreamKeyDeleted = "UNBLOCKED the stream key no longer exists";
inline constexpr const char* kBlockedGroupDeleted =
    "NOGROUP the consumer group this client was blocked on no longer exists";

inline constexpr const char* kXgroupNeedsKey =
    "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want "
    "to use the MKSTREAM option to create an empty stream automatically.";
inline constexpr const char* kXreadgroupDollar =
    "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history "
    "of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ "
    "ID would just return an empty result set.";
inline constexpr const char* kXreadGreaterThan =
    "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> "
    "<consumer> option.";
inline constexpr const char* kStreamBadId =
    "ERR Invalid stream ID specified as stream command argument";
inline constexpr const char* kStreamBadStart = "ERR invalid start ID for the interval";
inline constexpr const char* kStreamBadEnd = "ERR invalid end ID for the interval";

// Texts that name an argument or a command.
std::string nogroup_key_or_group(std::string_view key, std::string_view group);
std::string nogroup_for_key(std::string_view group, std::string_view key);
std::string xread_unbalanced(bool group);
std::string xclaim_option(std::string_view option);

}  // namespace hotkv::err
