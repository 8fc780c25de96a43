// ZSet: the value behind the sorted-set commands (ZADD, ZRANGE, ZRANK, ZPOPMIN...). Members are
// unique byte strings, each with a double score (never NaN), ordered by (score, member bytes).
//
// Two structures share the members: a Dict (member -> node) answers ZSCORE and finds a member
// in O(1), and gives ZSCAN the same cursor guarantee SCAN has; a skiplist whose links carry
// spans (how many nodes a link jumps over) keeps the order, so insert, delete, rank and "the
// node at rank r" all cost O(log n) expected. The member bytes live once, in the Dict entry's
// key; the node points at them (Dict entries never move). docs/architecture.md says why this
// and not a counted B-tree.
//
// encoding_name() follows Redis 7's rule: "listpack" while the set has never held more than
// max_listpack_entries members nor a member longer than max_listpack_value bytes (the
// zset-max-listpack-* settings in force when the set was created; Redis's defaults 128 and 64
// otherwise), then "skiplist" for good (Redis does not convert back). The layout is the same
// either way; the name only decides the behaviours Redis's two encodings show (a listpack
// stores -0 as 0, lex ranges over mixed scores, ZSCAN in one step).
//
// Knows nothing of RESP or of commands. Not thread-safe: a zset belongs to one shard and only
// that shard's thread touches it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "hotkv/types/dict.hpp"

namespace hotkv {

// A score interval as ZRANGEBYSCORE takes it: [min, max], either end exclusive.
struct ScoreRange {
  double min = 0;
  double max = 0;
  bool min_exclusive = false;
  bool max_exclusive = false;

  bool above_min(double s) const { return min_exclusive ? s > min : s >= min; }
  bool below_max(double s) const { return max_exclusive ? s < max : s <= max; }
  bool contains(double s) const { return above_min(s) && below_max(s); }
  // True if no score can satisfy it (min > max, or equal with an exclusive end).
  bool empty() const { return min > max || (min == max && (min_exclusive || max_exclusive)); }
};

// One end of a lexicographic interval as ZRANGEBYLEX takes it: "-" (below everything), "+"
// (above everything), or a value, inclusive "[v" or exclusive "(v".
struct LexBound {
  enum Kind : uint8_t { kMinusInf, kPlusInf, kValue } kind = kMinusInf;
  std::string value;
  bool exclusive = false;
};

struct LexRange {
  LexBound min;
  LexBound max;

  bool above_min(std::string_view m) const;
  bool below_max(std::string_view m) const;
  bool contains(std::string_view m) const { return above_min(m) && below_max(m); }
  bool empty() const;
};

class ZSet {
 public:
  // Redis 7's zset-max-listpack-entries and zset-max-listpack-value defaults.
  static constexpr size_t kListpackMaxEntries = 128;
  static constexpr size_t kListpackMaxValue = 64;

  class Node;

  explicit ZSet(size_t max_listpack_entries = kListpackMaxEntries,
                size_t max_listpack_value = kListpackMaxValue);
  ~ZSet();
  ZSet(const ZSet&) = delete;
  ZSet& operator=(const ZSet&) = delete;
  std::unique_ptr<ZSet> clone() const;

  size_t size() const { return dict_.size(); }
  bool empty() const { return dict_.empty(); }
  // "listpack" or "skiplist" (see the file comment).
  const char* encoding_name() const { return skiplist_ ? "skiplist" : "listpack"; }
  bool listpack_encoded() const { return !skiplist_; }

  std::optional<double> score(std::string_view member) const;
  // Sets member's score, adding the member if absent. Returns true if it was added. If
  // `stored` is given it receives the score as kept (a listpack keeps -0 as 0).
  // REQUIRES: score is not NaN.
  bool set(std::string_view member, double score, double* stored = nullptr);
  // Removes member; false if it was absent.
  bool erase(std::string_view member);

