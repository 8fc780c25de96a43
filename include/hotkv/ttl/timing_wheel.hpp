// TimingWheel: each shard's hierarchical timing wheel for key expiry (and later inventory
// holds), with millisecond resolution and absolute deadlines in unix-epoch milliseconds.
//
// Why a wheel: Redis finds expired keys by random sampling, which lets expired keys linger and
// burns CPU on keys that are not due. A wheel removes keys close to their deadline with work
// proportional to what expires (plus each entry cascading down at most once per level).
//
// Shape: kLevels levels of 64 slots; a slot at level k spans 64^k ms, so the levels cover 2^42
// ms (about 139 years). An entry sits at the level of the highest 6-bit digit in which its
// deadline differs from the wheel's current time, in the slot named by that digit; when time
// reaches a slot at level k > 0, its entries move down ("cascade"). Deadlines that differ above
// the top level wait in an overflow list, re-examined when time enters their top-level block.
// Per-level occupancy bitmaps let advance() jump straight to the next non-empty slot, so a
// clock jump of any size costs O(levels) per slot actually holding entries, not one step per ms.
//
// Entries whose deadline is reached move, in deadline order, into a due queue; advance() fires
// from that queue at most max_items per call, so a mass expiry spreads over several event-loop
// turns instead of stalling the shard, and due_backlog() reports what is left.
//
// Cancellation is lazy: there is no cancel API. When an entry fires, the owner checks whether
// the key still carries that deadline and ignores the entry if not.
//
// Not thread-safe: a wheel belongs to one shard and only that shard's thread may touch it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hotkv {

class TimingWheel {
 public:
  // `now_ms` is the wheel's starting time; deadlines at or before it are due at once.
  explicit TimingWheel(int64_t now_ms);
  ~TimingWheel();

  TimingWheel(const TimingWheel&) = delete;
  TimingWheel& operator=(const TimingWheel&) = delete;
  // The moved-from wheel is left empty and valid.
  TimingWheel(TimingWheel&& other) noexcept;
  TimingWheel& operator=(TimingWheel&& other) noexcept;

  // Schedules `key` to fire at `deadline_ms`. A deadline at or before the wheel's current time
  // (the latest now_ms passed to advance, or the constructor) fires at the next advance().
  // The same key may be scheduled several times; each entry fires once.
  void schedule(std::string_view key, int64_t deadline_ms);
  // The same with the key given in pieces that are joined (one allocation, no temporary).
  void schedule(std::initializer_list<std::string_view> key_parts, int64_t deadline_ms);

  // Fires entries whose deadline <= now_ms, calling on_expire(std::string_view key,
  // int64_t deadline_ms) in non-decreasing deadline order, and returns how many fired. Stops
  // after max_items calls; the rest stay due and fire first on the next call.
  // The key view is valid only during the call. on_expire may call schedule() (a deadline
  // already reached may then fire in this same call) but must not destroy the wheel.
  // A now_ms earlier than a previous call (clock stepped back) never fires anything early.
  template <class F>
  size_t advance(int64_t now_ms, size_t max_items, F&& on_expire);

  // Number of scheduled entries, including due ones not yet fired.
  size_t size() const { return size_; }

  // Entries with deadline <= now_ms that have not fired: exact when now_ms is the latest time
  // passed to advance() (or the constructor); for a later now_ms it also counts wheel slots wholly
  // due by then (an under-estimate); never counts anything when nothing is due. O(levels * 64) at
  // most.
  size_t due_backlog(int64_t now_ms) const;

  // A time at or before the earliest pending deadline, or nullopt when empty, so the owner can
  // arm one timer instead of ticking every millisecond. It may be earlier than the real
  // deadline (a higher-level slot reports its start); advancing to it then cascades and the
  // next hint is closer. O(levels).
  std::optional<int64_t> next_deadline_hint() const;

  // Drops every entry without firing it. The wheel's current time is kept.
  void clear();

 private:
  static constexpr int kLevels = 7;
  static constexpr int kSlotBits = 6;
  static constexpr int kSlots = 1 << kSlotBits;

  // One allocation per entry: the key's bytes follow the node (an entry is made for every
  // key with a TTL and every hold, so a second allocation for the key showed in profiles).
  struct Node {
    Node* next;
    int64_t deadline_ms;
    size_t key_size;

    std::string_view key() const { return {reinterpret_cast<const char*>(this + 1), key_size}; }
    static Node* make(std::initializer_list<std::string_view> key_parts, int64_t deadline_ms);
    static void destroy(Node* n);
  };
  struct NodeDeleter {
    void operator()(Node* n) const { Node::destroy(n); }
  };
  using NodePtr = std::unique_ptr<Node, NodeDeleter>;

  // Singly linked FIFO with O(1) append and splice; `count` makes splicing keep sizes exact.
  struct List {
    Node* head = nullptr;
    Node* tail = nullptr;
    size_t count = 0;

    void push_back(Node* n);
    Node* pop_front();
    void splice_back(List& other);  // moves all of `other` to the end; `other` becomes empty
  };

  // Finds the earliest time after now_ at which a slot needs processing: the start of the
  // lowest level's next occupied slot, or (level == kLevels) the start of the top-level block
  // holding the earliest overflow deadline. Returns false when the wheel holds nothing.
  bool next_event(uint64_t* at, int* level) const;
  // Moves time forward to now_ms (no-op if not later), pulling every entry with deadline <=
  // now_ms into the due queue in deadline order.
  void collect_until(int64_t now_ms);
  // Detaches and returns the earliest due entry if its deadline <= now_ms, else nullptr.
  NodePtr pop_due(int64_t now_ms);
  // Files a node with deadline > now_ at its level and slot, or in the overflow list.
  void place(Node* n);
  // Appends a node with deadline <= now_ to the due queue, keeping it in deadline order.
  void push_due(Node* n);
  void free_all();
  void steal(TimingWheel& other);

  // Current time in the biased unsigned form used for digit arithmetic (see timing_wheel.cpp).
  uint64_t now_;
  std::array<std::array<List, kSlots>, kLevels> slots_{};
  // Bit s of occupied_[k] is set iff slots_[k][s] is non-empty.
  std::array<uint64_t, kLevels> occupied_{};
  List overflow_;
  int64_t overflow_min_ = 0;  // earliest deadline in overflow_; meaningful only if non-empty
  // Due entries in non-decreasing deadline order.
  List due_;
  // Entries scheduled with a deadline already reached that is earlier than due_'s tail; kept
  // as a min-heap on deadline so firing order stays sorted.
  std::vector<Node*> late_;
  size_t size_ = 0;
};

template <class F>
size_t TimingWheel::advance(int64_t now_ms, size_t max_items, F&& on_expire) {
  collect_until(now_ms);
  size_t fired = 0;
  while (fired < max_items) {
    NodePtr n = pop_due(now_ms);
    if (n == nullptr) {
      break;
    }
    ++fired;
    on_expire(n->key(), n->deadline_ms);
  }
  return fired;
}

}  // namespace hotkv
