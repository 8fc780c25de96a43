// Error texts of the value families: keys, strings, hashes, lists, sets, sorted sets, geo,
// HyperLogLog, SORT and DUMP/RESTORE (commands/errors.hpp has the common ones). Word for word
// Redis 7.0's.
#pragma once

#include <string>
#include <string_view>

namespace hotkv::err {

inline constexpr const char* kSameObject = "ERR source and destination objects are the same";
inline constexpr const char* kDumpUnsupported = "ERR DUMP is not supported for this value";
inline constexpr const char* kRestoreIdleTime = "ERR Invalid IDLETIME value, must be >= 0";
inline constexpr const char* kRestoreFreq = "ERR Invalid FREQ value, must be >= 0 and <= 255";
inline constexpr const char* kBusyKey = "BUSYKEY Target key name already exists.";
inline constexpr const char* kRestoreTtl = "ERR Invalid TTL value, must be >= 0";
inline constexpr const char* kDumpPayload = "ERR DUMP payload version or checksum are wrong";
inline constexpr const char* kBadDataFormat = "ERR Bad data format";
inline constexpr const char* kGtAndLt = "ERR GT and LT options at the same time are not compatible";
inline constexpr const char* kGeoUnit = "ERR unsupported unit provided. please use M, KM, FT, MI";
inline constexpr const char* kGeoRadiusNotNumeric = "ERR need numeric radius";
inline constexpr const char* kGeoRadiusNegative = "ERR radius cannot be negative";
inline constexpr const char* kGeoMemberUndecodable = "ERR could not decode requested zset member";
inline constexpr const char* kCountMustBePositive = "ERR COUNT must be > 0";
inline constexpr const char* kGeoWidthNotNumeric = "ERR need numeric width";
inline constexpr const char* kGeoHeightNotNumeric = "ERR need numeric height";
inline constexpr const char* kGeoBoxNegative = "ERR height or width cannot be negative";
inline constexpr const char* kGeoAnyNeedsCount = "ERR the ANY argument requires COUNT argument";
inline constexpr const char* kHashNotInteger = "ERR hash value is not an integer";
inline constexpr const char* kHashNotFloat = "ERR hash value is not a float";
inline constexpr const char* kIncrNaNOrInf = "ERR value is NaN or Infinity";
inline constexpr const char* kOutOfRange = "ERR value is out of range";
inline constexpr const char* kHllNoKey = "ERR The specified key does not exist";
inline constexpr const char* kHllNotSparse = "ERR HLL encoding is not sparse";
inline constexpr const char* kMemoryUsageArity =
    "ERR wrong number of arguments for 'memory|usage' command";
inline constexpr const char* kCountNegative = "ERR COUNT can't be negative";
inline constexpr const char* kMaxlenNegative = "ERR MAXLEN can't be negative";
inline constexpr const char* kLimitNegative = "ERR LIMIT can't be negative";
inline constexpr const char* kSortScoreNotDouble =
    "ERR One or more scores can't be converted into double";
inline constexpr const char* kDecrOverflow = "ERR decrement would overflow";
inline constexpr const char* kXxAndNx = "ERR XX and NX options at the same time are not compatible";
inline constexpr const char* kZaddIncrSinglePair =
    "ERR INCR option supports a single increment-element pair";
inline constexpr const char* kWeightNotFloat = "ERR weight value is not a float";
inline constexpr const char* kZrangeLimitNeedsBy =
    "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX";
inline constexpr const char* kZrangeWithscoresBylex =
    "ERR syntax error, WITHSCORES not supported in combination with BYLEX";
inline constexpr const char* kKeysMoreThanArgs =
    "ERR Number of keys can't be greater than number of args";

inline constexpr const char* kLfuNoIdleTime =
    "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when "
    "switching between policies at runtime LRU and LFU data will take some time to adjust.";
inline constexpr const char* kNoLfuNoFreq =
    "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note "
    "that when switching between policies at runtime LRU and LFU data will take some time to "
    "adjust.";
inline constexpr const char* kRankZero =
    "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or "
    "use negative to start from the end of the list";
inline constexpr const char* kZSetMinMaxNotFloat = "ERR min or max is not a float";
inline constexpr const char* kZSetLexRange = "ERR min or max not valid string range item";
inline constexpr const char* kZSetScoreNaN = "ERR resulting score is not a number (NaN)";
inline constexpr const char* kIndexOutOfRange = "ERR index out of range";

// Texts that name an argument or a command.
std::string unsupported_option(std::string_view option);
std::string at_least_one_key(std::string_view command);
std::string unknown_pfdebug(std::string_view sub);
// "ERR invalid longitude,latitude pair %f,%f".
std::string invalid_lon_lat(double lon, double lat);
std::string geo_store_with_extras(bool geosearchstore);
std::string geo_one_origin(std::string_view command);
std::string geo_one_shape(std::string_view command);

}  // namespace hotkv::err
