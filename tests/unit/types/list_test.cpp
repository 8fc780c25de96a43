// List: a random-operation model test against std::deque for every kind of fill, with and
// without compressed interior nodes, entry lengths around the varint boundaries, oversize
// entries, LREM counts, clone, and the memory and node-count bounds the packed encoding and the
// compression exist for.
#include "hotkv/types/list.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <memory>
#include <random>
#include <string>
#include <vector>

using hotkv::List;

namespace {

using Model = std::deque<std::string>;

std::vector<std::string> forward(const List& l, size_t from = 0) {
  std::vector<std::string> out;
  size_t expect = from;
  bool in_order = true;
  l.for_each(from, [&](size_t i, std::string_view v) {
    in_order = in_order && i == expect++;
    out.emplace_back(v);
    return true;
  });
  CHECK(in_order);
  return out;
}

std::vector<std::string> backward(const List& l, size_t from) {
  std::vector<std::string> out;
  size_t expect = from;
  bool in_order = true;
  l.for_each_reverse(from, [&](size_t i, std::string_view v) {
    in_order = in_order && i == expect--;
    out.emplace_back(v);
    return true;
  });
  CHECK(in_order);
  return out;
}

std::vector<std::string> contents(const Model& m) { return {m.begin(), m.end()}; }

// The compression layout: the compress_depth() nodes at each end are plain, and nothing is
// compressed at depth 0.
void require_layout(const List& l) {
  size_t n = l.node_count();
  size_t depth = l.compress_depth();
  bool ends_plain = true;
  for (size_t k = 0; k < n; ++k) {
    if (depth == 0 || k < depth || n - k <= depth) {
      ends_plain = ends_plain && !l.node_compressed(k);
    }
  }
  INFO("nodes " << n << " depth " << depth);
  REQUIRE(ends_plain);
}

// Compares everything cheaply enough to run after each step: both walks in full, and at() at
// the ends and a few random places (or everywhere, when `all_at`).
void require_same(const List& l, const Model& m, std::mt19937_64& rng, bool all_at) {
  require_layout(l);
  REQUIRE(l.size() == m.size());
  REQUIRE(l.empty() == m.empty());
  REQUIRE((l.node_count() == 0) == m.empty());
  REQUIRE(l.node_count() <= m.size());
  size_t n = 0;
  bool same = true;
  l.for_each(0, [&](size_t i, std::string_view v) {
    same = same && i == n && v == m[i];
    ++n;
    return true;
  });
  REQUIRE(same);
  REQUIRE(n == m.size());
  if (m.empty()) {
    return;
  }
  n = 0;
  l.for_each_reverse(m.size() - 1, [&](size_t i, std::string_view v) {
    same = same && i == m.size() - 1 - n && v == m[i];
    ++n;
    return true;
  });
  REQUIRE(same);
  REQUIRE(n == m.size());
  if (all_at) {
    for (size_t i = 0; i < m.size(); ++i) {
      same = same && l.at(i) == m[i];
    }
  } else {
    std::uniform_int_distribution<size_t> pick(0, m.size() - 1);
    same = l.at(0) == m.front() && l.at(m.size() - 1) == m.back();
    for (int t = 0; t < 4; ++t) {
      size_t i = pick(rng);
      same = same && l.at(i) == m[i];
    }
  }
  REQUIRE(same);
}

// Mostly short values, often from a small pool so that LREM finds duplicates; now and then
// (unless `small_only`) long ones, up to 20,000 bytes, larger than any node of the smaller
// fills. With `compressible`, half the values not from the pool repeat a short pattern, so
// nodes holding them compress (random bytes do not).
std::string random_value(std::mt19937_64& rng, bool small_only, bool compressible = false) {
  static const std::vector<std::string> pool = {"", "a", "b", std::string("x\0y", 3), "hello"};
  size_t roll = rng() % 100;
  if (roll < 35) {
    return pool[rng() % pool.size()];
  }
  size_t len;
  if (roll < 80 || small_only) {
    len = rng() % 17;
  } else if (roll < 93) {
    len = 17 + rng() % 300;
  } else if (roll < 98) {
    len = 300 + rng() % 3000;
  } else {
    len = 3000 + rng() % 17001;
  }
  std::string v(len, '\0');
  if (compressible && rng() % 2 == 0) {
    const char* pattern = rng() % 2 == 0 ? "item:" : "abc";
    size_t plen = std::char_traits<char>::length(pattern);
    for (size_t i = 0; i < len; ++i) {
      v[i] = pattern[i % plen];
    }
    return v;
  }
  for (char& c : v) {
    c = static_cast<char>(rng());
  }
  return v;
}

size_t model_remove(Model& m, const std::string& v, int64_t count) {
  size_t removed = 0;
  if (count >= 0) {
    size_t want = count == 0 ? SIZE_MAX : static_cast<size_t>(count);
    for (auto it = m.begin(); it != m.end() && removed < want;) {
      if (*it == v) {
        it = m.erase(it);
        ++removed;
      } else {
        ++it;
      }
    }
    return removed;
  }
  size_t want = static_cast<size_t>(-count);
  for (size_t i = m.size(); i > 0 && removed < want; --i) {
    if (m[i - 1] == v) {
      m.erase(m.begin() + static_cast<ptrdiff_t>(i - 1));
      ++removed;
    }
  }
  return removed;
}

// The most interior nodes compressed at any step, so that a run can show it did compress.
struct ModelStats {
  size_t max_compressed = 0;
};

ModelStats run_model(int fill, uint64_t seed, int steps, bool change_fill, bool small_only = false,
                     int depth = 0) {
  std::mt19937_64 rng(seed);
  List l(fill, depth);
  REQUIRE(l.compress_depth() == static_cast<uint32_t>(depth));
  Model m;
  ModelStats stats;
  const bool compressible = depth > 0;
  const int fills[] = {1, 3, 128, -1, -2, -5};
  size_t target = 0;
  for (int step = 0; step < steps; ++step) {
    if (step % 400 == 0) {
      // Phases of growing and shrinking, so lists both cross many nodes and empty out.
      const size_t targets[] = {0, 30, 300, 800};
      target = targets[rng() % 4];
    }
    if (change_fill && rng() % 100 == 0) {
      l.set_fill(fills[rng() % 6]);
    }
    size_t size = m.size();
    int op = static_cast<int>(rng() % 100);
    // Below target, most of the time push or insert instead, and no wholesale removals.
    bool growing = size < target;
    if (growing && rng() % 8 != 0) {
      op = static_cast<int>(rng() % 36);
    }
    INFO("step " << step << " op " << op << " size " << size);
    auto index = [&](size_t n) { return static_cast<size_t>(rng() % n); };
    if (op < 12) {
      std::string v = random_value(rng, small_only, compressible);
      l.push_front(v);
      m.push_front(v);
    } else if (op < 24) {
      std::string v = random_value(rng, small_only, compressible);
      l.push_back(v);
      m.push_back(v);
    } else if (op < 36) {
      std::string v = random_value(rng, small_only, compressible);
      size_t i = index(size + 1);
      l.insert(i, v);
      m.insert(m.begin() + static_cast<ptrdiff_t>(i), v);
    } else if (op < 44) {
      std::string got = "untouched";
      bool front = rng() % 2 == 0;
      bool ok = front ? l.pop_front(got) : l.pop_back(got);
      REQUIRE(ok == !m.empty());
      if (ok) {
        REQUIRE(got == (front ? m.front() : m.back()));
        front ? m.pop_front() : m.pop_back();
      } else {
        REQUIRE(got == "untouched");
      }
    } else if (op < 56) {
      if (size > 0) {
        std::string v = random_value(rng, small_only, compressible);
        size_t i = index(size);
        l.set(i, v);
        m[i] = v;
      }
    } else if (op < 68) {
      if (size > 0) {
        size_t i = index(size);
        l.erase(i);
        m.erase(m.begin() + static_cast<ptrdiff_t>(i));
      }
    } else if (op < 78) {
      size_t first = index(size + 1);
      size_t count = index(size - first + 1);
      if (growing || rng() % 4 != 0) {
        count = std::min(count, size_t{1} + rng() % 40);  // mostly short ranges
      }
      l.erase_range(first, count);
      m.erase(m.begin() + static_cast<ptrdiff_t>(first),
              m.begin() + static_cast<ptrdiff_t>(first + count));
    } else if (op < 90) {
      std::string v =
          size > 0 && rng() % 2 == 0 ? m[index(size)] : random_value(rng, small_only, compressible);
      const int64_t counts[] = {0, 1, 2, 5, -1, -2, -5, 1000, -1000};
      int64_t count = counts[rng() % 9];
      if (growing && count == 0) {
        count = 1;
      }
      size_t expect = model_remove(m, v, count);
      REQUIRE(l.remove(v, count) == expect);
    } else if (op < 96) {
      if (size > 0) {
        // Usually a mild trim, sometimes down to a few elements.
        size_t cut = !growing && rng() % 4 == 0 ? size : size / 10 + 1;
        size_t start = index(std::min(cut, size));
        size_t stop = size - 1 - index(std::min(cut, size - start));
        l.trim(start, stop);
        m.erase(m.begin() + static_cast<ptrdiff_t>(stop + 1), m.end());
        m.erase(m.begin(), m.begin() + static_cast<ptrdiff_t>(start));
      }
    } else if (op < 98) {
      if (size > 0) {
        // A walk from the middle that stops early.
        size_t from = index(size);
        size_t limit = 1 + index(10);
        std::vector<std::string> got;
        l.for_each(from, [&](size_t, std::string_view v) {
          got.emplace_back(v);
          return got.size() < limit;
        });
        std::vector<std::string> want(
            m.begin() + static_cast<ptrdiff_t>(from),
            m.begin() + static_cast<ptrdiff_t>(std::min(size, from + limit)));
        REQUIRE(got == want);
        got.clear();
        l.for_each_reverse(from, [&](size_t, std::string_view v) {
          got.emplace_back(v);
          return got.size() < limit;
        });
        want.clear();
        for (size_t i = from + 1; i > 0 && want.size() < limit; --i) {
          want.push_back(m[i - 1]);
        }
        REQUIRE(got == want);
      }
    } else if (op < 99) {
      auto c = l.clone();
      REQUIRE(c->fill() == l.fill());
      REQUIRE(c->compress_depth() == l.compress_depth());
      REQUIRE(c->compressed_node_count() == l.compressed_node_count());
      REQUIRE(forward(*c) == contents(m));
    } else if (!growing) {
      l.clear();
      m.clear();
    }
    require_same(l, m, rng, step % 64 == 0);
    stats.max_compressed = std::max(stats.max_compressed, l.compressed_node_count());
    if (!change_fill && fill > 0 && !m.empty()) {
      // A count fill bounds how many entries a node holds.
      REQUIRE(l.node_count() * static_cast<size_t>(fill) >= m.size());
    }
  }
  return stats;
}

}  // namespace

