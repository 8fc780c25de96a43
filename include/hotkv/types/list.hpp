// List: the value behind LPUSH/RPOP/LRANGE/LINSERT...: an ordered sequence of binary-safe
// strings, kept compact the way Redis 7's quicklist keeps it.
//
// A list is a sequence of nodes; each node is one packed byte buffer holding several entries,
// so a list of small strings costs a few bytes of framing per element instead of a heap string
// and a link each. An entry is
//
//   [forward length: varint of the byte count][the bytes][backward length]
//
// where the backward length is the size of the first two parts written as the same base-128
// digits in reverse order (lowest digit last, high bit = "more digits to the left"). It can
// therefore be read from an entry's last byte backwards, which finds the last entry of a node,
// and walks a node from the tail, without scanning from the front (Redis's listpack backlen
// plays the same part).
//
// How full a node may get is the `fill` setting, with the meaning of Redis's
// list-max-listpack-size: a positive N allows at most N entries per node (and, as in Redis, at
// most kCountFillMaxBytes bytes, so that a node stays cheap to scan and to memmove); -1..-5
// allow at most 4, 8, 16, 32 or 64 KB per node. An entry too large for any node gets a node of
// its own. Nodes are therefore bounded, and finding element i costs a walk over node counts
// plus a scan inside one node.
//
// Each node keeps a head offset: popping from the front of a node only moves it (the dead
// bytes are compacted away once they are more than half the buffer), and pushing at the front
// reuses that room, so LPUSH/LPOP queues cost O(1) amortised like RPUSH/RPOP. Nodes live in a
// std::vector: a node is 32 bytes (its buffer's three pointers and two counters) and cheap to
// move, and a front insert of a whole new node shifts those only once per node's worth of
// LPUSHes. Inserting into a full node splits it in half; after erases, empty nodes go and
// neighbours that together fill at most three quarters of a node are merged.
//
// With a compress depth N > 0 (Redis's list-compress-depth), the N nodes at each end stay
// plain and every node between them is kept LZF-compressed, as long as it holds at least
// kMinPackBytes and compression saves at least kMinPackGain: long lists whose middle is only
// read now and then take less memory, while pushes and pops at the ends never meet a compressed
// node. A compressed node keeps its count, so finding element i still walks counts only; it is
// decompressed into a scratch buffer to be read, and in place to be changed, after which it is
// compressed again. The depth is fixed when the list is made (Redis reads the setting when it
// creates a list, so a CONFIG SET applies to lists made afterwards). With depth 0, or while the
// list has at most 2N nodes, no compression work happens at all.
//
// Indexes given to the methods are already normalised by the caller (0..size()-1) unless said
// otherwise. Knows nothing of RESP or of commands. Not thread-safe: a list belongs to one shard
// and only that shard's thread touches it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hotkv/util/varint.hpp"

namespace hotkv {

namespace list_detail {

// The forward length at p; returns the bytes it took.
inline size_t read_varint(const uint8_t* p, uint64_t& v) {
  v = 0;
  size_t n = 0;
  int shift = 0;
  uint8_t b;
  do {
    b = p[n++];
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    shift += 7;
  } while ((b & 0x80) != 0);
  return n;
}

// Where the entry that ends just before `end` starts, from its backward length.
inline const uint8_t* entry_start_before(const uint8_t* end) {
  uint64_t body = 0;
  size_t n = 0;
  int shift = 0;
  uint8_t b;
  do {
    b = *(end - 1 - n);
    ++n;
    body |= static_cast<uint64_t>(b & 0x7f) << shift;
    shift += 7;
  } while ((b & 0x80) != 0);
  return end - n - body;
}

// The entry that starts at p: its bytes and its whole encoded size.
struct Entry {
  std::string_view value;
  size_t size;
};

inline Entry decode(const uint8_t* p) {
  uint64_t len = 0;
  size_t header = read_varint(p, len);
  size_t body = header + len;
  return {std::string_view(reinterpret_cast<const char*>(p + header), len),
          body + varint_size(body)};
}

}  // namespace list_detail

class List {
 public:
  // Redis's default list-max-listpack-size: at most 8 KB per node.
  static constexpr int kDefaultFill = -2;
  // The byte cap on a node under a positive (count) fill; Redis's SIZE_SAFETY_LIMIT.
  static constexpr size_t kCountFillMaxBytes = 8192;

  // Whether CONFIG SET list-max-listpack-size would accept v. Redis takes any int here and
  // makes sense of it when used, so this only rejects what does not fit an int.
  static bool valid_fill(int64_t v);
  // The fill a value stands for, as Redis reads it: below -5 means -5 (64 KB, the largest
  // size class) and 0 means 1 (a node always takes at least one entry).
  static int normalize_fill(int64_t v);

