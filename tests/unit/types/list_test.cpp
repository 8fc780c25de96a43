// List: a random-operation model test against std::deque for every kind of fill, entry
// lengths around the varint boundaries, oversize entries, LREM counts, clone, and the memory
// and node-count bounds the packed encoding exists for.
#include "hotkv/types/list.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <deque>
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

// Compares everything cheaply enough to run after each step: both walks in full, and at() at
// the ends and a few random places (or everywhere, when `all_at`).
void require_same(const List& l, const Model& m, std::mt19937_64& rng, bool all_at) {
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
// fills.
std::string random_value(std::mt19937_64& rng, bool small_only) {
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

void run_model(int fill, uint64_t seed, int steps, bool change_fill, bool small_only = false) {
  std::mt19937_64 rng(seed);
  List l(fill);
  Model m;
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
      std::string v = random_value(rng, small_only);
      l.push_front(v);
      m.push_front(v);
    } else if (op < 24) {
      std::string v = random_value(rng, small_only);
      l.push_back(v);
      m.push_back(v);
    } else if (op < 36) {
      std::string v = random_value(rng, small_only);
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
        std::string v = random_value(rng, small_only);
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
      std::string v = size > 0 && rng() % 2 == 0 ? m[index(size)] : random_value(rng, small_only);
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
      REQUIRE(forward(*c) == contents(m));
    } else if (!growing) {
      l.clear();
      m.clear();
    }
    require_same(l, m, rng, step % 64 == 0);
    if (!change_fill && fill > 0 && !m.empty()) {
      // A count fill bounds how many entries a node holds.
      REQUIRE(l.node_count() * static_cast<size_t>(fill) >= m.size());
    }
  }
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