TEST_CASE("the list agrees with a deque under random operations, for every kind of fill",
          "[list]") {
  for (int fill : {1, 3, 128, -1, -2, -5}) {
    INFO("fill " << fill);
    run_model(fill, 1000 + static_cast<uint64_t>(fill + 10), 4000, false);
  }
  // Only short values: many entries per node, so splits and merges inside nodes dominate.
  for (int fill : {3, 128, -1}) {
    INFO("short values, fill " << fill);
    run_model(fill, 2000 + static_cast<uint64_t>(fill + 10), 4000, false, true);
  }
}

TEST_CASE("the list stays correct when its fill changes between operations", "[list]") {
  run_model(-2, 77, 4000, true);
}

TEST_CASE("compressed interior nodes: the list agrees with a deque under random operations",
          "[list][compress]") {
  for (int depth : {1, 2}) {
    for (int fill : {1, 3, 128, -1, -2, -5}) {
      INFO("depth " << depth << " fill " << fill);
      ModelStats st = run_model(fill, 3000 + static_cast<uint64_t>(fill + 10 + 100 * depth), 4000,
                                false, false, depth);
      if (fill != 1) {
        // One entry a node is mostly under the size worth compressing; the others compress.
        CHECK(st.max_compressed > 0);
      }
    }
    for (int fill : {3, 128, -1}) {
      INFO("short values, depth " << depth << " fill " << fill);
      ModelStats st = run_model(fill, 4000 + static_cast<uint64_t>(fill + 10 + 100 * depth), 4000,
                                false, true, depth);
      if (fill != -1) {
        // (800 short values fit two 4 KB nodes: no interior.)
        CHECK(st.max_compressed > 0);
      }
    }
    INFO("changing fill, depth " << depth);
    run_model(-2, 5000 + static_cast<uint64_t>(depth), 4000, true, false, depth);
  }
}