  // Nodes smaller than this are never compressed, nor ones compression would shrink by less
  // than kMinPackGain bytes (Redis's MIN_COMPRESS_BYTES and MIN_COMPRESS_IMPROVE).
  static constexpr size_t kMinPackBytes = 48;
  static constexpr size_t kMinPackGain = 8;
  // The largest depth kept (Redis's bound on list-compress-depth for a list).
  static constexpr int64_t kMaxCompressDepth = 65535;

  // The compress depth a list-compress-depth value stands for: negative means 0 and the
  // largest is kMaxCompressDepth.
  static uint32_t normalize_compress_depth(int64_t v);

  // An empty list whose nodes are bounded by `fill` (normalised as above) and whose interior
  // nodes are compressed beyond `compress_depth` nodes from each end (0: never).
  explicit List(int fill = kDefaultFill, int64_t compress_depth = 0);
  List(const List&) = delete;
  List& operator=(const List&) = delete;
  // Same elements, fill and compress depth; nodes are copied tight (no spare capacity) and
  // compressed ones are copied as they are.
  std::unique_ptr<List> clone() const;

  int fill() const { return fill_; }
  uint32_t compress_depth() const { return depth_; }
  // Applies to later inserts and merges; existing nodes keep their shape.
  void set_fill(int fill) { fill_ = normalize_fill(fill); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t node_count() const { return nodes_.size(); }
  // Whether node k (< node_count()) is held compressed; for tests and introspection.
  bool node_compressed(size_t k) const { return nodes_[k].packed(); }
  size_t compressed_node_count() const;

  void push_front(std::string_view v);
  void push_back(std::string_view v);
  // False (and `out` untouched) when the list is empty.
  bool pop_front(std::string& out);
  bool pop_back(std::string& out);

  // The element at i; the view is valid until the next mutation, and, when the element sits in
  // a compressed node, until the next at() on any list of this thread (it then points into a
  // per-thread scratch buffer).
  std::string_view at(size_t i) const;
  void set(size_t i, std::string_view v);
  // Inserts so that the new element ends up at index i; i == size() appends. A full node is
  // split.
  void insert(size_t i, std::string_view v);
  void erase(size_t i);
  // Erases elements [first, first + count); nodes wholly inside are dropped without decoding.
  // REQUIRES: first + count <= size().
  void erase_range(size_t first, size_t count);
  // LREM: count > 0 removes the first `count` elements equal to v, count < 0 the last |count|,
  // 0 all of them. Returns how many were removed.
  size_t remove(std::string_view v, int64_t count);
  // LTRIM: keeps only [start, stop]. REQUIRES: start <= stop < size().
  void trim(size_t start, size_t stop);
  void clear();

  // Calls bool fn(size_t index, std::string_view element) from index `from` forwards until fn
  // returns false or the list ends (nothing when from >= size()). O(1) amortised per element
  // (a compressed node is decompressed once, into a buffer of the walk's own). fn must not
  // modify the list, and a view it is given lasts until it returns.
  template <class F>
  void for_each(size_t from, F&& fn) const;
  // As for_each, but from index `from` backwards to 0 (nothing when from >= size()).
  template <class F>
  void for_each_reverse(size_t from, F&& fn) const;

  // Heap bytes held: node buffers (their capacity plus a malloc header each), the node vector
  // and the List itself.
  size_t memory_bytes() const;

 private:
  // head's value in a compressed node.
  static constexpr uint32_t kPacked = UINT32_MAX;

  // One packed buffer: bytes [0, head) are dead or spare room for front pushes, entries fill
  // [head, buf.size()). 32-bit counters are enough: a node with more than one entry is bounded
  // by its fill (at most 64 KB), and head only grows inside such nodes.
  //
  // A compressed node has head == kPacked and buf = [the entries' byte count: 4 bytes]
  // [their LZF form], allocated tight. live_bytes(), begin() and end() are for plain nodes
  // only; raw_bytes() holds for both.
  struct Node {
    std::vector<uint8_t> buf;
    uint32_t head = 0;
    uint32_t count = 0;

    bool packed() const { return head == kPacked; }
    size_t live_bytes() const { return buf.size() - head; }
    size_t raw_bytes() const;
    const uint8_t* begin() const { return buf.data() + head; }
    const uint8_t* end() const { return buf.data() + buf.size(); }
  };

  // A node's entries as plain bytes: the node's own buffer, or `scratch` holding them
  // decompressed.
  struct Bytes {
    const uint8_t* begin;
    const uint8_t* end;
  };
  static Bytes plain_bytes(const Node& n, std::vector<uint8_t>& scratch);

  // Compression of single nodes. pack leaves a node plain when it is too small or compression
  // would not save enough; unpack is a no-op on a plain node.
  static void pack(Node& n);
  static void unpack(Node& n);
  static void unpack_into(const Node& n, std::vector<uint8_t>& out);
  // Whether node k is within depth_ of either end, where nodes stay plain.
  bool near_end(size_t k) const { return k < depth_ || nodes_.size() - k <= depth_; }
  // Plain near an end, compressed in between.
  void settle_packing(size_t k) {
    if (near_end(k)) {
      unpack(nodes_[k]);
    } else {
      pack(nodes_[k]);
    }
  }
  // Restores the compression layout after a change that left nodes [lo, hi] (clamped) plain
  // or rewritten and took the node count from `old_nodes` to node_count(): besides those, only
  // nodes that crossed the depth boundary by the change in count need a look.
  void repack(size_t lo, size_t hi, size_t old_nodes);

  // Node limits under the current fill.
  size_t max_bytes() const;
  size_t max_count() const;
  // Whether a plain node may take one more entry of `entry_bytes` (an empty node takes
  // anything).
  bool fits(const Node& n, size_t entry_bytes) const;
  // Whether two neighbours are small enough to become one node. They must fill at most three
  // quarters of a node, so that an insert splitting a full node followed by an erase nearby
  // does not merge them straight back.
  bool mergeable(const Node& a, const Node& b) const;

  // (node, index within node) of element i. REQUIRES: i < size().
  std::pair<size_t, size_t> locate(size_t i) const;
  // Where entry j of a node's `count` entries in [b, e) starts, scanning from whichever end is
  // nearer; the Node form is for plain nodes.
  static const uint8_t* entry_at(const uint8_t* b, const uint8_t* e, size_t count, size_t j);
  static const uint8_t* entry_at(const Node& n, size_t j) {
    return entry_at(n.begin(), n.end(), n.count, j);
  }

  // Room management. reserve_tail may compact the head away, so callers keep offsets relative
  // to head across it.
  void reserve_tail(Node& n, size_t extra) const;
  void make_front_room(Node& n, size_t need) const;
  static void settle(Node& n);

  void append_entry(Node& n, std::string_view v) const;
  void prepend_entry(Node& n, std::string_view v) const;
  void insert_entry(Node& n, size_t off, std::string_view v) const;
  // Removes `entries` entries occupying bytes [off, off + len) of n.
  static void erase_bytes(Node& n, size_t off, size_t len, size_t entries);
  // insert() once the target (node k, entry j) is known and node k is plain.
  void insert_unpacked(size_t k, size_t j, std::string_view v);
  // Moves entries [j, count) of node k into a new node right after it.
  void split(size_t k, size_t j);
  // Drops empty nodes in [lo, hi] and merges mergeable neighbours there, in one pass. Nodes it
  // merges are decompressed; the caller repacks [lo, hi].
  void repair(size_t lo, size_t hi);
  // LREM inside one node: skips the first `skip` matches, then removes up to `limit`.
  static size_t filter(Node& n, std::string_view v, size_t skip, size_t limit);

  std::vector<Node> nodes_;
  size_t size_ = 0;
  int fill_;
  uint32_t depth_;
};

// --- templates ---------------------------------------------------------------------------------

template <class F>
void List::for_each(size_t from, F&& fn) const {
  if (from >= size_) {
    return;
  }
  std::vector<uint8_t> scratch;
  auto [k, j] = locate(from);
  size_t index = from;
  Bytes b = plain_bytes(nodes_[k], scratch);
  const uint8_t* p = entry_at(b.begin, b.end, nodes_[k].count, j);
  while (true) {
    while (p < b.end) {
      list_detail::Entry e = list_detail::decode(p);
      if (!fn(index, e.value)) {
        return;
      }
      ++index;
      p += e.size;
    }
    if (++k == nodes_.size()) {
      return;
    }
    b = plain_bytes(nodes_[k], scratch);
    p = b.begin;
  }
}

template <class F>
void List::for_each_reverse(size_t from, F&& fn) const {
  if (from >= size_) {
    return;
  }
  std::vector<uint8_t> scratch;
  auto [k, j] = locate(from);
  size_t index = from;
  Bytes b = plain_bytes(nodes_[k], scratch);
  const uint8_t* start = entry_at(b.begin, b.end, nodes_[k].count, j);
  const uint8_t* p = start + list_detail::decode(start).size;  // just past element `from`
  while (true) {
    while (p > b.begin) {
      p = list_detail::entry_start_before(p);
      if (!fn(index, list_detail::decode(p).value) || index == 0) {
        return;
      }
      --index;
    }
    if (k == 0) {
      return;
    }
    --k;
    b = plain_bytes(nodes_[k], scratch);
    p = b.end;
  }
}

// LINSERT: inserts `element` before or after the first element equal to `pivot`. Returns
// false (and changes nothing) without such an element.
bool list_insert_at_pivot(List& l, bool after, std::string_view pivot, std::string_view element);

}  // namespace hotkv
