// Stream: entry nodes, id parsing, trimming, consumer groups and the Redis 7 lag accounting
// (see stream.hpp).
//
// Node layout. Each node owns one byte buffer holding, in order:
//
//   master:  varint field-count, then each field name as (varint length, bytes)
//   entries: one after another until the end of the buffer
//
// and each entry is
//
//   flags    1 byte: kFlagDeleted (XDEL/trim tombstone), kFlagSameFields (names are the master's)
//   id       absent for the node's first entry (it is Node::first_id); otherwise varint
//            ms - prev.ms, then varint seq - prev.seq - 1 when the ms delta is 0, else varint seq
//            (prev = the entry just before it, deleted or not)
//   body     kFlagSameFields: the values only, as (varint length, bytes), in master order;
//            otherwise varint pair-count, then field, value, field, value... as (length, bytes)
//
// The master field list is the first entry's field names, as Redis's listpack master entry,
// so the usual stream of same-shaped entries stores only the values. Deltas from the previous
// entry rather than from the node's first id keep both varints at one byte for ids that
// arrive close together, and nothing needs random access inside a node: every lookup finds
// the node by binary search on first ids and then scans at most kNodeEntries entries forward.
// Entry {"order": "123456"} costs 10 bytes (flags, two id bytes, length, six bytes).
#include "hotkv/types/stream.hpp"

#include <algorithm>
#include <charconv>
#include <utility>

#include "hotkv/util/assert.hpp"
#include "hotkv/util/varint.hpp"

