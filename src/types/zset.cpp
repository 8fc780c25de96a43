// ZSet's skiplist with spans (see zset.hpp). Each node has 1..kMaxHeight forward links; a link
// at level i records how many level-0 steps it jumps (its span), so walking down from the top
// level while summing spans gives a member's rank, and walking until the sum reaches r finds
// the node at rank r, both in O(log n) expected with p = 1/4 per extra level.
#include "hotkv/types/zset.hpp"

#include <cmath>
#include <new>

namespace hotkv {
namespace {

constexpr int kMaxHeight = 32;

// (score, member) order: score first, then the member's bytes (unsigned, shorter first).
bool before(double as, std::string_view am, double bs, std::string_view bm) {
  return as < bs || (as == bs && am < bm);
}

// Orders two interval ends: -1 if a < b, 0 if they are the same end, 1 if a > b.
int compare_bounds(const LexBound& a, const LexBound& b) {
  if (a.kind == b.kind && a.kind != LexBound::kValue) {
    return 0;
  }
  if (a.kind == LexBound::kMinusInf || b.kind == LexBound::kPlusInf) {
    return -1;
  }
  if (a.kind == LexBound::kPlusInf || b.kind == LexBound::kMinusInf) {
    return 1;
  }
  int c = std::string_view(a.value).compare(b.value);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

}  // namespace

bool LexRange::above_min(std::string_view m) const {
  switch (min.kind) {
    case LexBound::kMinusInf:
      return true;
    case LexBound::kPlusInf:
      return false;
    case LexBound::kValue:
      break;
  }
  return min.exclusive ? m > std::string_view(min.value) : m >= std::string_view(min.value);
}

bool LexRange::below_max(std::string_view m) const {
  switch (max.kind) {
    case LexBound::kPlusInf:
      return true;
    case LexBound::kMinusInf:
      return false;
    case LexBound::kValue:
      break;
  }
  return max.exclusive ? m < std::string_view(max.value) : m <= std::string_view(max.value);
}

bool LexRange::empty() const {
  // "-" and "+" count as exclusive ends, so "- -" and "+ +" are empty as in Redis.
  bool min_ex = min.kind != LexBound::kValue || min.exclusive;
  bool max_ex = max.kind != LexBound::kValue || max.exclusive;
  int c = compare_bounds(min, max);
  return c > 0 || (c == 0 && (min_ex || max_ex));
}

ZSet::ZSet(size_t max_listpack_entries, size_t max_listpack_value)
    : max_listpack_entries_(max_listpack_entries), max_listpack_value_(max_listpack_value) {
  head_ = make_node(kMaxHeight, 0, {});
}

ZSet::~ZSet() { free_all(); }

void ZSet::free_all() {
  Node* n = head_->levels()[0].forward;
  while (n != nullptr) {
    Node* next = n->levels()[0].forward;
    free_node(n);
    n = next;
  }
  free_node(head_);
  head_ = nullptr;
}

std::unique_ptr<ZSet> ZSet::clone() const {
  auto out = std::make_unique<ZSet>(max_listpack_entries_, max_listpack_value_);
  out->skiplist_ = skiplist_;
  for (const Node* n = first(); n != nullptr; n = n->next()) {
    out->set(n->member(), n->score());
  }
  return out;
}

ZSet::Node* ZSet::make_node(int height, double score, std::string_view member) {
  size_t bytes = sizeof(Node) + static_cast<size_t>(height) * sizeof(Node::Level);
  Node* n = new (::operator new(bytes)) Node();
  n->score_ = score;
  n->member_ = member;
  n->height_ = height;
  for (int i = 0; i < height; ++i) {
    n->levels()[i] = {nullptr, 0};
  }
  node_bytes_ += bytes;
  return n;
}

void ZSet::free_node(Node* n) {
  n->~Node();
  ::operator delete(n);
}

int ZSet::random_height() {
  int h = 1;
  while (h < kMaxHeight) {
    // xorshift64: any decent bit mixer will do, the heights only shape the lists.
    rng_ ^= rng_ << 13;
    rng_ ^= rng_ >> 7;
    rng_ ^= rng_ << 17;
    if ((rng_ & 3) != 0) {
      break;
    }
    ++h;
  }
  return h;
}

void ZSet::link(Node* n) {
  Node* update[kMaxHeight];
  size_t rank[kMaxHeight];
  Node* x = head_;
  for (int i = height_ - 1; i >= 0; --i) {
    rank[i] = i == height_ - 1 ? 0 : rank[i + 1];
    while (x->levels()[i].forward != nullptr &&
           before(x->levels()[i].forward->score_, x->levels()[i].forward->member_, n->score_,
                  n->member_)) {
      rank[i] += x->levels()[i].span;
      x = x->levels()[i].forward;
    }
    update[i] = x;
  }
  int h = n->height_;
  if (h > height_) {
    for (int i = height_; i < h; ++i) {
      rank[i] = 0;
      update[i] = head_;
      head_->levels()[i] = {nullptr, length_};
    }
    height_ = h;
  }
  for (int i = 0; i < h; ++i) {
    Node::Level& up = update[i]->levels()[i];
    n->levels()[i].forward = up.forward;
    up.forward = n;
    n->levels()[i].span = up.span - (rank[0] - rank[i]);
    up.span = rank[0] - rank[i] + 1;
  }
  for (int i = h; i < height_; ++i) {
    ++update[i]->levels()[i].span;
  }
  n->backward_ = update[0] == head_ ? nullptr : update[0];
  if (n->levels()[0].forward != nullptr) {
    n->levels()[0].forward->backward_ = n;
  } else {
    tail_ = n;
  }
  ++length_;
}

ZSet::Node* ZSet::unlink(double score, std::string_view member) {
  Node* update[kMaxHeight];
  Node* x = head_;
  for (int i = height_ - 1; i >= 0; --i) {
    while (x->levels()[i].forward != nullptr &&
           before(x->levels()[i].forward->score_, x->levels()[i].forward->member_, score, member)) {
      x = x->levels()[i].forward;
    }
    update[i] = x;
  }
  x = x->levels()[0].forward;
  if (x == nullptr || x->score_ != score || x->member_ != member) {
    return nullptr;
  }
  for (int i = 0; i < height_; ++i) {
    Node::Level& up = update[i]->levels()[i];
    if (up.forward == x) {
      up.span += x->levels()[i].span - 1;
      up.forward = x->levels()[i].forward;
    } else {
      --up.span;
    }
  }
  if (x->levels()[0].forward != nullptr) {
    x->levels()[0].forward->backward_ = x->backward_;
  } else {
    tail_ = x->backward_;
  }
  while (height_ > 1 && head_->levels()[height_ - 1].forward == nullptr) {
    --height_;
  }
  --length_;
  return x;
}

std::optional<double> ZSet::score(std::string_view member) const {
  Node* const* n = dict_.find(member);
  if (n == nullptr) {
    return std::nullopt;
  }
  return (*n)->score_;
}

bool ZSet::set(std::string_view member, double score, double* stored) {
  auto* e = dict_.find_entry(member);
  // As in Redis, a member that does not fit a listpack converts the set before it goes in.
  if (e == nullptr &&
      (dict_.size() + 1 > max_listpack_entries_ || member.size() > max_listpack_value_)) {
    skiplist_ = true;
  }
  if (!skiplist_ && score == 0) {
    score = 0.0;  // a listpack keeps -0 as the integer 0
  }
  if (stored != nullptr) {
    *stored = score;
  }
  if (e != nullptr) {
    Node* n = e->value;
    if (n->score_ == score) {
      return false;
    }
    const Node* next = n->next();
    bool stays = (n->backward_ == nullptr ||
                  before(n->backward_->score_, n->backward_->member_, score, n->member_)) &&
                 (next == nullptr || before(score, n->member_, next->score_, next->member_));
    if (stays) {
      n->score_ = score;
      return false;
    }
    Node* same = unlink(n->score_, n->member_);
    same->score_ = score;
    link(same);
    return false;
  }
  dict_.try_emplace(member);
  e = dict_.find_entry(member);
  Node* n = make_node(random_height(), score, e->key());
  e->value = n;
  link(n);
  return true;
}

bool ZSet::erase(std::string_view member) {
  auto* e = dict_.find_entry(member);
  if (e == nullptr) {
    return false;
  }
  Node* n = unlink(e->value->score_, e->value->member_);
  node_bytes_ -= sizeof(Node) + static_cast<size_t>(n->height_) * sizeof(Node::Level);
  free_node(n);
  // Copied first: `member` may view the very key being erased.
  std::string key(e->key());
  dict_.erase(key);
  return true;
}

std::optional<size_t> ZSet::rank(std::string_view member) const {
  Node* const* n = dict_.find(member);
  if (n == nullptr) {
    return std::nullopt;
  }
  return rank_of(*n);
}

size_t ZSet::rank_of(const Node* target) const {
  size_t rank = 0;
  const Node* x = head_;
  for (int i = height_ - 1; i >= 0; --i) {
    while (x->levels()[i].forward != nullptr &&
           !before(target->score_, target->member_, x->levels()[i].forward->score_,
                   x->levels()[i].forward->member_)) {
      rank += x->levels()[i].span;
      x = x->levels()[i].forward;
    }
    if (x == target) {
      return rank - 1;
    }
  }
  return rank - 1;
}

const ZSet::Node* ZSet::first() const { return head_->levels()[0].forward; }
const ZSet::Node* ZSet::last() const { return tail_; }

const ZSet::Node* ZSet::at_rank(size_t r) const {
  size_t want = r + 1;
  size_t traversed = 0;
  const Node* x = head_;
  for (int i = height_ - 1; i >= 0; --i) {
    while (x->levels()[i].forward != nullptr && traversed + x->levels()[i].span <= want) {
      traversed += x->levels()[i].span;
      x = x->levels()[i].forward;
    }
    if (traversed == want) {
      return x;
    }
  }
  return nullptr;
}

const ZSet::Node* ZSet::first_in(const ScoreRange& r) const {
  if (r.empty() || tail_ == nullptr || !r.above_min(tail_->score_) ||
      !r.below_max(first()->score_)) {
    return nullptr;
  }
  const Node* x = head_;
  for (int i = height_ - 1; i >= 0; --i) {
    while (x->levels()[i].forward != nullptr && !r.above_min(x->levels()[i].forward->score_)) {
      x = x->levels()[i].forward;
    }
  }
  x = x->levels()[0].forward;
  return x != nullptr && r.below_max(x->score_) ? x : nullptr;
}

const ZSet::Node* ZSet::last_in(const ScoreRange& r) const {
  if (r.empty() || tail_ == nullptr || !r.above_min(tail_->score_) ||
      !r.below_max(first()->score_)) {
    return nullptr;
  }
  const Node* x = head_;
  for (int i = height_ - 1; i >= 0; --i) {
    while (x->levels()[i].forward != nullptr && r.below_max(x->levels()[i].forward->score_)) {
      x = x->levels()[i].forward;
    }
  }
  return x != head_ && r.above_min(x->score_) ? x : nullptr;
}

bool ZSet::lex_range_overlaps(const LexRange& r) const {
  return !r.empty() && tail_ != nullptr && r.above_min(tail_->member_) &&
         r.below_max(first()->member_);
}

const ZSet::Node* ZSet::lex_seek(const LexRange& r) const {
  const Node* x = head_;
  for (int i = height_ - 1; i >= 0; --i) {
    while (x->levels()[i].forward != nullptr && !r.above_min(x->levels()[i].forward->member_)) {
      x = x->levels()[i].forward;
    }
  }
  return x->levels()[0].forward;
}

const ZSet::Node* ZSet::first_in(const LexRange& r) const {
  if (!lex_range_overlaps(r)) {
    return nullptr;
  }
  const Node* x = first();
  if (skiplist_) {
    x = lex_seek(r);
  } else {
    while (x != nullptr && !r.above_min(x->member_)) {
      x = x->next();
    }
  }
  return x != nullptr && r.below_max(x->member_) ? x : nullptr;
}

const ZSet::Node* ZSet::last_in(const LexRange& r) const {
  if (!lex_range_overlaps(r)) {
    return nullptr;
  }
  const Node* x = tail_;
  if (skiplist_) {
    x = head_;
    for (int i = height_ - 1; i >= 0; --i) {
      while (x->levels()[i].forward != nullptr && r.below_max(x->levels()[i].forward->member_)) {
        x = x->levels()[i].forward;
      }
    }
    x = x == head_ ? nullptr : x;
  } else {
    while (x != nullptr && !r.below_max(x->member_)) {
      x = x->prev();
    }
  }
  return x != nullptr && r.above_min(x->member_) ? x : nullptr;
}

const ZSet::Node* ZSet::lex_delete_start(const LexRange& r) const {
  return skiplist_ ? lex_seek(r) : first_in(r);
}

size_t ZSet::count(const ScoreRange& r) const {
  const Node* f = first_in(r);
  if (f == nullptr) {
    return 0;
  }
  return rank_of(last_in(r)) - rank_of(f) + 1;
}

int64_t ZSet::count(const LexRange& r) const {
  const Node* f = first_in(r);
  if (f == nullptr) {
    return 0;
  }
  if (!skiplist_) {
    int64_t n = 0;
    for (; f != nullptr && r.below_max(f->member_); f = f->next()) {
      ++n;
    }
    return n;
  }
  const Node* l = last_in(r);
  if (l == nullptr) {
    return static_cast<int64_t>(length_ - rank_of(f));
  }
  return static_cast<int64_t>(rank_of(l)) - static_cast<int64_t>(rank_of(f)) + 1;
}

size_t ZSet::memory_bytes() const { return sizeof(ZSet) + dict_.memory_bytes() + node_bytes_; }

}  // namespace hotkv