  // 0-based rank in ascending order, or nullopt if absent.
  std::optional<size_t> rank(std::string_view member) const;
  // Ascending rank of a node of this set.
  size_t rank_of(const Node* n) const;

  const Node* first() const;  // nullptr when empty
  const Node* last() const;   // nullptr when empty
  // REQUIRES: r < size().
  const Node* at_rank(size_t r) const;

  // The lowest / highest node within the range, or nullptr if none.
  const Node* first_in(const ScoreRange& r) const;
  const Node* last_in(const ScoreRange& r) const;
  // How many members fall within the range, in O(log n).
  size_t count(const ScoreRange& r) const;

  // Lex ranges are meant for members that share one score; with mixed scores the members are
  // not in byte order and Redis's answers depend on its encoding. These reproduce them: while
  // listpack-encoded, first_in is the first member from the lowest score that is >= min (if
  // it is also <= max), last_in the first from the highest score that is <= max (if >= min),
  // and count counts from first_in while members stay <= max; once skiplist-encoded they
  // search the skiplist as if members were sorted, and count is the difference of the two
  // ends' ranks plus one, which can be zero or negative. Each first checks that the range is
  // not empty and that the last member is >= min and the first <= max.
  const Node* first_in(const LexRange& r) const;
  const Node* last_in(const LexRange& r) const;
  int64_t count(const LexRange& r) const;
  // The node ZREMRANGEBYLEX starts deleting from (it deletes while members are <= max):
  // first_in while listpack-encoded; the skiplist search without first_in's checks after.
  const Node* lex_delete_start(const LexRange& r) const;

  // Visits the members of one or more Dict buckets from `cursor`, calling fn(member, score);
  // returns the next cursor (0: done). Guarantee as Dict::scan: a member present for the
  // whole iteration is visited at least once. fn must not modify the set.
  template <class F>
  uint64_t scan(uint64_t cursor, F&& fn) const {
    return const_cast<Dict<Node*>&>(dict_).scan(
        cursor, [&](const std::string& member, Node*& n) { fn(member, node_score(n)); });
  }

  size_t memory_bytes() const;

 private:
  static double node_score(const Node* n);

  Node* make_node(int height, double score, std::string_view member);
  static void free_node(Node* n);
  int random_height();
  // Links n (score and member already set) at its place in the order.
  void link(Node* n);
  // Unlinks the node equal to (score, member) and returns it, or nullptr.
  Node* unlink(double score, std::string_view member);
  void free_all();
  // The first node whose member is >= min by a skiplist search (members assumed sorted).
  const Node* lex_seek(const LexRange& r) const;
  // The last member >= min and the first <= max, and the range itself not empty.
  bool lex_range_overlaps(const LexRange& r) const;

  Dict<Node*> dict_;
  Node* head_ = nullptr;  // a sentinel with every level; set by the constructor
  Node* tail_ = nullptr;
  int height_ = 1;
  size_t length_ = 0;  // nodes linked (the Dict may hold one more while set() links it)
  uint64_t rng_ = 0x9E3779B97F4A7C15ull;
  size_t node_bytes_ = 0;
  bool skiplist_ = false;
  size_t max_listpack_entries_;
  size_t max_listpack_value_;
};

class ZSet::Node {
 public:
  double score() const { return score_; }
  std::string_view member() const { return member_; }
  // The next node in ascending / descending order, or nullptr.
  const Node* next() const;
  const Node* prev() const { return backward_; }

 private:
  friend class ZSet;
  struct Level {
    Node* forward;
    size_t span;
  };
  Level* levels() { return reinterpret_cast<Level*>(this + 1); }
  const Level* levels() const { return reinterpret_cast<const Level*>(this + 1); }

  double score_ = 0;
  std::string_view member_;
  Node* backward_ = nullptr;
  int height_ = 0;
};

inline double ZSet::node_score(const Node* n) { return n->score_; }
inline const ZSet::Node* ZSet::Node::next() const { return levels()[0].forward; }

}  // namespace hotkv
