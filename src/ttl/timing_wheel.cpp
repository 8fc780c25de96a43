// The hierarchical timing wheel's stepping, placement and bookkeeping; see timing_wheel.hpp for
// the shape and the guarantees.
//
// Times are handled as "biased" uint64: the int64 with its sign bit flipped. That keeps the
// order of all int64 values (so a deadline before 1970 or a negative start time still works)
// while letting placement use plain unsigned digit arithmetic: an entry's level is the highest
// base-64 digit in which its deadline differs from the current time.
//
// Invariants between calls (now_ is the wheel's current time):
//   * every entry in slots_ or overflow_ has deadline > now_; every due_/late_ entry <= now_;
//   * an entry at level k shares all digits above k with now_ and its digit k is greater than
//     now_'s digit k, so its slot comes due strictly later and slots at or below now_'s digit
//     are always empty;
//   * consequently every level-j entry is due before any level-k entry when j < k, and all
//     levels are due before anything in overflow_.
#include "hotkv/ttl/timing_wheel.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

#include "hotkv/util/assert.hpp"

namespace hotkv {
namespace {

constexpr uint64_t kSignBit = uint64_t{1} << 63;

uint64_t to_biased(int64_t ms) { return static_cast<uint64_t>(ms) ^ kSignBit; }
int64_t from_biased(uint64_t biased) { return static_cast<int64_t>(biased ^ kSignBit); }

// Orders late_ as a min-heap on deadline (std heap functions build max-heaps).
constexpr auto kLaterDeadline = [](const auto* a, const auto* b) {
  return a->deadline_ms > b->deadline_ms;
};

}  // namespace

void TimingWheel::List::push_back(Node* n) {
  n->next = nullptr;
  if (tail != nullptr) {
    tail->next = n;
  } else {
    head = n;
  }
  tail = n;
  ++count;
}

TimingWheel::Node* TimingWheel::List::pop_front() {
  Node* n = head;
  if (n == nullptr) {
    return nullptr;
  }
  head = n->next;
  if (head == nullptr) {
    tail = nullptr;
  }
  --count;
  n->next = nullptr;
  return n;
}

void TimingWheel::List::splice_back(List& other) {
  if (other.head == nullptr) {
    return;
  }
  if (tail != nullptr) {
    tail->next = other.head;
  } else {
    head = other.head;
  }
  tail = other.tail;
  count += other.count;
  other = List{};
}

TimingWheel::TimingWheel(int64_t now_ms) : now_(to_biased(now_ms)) {}

TimingWheel::~TimingWheel() { free_all(); }

TimingWheel::TimingWheel(TimingWheel&& other) noexcept : now_(other.now_) { steal(other); }

TimingWheel& TimingWheel::operator=(TimingWheel&& other) noexcept {
  if (this != &other) {
    free_all();
    steal(other);
  }
  return *this;
}

void TimingWheel::steal(TimingWheel& other) {
  now_ = other.now_;
  slots_ = std::exchange(other.slots_, {});
  occupied_ = std::exchange(other.occupied_, {});
  overflow_ = std::exchange(other.overflow_, {});
  overflow_min_ = other.overflow_min_;
  due_ = std::exchange(other.due_, {});
  late_ = std::exchange(other.late_, {});
  size_ = std::exchange(other.size_, 0);
}

TimingWheel::Node* TimingWheel::Node::make(std::initializer_list<std::string_view> key_parts,
                                           int64_t deadline_ms) {
  size_t size = 0;
  for (std::string_view part : key_parts) {
    size += part.size();
  }
  void* memory = ::operator new(sizeof(Node) + size);
  auto* n = new (memory) Node{nullptr, deadline_ms, size};
  char* out = reinterpret_cast<char*>(n + 1);
  for (std::string_view part : key_parts) {
    if (!part.empty()) {  // an empty view may carry a null pointer, which memcpy must not get
      std::memcpy(out, part.data(), part.size());
      out += part.size();
    }
  }
  return n;
}

void TimingWheel::Node::destroy(Node* n) {
  static_assert(std::is_trivially_destructible_v<Node>);
  ::operator delete(n);
}

void TimingWheel::schedule(std::string_view key, int64_t deadline_ms) {
  schedule({key}, deadline_ms);
}

void TimingWheel::schedule(std::initializer_list<std::string_view> key_parts, int64_t deadline_ms) {
  NodePtr n(Node::make(key_parts, deadline_ms));
  if (to_biased(deadline_ms) <= now_) {
    push_due(n.get());  // may throw (late_ growth) before taking ownership
    n.release();
  } else {
    place(n.release());
  }
  ++size_;
}

void TimingWheel::place(Node* n) {
  const uint64_t deadline = to_biased(n->deadline_ms);
  HOTKV_ASSERT(deadline > now_);
  const int highest_bit = 63 - std::countl_zero(deadline ^ now_);
  const int level = highest_bit / kSlotBits;
  if (level >= kLevels) {
    if (overflow_.count == 0 || n->deadline_ms < overflow_min_) {
      overflow_min_ = n->deadline_ms;
    }
    overflow_.push_back(n);
    return;
  }
  const auto slot = static_cast<int>((deadline >> (level * kSlotBits)) & (kSlots - 1));
  slots_[level][slot].push_back(n);
  occupied_[level] |= uint64_t{1} << slot;
}

void TimingWheel::push_due(Node* n) {
  // Entries reaching the due queue from the wheel arrive in deadline order, so the queue stays
  // sorted by appending. Only a schedule() with an already-reached deadline can be earlier
  // than the tail; those go to a min-heap that pop_due() merges with the queue.
  if (due_.tail == nullptr || due_.tail->deadline_ms <= n->deadline_ms) {
    due_.push_back(n);
    return;
  }
  late_.push_back(n);
  std::push_heap(late_.begin(), late_.end(), kLaterDeadline);
}

bool TimingWheel::next_event(uint64_t* at, int* level) const {
  for (int k = 0; k < kLevels; ++k) {
    if (occupied_[k] == 0) {
      continue;
    }
    const int shift = k * kSlotBits;
    const auto current = static_cast<int>((now_ >> shift) & (kSlots - 1));
    // By the placement invariant only slots above the current digit can be occupied.
    HOTKV_ASSERT((occupied_[k] & ((uint64_t{2} << current) - 1)) == 0);
    const auto slot = static_cast<uint64_t>(std::countr_zero(occupied_[k]));
    const int block_shift = shift + kSlotBits;
    *at = ((now_ >> block_shift) << block_shift) | (slot << shift);
    *level = k;
    return true;
  }
  if (overflow_.count > 0) {
    constexpr int kTopShift = kLevels * kSlotBits;
    *at = (to_biased(overflow_min_) >> kTopShift) << kTopShift;
    *level = kLevels;
    return true;
  }
  return false;
}

void TimingWheel::collect_until(int64_t now_ms) {
  const uint64_t target = to_biased(now_ms);
  // Each iteration handles one occupied slot (or the overflow list) and jumps time straight to
  // it, so the cost is per slot with entries, never per elapsed millisecond.
  while (now_ < target) {
    uint64_t at = 0;
    int level = 0;
    if (!next_event(&at, &level) || at > target) {
      // Nothing comes due by target. Every remaining entry still sits at the right level and
      // slot relative to target: target is before their slot's start, hence inside the same
      // higher-level block as the old time.
      now_ = target;
      return;
    }
    now_ = at;
    List pending;
    if (level == kLevels) {
      pending.splice_back(overflow_);
    } else {
      const auto slot = static_cast<int>((now_ >> (level * kSlotBits)) & (kSlots - 1));
      occupied_[level] &= ~(uint64_t{1} << slot);
      if (level == 0) {
        // A level-0 slot holds exactly one millisecond, which is now_: all of it is due.
        due_.splice_back(slots_[0][slot]);
        continue;
      }
      pending.splice_back(slots_[level][slot]);
    }
    // Cascade: entries due exactly now fire; the rest move to a lower level (or, from the
    // overflow list, possibly back to it). Their deadlines are >= now_ by construction.
    while (Node* n = pending.pop_front()) {
      if (to_biased(n->deadline_ms) <= now_) {
        push_due(n);
      } else {
        place(n);
      }
    }
  }
}

TimingWheel::NodePtr TimingWheel::pop_due(int64_t now_ms) {
  const Node* queued = due_.head;
  const Node* late = late_.empty() ? nullptr : late_.front();
  const bool take_late =
      late != nullptr && (queued == nullptr || late->deadline_ms < queued->deadline_ms);
  const Node* first = take_late ? late : queued;
  // The deadline check matters only when the clock stepped back below the wheel's time.
  if (first == nullptr || first->deadline_ms > now_ms) {
    return nullptr;
  }
  Node* n = nullptr;
  if (take_late) {
    std::pop_heap(late_.begin(), late_.end(), kLaterDeadline);
    n = late_.back();
    late_.pop_back();
  } else {
    n = due_.pop_front();
  }
  --size_;
  return NodePtr(n);
}

size_t TimingWheel::due_backlog(int64_t now_ms) const {
  size_t count = 0;
  if (due_.head != nullptr && due_.head->deadline_ms <= now_ms) {
    count += due_.count;
  }
  if (!late_.empty() && late_.front()->deadline_ms <= now_ms) {
    count += late_.size();
  }
  const uint64_t t = to_biased(now_ms);
  if (t <= now_) {
    return count;
  }
  // Not yet collected: count slots that lie wholly at or before t. A slot straddling t is left
  // out (its entries may or may not be due), so this never counts an entry that is not due.
  for (int k = 0; k < kLevels; ++k) {
    const int shift = k * kSlotBits;
    const int block_shift = shift + kSlotBits;
    const uint64_t block_start = (now_ >> block_shift) << block_shift;
    for (uint64_t bits = occupied_[k]; bits != 0; bits &= bits - 1) {
      const auto slot = static_cast<uint64_t>(std::countr_zero(bits));
      const uint64_t slot_last = block_start + (slot << shift) + ((uint64_t{1} << shift) - 1);
      if (slot_last > t) {
        break;  // later slots of this level end later still
      }
      count += slots_[k][slot].count;
    }
  }
  return count;
}

std::optional<int64_t> TimingWheel::next_deadline_hint() const {
  std::optional<int64_t> hint;
  if (due_.head != nullptr) {
    hint = due_.head->deadline_ms;
  }
  if (!late_.empty() && (!hint || late_.front()->deadline_ms < *hint)) {
    hint = late_.front()->deadline_ms;
  }
  if (hint) {
    return hint;  // anything still in the wheel is later than the current time
  }
  uint64_t at = 0;
  int level = 0;
  if (!next_event(&at, &level)) {
    return std::nullopt;
  }
  if (level == kLevels) {
    return overflow_min_;  // exact; advancing to it re-files and fires it in one call
  }
  return from_biased(at);
}

void TimingWheel::clear() {
  free_all();
  slots_ = {};
  occupied_ = {};
  overflow_ = List{};
  due_ = List{};
  late_.clear();
  late_.shrink_to_fit();
  size_ = 0;
}

void TimingWheel::free_all() {
  auto free_list = [](List& list) {
    while (Node* n = list.pop_front()) {
      Node::destroy(n);
    }
  };
  for (auto& level : slots_) {
    for (auto& slot : level) {
      free_list(slot);
    }
  }
  free_list(overflow_);
  free_list(due_);
  for (Node* n : late_) {
    Node::destroy(n);
  }
  late_.clear();
}

}  // namespace hotkv
