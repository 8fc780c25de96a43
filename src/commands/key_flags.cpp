// Key flags for COMMAND GETKEYSANDFLAGS (see key_flags.hpp), by the kind of command.
#include "hotkv/commands/key_flags.hpp"

#include <algorithm>
#include <string>

#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/commands/table.hpp"

namespace hotkv {
namespace {

using Flags = std::vector<std::string_view>;

bool named(const CommandSpec& spec, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), spec.name) != names.end();
}

bool has_word(std::span<const std::string_view> argv, const char* word) {
  return std::any_of(argv.begin() + 1, argv.end(),
                     [&](std::string_view a) { return strcasecmp_view(a, word); });
}

}  // namespace

Flags key_flags(const CommandSpec& spec, std::span<const std::string_view> argv, size_t nth,
                size_t key_count) {
  const std::string& n = spec.name;
  bool first = nth == 0;
  // Reads, including SORT_RO and the read-only variants of every family.
  if ((spec.flags & kReadOnly) != 0) {
    return {"RO", "access"};
  }
  if (named(spec, {"DEL", "UNLINK"})) {
    return {"RM", "delete"};
  }
  // A destination written whole from sources that are only read: the destination first ...
  if (named(spec, {"SUNIONSTORE", "SINTERSTORE", "SDIFFSTORE", "ZUNIONSTORE", "ZINTERSTORE",
                   "ZDIFFSTORE", "ZRANGESTORE", "GEOSEARCHSTORE", "BITOP"})) {
    return first ? Flags{"OW", "update"} : Flags{"RO", "access"};
  }
  if (n == "PFMERGE") {
    return first ? Flags{"RW", "access", "insert"} : Flags{"RO", "access"};
  }
  // ... or last (SORT ... STORE, GEORADIUS ... STORE, COPY).
  if (named(spec, {"SORT", "GEORADIUS", "GEORADIUSBYMEMBER", "COPY"})) {
    return first || key_count == 1 ? Flags{"RO", "access"} : Flags{"OW", "update"};
  }
  // A value moved from one key to another.
  if (named(spec, {"LMOVE", "BLMOVE", "RPOPLPUSH", "BRPOPLPUSH", "SMOVE"})) {
    return first ? Flags{"RW", "access", "delete"} : Flags{"RW", "insert"};
  }
  if (named(spec, {"RENAME", "RENAMENX"})) {
    return first ? Flags{"RW", "access", "delete"}
                 : (n == "RENAME" ? Flags{"OW", "update"} : Flags{"OW", "insert"});
  }
  // Strings written without reading what was there (SET ... GET reads it).
  if (named(spec, {"SET"})) {
    return has_word(argv, "GET") ? Flags{"RW", "access", "update"} : Flags{"OW", "update"};
  }
  if (named(spec, {"MSET", "SETEX", "PSETEX"})) {
    return {"OW", "update"};
  }
  if (named(spec, {"MSETNX", "SETNX"})) {
    return {"OW", "insert"};
  }
  if (named(spec, {"RESTORE"})) {
    return {"OW", "update"};
  }
  // Pops and deletions inside a value return or drop what they take.
  if (n.find("POP") != std::string::npos || named(spec, {"GETDEL"})) {
    return {"RW", "access", "delete"};
  }
  if (named(spec, {"HDEL", "SREM", "ZREM", "LREM", "XDEL", "ZREMRANGEBYLEX", "ZREMRANGEBYRANK",
                   "ZREMRANGEBYSCORE", "LTRIM", "XTRIM"})) {
    return {"RW", "delete"};
  }
  // Pushes and appends add to a value without reading it.
  if (named(spec,
            {"LPUSH", "RPUSH", "LPUSHX", "RPUSHX", "SADD", "XADD", "LINSERT", "APPEND", "PFADD"})) {
    return {"RW", "insert"};
  }
  return {"RW", "access", "update"};
}

}  // namespace hotkv
