#include "hotkv/shard/stream_dump.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "hotkv/persist/packed_containers.hpp"
#include "hotkv/util/numbers.hpp"

namespace hotkv {
namespace {

// Entry flags inside a stream node (t_stream.c's STREAM_ITEM_FLAG_*).
constexpr int64_t kFlagDeleted = 1;
constexpr int64_t kFlagSameFields = 2;
constexpr size_t kIdBytes = 16;

// A stream id as a radix-tree key: ms then seq, each 8 bytes big endian.
void append_raw_id(std::string& out, StreamId id) {
  for (uint64_t part : {id.ms, id.seq}) {
    for (int i = 7; i >= 0; --i) {
      out.push_back(static_cast<char>((part >> (8 * i)) & 0xff));
    }
  }
}

StreamId parse_raw_id(std::string_view b) {
  auto part = [&](size_t at) {
    uint64_t v = 0;
    for (size_t i = 0; i < 8; ++i) {
      v = (v << 8) | static_cast<unsigned char>(b[at + i]);
    }
    return v;
  };
  return {part(0), part(8)};
}

void append_id(std::string& out, StreamId id) {
  rdb_append_length(out, id.ms);
  rdb_append_length(out, id.seq);
}

bool read_id(RdbReader& in, StreamId& id) {
  return in.read_length(id.ms) && in.read_length(id.seq);
}

// The field names of an entry (every other string, from the first).
bool same_fields(std::span<const std::string_view> fv, const std::vector<std::string>& master) {
  if (fv.size() != 2 * master.size()) {
    return false;
  }
  for (size_t i = 0; i < master.size(); ++i) {
    if (fv[2 * i] != master[i]) {
      return false;
    }
  }
  return true;
}

// One node: the master entry (live count, deleted count, the master's field names, a 0),
// then each entry as flags, id deltas from the master, its fields or only its values when
// they share the master's names, and the count of its own items (for walking backwards).
std::string node_listpack(const std::vector<StreamId>& ids,
                          const std::vector<std::vector<std::string>>& entries) {
  ListpackWriter lp;
  const StreamId master = ids.front();
  std::vector<std::string> master_fields;
  for (size_t i = 0; i < entries.front().size(); i += 2) {
    master_fields.push_back(entries.front()[i]);
  }
  lp.add_integer(static_cast<int64_t>(ids.size()));
  lp.add_integer(0);
  lp.add_integer(static_cast<int64_t>(master_fields.size()));
  for (const std::string& f : master_fields) {
    lp.add(f);
  }
  lp.add_integer(0);
  std::vector<std::string_view> fv;
  for (size_t e = 0; e < ids.size(); ++e) {
    fv.assign(entries[e].begin(), entries[e].end());
    const bool same = same_fields(fv, master_fields);
    const auto fields = static_cast<int64_t>(fv.size() / 2);
    lp.add_integer(same ? kFlagSameFields : 0);
    // Deltas wrap as unsigned 64-bit numbers (a later ms may have a smaller seq).
    lp.add_integer(static_cast<int64_t>(ids[e].ms - master.ms));
    lp.add_integer(static_cast<int64_t>(ids[e].seq - master.seq));
    if (same) {
      for (size_t i = 1; i < fv.size(); i += 2) {
        lp.add(fv[i]);
      }
    } else {
      lp.add_integer(fields);
      for (std::string_view s : fv) {
        lp.add(s);
      }
    }
    lp.add_integer(same ? fields + 3 : 2 * fields + 4);
  }
  return lp.finish();
}

// Bytes an entry takes in a node, near enough to bound a node's size: each string with its
// encoding and back-length, plus the flags, id deltas, field count and item count.
size_t entry_bytes(std::span<const std::string_view> fv) {
  size_t n = 4 * 3;
  for (std::string_view s : fv) {
    n += s.size() + 10;
  }
  return n;
}

void append_nodes(std::string& out, const Stream& s, const EncodingLimits& limits) {
  // Nodes are cut as XADD cuts them: at stream-node-max-entries entries or when the next
  // entry would pass stream-node-max-bytes (0 means no bound for either). The byte cap keeps
  // a node's listpack far below the 4 GB its 32-bit size can say.
  constexpr size_t kNodeBytesCap = size_t{1} << 30;
  const size_t max_entries =
      limits.stream_node_max_entries == 0
          ? Stream::kMaxNodeEntries
          : std::min(limits.stream_node_max_entries, Stream::kMaxNodeEntries);
  const size_t max_bytes = limits.stream_node_max_bytes == 0
                               ? kNodeBytesCap
                               : std::min(limits.stream_node_max_bytes, kNodeBytesCap);
  size_t node_bytes = 0;
  std::vector<std::string> nodes;  // key, listpack, key, listpack...
  std::vector<StreamId> ids;
  std::vector<std::vector<std::string>> entries;
  auto flush = [&] {
    if (ids.empty()) {
      return;
    }
    std::string key;
    append_raw_id(key, ids.front());
    nodes.push_back(std::move(key));
    nodes.push_back(node_listpack(ids, entries));
    ids.clear();
    entries.clear();
  };
  for (Stream::Cursor c = s.seek(StreamId::min(), false); c.valid(); c.next()) {
    const size_t bytes = entry_bytes(c.fields());
    if (!ids.empty() && (ids.size() >= max_entries || node_bytes + bytes > max_bytes)) {
      flush();
      node_bytes = 0;
    }
    ids.push_back(c.id());
    entries.emplace_back(c.fields().begin(), c.fields().end());
    node_bytes += bytes;
  }
  flush();
  rdb_append_length(out, nodes.size() / 2);
  for (const std::string& n : nodes) {
    rdb_append_string(out, n);
  }
}

std::optional<int64_t> int_item(const std::vector<std::string>& items, size_t& i) {
  if (i >= items.size()) {
    return std::nullopt;
  }
  return parse_int64(items[i++]);
}

// Appends the live entries of one node to `s`, in order after everything before them.
bool read_node(std::string_view key, std::string_view lp, Stream& s, const EncodingLimits& limits,
               StreamId& previous, bool& any) {
  std::vector<std::string> items;
  if (key.size() != kIdBytes || !listpack_entries(lp, items) || items.empty()) {
    return false;
  }
  const StreamId master = parse_raw_id(key);
  size_t i = 0;
  std::optional<int64_t> live = int_item(items, i);
  std::optional<int64_t> deleted = int_item(items, i);
  std::optional<int64_t> master_count = int_item(items, i);
  // Every entry takes at least four items, so counts beyond the items are bad data (and
  // their sum cannot overflow).
  if (!live || !deleted || !master_count || *live < 0 || *deleted < 0 || *master_count < 0 ||
      static_cast<uint64_t>(*live) > items.size() ||
      static_cast<uint64_t>(*deleted) > items.size() ||
      static_cast<uint64_t>(*master_count) > items.size() - i) {
    return false;
  }
  const size_t master_fields = i;
  i += static_cast<size_t>(*master_count);
  std::optional<int64_t> terminator = int_item(items, i);
  if (terminator != 0) {
    return false;
  }
  std::vector<std::string_view> fv;
  int64_t live_seen = 0;
  for (int64_t e = 0; e < *live + *deleted; ++e) {
    std::optional<int64_t> flags = int_item(items, i);
    std::optional<int64_t> ms = int_item(items, i);
    std::optional<int64_t> seq = int_item(items, i);
    if (!flags || !ms || !seq) {
      return false;
    }
    const StreamId id{master.ms + static_cast<uint64_t>(*ms),
                      master.seq + static_cast<uint64_t>(*seq)};
    fv.clear();
    int64_t fields = *master_count;
    if ((*flags & kFlagSameFields) != 0) {
      if (static_cast<uint64_t>(fields) > items.size() - i) {
        return false;
      }
      for (int64_t f = 0; f < fields; ++f) {
        fv.push_back(items[master_fields + f]);
        fv.push_back(items[i++]);
      }
    } else {
      std::optional<int64_t> n = int_item(items, i);
      if (!n || *n < 0 || static_cast<uint64_t>(*n) > (items.size() - i) / 2) {
        return false;
      }
      fields = *n;
      fv.assign(items.begin() + static_cast<std::ptrdiff_t>(i),
                items.begin() + static_cast<std::ptrdiff_t>(i + 2 * fields));
      i += static_cast<size_t>(2 * fields);
    }
    std::optional<int64_t> item_count = int_item(items, i);
    const int64_t expected = (*flags & kFlagSameFields) != 0 ? fields + 3 : 2 * fields + 4;
    if (item_count != expected || fields == 0) {
      return false;
    }
    if ((*flags & kFlagDeleted) != 0) {
      continue;
    }
    if (any && id <= previous) {
      return false;  // out of order, within a node or across nodes
    }
    if (id.is_zero()) {
      return false;  // 0-0 is never an entry id
    }
    s.append(id, fv, limits);
    previous = id;
    any = true;
    ++live_seen;
  }
  return i == items.size() && live_seen == *live;
}

}  // namespace

void append_stream_body(std::string& out, const Stream& s, const EncodingLimits& limits) {
  append_nodes(out, s, limits);
  rdb_append_length(out, s.length());
  append_id(out, s.last_id());
  append_id(out, s.first_entry_id().value_or(StreamId::min()));
  append_id(out, s.max_deleted_id());
  rdb_append_length(out, s.entries_added());
  rdb_append_length(out, s.groups().size());
  for (const auto& [name, g] : s.groups()) {
    rdb_append_string(out, name);
    append_id(out, g->last_delivered_id);
    // -1 (unknown) travels as the 64-bit length 2^64 - 1, as Redis writes it.
    rdb_append_length(out, static_cast<uint64_t>(g->entries_read));
    rdb_append_length(out, g->pel.size());
    for (const auto& [id, pe] : g->pel) {
      append_raw_id(out, id);
      rdb_append_millis(out, pe.delivery_time_ms);
      rdb_append_length(out, pe.delivery_count);
    }
    rdb_append_length(out, g->consumers.size());
    for (const auto& [cname, c] : g->consumers) {
      rdb_append_string(out, cname);
      rdb_append_millis(out, c.seen_time_ms);
      rdb_append_length(out, c.pending.size());
      for (const auto& [id, pe] : c.pending) {
        append_raw_id(out, id);
      }
    }
  }
}

std::unique_ptr<Stream> read_stream_body(RdbReader& in, bool legacy, const EncodingLimits& limits) {
  auto s = std::make_unique<Stream>();
  uint64_t nodes = 0;
  if (!in.read_length(nodes)) {
    return nullptr;
  }
  std::string key;
  std::string lp;
  StreamId previous;
  bool any = false;
  for (uint64_t n = 0; n < nodes; ++n) {
    if (!in.read_string(key) || !in.read_string(lp) ||
        !read_node(key, lp, *s, limits, previous, any)) {
      return nullptr;
    }
  }
  uint64_t length = 0;
  StreamId last;
  StreamId first;
  StreamId max_deleted;
  uint64_t added = 0;
  if (!in.read_length(length) || !read_id(in, last) || length != s->length() ||
      (any && last < previous)) {
    return nullptr;
  }
  if (legacy) {
    added = length;
  } else if (!read_id(in, first) || !read_id(in, max_deleted) || !in.read_length(added) ||
             added < length) {
    return nullptr;  // every live entry was added once
  }
  s->set_last_id(last);
  s->set_max_deleted_id(max_deleted);
  s->set_entries_added(added);

  uint64_t groups = 0;
  if (!in.read_length(groups)) {
    return nullptr;
  }
  std::string name;
  for (uint64_t g = 0; g < groups; ++g) {
    StreamId delivered;
    uint64_t entries_read = 0;
    if (!in.read_string(name) || !read_id(in, delivered) ||
        (!legacy && !in.read_length(entries_read))) {
      return nullptr;
    }
    const int64_t read =
        legacy ? s->estimate_entries_read(delivered) : static_cast<int64_t>(entries_read);
    if (read < ConsumerGroup::kEntriesReadUnknown) {
      return nullptr;
    }
    ConsumerGroup* group = s->create_group(name, delivered, read);
    if (group == nullptr) {
      return nullptr;  // a repeated group name
    }
    // The group PEL comes first, without owners; each consumer then claims its share.
    struct Unowned {
      int64_t delivery_time_ms;
      uint64_t delivery_count;
    };
    std::map<StreamId, Unowned> unowned;
    uint64_t pel = 0;
    if (!in.read_length(pel)) {
      return nullptr;
    }
    std::string_view raw;
    for (uint64_t p = 0; p < pel; ++p) {
      Unowned u{};
      if (!in.read_raw(kIdBytes, raw) || !in.read_millis(u.delivery_time_ms) ||
          !in.read_length(u.delivery_count) || !unowned.emplace(parse_raw_id(raw), u).second) {
        return nullptr;
      }
    }
    uint64_t consumers = 0;
    if (!in.read_length(consumers)) {
      return nullptr;
    }
    for (uint64_t c = 0; c < consumers; ++c) {
      int64_t seen = 0;
      bool created = false;
      if (!in.read_string(name) || !in.read_millis(seen)) {
        return nullptr;
      }
      Consumer& consumer = group->get_or_create_consumer(name, seen, &created);
      if (!created) {
        return nullptr;
      }
      // Redis 7.0 keeps no separate last-active time; 7.2 starts it at the seen time.
      consumer.seen_time_ms = seen;
      consumer.active_time_ms = seen;
      if (!in.read_length(pel)) {
        return nullptr;
      }
      for (uint64_t p = 0; p < pel; ++p) {
        if (!in.read_raw(kIdBytes, raw)) {
          return nullptr;
        }
        auto it = unowned.find(parse_raw_id(raw));
        if (it == unowned.end()) {
          return nullptr;  // not in the group PEL, or already owned
        }
        group->set_pending(it->first, consumer, it->second.delivery_time_ms,
                           it->second.delivery_count);
        unowned.erase(it);
      }
    }
    if (!unowned.empty()) {
      return nullptr;
    }
  }
  return s;
}

}  // namespace hotkv
