// Stream: the value behind XADD/XREAD/XREADGROUP — an append-only log of entries ordered by
// StreamId, plus the consumer groups with their pending-entries lists (PEL).
//
// Entries are packed into nodes of up to kNodeEntries consecutive entries each, stored in one
// byte buffer per node (ids as varint deltas from the previous entry, field names shared with
// the node's first entry when they repeat; layout in stream.cpp), so a million small entries
// cost about 11 bytes each, not a heap node per field. Deleted entries are flagged in place and a node is freed when its
// last live entry goes; trimming with `~` drops whole nodes only, as Redis does.
//
// Knows nothing of RESP or of commands: the stream commands translate. Not thread-safe: a
// stream belongs to one shard and only that shard's thread touches it.
#pragma once

#include <compare>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hotkv/types/encoding_limits.hpp"

namespace hotkv {

struct StreamId {
  uint64_t ms = 0;
  uint64_t seq = 0;

  auto operator<=>(const StreamId&) const = default;
  static constexpr StreamId min() { return {0, 0}; }
  static constexpr StreamId max() { return {UINT64_MAX, UINT64_MAX}; }
  bool is_zero() const { return ms == 0 && seq == 0; }
  // "ms-seq".
  std::string to_string() const;
  void append_to(std::string& out) const;
  // The next/previous id in order; false (and unchanged) at max()/min().
  bool increment();
  bool decrement();
};

// Parses "ms-seq" or "ms" (seq then defaults to missing_seq, as XRANGE's start/end do with 0
// and UINT64_MAX). "-" and "+" parse as min()/max() when allow_special is set. Rejects signs,
// spaces and values above UINT64_MAX.
bool parse_stream_id(std::string_view s, uint64_t missing_seq, bool allow_special, StreamId& out);

// The ID argument of XADD: "*" (auto), "ms-*" (auto sequence) or an explicit "ms-seq"/"ms".
struct AddIdSpec {
  enum Kind { kAuto, kAutoSeq, kExplicit } kind = kAuto;
  StreamId id;  // kAutoSeq: id.ms is set; kExplicit: the whole id
};
bool parse_add_id(std::string_view s, AddIdSpec& out);

// One pending entry of a group: which consumer holds it, when it was last delivered and how
// many times it was delivered.
struct Consumer;
struct PendingEntry {
  Consumer* consumer = nullptr;
  int64_t delivery_time_ms = 0;
  uint64_t delivery_count = 0;
};

struct Consumer {
  std::string name;
  int64_t seen_time_ms = 0;    // last interaction (read or claim attempt)
  int64_t active_time_ms = -1; // last successful read or claim; -1 never
  std::map<StreamId, PendingEntry*> pending;  // this consumer's share of the group PEL
};

struct ConsumerGroup {
  static constexpr int64_t kEntriesReadUnknown = -1;

  StreamId last_delivered_id;
  int64_t entries_read = kEntriesReadUnknown;
  std::map<StreamId, PendingEntry> pel;
  std::map<std::string, Consumer, std::less<>> consumers;

  Consumer* find_consumer(std::string_view name);
  // Returns the consumer, creating it (seen_time = now_ms) if missing; `created` tells which.
  Consumer& get_or_create_consumer(std::string_view name, int64_t now_ms, bool* created = nullptr);
  // Removes the consumer and its pending entries from the PEL; returns how many it had
  // pending, or -1 if it did not exist.
  int64_t delete_consumer(std::string_view name);

  // Adds id to the PEL owned by `c` with the given time and count, or moves it to `c` (and
  // sets time and count) if it is already pending with another consumer.
  PendingEntry& set_pending(StreamId id, Consumer& c, int64_t delivery_time_ms,
                            uint64_t delivery_count);
  // Removes id from the PEL (XACK); false if it was not pending.
  bool ack(StreamId id);
};

class Stream {
 public:
  static constexpr size_t kNodeEntries = 100;  // Redis's stream-node-max-entries default
  static constexpr size_t kMaxNodeEntries = UINT16_MAX;  // what a node's counters can count

  Stream();
  ~Stream();
  Stream(Stream&&) noexcept;
  Stream& operator=(Stream&&) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  // A deep copy (COPY); PEL consumer pointers are rewired to the copy's consumers.
  std::unique_ptr<Stream> clone() const;

  size_t length() const { return length_; }
  StreamId last_id() const { return last_id_; }
  StreamId max_deleted_id() const { return max_deleted_id_; }
  uint64_t entries_added() const { return entries_added_; }
  // Id of the first/last live entry; nullopt when the stream is empty.
  std::optional<StreamId> first_entry_id() const;
  std::optional<StreamId> last_entry_id() const;

  // XSETID: REQUIRES id >= last_entry_id() (the command checks and replies the error).
  void set_last_id(StreamId id) { last_id_ = id; }
  void set_entries_added(uint64_t n) { entries_added_ = n; }
  void set_max_deleted_id(StreamId id) { max_deleted_id_ = id; }

  // The id XADD * would assign at now_ms: (now_ms, 0) if now_ms > last_id().ms, else
  // (last_id().ms, last_id().seq + 1). False if last_id() is max() (no id left).
  bool next_auto_id(uint64_t now_ms, StreamId& out) const;
  // For "ms-*": (ms, 0) if ms > last_id().ms, (ms, last.seq + 1) if equal; false if that is
  // not greater than last_id() or the sequence would overflow.
  bool next_seq_id(uint64_t ms, StreamId& out) const;

