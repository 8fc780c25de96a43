// Dict: the chained hash table that holds each shard's keyspace (key -> value).
//
// We do not use absl::flat_hash_map here because SCAN must hand out a cursor that never misses a
// key present for the whole scan, even when the table grows or shrinks between two calls. An
// open-addressing table moves entries between slots on insert and erase, so no cursor over it
// can promise that. Redis solves this with a power-of-two array of chains, resized all at once,
// and a cursor that walks the buckets in reverse-binary order; Dict does the same (see scan()).
//
// Entries are individually allocated nodes, so a pointer to an entry or its value stays valid
// until that key is erased, the dict is cleared or destroyed; resizing only relinks nodes.
//
// A node is one allocation: the chain link, the value, the key's length (one byte below 255)
// and the key bytes right behind them: for the keyspace 25 bytes plus the key (an 11-byte key
// fits a 48-byte malloc chunk), for a set's hashtable 9 plus the member, for a hash's 41 plus
// the field. Nodes do not cache their hash: that would take 8 bytes in every node to save hashing
// the key on a resize, which touches each node once per doubling, amortised O(1) per insert.
// Chain walks compare the key's length before its bytes, and the bucket filter below already
// stops most lookups of absent keys before any node is read.
//
// Each bucket word carries, besides the chain's head pointer, a 16-bit filter of the hashes in
// its chain (see kTagShift): a lookup for an absent key usually stops at the bucket array
// instead of loading every node of the chain, one cache miss instead of two or more.
//
// Not thread-safe: a Dict belongs to one shard and only that shard's thread may touch it.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <random>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <absl/hash/hash.h>

#include "hotkv/util/assert.hpp"

namespace hotkv {

// MaxLoad: the table doubles when it holds more than MaxLoad entries per bucket. 1 by default,
// as Redis; the keyspace uses 2 (shard/keyspace.hpp), which halves the bucket array's 8 to 16
// bytes per key for chains of 1.5 to 2 nodes on average.
template <class V, size_t MaxLoad = 1>
class Dict {
 public:
  static constexpr size_t kMaxLoad = MaxLoad;
  static_assert(MaxLoad >= 1);

  struct Entry {
    // Owned by Dict: the next entry of the same bucket's chain.
    Entry* next;
    [[no_unique_address]] V value;
    // Owned by Dict: the key, as its length (one byte, or kLongKey and four bytes for keys of
    // kLongKey bytes and more) then its bytes, running on past the struct in the same
    // allocation.
    unsigned char key_head[1];

    // Read-only for callers: the bucket is derived from it.
    std::string_view key() const {
      const unsigned char* p = reinterpret_cast<const unsigned char*>(this) + kKeyOffset;
      if (p[0] != kLongKey) {
        return {reinterpret_cast<const char*>(p + 1), p[0]};
      }
      uint32_t size = 0;
      std::memcpy(&size, p + 1, sizeof(size));
      return {reinterpret_cast<const char*>(p + 1 + sizeof(size)), size};
    }
  };

  // An empty dict allocates nothing; the first insert allocates kMinBuckets buckets. This keeps
  // empty dicts (fresh shards, moved-from objects) free.
  Dict() = default;
  ~Dict() { free_entries(); }

  Dict(const Dict&) = delete;
  Dict& operator=(const Dict&) = delete;