namespace hotkv {

namespace {

constexpr uint8_t kFlagDeleted = 1;
constexpr uint8_t kFlagSameFields = 2;

// With stream-node-max-bytes 0 (no limit), Redis still caps a node at 1 GB.
constexpr size_t kNodeBytesCap = size_t{1} << 30;

// Redis keeps stream ids in a 128-byte buffer while parsing and rejects longer arguments.
constexpr size_t kMaxIdText = 127;

void put_varint(std::vector<uint8_t>& buf, uint64_t v) {
  while (v >= 0x80) {
    buf.push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  buf.push_back(static_cast<uint8_t>(v));
}

uint64_t get_varint(const uint8_t* data, size_t& off) {
  uint64_t v = 0;
  for (unsigned shift = 0;; shift += 7) {
    uint8_t b = data[off++];
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      return v;
    }
  }
}

void put_bytes(std::vector<uint8_t>& buf, std::string_view s) {
  put_varint(buf, s.size());
  buf.insert(buf.end(), s.begin(), s.end());
}

std::string_view get_bytes(const uint8_t* data, size_t& off) {
  size_t len = get_varint(data, off);
  std::string_view s(reinterpret_cast<const char*>(data + off), len);
  off += len;
  return s;
}

void skip_bytes(const uint8_t* data, size_t& off) {
  size_t len = get_varint(data, off);
  off += len;
}

size_t bytes_size(std::string_view s) { return varint_size(s.size()) + s.size(); }

// The id varints of `id` following `prev` (see the layout above).
size_t id_delta_size(StreamId prev, StreamId id) {
  uint64_t dms = id.ms - prev.ms;
  return varint_size(dms) + varint_size(dms == 0 ? id.seq - prev.seq - 1 : id.seq);
}

// Digits only, no sign, no spaces, not empty, at most UINT64_MAX.
bool parse_u64(std::string_view s, uint64_t& out) {
  if (s.empty()) {
    return false;
  }
  uint64_t v = 0;
  for (char ch : s) {
    if (ch < '0' || ch > '9') {
      return false;
    }
    auto digit = static_cast<uint64_t>(ch - '0');
    if (v > (UINT64_MAX - digit) / 10) {
      return false;
    }
    v = v * 10 + digit;
  }
  out = v;
  return true;
}

// Heap bytes glibc malloc uses for a request of n bytes: an 8-byte header, 16-byte rounding,
// 32 bytes at least. memory_bytes() counts these so MEMORY USAGE tracks RSS, not payloads.
size_t heap_block(size_t n) {
  if (n == 0) {
    return 0;
  }
  return std::max<size_t>(32, (n + 8 + 15) & ~size_t{15});
}

size_t string_heap(const std::string& s) {
  // libstdc++ keeps up to 15 characters inline.
  return s.capacity() > 15 ? heap_block(s.capacity() + 1) : 0;
}

// libstdc++ std::map node: colour, parent, left, right, then the value.
constexpr size_t kMapNodeHeader = 32;

}  // namespace

// ---------------------------------------------------------------------------------------------
// StreamId and id parsing.

std::string StreamId::to_string() const {
  std::string out;
  append_to(out);
  return out;
}

void StreamId::append_to(std::string& out) const {
  char buf[41];
  char* p = std::to_chars(buf, buf + 20, ms).ptr;
  *p++ = '-';
  p = std::to_chars(p, buf + sizeof(buf), seq).ptr;
  out.append(buf, p);
}

bool StreamId::increment() {
  if (seq != UINT64_MAX) {
    ++seq;
    return true;
  }
  if (ms == UINT64_MAX) {
    return false;
  }
  ++ms;
  seq = 0;
  return true;
}

bool StreamId::decrement() {
  if (seq != 0) {
    --seq;
    return true;
  }
  if (ms == 0) {
    return false;
  }
  --ms;
  seq = UINT64_MAX;
  return true;
}

bool parse_stream_id(std::string_view s, uint64_t missing_seq, bool allow_special, StreamId& out) {
  if (s == "-" || s == "+") {
    if (!allow_special) {
      return false;
    }
    out = s == "-" ? StreamId::min() : StreamId::max();
    return true;
  }
  if (s.size() > kMaxIdText) {
    return false;
  }
  StreamId id;
  size_t dash = s.find('-');
  if (!parse_u64(s.substr(0, dash), id.ms)) {
    return false;
  }
  if (dash == std::string_view::npos) {
    id.seq = missing_seq;
  } else if (!parse_u64(s.substr(dash + 1), id.seq)) {
    return false;
  }
  out = id;
  return true;
}

bool parse_add_id(std::string_view s, AddIdSpec& out) {
  if (s == "*") {
    out = AddIdSpec{AddIdSpec::kAuto, {}};
    return true;
  }
  if (s.size() > kMaxIdText) {
    return false;
  }
  size_t dash = s.find('-');
  if (dash != std::string_view::npos && s.substr(dash + 1) == "*") {
    uint64_t ms = 0;
    if (!parse_u64(s.substr(0, dash), ms)) {
      return false;
    }
    out = AddIdSpec{AddIdSpec::kAutoSeq, {ms, 0}};
    return true;
  }
  // XADD parses strictly: "-" and "+" are errors, "ms" alone means "ms-0".
  StreamId id;
  if (!parse_stream_id(s, 0, false, id)) {
    return false;
  }
  out = AddIdSpec{AddIdSpec::kExplicit, id};
  return true;
}

// ---------------------------------------------------------------------------------------------
// ConsumerGroup.

Consumer* ConsumerGroup::find_consumer(std::string_view name) {
  auto it = consumers.find(name);
  return it == consumers.end() ? nullptr : &it->second;
}

Consumer& ConsumerGroup::get_or_create_consumer(std::string_view name, int64_t now_ms,
                                                bool* created) {
  auto it = consumers.find(name);
  bool fresh = it == consumers.end();
  if (fresh) {
    it = consumers.emplace(std::string(name), Consumer{}).first;
    it->second.name = std::string(name);
    it->second.seen_time_ms = now_ms;
  }
  if (created != nullptr) {
    *created = fresh;
  }
  return it->second;
}

int64_t ConsumerGroup::delete_consumer(std::string_view name) {
  auto it = consumers.find(name);
  if (it == consumers.end()) {
    return -1;
  }
  auto pending = static_cast<int64_t>(it->second.pending.size());
  for (const auto& [id, entry] : it->second.pending) {
    pel.erase(id);
  }
  consumers.erase(it);
  return pending;
}

PendingEntry& ConsumerGroup::set_pending(StreamId id, Consumer& c, int64_t delivery_time_ms,
                                         uint64_t delivery_count) {
  auto [it, inserted] = pel.try_emplace(id);
  PendingEntry& entry = it->second;
  if (!inserted && entry.consumer != &c && entry.consumer != nullptr) {
    entry.consumer->pending.erase(id);
  }
  entry.consumer = &c;
  entry.delivery_time_ms = delivery_time_ms;
  entry.delivery_count = delivery_count;
  c.pending[id] = &entry;
  return entry;
}

bool ConsumerGroup::ack(StreamId id) {
  auto it = pel.find(id);
  if (it == pel.end()) {
    return false;
  }
  if (it->second.consumer != nullptr) {
    it->second.consumer->pending.erase(id);
  }
  pel.erase(it);
  return true;
}

// ---------------------------------------------------------------------------------------------
// Stream::Node.

struct Stream::Node {
  // One decoded entry header.
  struct Entry {
    StreamId id;
    uint8_t flags = 0;
    size_t offset = 0;  // the flags byte
    size_t end = 0;     // first byte of the next entry
  };