TEST_CASE("an empty list", "[list]") {
  List l;
  CHECK(l.empty());
  CHECK(l.size() == 0);
  CHECK(l.node_count() == 0);
  CHECK(l.fill() == -2);
  std::string out = "keep";
  CHECK_FALSE(l.pop_front(out));
  CHECK_FALSE(l.pop_back(out));
  CHECK(out == "keep");
  CHECK(forward(l).empty());
  CHECK(backward(l, 0).empty());
  CHECK(l.remove("x", 0) == 0);
  l.insert(0, "only");
  CHECK(l.at(0) == "only");
  l.clear();
  CHECK(l.empty());
  CHECK(l.node_count() == 0);
}

TEST_CASE("empty strings and binary bytes are kept exactly", "[list]") {
  List l;
  std::string nul("\0\0\0", 3);
  std::string high("\xff\x80\x00\x7f", 4);
  l.push_back("");
  l.push_back(nul);
  l.push_front(high);
  l.push_back("");
  CHECK(l.size() == 4);
  CHECK(forward(l) == std::vector<std::string>{high, "", nul, ""});
  CHECK(backward(l, 3) == std::vector<std::string>{"", nul, "", high});
  CHECK(l.at(2) == nul);
  CHECK(l.at(2).size() == 3);
  CHECK(l.remove("", 0) == 2);
  CHECK(forward(l) == std::vector<std::string>{high, nul});
  std::string out;
  CHECK(l.pop_back(out));
  CHECK(out == nul);
}

