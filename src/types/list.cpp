// List nodes: entry encoding, room management, splits and merges, and the compression of
// interior nodes (see list.hpp).
#include "hotkv/types/list.hpp"

#include <algorithm>
#include <climits>
#include <cstring>

#include <liblzf/lzf.h>

#include "hotkv/util/assert.hpp"

namespace hotkv {

namespace {

using list_detail::decode;
using list_detail::entry_start_before;

// Typical glibc chunk header; only used to make memory_bytes() closer to RSS.
constexpr size_t kMallocOverhead = 16;
// The smallest buffer a growing node gets, so that the first few pushes do not each
// reallocate.
constexpr size_t kMinNodeBytes = 32;

// Encoded size of an entry holding `len` bytes.
size_t entry_size(size_t len) {
  size_t body = varint_size(len) + len;
  return body + varint_size(body);
}

// Writes the entry for v at p (entry_size(v.size()) bytes).
void encode(uint8_t* p, std::string_view v) {
  uint64_t len = v.size();
  size_t n = 0;
  do {
    uint8_t digit = len & 0x7f;
    len >>= 7;
    p[n++] = digit | (len != 0 ? 0x80 : 0);
  } while (len != 0);
  if (!v.empty()) {
    std::memcpy(p + n, v.data(), v.size());
  }
  // The backward length: the base-128 digits of the body size, the lowest in the entry's last
  // byte and each marked when more digits lie to its left, so a reader coming from the right
  // meets them lowest first, as a forward reader meets a varint's.
  uint64_t body = n + v.size();
  uint8_t* q = p + n + v.size() + varint_size(body);
  do {
    uint8_t digit = body & 0x7f;
    body >>= 7;
    *--q = digit | (body != 0 ? 0x80 : 0);
  } while (body != 0);
}

}  // namespace

bool List::valid_fill(int64_t v) { return v >= INT_MIN && v <= INT_MAX; }

int List::normalize_fill(int64_t v) {
  if (v < -5) {
    return -5;
  }
  if (v == 0) {
    return 1;
  }
  return v > INT_MAX ? INT_MAX : static_cast<int>(v);
}

uint32_t List::normalize_compress_depth(int64_t v) {
  return static_cast<uint32_t>(std::clamp<int64_t>(v, 0, kMaxCompressDepth));
}

List::List(int fill, int64_t compress_depth)
    : fill_(normalize_fill(fill)), depth_(normalize_compress_depth(compress_depth)) {}

std::unique_ptr<List> List::clone() const {
  auto out = std::make_unique<List>(fill_, depth_);
  out->nodes_.reserve(nodes_.size());
  for (const Node& n : nodes_) {
    Node& c = out->nodes_.emplace_back();
    if (n.packed()) {
      c.buf = n.buf;
      c.head = kPacked;
    } else {
      c.buf.assign(n.begin(), n.end());
    }
    c.count = n.count;
  }
  out->size_ = size_;
  return out;
}

// --- compression -------------------------------------------------------------------------------

namespace {

// The header of a compressed node: the byte count of its entries.
constexpr size_t kPackHeader = sizeof(uint32_t);

uint32_t packed_raw_size(const std::vector<uint8_t>& buf) {
  uint32_t raw;
  std::memcpy(&raw, buf.data(), kPackHeader);
  return raw;
}

}  // namespace

size_t List::Node::raw_bytes() const { return packed() ? packed_raw_size(buf) : live_bytes(); }

void List::pack(Node& n) {
  size_t live = n.packed() ? 0 : n.live_bytes();
  // LZF's lengths are unsigned ints; a node that large (one huge element) stays plain.
  if (live < kMinPackBytes || live > UINT32_MAX / 2) {
    return;
  }
  // Compress into a per-thread buffer bounded so that LZF gives up (returns 0) as soon as the
  // result would not save kMinPackGain bytes; only a success allocates the node's new buffer.
  thread_local std::vector<uint8_t> out;
  if (out.size() < live) {
    out.resize(live);
  }
  unsigned got = lzf_compress(n.begin(), static_cast<unsigned>(live), out.data(),
                              static_cast<unsigned>(live - kMinPackGain - 1));
  if (got == 0) {
    return;
  }
  std::vector<uint8_t> packed(kPackHeader + got);
  auto raw = static_cast<uint32_t>(live);
  std::memcpy(packed.data(), &raw, kPackHeader);
  std::memcpy(packed.data() + kPackHeader, out.data(), got);
  n.buf.swap(packed);
  n.head = kPacked;
}

void List::unpack_into(const Node& n, std::vector<uint8_t>& out) {
  uint32_t raw = packed_raw_size(n.buf);
  out.resize(raw);
  unsigned got = lzf_decompress(n.buf.data() + kPackHeader,
                                static_cast<unsigned>(n.buf.size() - kPackHeader), out.data(), raw);
  HOTKV_ASSERT(got == raw);
}

void List::unpack(Node& n) {
  if (!n.packed()) {
    return;
  }
  std::vector<uint8_t> plain;
  unpack_into(n, plain);
  n.buf.swap(plain);
  n.head = 0;
}

List::Bytes List::plain_bytes(const Node& n, std::vector<uint8_t>& scratch) {
  if (!n.packed()) {
    return {n.begin(), n.end()};
  }
  unpack_into(n, scratch);
  return {scratch.data(), scratch.data() + scratch.size()};
}

void List::repack(size_t lo, size_t hi, size_t old_nodes) {
  size_t n = nodes_.size();
  if (depth_ == 0 || n == 0) {
    return;
  }
  // Nodes only cross the boundary next to each end band: outwards by as many nodes as were
  // added (they must now be compressed), inwards when nodes went (they must now be plain).
  size_t grew = n > old_nodes ? n - old_nodes : 0;
  size_t band = std::min<size_t>(n, size_t{depth_} + grew);
  for (size_t k = 0; k < band; ++k) {
    settle_packing(k);
  }
  for (size_t k = std::max(band, n - band); k < n; ++k) {
    settle_packing(k);
  }
  for (size_t k = lo; k <= hi && k < n; ++k) {
    settle_packing(k);
  }
}

size_t List::compressed_node_count() const {
  return static_cast<size_t>(
      std::count_if(nodes_.begin(), nodes_.end(), [](const Node& n) { return n.packed(); }));
}

// --- limits ------------------------------------------------------------------------------------

size_t List::max_bytes() const {
  return fill_ < 0 ? size_t{4096} << (-fill_ - 1) : kCountFillMaxBytes;
}

size_t List::max_count() const {
  return fill_ > 0 ? static_cast<size_t>(fill_) : static_cast<size_t>(UINT32_MAX);
}

bool List::fits(const Node& n, size_t entry_bytes) const {
  // live_bytes, not raw_bytes: the ends are plain, and keeping the compressed case off this
  // test keeps it off every push.
  return n.count == 0 || (n.count < max_count() && n.live_bytes() + entry_bytes <= max_bytes());
}

bool List::mergeable(const Node& a, const Node& b) const {
  size_t count_cap = max_count() - max_count() / 4;
  size_t bytes_cap = max_bytes() - max_bytes() / 4;
  return a.count + b.count <= count_cap && a.raw_bytes() + b.raw_bytes() <= bytes_cap;
}

// --- finding entries ---------------------------------------------------------------------------

std::pair<size_t, size_t> List::locate(size_t i) const {
  if (i < size_ / 2) {
    size_t k = 0;
    while (i >= nodes_[k].count) {
      i -= nodes_[k].count;
      ++k;
    }
    return {k, i};
  }
  size_t from_end = size_ - 1 - i;
  size_t k = nodes_.size();
  while (true) {
    --k;
    if (from_end < nodes_[k].count) {
      return {k, nodes_[k].count - 1 - from_end};
    }
    from_end -= nodes_[k].count;
  }
}

const uint8_t* List::entry_at(const uint8_t* b, const uint8_t* e, size_t count, size_t j) {
  if (j <= count / 2) {
    const uint8_t* p = b;
    for (; j > 0; --j) {
      p += decode(p).size;
    }
    return p;
  }
  const uint8_t* p = e;
  for (size_t back = count - j; back > 0; --back) {
    p = entry_start_before(p);
  }
  return p;
}

std::string_view List::at(size_t i) const {
  thread_local std::vector<uint8_t> scratch;
  auto [k, j] = locate(i);
  Bytes b = plain_bytes(nodes_[k], scratch);
  return decode(entry_at(b.begin, b.end, nodes_[k].count, j)).value;
}

// --- room inside a node ------------------------------------------------------------------------

void List::reserve_tail(Node& n, size_t extra) const {
  if (n.buf.size() + extra <= n.buf.capacity()) {
    return;
  }
  // Grow by half the live bytes (amortised O(1) per byte), but never past a full node: a node
  // filled by pushes then ends with at most one entry's worth of slack.
  size_t live = n.live_bytes();
  size_t cap = max_bytes();
  // Room in front of at most half the live bytes is kept: it is what make_front_room left for
  // LPUSHes (or a little popped space they can reuse), and dropping it would make a node pushed
  // at both ends copy itself on every switch. More than that is dead and goes now.
  size_t keep = n.head <= live / 2 ? n.head : 0;
  keep = live + extra >= cap ? 0 : std::min(keep, cap - live - extra);
  size_t want = std::max({live + extra, live + live / 2, kMinNodeBytes});
  if (keep + want > cap) {
    want = std::max(live + extra, cap - keep);
  }
  std::vector<uint8_t> grown;
  grown.reserve(keep + want);
  grown.resize(keep);
  grown.insert(grown.end(), n.begin(), n.end());
  n.buf.swap(grown);
  n.head = static_cast<uint32_t>(keep);
}

void List::make_front_room(Node& n, size_t need) const {
  if (n.head >= need) {
    return;
  }
  // Leave room for half as many bytes again in front, so that a run of LPUSHes reallocates
  // geometrically rather than memmoving the node each time; capped at a full node. The room
  // stays under half the buffer, so the next pop_front does not compact it straight away.
  // Spare room at the tail is carried over for the same reason reserve_tail keeps the front.
  size_t live = n.live_bytes();
  size_t cap = max_bytes();
  size_t gap = need + live / 2;
  if (live + gap > cap) {
    gap = live + need > cap ? need : cap - live;
  }
  size_t tail = n.buf.capacity() - n.buf.size();
  tail = gap + live >= cap ? 0 : std::min(tail, cap - gap - live);
  std::vector<uint8_t> moved;
  moved.reserve(gap + live + tail);
  moved.resize(gap);
  moved.insert(moved.end(), n.begin(), n.end());
  n.buf.swap(moved);
  n.head = static_cast<uint32_t>(gap);
}

// After a removal: once the dead head is more than half the buffer, move the entries down
// (and give back the memory if most of the buffer is spare), so popped bytes are not held on
// to. Each compaction moves at most as many bytes as were popped since the last one.
void List::settle(Node& n) {
  size_t live = n.live_bytes();
  if (n.head <= live) {
    return;
  }
  if (n.buf.capacity() > 2 * live + kMinNodeBytes) {
    std::vector<uint8_t>(n.begin(), n.end()).swap(n.buf);
  } else {
    std::memmove(n.buf.data(), n.begin(), live);
    n.buf.resize(live);
  }
  n.head = 0;
}

void List::append_entry(Node& n, std::string_view v) const {
  size_t e = entry_size(v.size());
  reserve_tail(n, e);
  size_t at = n.buf.size();
  n.buf.resize(at + e);
  encode(n.buf.data() + at, v);
  ++n.count;
}

void List::prepend_entry(Node& n, std::string_view v) const {
  if (n.count == 0) {
    // A fresh node gets exactly its entry: no front room for a node that may stay alone.
    append_entry(n, v);
    return;
  }
  size_t e = entry_size(v.size());
  make_front_room(n, e);
  n.head -= static_cast<uint32_t>(e);
  encode(n.buf.data() + n.head, v);
  ++n.count;
}

void List::insert_entry(Node& n, size_t off, std::string_view v) const {
  size_t rel = off - n.head;
  if (rel == 0) {
    prepend_entry(n, v);
    return;
  }
  size_t e = entry_size(v.size());
  size_t live = n.live_bytes();
  if (n.head >= e && rel < live - rel) {
    // Nearer the front, and there is room there: shift the front part down instead.
    uint8_t* base = n.buf.data();
    std::memmove(base + n.head - e, base + n.head, rel);
    n.head -= static_cast<uint32_t>(e);
    encode(base + n.head + rel, v);
  } else {
    reserve_tail(n, e);
    off = n.head + rel;
    n.buf.insert(n.buf.begin() + static_cast<ptrdiff_t>(off), e, uint8_t{0});
    encode(n.buf.data() + off, v);
  }
  ++n.count;
}

void List::erase_bytes(Node& n, size_t off, size_t len, size_t entries) {
  size_t before = off - n.head;
  size_t after = n.buf.size() - off - len;
  uint8_t* base = n.buf.data();
  if (before < after) {
    // Move the shorter side: the front part moves up into the hole, the head advances.
    std::memmove(base + n.head + len, base + n.head, before);
    n.head += static_cast<uint32_t>(len);
  } else {
    std::memmove(base + off, base + off + len, after);
    n.buf.resize(n.buf.size() - len);
  }
  n.count -= static_cast<uint32_t>(entries);
  if (n.count == 0) {
    n.buf.clear();
    n.head = 0;
    return;
  }
  settle(n);
}

// --- nodes -------------------------------------------------------------------------------------

void List::split(size_t k, size_t j) {
  Node tail;
  {
    Node& n = nodes_[k];
    const uint8_t* at = entry_at(n, j);
    tail.buf.assign(at, n.end());
    tail.count = n.count - static_cast<uint32_t>(j);
    n.buf.resize(static_cast<size_t>(at - n.buf.data()));
    n.count = static_cast<uint32_t>(j);
  }
  nodes_.insert(nodes_.begin() + static_cast<ptrdiff_t>(k) + 1, std::move(tail));
}

void List::repair(size_t lo, size_t hi) {
  if (nodes_.empty() || lo >= nodes_.size()) {
    return;
  }
  hi = std::min(hi, nodes_.size() - 1);
  size_t w = lo;  // nodes_[lo, w) are the kept nodes so far
  for (size_t r = lo; r <= hi; ++r) {
    Node& n = nodes_[r];
    if (n.count == 0) {
      continue;
    }
    if (w > lo && mergeable(nodes_[w - 1], n)) {
      Node& into = nodes_[w - 1];
      unpack(into);
      unpack(n);
      reserve_tail(into, n.live_bytes());
      into.buf.insert(into.buf.end(), n.begin(), n.end());
      into.count += n.count;
      continue;
    }
    if (w != r) {
      nodes_[w] = std::move(n);
    }
    ++w;
  }
  nodes_.erase(nodes_.begin() + static_cast<ptrdiff_t>(w),
               nodes_.begin() + static_cast<ptrdiff_t>(hi) + 1);
}

// --- ends --------------------------------------------------------------------------------------

// The end nodes are plain whenever depth_ > 0 (and nothing is compressed at depth 0), so
// pushes and pops work on them directly. Only when a node is added or dropped at an end does
// one node cross the depth boundary, and only once the list has more than 2 * depth_ nodes
// is there an interior at all.

void List::push_front(std::string_view v) {
  if (nodes_.empty() || !fits(nodes_.front(), entry_size(v.size()))) {
    nodes_.emplace(nodes_.begin());
    if (depth_ != 0 && nodes_.size() > 2 * size_t{depth_}) {
      pack(nodes_[depth_]);  // it was the innermost plain node at the front
    }
  }
  prepend_entry(nodes_.front(), v);
  ++size_;
}

void List::push_back(std::string_view v) {
  if (nodes_.empty() || !fits(nodes_.back(), entry_size(v.size()))) {
    nodes_.emplace_back();
    if (depth_ != 0 && nodes_.size() > 2 * size_t{depth_}) {
      pack(nodes_[nodes_.size() - 1 - depth_]);
    }
  }
  append_entry(nodes_.back(), v);
  ++size_;
}

bool List::pop_front(std::string& out) {
  if (size_ == 0) {
    return false;
  }
  Node& n = nodes_.front();
  list_detail::Entry e = decode(n.begin());
  out.assign(e.value);
  erase_bytes(n, n.head, e.size, 1);
  if (n.count == 0) {
    nodes_.erase(nodes_.begin());
    if (depth_ != 0 && nodes_.size() >= depth_) {
      unpack(nodes_[depth_ - 1]);  // it moved into the plain band
    }
  }
  --size_;
  return true;
}

bool List::pop_back(std::string& out) {
  if (size_ == 0) {
    return false;
  }
  Node& n = nodes_.back();
  const uint8_t* start = entry_start_before(n.end());
  list_detail::Entry e = decode(start);
  out.assign(e.value);
  erase_bytes(n, static_cast<size_t>(start - n.buf.data()), e.size, 1);
  if (n.count == 0) {
    nodes_.pop_back();
    if (depth_ != 0 && nodes_.size() >= depth_) {
      unpack(nodes_[nodes_.size() - depth_]);
    }
  }
  --size_;
  return true;
}

// --- the middle --------------------------------------------------------------------------------

void List::set(size_t i, std::string_view v) {
  auto [k, j] = locate(i);
  size_t old_nodes = nodes_.size();
  unpack(nodes_[k]);
  Node& n = nodes_[k];
  size_t off = static_cast<size_t>(entry_at(n, j) - n.buf.data());
  size_t old = decode(n.buf.data() + off).size;
  size_t e = entry_size(v.size());
  if (n.count != 1 && n.live_bytes() - old + e > max_bytes()) {
    // The new value does not fit beside its neighbours: take it out and insert it afresh,
    // which splits the node or gives the value a node of its own (erase repacks node k).
    erase(i);
    insert(i, v);
    return;
  }
  if (e > old) {
    size_t rel = off - n.head;
    reserve_tail(n, e - old);
    off = n.head + rel;
    n.buf.insert(n.buf.begin() + static_cast<ptrdiff_t>(off + old), e - old, uint8_t{0});
  } else if (e < old) {
    n.buf.erase(n.buf.begin() + static_cast<ptrdiff_t>(off + e),
                n.buf.begin() + static_cast<ptrdiff_t>(off + old));
  }
  encode(n.buf.data() + off, v);
  size_t lo = k == 0 ? 0 : k - 1;
  if (e < old) {
    // A node that held one large value may now be small enough to join a neighbour.
    repair(lo, k + 1);
  }
  repack(lo, k + 1, old_nodes);
}

void List::insert(size_t i, std::string_view v) {
  if (i == 0) {
    push_front(v);
    return;
  }
  if (i >= size_) {
    push_back(v);
    return;
  }
  auto [k, j] = locate(i);
  size_t old_nodes = nodes_.size();
  unpack(nodes_[k]);
  insert_unpacked(k, j, v);
  // Whatever insert_unpacked did stays within node k - 1 and the (at most three) nodes it
  // left from node k.
  repack(k == 0 ? 0 : k - 1, k + 3, old_nodes);
}

void List::insert_unpacked(size_t k, size_t j, std::string_view v) {
  size_t e = entry_size(v.size());
  ++size_;
  if (fits(nodes_[k], e)) {
    Node& n = nodes_[k];
    insert_entry(n, static_cast<size_t>(entry_at(n, j) - n.buf.data()), v);
    return;
  }
  if (j == 0) {
    // Between two nodes: the previous one's tail is as good a place as this one's head.
    if (k > 0 && nodes_[k - 1].count < max_count() &&
        nodes_[k - 1].raw_bytes() + e <= max_bytes()) {  // fits(), for a node maybe compressed
      unpack(nodes_[k - 1]);
      append_entry(nodes_[k - 1], v);
      return;
    }
    nodes_.emplace(nodes_.begin() + static_cast<ptrdiff_t>(k));
    append_entry(nodes_[k], v);
    return;
  }
  // Inside a full node. A value that can share a node is inserted into one of its halves
  // after splitting it in the middle: both halves are left half full, so a run of inserts in
  // one place fills them up instead of leaving a trail of nearly empty nodes (the B-tree
  // argument). A value too large for that gets a node of its own at its place.
  size_t t = k;
  size_t pos = j;
  if (e <= max_bytes() / 2) {
    size_t mid = nodes_[k].count / 2;
    split(k, mid);
    if (j > mid) {
      t = k + 1;
      pos = j - mid;
    }
    if (fits(nodes_[t], e)) {
      Node& n = nodes_[t];
      insert_entry(n, static_cast<size_t>(entry_at(n, pos) - n.buf.data()), v);
      return;
    }
  }
  if (pos == nodes_[t].count) {
    ++t;
  } else if (pos > 0) {
    split(t, pos);
    ++t;
  }
  nodes_.emplace(nodes_.begin() + static_cast<ptrdiff_t>(t));
  append_entry(nodes_[t], v);
}

void List::erase(size_t i) {
  auto [k, j] = locate(i);
  size_t old_nodes = nodes_.size();
  unpack(nodes_[k]);
  Node& n = nodes_[k];
  const uint8_t* p = entry_at(n, j);
  erase_bytes(n, static_cast<size_t>(p - n.buf.data()), decode(p).size, 1);
  --size_;
  size_t lo = k == 0 ? 0 : k - 1;
  repair(lo, k + 1);
  repack(lo, k + 1, old_nodes);
}

void List::erase_range(size_t first, size_t count) {
  if (count == 0) {
    return;
  }
  if (count == size_) {
    clear();
    return;
  }
  auto [k, j] = locate(first);
  size_t old_nodes = nodes_.size();
  size_t left = count;
  size_t lo = k == 0 ? 0 : k - 1;
  // The first node, if the range starts inside it or ends before its end.
  if (j > 0 || left < nodes_[k].count) {
    unpack(nodes_[k]);
    Node& n = nodes_[k];
    size_t take = std::min<size_t>(left, n.count - j);
    const uint8_t* start = entry_at(n, j);
    const uint8_t* stop = start;
    for (size_t t = 0; t < take; ++t) {
      stop += decode(stop).size;
    }
    erase_bytes(n, static_cast<size_t>(start - n.buf.data()), static_cast<size_t>(stop - start),
                take);
    left -= take;
    ++k;
  }
  // Whole nodes, dropped without looking inside.
  size_t whole_end = k;
  while (left > 0 && nodes_[whole_end].count <= left) {
    left -= nodes_[whole_end].count;
    ++whole_end;
  }
  nodes_.erase(nodes_.begin() + static_cast<ptrdiff_t>(k),
               nodes_.begin() + static_cast<ptrdiff_t>(whole_end));
  // The front of the last node.
  if (left > 0) {
    unpack(nodes_[k]);
    Node& n = nodes_[k];
    const uint8_t* stop = n.begin();
    for (size_t t = 0; t < left; ++t) {
      stop += decode(stop).size;
    }
    erase_bytes(n, n.head, static_cast<size_t>(stop - n.begin()), left);
  }
  size_ -= count;
  repair(lo, k + 1);
  repack(lo, k + 1, old_nodes);
}

void List::trim(size_t start, size_t stop) {
  erase_range(stop + 1, size_ - stop - 1);
  erase_range(0, start);
}

void List::clear() {
  std::vector<Node>().swap(nodes_);
  size_ = 0;
}

size_t List::filter(Node& n, std::string_view v, size_t skip, size_t limit) {
  uint8_t* base = n.buf.data();
  size_t r = n.head;
  size_t w = n.head;
  size_t end = n.buf.size();
  size_t seen = 0;
  size_t removed = 0;
  while (r < end) {
    if (removed == limit) {
      // Nothing more to drop here: slide the rest down in one go.
      std::memmove(base + w, base + r, end - r);
      w += end - r;
      break;
    }
    list_detail::Entry e = decode(base + r);
    if (e.value == v && seen++ >= skip) {
      ++removed;
    } else {
      if (w != r) {
        std::memmove(base + w, base + r, e.size);
      }
      w += e.size;
    }
    r += e.size;
  }
  if (removed == 0) {
    return 0;
  }
  n.buf.resize(w);
  n.count -= static_cast<uint32_t>(removed);
  if (n.count == 0) {
    n.buf.clear();
    n.head = 0;
  } else {
    settle(n);
  }
  return removed;
}

size_t List::remove(std::string_view v, int64_t count) {
  // |count| without overflow at INT64_MIN; 0 means "all".
  size_t want = count == 0 ? SIZE_MAX
                           : (count > 0 ? static_cast<size_t>(count)
                                        : static_cast<size_t>(0) - static_cast<uint64_t>(count));
  size_t removed = 0;
  size_t lo = SIZE_MAX;
  size_t hi = 0;
  size_t old_nodes = nodes_.size();
  std::vector<uint8_t> scratch;
  // A compressed node is decompressed to be searched and replaces its compressed form only
  // when it holds a match; otherwise it stays as it was. Every node left plain here has a
  // match, so it lies in [lo, hi].
  auto has_match = [&](const Node& n) {
    Bytes b = plain_bytes(n, scratch);
    for (const uint8_t* p = b.begin; p < b.end;) {
      list_detail::Entry e = decode(p);
      if (e.value == v) {
        return true;
      }
      p += e.size;
    }
    return false;
  };
  auto visit = [&](size_t k, size_t skip) {
    Node& n = nodes_[k];
    if (n.packed()) {
      if (!has_match(n)) {
        return;
      }
      n.buf.swap(scratch);
      n.head = 0;
    }
    size_t got = filter(n, v, skip, want - removed);
    if (got != 0) {
      removed += got;
      lo = std::min(lo, k);
      hi = std::max(hi, k);
    }
  };
  if (count >= 0) {
    for (size_t k = 0; k < nodes_.size() && removed < want; ++k) {
      visit(k, 0);
    }
  } else {
    for (size_t k = nodes_.size(); k > 0 && removed < want; --k) {
      // From the tail: the last matches of this node go first, so count them and skip the
      // ones that remain to be kept.
      size_t matches = 0;
      Bytes b = plain_bytes(nodes_[k - 1], scratch);
      for (const uint8_t* p = b.begin; p < b.end;) {
        list_detail::Entry e = decode(p);
        matches += e.value == v ? 1 : 0;
        p += e.size;
      }
      size_t left = want - removed;
      if (matches != 0) {
        Node& n = nodes_[k - 1];
        if (n.packed()) {
          n.buf.swap(scratch);  // already decompressed for the count
          n.head = 0;
        }
        visit(k - 1, matches > left ? matches - left : 0);
      }
    }
  }
  if (removed != 0) {
    size_ -= removed;
    repair(lo == 0 ? 0 : lo - 1, hi + 1);
    repack(lo == 0 ? 0 : lo - 1, hi + 1, old_nodes);
  }
  return removed;
}

size_t List::memory_bytes() const {
  size_t bytes = sizeof(List) + nodes_.capacity() * sizeof(Node);
  for (const Node& n : nodes_) {
    bytes += n.buf.capacity() + (n.buf.capacity() != 0 ? kMallocOverhead : 0);
  }
  return bytes;
}

bool list_insert_at_pivot(List& l, bool after, std::string_view pivot, std::string_view element) {
  size_t found = l.size();
  l.for_each(0, [&](size_t i, std::string_view v) {
    if (v == pivot) {
      found = i;
      return false;
    }
    return true;
  });
  if (found == l.size()) {
    return false;
  }
  l.insert(after ? found + 1 : found, element);
  return true;
}

}  // namespace hotkv