  StreamId first_id;           // id of the node's first entry, deleted or not
  StreamId last_id;            // id of the node's last entry, deleted or not
  uint16_t count = 0;          // entries encoded, deleted ones included
  uint16_t live = 0;           // entries not deleted; a node with none is freed
  uint32_t master_fields = 0;  // names in the master field list
  size_t entries_begin = 0;    // byte offset of the first entry
  std::vector<uint8_t> buf;

  static_assert(kMaxNodeEntries <= UINT16_MAX, "count and live are 16-bit");

  // Starts a node whose master field list is the names of `fv`.
  Node(StreamId id, std::span<const std::string_view> fv) : first_id(id), last_id(id) {
    size_t size = varint_size(fv.size() / 2);
    for (size_t i = 0; i < fv.size(); i += 2) {
      size += bytes_size(fv[i]);
    }
    buf.reserve(size + entry_size(id, fv, true));
    put_varint(buf, fv.size() / 2);
    for (size_t i = 0; i < fv.size(); i += 2) {
      put_bytes(buf, fv[i]);
    }
    master_fields = static_cast<uint32_t>(fv.size() / 2);
    entries_begin = buf.size();
  }

  bool same_fields(std::span<const std::string_view> fv) const {
    if (fv.size() / 2 != master_fields) {
      return false;
    }
    size_t off = 0;
    get_varint(buf.data(), off);
    for (size_t i = 0; i < fv.size(); i += 2) {
      if (get_bytes(buf.data(), off) != fv[i]) {
        return false;
      }
    }
    return true;
  }

  // Encoded size of entry `id` appended to this node.
  size_t entry_size(StreamId id, std::span<const std::string_view> fv, bool same) const {
    size_t size = 1;
    if (count != 0) {
      size += id_delta_size(last_id, id);
    }
    if (!same) {
      size += varint_size(fv.size() / 2);
    }
    for (size_t i = same ? 1 : 0; i < fv.size(); i += same ? 2 : 1) {
      size += bytes_size(fv[i]);
    }
    return size;
  }

  void push(StreamId id, std::span<const std::string_view> fv, bool same) {
    buf.push_back(same ? kFlagSameFields : 0);
    if (count != 0) {
      uint64_t dms = id.ms - last_id.ms;
      put_varint(buf, dms);
      put_varint(buf, dms == 0 ? id.seq - last_id.seq - 1 : id.seq);
    }
    if (same) {
      for (size_t i = 1; i < fv.size(); i += 2) {
        put_bytes(buf, fv[i]);
      }
    } else {
      put_varint(buf, fv.size() / 2);
      for (std::string_view s : fv) {
        put_bytes(buf, s);
      }
    }
    last_id = id;
    ++count;
    ++live;
  }

  // Decodes the entry at `off`; `prev` is the id of the entry before it (unused for the
  // first entry).
  Entry decode(size_t off, StreamId prev) const {
    const uint8_t* data = buf.data();
    Entry e;
    e.offset = off;
    e.flags = data[off++];
    if (e.offset == entries_begin) {
      e.id = first_id;
    } else {
      uint64_t dms = get_varint(data, off);
      uint64_t seq = get_varint(data, off);
      e.id.ms = prev.ms + dms;
      e.id.seq = dms == 0 ? prev.seq + seq + 1 : seq;
    }
    uint64_t strings = master_fields;
    if ((e.flags & kFlagSameFields) == 0) {
      strings = get_varint(data, off) * 2;
    }
    for (uint64_t i = 0; i < strings; ++i) {
      skip_bytes(data, off);
    }
    e.end = off;
    return e;
  }

  // Skips the flags and id of the entry at `off`; returns where its body starts.
  size_t body_of(size_t off) const {
    if (off == entries_begin) {
      return off + 1;
    }
    size_t p = off + 1;
    get_varint(buf.data(), p);
    get_varint(buf.data(), p);
    return p;
  }