TEST_CASE("lengths around the varint boundaries read back both ways", "[list]") {
  for (int fill : {1, -1, -5}) {
    INFO("fill " << fill);
    List l(fill);
    std::vector<std::string> want;
    for (size_t len :
         {0, 1, 125, 126, 127, 128, 129, 16379, 16380, 16381, 16382, 16383, 16384, 16385, 20000}) {
      std::string v(len, static_cast<char>('a' + len % 26));
      if (len > 0) {
        v.back() = '!';
      }
      l.push_back(v);
      want.push_back(v);
    }
    CHECK(forward(l) == want);
    std::vector<std::string> rev(want.rbegin(), want.rend());
    CHECK(backward(l, want.size() - 1) == rev);
    for (size_t i = 0; i < want.size(); ++i) {
      CHECK(l.at(i) == want[i]);
    }
    std::string out;
    for (size_t i = want.size(); i > 0; --i) {
      REQUIRE(l.pop_back(out));
      CHECK(out == want[i - 1]);
    }
    CHECK(l.node_count() == 0);
  }
}

TEST_CASE("a single element can be read, replaced and popped", "[list]") {
  List l;
  l.push_back("one");
  CHECK(l.size() == 1);
  CHECK(l.at(0) == "one");
  CHECK(backward(l, 0) == std::vector<std::string>{"one"});
  std::string big(50000, 'z');
  l.set(0, big);  // alone in its node, so it may outgrow the node limit
  CHECK(l.at(0) == big);
  CHECK(l.node_count() == 1);
  l.set(0, "small");
  CHECK(l.at(0) == "small");
  l.trim(0, 0);
  CHECK(l.size() == 1);
  std::string out;
  CHECK(l.pop_front(out));
  CHECK(out == "small");
  CHECK(l.empty());
  CHECK(l.node_count() == 0);
}

