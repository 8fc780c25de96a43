// notify-keyspace-events letters (see notify.hpp).
#include "hotkv/util/notify.hpp"

namespace hotkv {
namespace {

struct Letter {
  char c;
  uint32_t flag;
};

constexpr Letter kLetters[] = {
    {'g', kNotifyGeneric}, {'$', kNotifyString}, {'l', kNotifyList},    {'s', kNotifySet},
    {'h', kNotifyHash},    {'z', kNotifyZset},   {'x', kNotifyExpired}, {'e', kNotifyEvicted},
    {'t', kNotifyStream},  {'d', kNotifyModule}, {'m', kNotifyKeyMiss}, {'n', kNotifyNew},
    {'K', kNotifyKeyspace}, {'E', kNotifyKeyevent},
};

}  // namespace

std::optional<uint32_t> parse_notify_flags(std::string_view s) {
  uint32_t flags = 0;
  for (char c : s) {
    if (c == 'A') {
      flags |= kNotifyAll;
      continue;
    }
    bool known = false;
    for (const Letter& l : kLetters) {
      if (l.c == c) {
        flags |= l.flag;
        known = true;
        break;
      }
    }
    if (!known) {
      return std::nullopt;
    }
  }
  return flags;
}

std::string format_notify_flags(uint32_t flags) {
  std::string out;
  if ((flags & kNotifyAll) == kNotifyAll) {
    out.push_back('A');
  }
  for (const Letter& l : kLetters) {
    if (l.flag == kNotifyKeyspace || l.flag == kNotifyKeyevent) {
      continue;
    }
    if ((flags & kNotifyAll) == kNotifyAll && (kNotifyAll & l.flag) != 0) {
      continue;
    }
    if ((flags & l.flag) != 0) {
      out.push_back(l.c);
    }
  }
  if ((flags & kNotifyKeyspace) != 0) {
    out.push_back('K');
  }
  if ((flags & kNotifyKeyevent) != 0) {
    out.push_back('E');
  }
  return out;
}

}  // namespace hotkv