  // Appends an entry. REQUIRES id > last_id() and an even, non-zero number of strings
  // (field, value, field, value...). Updates last_id and entries_added. The entry opens a new
  // node when the last one is full by `limits` (stream-node-max-entries/-bytes, read at each
  // append as Redis does; a node never holds more than kMaxNodeEntries entries).
  void append(StreamId id, std::span<const std::string_view> fields_and_values,
              const EncodingLimits& limits = EncodingLimits{});
  // XDEL of one id: false if no live entry has it. Updates max_deleted_id.
  bool erase(StreamId id);
  // True and fills `out` (field, value, ...) if a live entry has this id.
  bool get(StreamId id, std::vector<std::string_view>& out) const;

  // Visits live entries with start <= id <= end in ascending order (descending when reverse),
  // at most `count` of them (0 = no limit). `fn(id, fields_and_values)` returns false to stop.
  // The string_views are valid only during the call. Returns how many were visited.
  template <class Fn>
  size_t range(StreamId start, StreamId end, bool reverse, size_t count, Fn&& fn) const;

  // Trimming (XADD/XTRIM). approx: only whole nodes are removed, so up to a node's worth more
  // entries than asked may stay. limit: at most that many entries removed (0 = no limit; only
  // meaningful with approx, as in Redis). Returns how many entries were removed. Removed
  // entries do not change max_deleted_id (Redis only tracks XDEL there).
  size_t trim_maxlen(uint64_t maxlen, bool approx, size_t limit);
  size_t trim_minid(StreamId minid, bool approx, size_t limit);

  // Consumer groups, ordered by name.
  ConsumerGroup* find_group(std::string_view name);
  // nullptr if a group with that name exists.
  ConsumerGroup* create_group(std::string_view name, StreamId last_delivered,
                              int64_t entries_read);
  bool destroy_group(std::string_view name);
  std::map<std::string, std::unique_ptr<ConsumerGroup>, std::less<>>& groups() {
    return groups_;
  }
  const std::map<std::string, std::unique_ptr<ConsumerGroup>, std::less<>>& groups() const {
    return groups_;
  }

  // Redis 7 consumer-group accounting: the entries_read a group would have after reading up
  // to `id` (-1 when it cannot be known, e.g. tombstones lie in between), and the group's lag
  // (-1 when unknown), both as XINFO GROUPS reports them.
  int64_t estimate_entries_read(StreamId id) const;
  int64_t lag(const ConsumerGroup& g) const;

  // Approximate heap bytes used (MEMORY USAGE, INFO used_memory accounting).
  size_t memory_bytes() const;
  // Number of entry nodes (XINFO STREAM radix-tree-keys/nodes).
  size_t node_count() const;

  // Iteration primitive behind range(); exposed for the commands that walk entries one at a
  // time (XAUTOCLAIM, XINFO STREAM FULL).
  class Cursor {
   public:
    bool valid() const { return valid_; }
    StreamId id() const { return id_; }
    // field, value, field, value...; valid until the cursor moves or the stream changes.
    std::span<const std::string_view> fields() const { return fields_; }
    void next();

   private:
    friend class Stream;
    // A live entry of the current node, remembered by reverse walks: ids are stored as deltas
    // from the previous entry, so a node can only be decoded front to back.
    struct Slot {
      size_t offset;
      StreamId id;
    };
    const Stream* stream_ = nullptr;
    size_t node_ = 0;
    size_t offset_ = 0;       // byte offset of the current entry inside the node
    size_t next_offset_ = 0;  // forward walks: byte offset just past the current entry
    bool reverse_ = false;
    bool valid_ = false;
    StreamId id_;
    std::vector<std::string_view> fields_;
    std::vector<Slot> slots_;  // reverse walks: live entries of the current node, in id order
    size_t index_ = 0;         // reverse walks: the current entry's position in slots_
    // Positions on the first live entry with id >= from, scanning node `node` from byte `off`
    // (whose predecessor is `prev`) and then the following nodes; invalid when there is none.
    void settle_forward(size_t node, size_t off, StreamId prev, StreamId from);
    // Positions on the last live entry with id <= to, scanning node `node` and then the
    // earlier nodes; invalid when there is none.
    void settle_backward(size_t node, StreamId to);
    // Fills fields_ for the entry at offset_ of node_.
    void load();
    void invalidate();
  };
  // Positions on the first live entry >= id (reverse: the last live entry <= id).
  Cursor seek(StreamId id, bool reverse) const;

 private:
  struct Node;
  // Index of the last node whose first id is <= id, or nodes_.size() when there is none.
  size_t node_at_or_before(StreamId id) const;
  // Shared body of trim_maxlen (by_length) and trim_minid.
  size_t trim(bool by_length, uint64_t maxlen, StreamId minid, bool approx, size_t limit);
  // Redis's streamRangeHasTombstones with end = max: an XDEL-ed id lies at or after start.
  bool has_tombstones_from(StreamId start) const;

  std::deque<std::unique_ptr<Node>> nodes_;
  size_t length_ = 0;
  StreamId last_id_;
  StreamId max_deleted_id_;
  uint64_t entries_added_ = 0;
  std::map<std::string, std::unique_ptr<ConsumerGroup>, std::less<>> groups_;
};

template <class Fn>
size_t Stream::range(StreamId start, StreamId end, bool reverse, size_t count, Fn&& fn) const {
  if (start > end) {
    return 0;
  }
  size_t visited = 0;
  for (Cursor c = seek(reverse ? end : start, reverse); c.valid(); c.next()) {
    if (reverse ? c.id() < start : c.id() > end) {
      break;
    }
    ++visited;
    if (!fn(c.id(), c.fields()) || (count != 0 && visited >= count)) {
      break;
    }
  }
  return visited;
}

}  // namespace hotkv