TEST_CASE("an entry larger than the node limit gets a node of its own", "[list]") {
  List l(-1);  // 4 KB nodes
  std::string big(10000, 'B');
  l.push_back(big);
  CHECK(l.node_count() == 1);
  l.push_back("after");
  l.push_front("before");
  CHECK(l.node_count() == 3);
  CHECK(forward(l) == std::vector<std::string>{"before", big, "after"});

  // Into the middle of a node: it is split around the big entry.
  List m(-1);
  for (int i = 0; i < 100; ++i) {
    m.push_back("e" + std::to_string(i));
  }
  REQUIRE(m.node_count() == 1);
  m.insert(50, big);
  CHECK(m.node_count() == 3);
  CHECK(m.at(49) == "e49");
  CHECK(m.at(50) == big);
  CHECK(m.at(51) == "e50");
  // Replacing a small element with a big one moves it out the same way, and back again.
  m.set(10, big);
  CHECK(m.at(10) == big);
  CHECK(m.at(11) == "e11");
  CHECK(m.node_count() == 5);
  m.set(10, "e10");
  CHECK(m.node_count() == 3);  // the shrunk node merged back with its neighbours
  m.erase(50);
  CHECK(m.size() == 100);
  CHECK(m.node_count() == 1);
  for (int i = 0; i < 100; ++i) {
    REQUIRE(m.at(static_cast<size_t>(i)) == "e" + std::to_string(i));
  }
}

TEST_CASE("remove follows LREM's count: from the head, from the tail, or all", "[list]") {
  auto make = [] {
    List l(3);
    for (const char* v : {"x", "a", "x", "b", "x", "c", "x"}) {
      l.push_back(v);
    }
    return l.clone();
  };
  auto l = make();
  CHECK(l->remove("x", 2) == 2);
  CHECK(forward(*l) == std::vector<std::string>{"a", "b", "x", "c", "x"});
  l = make();
  CHECK(l->remove("x", -3) == 3);
  CHECK(forward(*l) == std::vector<std::string>{"x", "a", "b", "c"});
  l = make();
  CHECK(l->remove("x", 0) == 4);
  CHECK(forward(*l) == std::vector<std::string>{"a", "b", "c"});
  l = make();
  CHECK(l->remove("x", INT64_MIN) == 4);
  CHECK(l->remove("x", INT64_MAX) == 0);
  CHECK(l->remove("nothing", 0) == 0);
  CHECK(l->size() == 3);
  l = make();
  CHECK(l->remove("a", 1) == 1);
  CHECK(l->remove("b", -1) == 1);
  CHECK(l->remove("c", 0) == 1);
  CHECK(l->remove("x", 0) == 4);
  CHECK(l->empty());
  CHECK(l->node_count() == 0);
}

TEST_CASE("erase_range and trim drop whole nodes and keep the rest", "[list]") {
  List l(4);
  for (int i = 0; i < 100; ++i) {
    l.push_back(std::to_string(i));
  }
  CHECK(l.node_count() == 25);
  l.erase_range(6, 80);  // from inside node 1 to inside node 21
  CHECK(l.size() == 20);
  std::vector<std::string> want;
  for (int i = 0; i < 100; ++i) {
    if (i < 6 || i >= 86) {
      want.push_back(std::to_string(i));
    }
  }
  CHECK(forward(l) == want);
  CHECK(l.node_count() <= 6);
  l.trim(3, 7);
  CHECK(forward(l) == std::vector<std::string>{"3", "4", "5", "86", "87"});
  l.erase_range(0, 5);
  CHECK(l.empty());
  CHECK(l.node_count() == 0);
}

TEST_CASE("clone copies elements and fill and is independent", "[list]") {
  List l(5);
  for (int i = 0; i < 40; ++i) {
    l.push_back(std::string(static_cast<size_t>(i), 'q'));
  }
  auto c = l.clone();
  CHECK(c->memory_bytes() <= l.memory_bytes());  // copied tight
  CHECK(c->fill() == 5);
  CHECK(c->size() == l.size());
  CHECK(c->node_count() == l.node_count());
  CHECK(forward(*c) == forward(l));
  c->push_back("extra");
  c->set(0, "changed");
  CHECK(l.size() == 40);
  CHECK(l.at(0).empty());
  CHECK(c->at(0) == "changed");
}