  // The moved-from dict is left empty and valid.
  Dict(Dict&& other) noexcept { steal(other); }
  Dict& operator=(Dict&& other) noexcept {
    if (this != &other) {
      free_entries();
      steal(other);
    }
    return *this;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // Returns the value stored under `key`, or nullptr when absent.
  V* find(std::string_view key) {
    Entry* e = find_entry(key);
    return e != nullptr ? &e->value : nullptr;
  }
  const V* find(std::string_view key) const {
    const Entry* e = find_entry(key);
    return e != nullptr ? &e->value : nullptr;
  }

  // Returns the entry stored under `key`, or nullptr when absent.
  Entry* find_entry(std::string_view key) {
    return const_cast<Entry*>(std::as_const(*this).find_entry(key));
  }
  const Entry* find_entry(std::string_view key) const {
    if (size_ == 0) {
      return nullptr;
    }
    const uint64_t h = hash_of(key);
    const uintptr_t b = buckets_[h & mask()];
    if ((b & tag_of(h)) == 0) {
      return nullptr;
    }
    for (const Entry* e = head_of(b); e != nullptr; e = e->next) {
      if (same_key(e, key)) {
        return e;
      }
    }
    return nullptr;
  }

  // Inserts a default-constructed V under `key` if absent. Returns the value (new or existing)
  // and whether it was inserted. The pointer stays valid until the key is erased.
  std::pair<V*, bool> try_emplace(std::string_view key) {
    const uint64_t h = hash_of(key);
    if (Entry* e = find_in_bucket(key, h); e != nullptr) {
      return {&e->value, false};
    }
    Entry* e = link_new(key, V{}, h);
    return {&e->value, true};
  }

  // Stores `value` under `key`, replacing any previous value. Returns the stored value.
  V& insert_or_assign(std::string_view key, V value) {
    const uint64_t h = hash_of(key);
    if (Entry* e = find_in_bucket(key, h); e != nullptr) {
      e->value = std::move(value);
      return e->value;
    }
    return link_new(key, std::move(value), h)->value;
  }

  // Removes `key`; returns false when it was absent. May shrink the bucket array.
  bool erase(std::string_view key) {
    if (size_ == 0) {
      return false;
    }
    const uint64_t h = hash_of(key);
    const size_t i = h & mask();
    if ((buckets_[i] & tag_of(h)) == 0) {
      return false;
    }
    Entry* prev = nullptr;
    for (Entry* e = head_of(buckets_[i]); e != nullptr; prev = e, e = e->next) {
      if (same_key(e, key)) {
        if (prev == nullptr) {
          buckets_[i] = reinterpret_cast<uintptr_t>(e->next);
        } else {
          prev->next = e->next;
        }
        retag(i);
        key_bytes_ -= e->key().size();
        free_entry(e);
        --size_;
        maybe_shrink();
        return true;
      }
    }
    return false;
  }

  // Removes every entry and releases the bucket array.
  void clear() {
    free_entries();
    buckets_.reset();
    bucket_count_ = 0;
    size_ = 0;
    key_bytes_ = 0;
    random_slots_ = kChainSlots;
  }

  // Visits every entry of the bucket(s) at `cursor`, calling fn(std::string_view key, V&) (or
  // fn(const std::string& key, V&), with a copy of the key, for callers that need a string),
  // and returns the cursor for the next call; 0 means the scan is complete. Start with 0.
  // fn may modify the value but must not insert or erase (that could resize under the loop).
  //
  // Guarantee (as Redis's SCAN): a key present from the first call to the last is visited at
  // least once, however the table was resized between calls; keys may be visited twice.
  //
  // Why it works: with 2^n buckets a key lives in bucket (hash & mask), i.e. its low n bits.
  // Instead of counting the cursor up normally we count it up with its bits reversed: we
  // increment the high bits first. Doubling the table splits bucket b into b and b + 2^n, which
  // share the same low n bits; halving merges them again. Because the reversed-order walk
  // visits buckets grouped by their low bits, every bucket already visited in one size maps only
  // to buckets that are "behind" the cursor in any other size, and every bucket not yet visited
  // maps to buckets at or ahead of it. Growing therefore never skips anything, and shrinking at
  // worst revisits the siblings of the current bucket (the duplicates SCAN allows).
  template <class F>
  uint64_t scan(uint64_t cursor, F&& fn) {
    if (size_ == 0) {
      return 0;
    }
    const uint64_t m = mask();
    for (Entry* e = head_of(buckets_[cursor & m]); e != nullptr; e = e->next) {
      call_with_key(fn, e);
    }
    // Setting every bit above the mask makes the +1 on the reversed value carry straight
    // through them into the masked bits, then reversing back gives the next bucket.
    cursor |= ~m;
    cursor = reverse_bits(cursor);
    ++cursor;
    cursor = reverse_bits(cursor);
    return cursor;
  }

  // Returns a random entry, or nullptr when empty (RANDOMKEY, SRANDMEMBER, HRANDFIELD). Each
  // attempt picks a bucket and a position 0..slots-1 in it, and succeeds if the chain is that
  // long: every entry is equally likely as long as no chain is longer than `slots`, where
  // picking a chain and then an entry of it would favour entries of short chains. `slots`
  // starts at kChainSlots and grows to the longest chain an attempt meets (remembered until
  // the next resize), so an entry deep in a rare long chain is reachable too: with a fixed
  // slot count the fifth entry of a five-long chain would never be picked. Attempts succeed
  // with probability load/slots (>= 1/32 for four slots, as the load never stays below 1/8);
  // after kUniformAttempts misses it falls back to a chain-then-entry pick, which always
  // succeeds.
  // rng must be a UniformRandomBitGenerator.
  template <class Rng>
  Entry* random_entry(Rng& rng) {
    if (size_ == 0) {
      return nullptr;
    }
    std::uniform_int_distribution<size_t> pick_bucket(0, bucket_count_ - 1);
    for (int attempt = 0; attempt < kUniformAttempts; ++attempt) {
      Entry* chain = head_of(buckets_[pick_bucket(rng)]);
      size_t length = 0;
      for (Entry* e = chain; e != nullptr; e = e->next) {
        ++length;
      }
      if (length > random_slots_) {
        // Restart the draw with room for this chain; earlier attempts left no bias behind.
        random_slots_ = length;
        continue;
      }
      const size_t slot = std::uniform_int_distribution<size_t>(0, random_slots_ - 1)(rng);
      if (slot < length) {
        for (size_t skip = slot; skip > 0; --skip) {
          chain = chain->next;
        }
        return chain;
      }
    }
    // The fallback: a non-empty bucket (probes, then a linear walk from a random start, which
    // is bounded by the bucket count and always succeeds), then an entry of its chain.
    Entry* chain = nullptr;
    for (int probe = 0; probe < kRandomProbes && chain == nullptr; ++probe) {
      chain = head_of(buckets_[pick_bucket(rng)]);
    }
    if (chain == nullptr) {
      size_t i = pick_bucket(rng);
      while (head_of(buckets_[i]) == nullptr) {
        i = (i + 1) & mask();
      }
      chain = head_of(buckets_[i]);
    }
    size_t length = 0;
    for (Entry* e = chain; e != nullptr; e = e->next) {
      ++length;
    }
    std::uniform_int_distribution<size_t> pick_entry(0, length - 1);
    for (size_t skip = pick_entry(rng); skip > 0; --skip) {
      chain = chain->next;
    }
    return chain;
  }

  // Eviction's sampling (Redis's "some keys"): walks the chains of consecutive buckets from a
  // random one, calling fn(std::string_view key, V&) -> bool for each entry, and stops once fn
  // returned true `wanted` times or `max_buckets` buckets were walked. Consecutive buckets are
  // one sequential read of the bucket array, which is why it is cheaper than `wanted` separate
  // random_entry() draws; the start is random, so over many calls every key is seen alike.
  // fn must not insert or erase.
  template <class Rng, class F>
  void sample(Rng& rng, size_t wanted, size_t max_buckets, F&& fn) {
    if (size_ == 0 || wanted == 0) {
      return;
    }
    size_t i = std::uniform_int_distribution<size_t>(0, bucket_count_ - 1)(rng);
    size_t found = 0;
    for (size_t walked = 0; walked < max_buckets && walked < bucket_count_; ++walked) {
      for (Entry* e = head_of(buckets_[i]); e != nullptr; e = e->next) {
        if (fn(e->key(), e->value) && ++found == wanted) {
          return;
        }
      }
      i = (i + 1) & mask();
    }
  }

  // Calls fn(std::string_view key, V&) (or fn(const std::string&, V&), as scan) for every
  // entry, in no particular order. fn must not insert or erase.
  template <class F>
  void for_each(F&& fn) {
    for (size_t b = 0; b < bucket_count_; ++b) {
      for (Entry* e = head_of(buckets_[b]); e != nullptr; e = e->next) {
        call_with_key(fn, e);
      }
    }
  }

  // Number of buckets: 0 before the first insert, otherwise a power of two >= kMinBuckets.
  size_t bucket_count() const { return bucket_count_; }

  // Rough bytes used by the table, entry nodes and key strings, for INFO. Memory owned by the
  // values themselves (beyond sizeof(V)) is the caller's to add.
  size_t memory_bytes() const {
    return sizeof(*this) + bucket_count_ * sizeof(uintptr_t) +
           size_ * (kKeyOffset + 1 + kMallocOverhead) + key_bytes_;
  }

 private:
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"
  // Where the key bytes start inside a node (V need not be standard-layout; GCC and Clang lay
  // out and report members in declaration order regardless).
  static constexpr size_t kKeyOffset = offsetof(Entry, key_head);
#pragma GCC diagnostic pop
  static constexpr unsigned char kLongKey = 0xff;

  static constexpr size_t kMinBuckets = 4;
  static constexpr int kRandomProbes = 64;
  static constexpr size_t kChainSlots = 4;
  static constexpr int kUniformAttempts = 256;
  // Typical glibc chunk header; only used to make memory_bytes() closer to RSS.
  static constexpr size_t kMallocOverhead = 16;

  static uint64_t hash_of(std::string_view key) {
    return static_cast<uint64_t>(absl::Hash<std::string_view>{}(key));
  }

  static bool same_key(const Entry* e, std::string_view key) { return e->key() == key; }

  static uint64_t hash_of(const Entry* e) { return hash_of(e->key()); }

  template <class F>
  static void call_with_key(F& fn, Entry* e) {
    if constexpr (std::is_invocable_v<F&, std::string_view, V&>) {
      fn(e->key(), e->value);
    } else {
      const std::string key(e->key());
      fn(key, e->value);
    }
  }

  // One allocation for the node and its key (see the header comment).
  static Entry* new_entry(std::string_view key, V&& value) {
    const bool long_key = key.size() >= kLongKey;
    const size_t header = long_key ? 1 + sizeof(uint32_t) : 1;
    const size_t bytes = std::max(sizeof(Entry), kKeyOffset + header + key.size());
    void* mem = ::operator new(bytes);
    auto* e = new (mem) Entry{nullptr, std::move(value), {}};
    unsigned char* p = reinterpret_cast<unsigned char*>(e) + kKeyOffset;
    if (long_key) {
      const auto size = static_cast<uint32_t>(key.size());
      p[0] = kLongKey;
      std::memcpy(p + 1, &size, sizeof(size));
    } else {
      p[0] = static_cast<unsigned char>(key.size());
    }
    std::memcpy(p + header, key.data(), key.size());
    return e;
  }

  static void free_entry(Entry* e) {
    e->~Entry();
    ::operator delete(static_cast<void*>(e));
  }

  static constexpr uint64_t reverse_bits(uint64_t v) {
    v = ((v >> 1) & 0x5555555555555555ULL) | ((v & 0x5555555555555555ULL) << 1);
    v = ((v >> 2) & 0x3333333333333333ULL) | ((v & 0x3333333333333333ULL) << 2);
    v = ((v >> 4) & 0x0F0F0F0F0F0F0F0FULL) | ((v & 0x0F0F0F0F0F0F0F0FULL) << 4);
    v = ((v >> 8) & 0x00FF00FF00FF00FFULL) | ((v & 0x00FF00FF00FF00FFULL) << 8);
    v = ((v >> 16) & 0x0000FFFF0000FFFFULL) | ((v & 0x0000FFFF0000FFFFULL) << 16);
    return (v >> 32) | (v << 32);
  }

  uint64_t mask() const { return static_cast<uint64_t>(bucket_count_) - 1; }

  // A bucket word: the chain's head pointer in the low 48 bits (user-space addresses on
  // x86-64 and AArch64 fit in them) and, in the top 16, the filter: bit (hash >> 60) for each
  // entry of the chain. The bucket index uses the hash's low bits, so the top four are
  // independent of it. Absent keys with a clear bit cost no node loads.
  static constexpr int kTagShift = 48;
  static constexpr uintptr_t kPtrMask = (uintptr_t{1} << kTagShift) - 1;
  static_assert(sizeof(uintptr_t) == 8, "Dict's bucket words need 64-bit pointers");

  static uintptr_t tag_of(uint64_t h) { return uintptr_t{1} << (kTagShift + (h >> 60)); }
  static Entry* head_of(uintptr_t b) { return reinterpret_cast<Entry*>(b & kPtrMask); }

  // Links e at the front of bucket word `b`'s chain and adds its tag.
  static void push_front(uintptr_t& b, Entry* e, uint64_t h) {
    const auto p = reinterpret_cast<uintptr_t>(e);
    HOTKV_ASSERT((p & ~kPtrMask) == 0);
    e->next = head_of(b);
    b = p | (b & ~kPtrMask) | tag_of(h);
  }

  // Recomputes bucket i's filter from its chain (after an erase).
  void retag(size_t i) {
    uintptr_t tags = 0;
    for (const Entry* e = head_of(buckets_[i]); e != nullptr; e = e->next) {
      tags |= tag_of(hash_of(e));
    }
    buckets_[i] = (buckets_[i] & kPtrMask) | tags;
  }

  Entry* find_in_bucket(std::string_view key, uint64_t h) const {
    if (bucket_count_ == 0) {
      return nullptr;
    }
    const uintptr_t b = buckets_[h & mask()];
    if ((b & tag_of(h)) == 0) {
      return nullptr;
    }
    for (Entry* e = head_of(b); e != nullptr; e = e->next) {
      if (same_key(e, key)) {
        return e;
      }
    }
    return nullptr;
  }

  // REQUIRES: no entry with this key exists. Grows the table when the load passes kMaxLoad.
  Entry* link_new(std::string_view key, V value, uint64_t h) {
    HOTKV_ASSERT(key.size() <= UINT32_MAX);
    if (bucket_count_ == 0) {
      resize(kMinBuckets);
    }
    const size_t b = h & mask();
    Entry* e = new_entry(key, std::move(value));
    push_front(buckets_[b], e, h);
    ++size_;
    key_bytes_ += key.size();
    if (size_ > bucket_count_ * kMaxLoad) {
      resize(bucket_count_ * 2);
    }
    return e;
  }

  // Shrinks when the load drops below 1/8, straight to a size with load about 1/2..1/4, so a
  // following insert burst does not immediately grow again (amortised O(1) either way).
  void maybe_shrink() {
    if (bucket_count_ > kMinBuckets && size_ * 8 < bucket_count_) {
      size_t target = std::bit_ceil(size_ * 2);
      if (target < kMinBuckets) {
        target = kMinBuckets;
      }
      resize(target);
    }
  }

  // Relinks every entry into a fresh array of `count` buckets (a power of two), all at once:
  // scan()'s guarantee relies on there being exactly one table between two calls.
  void resize(size_t count) {
    auto fresh = std::make_unique<uintptr_t[]>(count);
    const uint64_t new_mask = static_cast<uint64_t>(count) - 1;
    for (size_t b = 0; b < bucket_count_; ++b) {
      Entry* e = head_of(buckets_[b]);
      while (e != nullptr) {
        Entry* next = e->next;
        const uint64_t h = hash_of(e);
        push_front(fresh[h & new_mask], e, h);
        e = next;
      }
    }
    buckets_ = std::move(fresh);
    bucket_count_ = count;
    random_slots_ = kChainSlots;
  }

  void free_entries() {
    for (size_t b = 0; b < bucket_count_; ++b) {
      Entry* e = head_of(buckets_[b]);
      while (e != nullptr) {
        Entry* next = e->next;
        free_entry(e);
        e = next;
      }
      buckets_[b] = 0;
    }
  }

  void steal(Dict& other) {
    buckets_ = std::move(other.buckets_);
    bucket_count_ = std::exchange(other.bucket_count_, 0);
    size_ = std::exchange(other.size_, 0);
    key_bytes_ = std::exchange(other.key_bytes_, 0);
    random_slots_ = std::exchange(other.random_slots_, kChainSlots);
  }

  std::unique_ptr<uintptr_t[]> buckets_;  // bucket words: head pointer | filter
  size_t bucket_count_ = 0;
  size_t size_ = 0;
  size_t key_bytes_ = 0;  // the sum of the key lengths, for memory_bytes()
  // random_entry's slot count: kChainSlots, or the longest chain it met since the last resize.
  size_t random_slots_ = kChainSlots;
};

}  // namespace hotkv
