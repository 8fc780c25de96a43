// Set: the value behind SADD/SMEMBERS/SINTER...: distinct binary-safe strings, kept in one of
// the two encodings Redis 7.0 uses (and reports through OBJECT ENCODING):
//
// - intset: while every member is a canonical 64-bit integer and there are at most
//   set-max-intset-entries of them (EncodingLimits), the members are a sorted
//   vector of int64 -- 8 bytes each, ordered replies, binary-search lookups;
// - hashtable: otherwise, a Dict of members (the keyspace's own table), so SSCAN inherits its
//   reverse-binary cursor and the guarantee that a member present for the whole iteration is
//   returned at least once, however the table resizes between calls.
//
// As in Redis the conversion is one way: a set that became a hashtable stays one even if it
// shrinks back to a few integers.
//
// Knows nothing of RESP or of commands. Not thread-safe: a set belongs to one shard and only
// that shard's thread (or a run_atomic coordinator while it is parked) touches it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hotkv/types/dict.hpp"
#include "hotkv/types/encoding_limits.hpp"

namespace hotkv {

class Set {
 public:
  enum class Encoding : uint8_t { kIntset, kHashtable };

  // An empty set in the given encoding (an empty intset unless told otherwise).
  explicit Set(Encoding e = Encoding::kIntset) : encoding_(e) {}
  Set(const Set&) = delete;
  Set& operator=(const Set&) = delete;
  // Same members and same encoding.
  std::unique_ptr<Set> clone() const;

  size_t size() const { return encoding_ == Encoding::kIntset ? ints_.size() : table_.size(); }
  bool empty() const { return size() == 0; }
  Encoding encoding() const { return encoding_; }
  // "intset" or "hashtable".
  const char* encoding_name() const;
  static const char* encoding_name(Encoding e);

  bool contains(std::string_view member) const;
  // Returns true if the member was not there before. Converts an intset to a hashtable first
  // when the member is not a canonical integer or the intset already holds
  // limits.set_max_intset_entries members (Redis adds, then converts past the limit: the same).
  bool add(std::string_view member, const EncodingLimits& limits);
  // Returns true if the member was there.
  bool remove(std::string_view member);

  // Calls fn(std::string_view member) for every member: ascending numbers for an intset, table
  // order for a hashtable. fn must not add or remove members.
  template <class F>
  void for_each(F&& fn) const;
  // As for_each, but stops as soon as fn returns false (SINTERCARD's LIMIT).
  template <class F>
  void for_each_until(F&& fn) const;
  std::vector<std::string> members() const;

  // A uniformly chosen member. REQUIRES: !empty(). rng is a UniformRandomBitGenerator.
  template <class Rng>
  std::string random_member(Rng& rng) const;

  // One SSCAN step from `cursor`, calling fn(std::string_view member); returns the next cursor,
  // 0 when the iteration is complete. An intset is returned whole in one step (as Redis does for
  // its compact encodings); a hashtable visits the bucket(s) at the cursor (Dict::scan).
  template <class F>
  uint64_t scan(uint64_t cursor, F&& fn) const;

  size_t memory_bytes() const;

 private:
  struct Member {};  // a hashtable member is just a key

  void convert_to_hashtable();
  // Dict walks are non-const only because they hand out mutable values; members have none.
  Dict<Member>& table() const { return const_cast<Dict<Member>&>(table_); }

  std::vector<int64_t> ints_;  // intset: sorted ascending, no duplicates
  Dict<Member> table_;         // hashtable
  Encoding encoding_;
};

// --- templates ---------------------------------------------------------------------------------

namespace set_detail {
// The decimal text of v in `buf` (at least 21 bytes); returns its length.
size_t format_int(int64_t v, char* buf);
}  // namespace set_detail

template <class F>
void Set::for_each(F&& fn) const {
  if (encoding_ == Encoding::kIntset) {
    char buf[24];
    for (int64_t v : ints_) {
      fn(std::string_view(buf, set_detail::format_int(v, buf)));
    }
    return;
  }
  table().for_each([&](std::string_view key, Member&) { fn(std::string_view(key)); });
}

template <class F>
void Set::for_each_until(F&& fn) const {
  if (encoding_ == Encoding::kIntset) {
    char buf[24];
    for (int64_t v : ints_) {
      if (!fn(std::string_view(buf, set_detail::format_int(v, buf)))) {
        return;
      }
    }
    return;
  }
  // A full scan of an unchanging table visits every bucket once; it can stop between buckets.
  bool go = true;
  uint64_t cursor = 0;
  do {
    cursor = table().scan(cursor, [&](std::string_view key, Member&) {
      if (go) {
        go = fn(std::string_view(key));
      }
    });
  } while (go && cursor != 0);
}

template <class Rng>
std::string Set::random_member(Rng& rng) const {
  if (encoding_ == Encoding::kIntset) {
    std::uniform_int_distribution<size_t> pick(0, ints_.size() - 1);
    char buf[24];
    return std::string(buf, set_detail::format_int(ints_[pick(rng)], buf));
  }
  return std::string(table().random_entry(rng)->key());
}

template <class F>
uint64_t Set::scan(uint64_t cursor, F&& fn) const {
  if (encoding_ == Encoding::kIntset) {
    for_each(fn);
    return 0;
  }
  return table().scan(cursor, [&](std::string_view key, Member&) { fn(std::string_view(key)); });
}

}  // namespace hotkv