TEST_CASE("fill values are read as Redis reads list-max-listpack-size", "[list]") {
  CHECK(List::valid_fill(-2));
  CHECK(List::valid_fill(0));
  CHECK(List::valid_fill(-100));
  CHECK(List::valid_fill(INT32_MAX));
  CHECK(List::valid_fill(INT32_MIN));
  CHECK_FALSE(List::valid_fill(int64_t{INT32_MAX} + 1));
  CHECK_FALSE(List::valid_fill(int64_t{INT32_MIN} - 1));
  CHECK(List::normalize_fill(-6) == -5);
  CHECK(List::normalize_fill(INT32_MIN) == -5);
  CHECK(List::normalize_fill(0) == 1);
  CHECK(List::normalize_fill(7) == 7);
  CHECK(List(0).fill() == 1);
  CHECK(List(-9).fill() == -5);
  List l;
  l.set_fill(0);
  CHECK(l.fill() == 1);
  for (int i = 0; i < 5; ++i) {
    l.push_back("v");
  }
  CHECK(l.node_count() == 5);
}

TEST_CASE("node count stays bounded by the fill", "[list]") {
  List back(128);
  List front(128);
  for (int i = 0; i < 10000; ++i) {
    back.push_back("0123456789");
    front.push_front("0123456789");
  }
  CHECK(back.node_count() == 79);  // ceil(10000 / 128)
  CHECK(front.node_count() == 79);

  // Inserts in the middle split full nodes in half, which leaves them about 70% full on
  // average (as in a B-tree), not one entry each.
  std::mt19937_64 rng(5);
  List mid(128);
  for (int i = 0; i < 10000; ++i) {
    mid.insert(static_cast<size_t>(rng() % (mid.size() + 1)), "0123456789");
  }
  CHECK(mid.node_count() <= 140);

  // A byte fill: 8 KB nodes hold 682 twelve-byte entries.
  List bytes;
  for (int i = 0; i < 10000; ++i) {
    bytes.push_back("0123456789");
  }
  CHECK(bytes.node_count() == 15);
  // A positive fill still caps a node at 8 KB.
  List huge(100000);
  for (int i = 0; i < 10000; ++i) {
    huge.push_back("0123456789");
  }
  CHECK(huge.node_count() == 15);
}

TEST_CASE("100,000 ten-byte elements cost at most 16 bytes each", "[list]") {
  List back;
  List front;
  for (int i = 0; i < 100000; ++i) {
    char v[16];
    std::snprintf(v, sizeof v, "%010d", i);
    back.push_back(v);
    front.push_front(v);
  }
  INFO("push_back " << back.memory_bytes() << " push_front " << front.memory_bytes());
  CHECK(back.memory_bytes() <= 16 * 100000);
  CHECK(front.memory_bytes() <= 16 * 100000);
  CHECK(back.at(12345) == "0000012345");
  CHECK(front.at(12345) == "0000087654");
}

TEST_CASE("queues in either direction do not hold on to popped bytes", "[list]") {
  for (bool lpush : {false, true}) {
    INFO("lpush " << lpush);
    List l;
    std::string out;
    for (int i = 0; i < 1000; ++i) {
      l.push_back("0123456789");
    }
    size_t start = l.memory_bytes();
    size_t peak = start;
    bool popped = true;
    for (int i = 0; i < 200000; ++i) {
      if (lpush) {
        l.push_front("0123456789");
        popped = popped && l.pop_back(out);
      } else {
        l.push_back("0123456789");
        popped = popped && l.pop_front(out);
      }
      peak = std::max(peak, l.memory_bytes());
    }
    INFO("start " << start << " peak " << peak);
    CHECK(popped);
    CHECK(peak <= start * 3);
    CHECK(l.size() == 1000);
    CHECK(l.node_count() <= 3);
  }
}

// --- compression at the node boundaries -------------------------------------------------------