  // field, value, field, value... of the entry at `off`, as views into buf.
  void fields(size_t off, std::vector<std::string_view>& out) const {
    const uint8_t* data = buf.data();
    out.clear();
    size_t body = body_of(off);
    if ((data[off] & kFlagSameFields) != 0) {
      size_t names = 0;
      get_varint(data, names);
      out.reserve(master_fields * 2);
      for (uint32_t i = 0; i < master_fields; ++i) {
        out.push_back(get_bytes(data, names));
        out.push_back(get_bytes(data, body));
      }
      return;
    }
    uint64_t pairs = get_varint(data, body);
    out.reserve(pairs * 2);
    for (uint64_t i = 0; i < pairs * 2; ++i) {
      out.push_back(get_bytes(data, body));
    }
  }

  // Calls fn(const Entry&) for every entry, deleted ones included, until it returns false.
  template <class Fn>
  void scan(Fn&& fn) const {
    StreamId prev = first_id;
    for (size_t off = entries_begin; off < buf.size();) {
      Entry e = decode(off, prev);
      if (!fn(e)) {
        return;
      }
      prev = e.id;
      off = e.end;
    }
  }

  void mark_deleted(const Entry& e) {
    buf[e.offset] |= kFlagDeleted;
    --live;
  }

  size_t heap_bytes() const { return heap_block(sizeof(Node)) + heap_block(buf.capacity()); }
};

// ---------------------------------------------------------------------------------------------
// Stream: construction, appending, lookup.

Stream::Stream() = default;
Stream::~Stream() = default;
Stream::Stream(Stream&&) noexcept = default;
Stream& Stream::operator=(Stream&&) noexcept = default;

std::unique_ptr<Stream> Stream::clone() const {
  auto copy = std::make_unique<Stream>();
  copy->length_ = length_;
  copy->last_id_ = last_id_;
  copy->max_deleted_id_ = max_deleted_id_;
  copy->entries_added_ = entries_added_;
  for (const auto& node : nodes_) {
    copy->nodes_.push_back(std::make_unique<Node>(*node));
  }
  for (const auto& [name, group] : groups_) {
    auto g = std::make_unique<ConsumerGroup>();
    g->last_delivered_id = group->last_delivered_id;
    g->entries_read = group->entries_read;
    for (const auto& [cname, consumer] : group->consumers) {
      Consumer& c = g->consumers[cname];
      c.name = consumer.name;
      c.seen_time_ms = consumer.seen_time_ms;
      c.active_time_ms = consumer.active_time_ms;
    }
    for (const auto& [id, entry] : group->pel) {
      PendingEntry& e = g->pel[id];
      e.delivery_time_ms = entry.delivery_time_ms;
      e.delivery_count = entry.delivery_count;
      if (entry.consumer != nullptr) {
        Consumer* owner = g->find_consumer(entry.consumer->name);
        HOTKV_ASSERT(owner != nullptr);
        e.consumer = owner;
        owner->pending[id] = &e;
      }
    }
    copy->groups_.emplace(name, std::move(g));
  }
  return copy;
}

std::optional<StreamId> Stream::first_entry_id() const {
  std::optional<StreamId> found;
  if (!nodes_.empty()) {
    nodes_.front()->scan([&](const Node::Entry& e) {
      if ((e.flags & kFlagDeleted) == 0) {
        found = e.id;
        return false;
      }
      return true;
    });
  }
  return found;
}

std::optional<StreamId> Stream::last_entry_id() const {
  std::optional<StreamId> found;
  if (!nodes_.empty()) {
    nodes_.back()->scan([&](const Node::Entry& e) {
      if ((e.flags & kFlagDeleted) == 0) {
        found = e.id;
      }
      return true;
    });
  }
  return found;
}

// Redis's streamNextID, except that it refuses instead of wrapping to 0-0 at the last id (XADD
// checks that first and replies "The stream has exhausted the last possible ID").
bool Stream::next_auto_id(uint64_t now_ms, StreamId& out) const {
  if (now_ms > last_id_.ms) {
    out = {now_ms, 0};
    return true;
  }
  StreamId id = last_id_;
  if (!id.increment()) {
    return false;
  }
  out = id;
  return true;
}

// Redis's "ms-*" rule in streamAppendItem: the same ms as the last id continues its sequence
// (an error at UINT64_MAX), a larger ms starts at 0, a smaller one is not greater.
bool Stream::next_seq_id(uint64_t ms, StreamId& out) const {
  StreamId id{ms, 0};
  if (ms == last_id_.ms) {
    if (last_id_.seq == UINT64_MAX) {
      return false;
    }
    id.seq = last_id_.seq + 1;
  }
  if (id <= last_id_) {
    return false;
  }
  out = id;
  return true;
}

void Stream::append(StreamId id, std::span<const std::string_view> fields_and_values,
                    const EncodingLimits& limits) {
  HOTKV_ASSERT(id > last_id_);
  HOTKV_ASSERT(!fields_and_values.empty() && fields_and_values.size() % 2 == 0);
  // stream-node-max-bytes: an entry that would push a node past it opens a new node, so one
  // huge entry never makes later small ones share a giant buffer.
  size_t max_entries = limits.stream_node_max_entries == 0
                           ? kMaxNodeEntries
                           : std::min(limits.stream_node_max_entries, kMaxNodeEntries);
  size_t max_bytes = limits.stream_node_max_bytes == 0
                         ? kNodeBytesCap
                         : std::min(limits.stream_node_max_bytes, kNodeBytesCap);
  Node* node = nodes_.empty() ? nullptr : nodes_.back().get();
  bool same = false;
  if (node != nullptr) {
    bool full = node->count >= max_entries;
    if (!full) {
      same = node->same_fields(fields_and_values);
      full = node->buf.size() + node->entry_size(id, fields_and_values, same) > max_bytes;
    }
    if (full) {
      // The node is sealed: give back its growth slack, as Redis shrinks a full listpack.
      node->buf.shrink_to_fit();
      node = nullptr;
    }
  }
  if (node == nullptr) {
    nodes_.push_back(std::make_unique<Node>(id, fields_and_values));
    node = nodes_.back().get();
    same = true;
  }
  node->push(id, fields_and_values, same);
  ++length_;
  ++entries_added_;
  last_id_ = id;
}

size_t Stream::node_at_or_before(StreamId id) const {
  auto it =
      std::upper_bound(nodes_.begin(), nodes_.end(), id,
                       [](StreamId v, const std::unique_ptr<Node>& n) { return v < n->first_id; });
  if (it == nodes_.begin()) {
    return nodes_.size();
  }
  return static_cast<size_t>(it - nodes_.begin()) - 1;
}

bool Stream::erase(StreamId id) {
  size_t index = node_at_or_before(id);
  if (index == nodes_.size() || nodes_[index]->last_id < id) {
    return false;
  }
  Node& node = *nodes_[index];
  bool erased = false;
  node.scan([&](const Node::Entry& e) {
    if (e.id < id) {
      return true;
    }
    if (e.id == id && (e.flags & kFlagDeleted) == 0) {
      node.mark_deleted(e);
      erased = true;
    }
    return false;
  });
  if (!erased) {
    return false;
  }
  --length_;
  max_deleted_id_ = std::max(max_deleted_id_, id);
  if (node.live == 0) {
    nodes_.erase(nodes_.begin() + static_cast<std::ptrdiff_t>(index));
  }
  return true;
}

bool Stream::get(StreamId id, std::vector<std::string_view>& out) const {
  size_t index = node_at_or_before(id);
  if (index == nodes_.size() || nodes_[index]->last_id < id) {
    return false;
  }
  const Node& node = *nodes_[index];
  bool found = false;
  node.scan([&](const Node::Entry& e) {
    if (e.id < id) {
      return true;
    }
    if (e.id == id && (e.flags & kFlagDeleted) == 0) {
      node.fields(e.offset, out);
      found = true;
    }
    return false;
  });
  return found;
}

// ---------------------------------------------------------------------------------------------
// Trimming: Redis's streamTrim. Whole nodes go first; an exact trim then flags entries of the
// first remaining node as deleted, as Redis does inside a listpack.

size_t Stream::trim(bool by_length, uint64_t maxlen, StreamId minid, bool approx, size_t limit) {
  if (!approx) {
    limit = 0;  // Redis forbids LIMIT without `~`; exact trims always finish
  }
  size_t removed = 0;
  while (!nodes_.empty()) {
    if (by_length && length_ <= maxlen) {
      break;
    }
    Node& node = *nodes_.front();
    if (limit != 0 && removed + node.live > limit) {
      break;
    }
    bool whole = by_length ? length_ - node.live >= maxlen : node.last_id < minid;
    if (whole) {
      length_ -= node.live;
      removed += node.live;
      nodes_.pop_front();
      continue;
    }
    if (approx) {
      break;
    }
    node.scan([&](const Node::Entry& e) {
      if (by_length ? length_ <= maxlen : e.id >= minid) {
        return false;
      }
      if ((e.flags & kFlagDeleted) == 0) {
        node.mark_deleted(e);
        --length_;
        ++removed;
      }
      return true;
    });
    // MINID can take every live entry of a node whose last (deleted) entry is >= minid.
    if (node.live == 0) {
      nodes_.pop_front();
    }
    break;
  }
  return removed;
}

size_t Stream::trim_maxlen(uint64_t maxlen, bool approx, size_t limit) {
  return trim(true, maxlen, StreamId::min(), approx, limit);
}

size_t Stream::trim_minid(StreamId minid, bool approx, size_t limit) {
  return trim(false, 0, minid, approx, limit);
}

// ---------------------------------------------------------------------------------------------
// Consumer groups.

ConsumerGroup* Stream::find_group(std::string_view name) {
  auto it = groups_.find(name);
  return it == groups_.end() ? nullptr : it->second.get();
}

ConsumerGroup* Stream::create_group(std::string_view name, StreamId last_delivered,
                                    int64_t entries_read) {
  if (groups_.find(name) != groups_.end()) {
    return nullptr;
  }
  auto group = std::make_unique<ConsumerGroup>();
  group->last_delivered_id = last_delivered;
  group->entries_read = entries_read;
  ConsumerGroup* raw = group.get();
  groups_.emplace(std::string(name), std::move(group));
  return raw;
}

bool Stream::destroy_group(std::string_view name) {
  auto it = groups_.find(name);
  if (it == groups_.end()) {
    return false;
  }
  groups_.erase(it);
  return true;
}

// ---------------------------------------------------------------------------------------------
// Redis 7 lag accounting. These follow t_stream.c as of the fixes for redis#13338 (a
// tombstone after the group's last id invalidates its counter) and redis#13473 (XTRIM does not
// move max_deleted_id, so a group and the last tombstone both behind the first entry lag by
// exactly the length). Redis 7.4.1 and earlier lack these and report wrong lags in those cases.

bool Stream::has_tombstones_from(StreamId start) const {
  // streamRangeHasTombstones(s, start, NULL).
  if (length_ == 0 || max_deleted_id_.is_zero()) {
    return false;
  }
  return start <= max_deleted_id_;
}

// streamEstimateDistanceFromFirstEverEntry.
int64_t Stream::estimate_entries_read(StreamId id) const {
  auto added = static_cast<int64_t>(entries_added_);
  if (entries_added_ == 0) {
    return 0;  // nothing was ever added: every id has been read
  }
  if (length_ == 0 && id <= last_id_) {
    return added;
  }
  if (!id.is_zero() && id < max_deleted_id_) {
    return ConsumerGroup::kEntriesReadUnknown;  // a tombstone lies after id
  }
  if (id == last_id_) {
    return added;
  }
  if (id > last_id_) {
    return ConsumerGroup::kEntriesReadUnknown;  // a future id
  }
  // length_ > 0 here, so there is a first entry.
  StreamId first = *first_entry_id();
  if (max_deleted_id_.is_zero() || max_deleted_id_ < first) {
    auto length = static_cast<int64_t>(length_);
    if (id < first) {
      return added - length;
    }
    if (id == first) {
      return added - length + 1;
    }
  }
  // Somewhere inside the stream: without per-entry counters the position is unknown.
  return ConsumerGroup::kEntriesReadUnknown;
}

// streamReplyWithCGLag; -1 where Redis replies null.
int64_t Stream::lag(const ConsumerGroup& g) const {
  if (entries_added_ == 0 || length_ == 0) {
    return 0;
  }
  StreamId first = *first_entry_id();
  if (g.last_delivered_id < first && max_deleted_id_ < first) {
    return static_cast<int64_t>(length_);
  }
  auto added = static_cast<int64_t>(entries_added_);
  if (g.entries_read != ConsumerGroup::kEntriesReadUnknown &&
      !has_tombstones_from(g.last_delivered_id)) {
    return added - g.entries_read;
  }
  int64_t read = estimate_entries_read(g.last_delivered_id);
  if (read == ConsumerGroup::kEntriesReadUnknown) {
    return -1;
  }
  return added - read;
}

// ---------------------------------------------------------------------------------------------
// Accounting.

size_t Stream::memory_bytes() const {
  size_t total = heap_block(sizeof(Stream));
  // libstdc++ deque: 512-byte blocks of 64 pointers plus a map of block pointers (8 at least).
  size_t blocks = nodes_.size() / 64 + 1;
  total += blocks * heap_block(512) + heap_block(std::max<size_t>(8, blocks + 2) * sizeof(void*));
  for (const auto& node : nodes_) {
    total += node->heap_bytes();
  }
  for (const auto& [name, group] : groups_) {
    total += heap_block(kMapNodeHeader +
                        sizeof(std::pair<const std::string, std::unique_ptr<ConsumerGroup>>)) +
             string_heap(name) + heap_block(sizeof(ConsumerGroup));
    total += group->pel.size() *
             heap_block(kMapNodeHeader + sizeof(std::pair<const StreamId, PendingEntry>));
    for (const auto& [cname, consumer] : group->consumers) {
      total += heap_block(kMapNodeHeader + sizeof(std::pair<const std::string, Consumer>)) +
               string_heap(cname) + string_heap(consumer.name);
      total += consumer.pending.size() *
               heap_block(kMapNodeHeader + sizeof(std::pair<const StreamId, PendingEntry*>));
    }
  }
  return total;
}

size_t Stream::node_count() const { return nodes_.size(); }

// ---------------------------------------------------------------------------------------------
// Cursor.

Stream::Cursor Stream::seek(StreamId id, bool reverse) const {
  Cursor c;
  c.stream_ = this;
  c.reverse_ = reverse;
  size_t index = node_at_or_before(id);
  if (reverse) {
    if (index == nodes_.size()) {
      c.invalidate();  // every node starts after id
    } else {
      c.settle_backward(index, id);
    }
    return c;
  }
  if (nodes_.empty()) {
    c.invalidate();
    return c;
  }
  if (index == nodes_.size()) {
    index = 0;  // id precedes the whole stream
  }
  const Node& node = *nodes_[index];
  c.settle_forward(index, node.entries_begin, node.first_id, id);
  return c;
}

void Stream::Cursor::next() {
  if (!valid_) {
    return;
  }
  if (!reverse_) {
    settle_forward(node_, next_offset_, id_, StreamId::min());
    return;
  }
  if (index_ > 0) {
    --index_;
    offset_ = slots_[index_].offset;
    id_ = slots_[index_].id;
    load();
  } else if (node_ == 0) {
    invalidate();
  } else {
    settle_backward(node_ - 1, StreamId::max());
  }
}

void Stream::Cursor::settle_forward(size_t node, size_t off, StreamId prev, StreamId from) {
  const auto& nodes = stream_->nodes_;
  while (node < nodes.size()) {
    const Node& n = *nodes[node];
    while (off < n.buf.size()) {
      Node::Entry e = n.decode(off, prev);
      if ((e.flags & kFlagDeleted) == 0 && e.id >= from) {
        node_ = node;
        offset_ = off;
        next_offset_ = e.end;
        id_ = e.id;
        valid_ = true;
        load();
        return;
      }
      prev = e.id;
      off = e.end;
    }
    if (++node < nodes.size()) {
      off = nodes[node]->entries_begin;
      prev = nodes[node]->first_id;
    }
  }
  invalidate();
}

void Stream::Cursor::settle_backward(size_t node, StreamId to) {
  const auto& nodes = stream_->nodes_;
  for (;;) {
    slots_.clear();
    nodes[node]->scan([&](const Node::Entry& e) {
      if (e.id > to) {
        return false;
      }
      if ((e.flags & kFlagDeleted) == 0) {
        slots_.push_back({e.offset, e.id});
      }
      return true;
    });
    if (!slots_.empty()) {
      node_ = node;
      index_ = slots_.size() - 1;
      offset_ = slots_[index_].offset;
      id_ = slots_[index_].id;
      valid_ = true;
      load();
      return;
    }
    if (node == 0) {
      invalidate();
      return;
    }
    --node;
  }
}

void Stream::Cursor::load() { stream_->nodes_[node_]->fields(offset_, fields_); }

void Stream::Cursor::invalidate() {
  valid_ = false;
  fields_.clear();
  slots_.clear();
}

}  // namespace hotkv