namespace {

// A ~40-byte value that compresses well beside its neighbours, as log lines or ids do.
std::string compressible(size_t i) {
  char v[64];
  std::snprintf(v, sizeof v, "event:user:%08zu:action:checkout:ok", i);
  return v;
}

// A list of `nodes` full nodes of fill 100 (entries i = 0..), built by push_back.
std::unique_ptr<List> nodes_of_100(size_t nodes, int depth) {
  auto l = std::make_unique<List>(100, depth);
  for (size_t i = 0; i < nodes * 100; ++i) {
    l->push_back(compressible(i));
  }
  return l;
}

std::vector<std::string> compressible_range(size_t from, size_t to) {
  std::vector<std::string> out;
  for (size_t i = from; i < to; ++i) {
    out.push_back(compressible(i));
  }
  return out;
}

// Node k's layout as a string, "P" plain and "Z" compressed: "PZZP".
std::string layout(const List& l) {
  std::string out;
  for (size_t k = 0; k < l.node_count(); ++k) {
    out += l.node_compressed(k) ? 'Z' : 'P';
  }
  return out;
}

}  // namespace

TEST_CASE("compress depth values are read as Redis reads list-compress-depth", "[list]") {
  CHECK(List::normalize_compress_depth(-1) == 0);
  CHECK(List::normalize_compress_depth(0) == 0);
  CHECK(List::normalize_compress_depth(3) == 3);
  CHECK(List::normalize_compress_depth(INT32_MAX) == 65535);
  CHECK(List().compress_depth() == 0);
  CHECK(List(-2, 2).compress_depth() == 2);
}

TEST_CASE("only nodes beyond the depth from both ends are compressed", "[list][compress]") {
  SECTION("pushes at the tail") {
    List l(100, 1);
    for (size_t i = 0; i < 200; ++i) {
      l.push_back(compressible(i));
    }
    CHECK(layout(l) == "PP");  // at most 2 * depth nodes: nothing to compress
    l.push_back(compressible(200));
    CHECK(layout(l) == "PZP");
    for (size_t i = 201; i < 500; ++i) {
      l.push_back(compressible(i));
    }
    CHECK(layout(l) == "PZZZP");
    CHECK(forward(l) == compressible_range(0, 500));
    // Pops at the front take the interior back to plain node by node.
    std::string out;
    for (size_t i = 0; i < 100; ++i) {
      REQUIRE(l.pop_front(out));
    }
    CHECK(layout(l) == "PZZP");
    for (size_t i = 0; i < 200; ++i) {
      REQUIRE(l.pop_front(out));
      REQUIRE(out == compressible(100 + i));
    }
    CHECK(layout(l) == "PP");
  }
  SECTION("pushes at the head, depth 2") {
    List l(100, 2);
    for (size_t i = 0; i < 400; ++i) {
      l.push_front(compressible(i));
    }
    CHECK(layout(l) == "PPPP");
    l.push_front("x");
    CHECK(layout(l) == "PPZPP");
    for (size_t i = 0; i < 200; ++i) {
      l.push_front(compressible(i));
    }
    CHECK(layout(l) == "PPZZZPP");
    std::string out;
    for (size_t i = 0; i < 200; ++i) {
      REQUIRE(l.pop_back(out));
      REQUIRE(out == compressible(i));
    }
    CHECK(layout(l) == "PPZPP");
    for (size_t i = 200; i < 300; ++i) {
      REQUIRE(l.pop_back(out));
      REQUIRE(out == compressible(i));
    }
    CHECK(layout(l) == "PPPP");
  }
  SECTION("small or incompressible nodes stay plain") {
    List tiny(1, 1);  // one short entry a node: under the size worth compressing
    for (int i = 0; i < 10; ++i) {
      tiny.push_back("short");
    }
    CHECK(tiny.compressed_node_count() == 0);
    std::mt19937_64 rng(9);
    List noise(4, 1);
    for (int i = 0; i < 40; ++i) {
      std::string v(40, '\0');
      for (char& c : v) {
        c = static_cast<char>(rng());
      }
      noise.push_back(v);
    }
    CHECK(noise.node_count() == 10);
    CHECK(noise.compressed_node_count() == 0);
  }
  SECTION("depth 0 never compresses") { CHECK(layout(*nodes_of_100(5, 0)) == "PPPPP"); }
}

TEST_CASE("every operation reads and changes compressed nodes correctly", "[list][compress]") {
  for (int depth : {1, 2}) {
    INFO("depth " << depth);
    auto owned = nodes_of_100(8, depth);
    List& l = *owned;
    Model m;
    for (size_t i = 0; i < 800; ++i) {
      m.push_back(compressible(i));
    }
    REQUIRE(l.compressed_node_count() == 8 - 2 * static_cast<size_t>(depth));
    std::mt19937_64 rng(static_cast<uint64_t>(depth));
    // Reads: at() on every element, and walks starting inside compressed nodes.
    require_same(l, m, rng, true);
    CHECK(forward(l, 350) == std::vector<std::string>(m.begin() + 350, m.end()));
    CHECK(backward(l, 450).front() == m[450]);
    CHECK(backward(l, 450).back() == m[0]);
    // LSET in the middle, to a longer and a shorter value.
    l.set(350, std::string(300, 'L'));
    m[350] = std::string(300, 'L');
    l.set(351, "s");
    m[351] = "s";
    require_same(l, m, rng, true);
    // LINSERT into a compressed node, at its first entry and inside it.
    l.insert(400, "at-boundary");
    m.insert(m.begin() + 400, "at-boundary");
    l.insert(455, "inside");
    m.insert(m.begin() + 455, "inside");
    require_same(l, m, rng, true);
    CHECK(list_insert_at_pivot(l, true, compressible(600), "after-pivot"));
    m.insert(std::find(m.begin(), m.end(), compressible(600)) + 1, "after-pivot");
    require_same(l, m, rng, true);
    // Filling a compressed node up to a split.
    for (int i = 0; i < 120; ++i) {
      l.insert(520, compressible(10000 + static_cast<size_t>(i)));
      m.insert(m.begin() + 520, compressible(10000 + static_cast<size_t>(i)));
    }
    require_same(l, m, rng, true);
    // LREM from both ends and all, hitting compressed nodes.
    for (int i = 0; i < 3; ++i) {
      l.push_back("dup");
      m.push_back("dup");
      l.insert(300 + 100 * static_cast<size_t>(i), "dup");
      m.insert(m.begin() + 300 + 100 * i, "dup");
    }
    CHECK(l.remove("dup", -2) == model_remove(m, "dup", -2));
    require_same(l, m, rng, true);
    CHECK(l.remove("dup", 1) == model_remove(m, "dup", 1));
    require_same(l, m, rng, true);
    CHECK(l.remove(compressible(650), 0) == model_remove(m, compressible(650), 0));
    CHECK(l.remove("missing", 0) == 0);
    require_same(l, m, rng, true);
    // Erasing single elements and a range across whole compressed nodes.
    l.erase(500);
    m.erase(m.begin() + 500);
    l.erase_range(150, 330);
    m.erase(m.begin() + 150, m.begin() + 480);
    require_same(l, m, rng, true);
    // LTRIM that brings compressed nodes to the ends.
    size_t start = 120;
    size_t stop = m.size() - 130;
    l.trim(start, stop);
    m.erase(m.begin() + static_cast<ptrdiff_t>(stop) + 1, m.end());
    m.erase(m.begin(), m.begin() + static_cast<ptrdiff_t>(start));
    require_same(l, m, rng, true);
    // Clone and drain from both ends.
    auto c = l.clone();
    CHECK(layout(*c) == layout(l));
    CHECK(forward(*c) == contents(m));
    std::string out;
    while (!m.empty()) {
      bool front = rng() % 2 == 0;
      REQUIRE((front ? l.pop_front(out) : l.pop_back(out)));
      REQUIRE(out == (front ? m.front() : m.back()));
      front ? m.pop_front() : m.pop_back();
      require_layout(l);
    }
    CHECK(l.node_count() == 0);
  }
}

TEST_CASE("compressing the interior shrinks a long list of similar strings", "[list][compress]") {
  List plain(-2, 0);
  List packed(-2, 1);
  for (size_t i = 0; i < 100000; ++i) {
    plain.push_back(compressible(i));
    packed.push_back(compressible(i));
  }
  INFO("plain " << plain.memory_bytes() << " compressed " << packed.memory_bytes());
  CHECK(packed.compressed_node_count() == packed.node_count() - 2);
  CHECK(packed.memory_bytes() * 2 < plain.memory_bytes());
  CHECK(packed.at(54321) == compressible(54321));
}
