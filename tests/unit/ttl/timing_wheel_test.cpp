// Unit tests for TimingWheel: firing order and exactly-once delivery, far-future deadlines
// beyond the top level, mass expiry under a per-call bound, past deadlines, large clock jumps,
// a clock stepping back, deadline hints, and a randomized comparison with a sorted model.
// Time is only ever a number passed in; nothing sleeps.
#include "hotkv/ttl/timing_wheel.hpp"

#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

using hotkv::TimingWheel;

namespace {

constexpr int64_t kStart = 1'700'000'000'000;  // a realistic unix-epoch millisecond
constexpr size_t kAll = std::numeric_limits<size_t>::max();
constexpr int64_t kDay = 24LL * 3600 * 1000;
constexpr int64_t kYear = 365LL * kDay;

struct Fired {
  std::string key;
  int64_t deadline_ms;
  int64_t fired_at;
};

// Advances the wheel and records what fired, checking that nothing fires before its deadline.
size_t advance_into(TimingWheel& wheel, int64_t now, size_t max_items, std::vector<Fired>& out) {
  return wheel.advance(now, max_items, [&](std::string_view key, int64_t deadline) {
    REQUIRE(deadline <= now);
    out.push_back({std::string(key), deadline, now});
  });
}

void require_sorted(const std::vector<Fired>& fired) {
  for (size_t i = 1; i < fired.size(); ++i) {
    REQUIRE(fired[i - 1].deadline_ms <= fired[i].deadline_ms);
  }
}

}  // namespace

TEST_CASE("TimingWheel starts empty", "[ttl]") {
  TimingWheel wheel(kStart);
  REQUIRE(wheel.size() == 0);
  REQUIRE(wheel.due_backlog(kStart) == 0);
  REQUIRE_FALSE(wheel.next_deadline_hint().has_value());
  std::vector<Fired> fired;
  REQUIRE(advance_into(wheel, kStart + kYear, kAll, fired) == 0);
  REQUIRE(fired.empty());
}

TEST_CASE("TimingWheel fires past and present deadlines at the first advance", "[ttl]") {
  TimingWheel wheel(kStart);
  wheel.schedule("now", kStart);
  wheel.schedule("past", kStart - 5000);
  wheel.schedule("ancient", 0);
  wheel.schedule("future", kStart + 1);
  REQUIRE(wheel.size() == 4);
  REQUIRE(wheel.due_backlog(kStart) == 3);
  REQUIRE(wheel.next_deadline_hint() <= 0);

  std::vector<Fired> fired;
  REQUIRE(advance_into(wheel, kStart, kAll, fired) == 3);
  REQUIRE(fired.size() == 3);
  REQUIRE(fired[0].key == "ancient");
  REQUIRE(fired[1].key == "past");
  REQUIRE(fired[2].key == "now");
  REQUIRE(wheel.size() == 1);
  REQUIRE(wheel.due_backlog(kStart) == 0);
  REQUIRE(wheel.next_deadline_hint() == kStart + 1);

  REQUIRE(advance_into(wheel, kStart + 1, kAll, fired) == 1);
  REQUIRE(fired.back().key == "future");
  REQUIRE(wheel.size() == 0);
}

TEST_CASE("TimingWheel fires random deadlines in order, each exactly once, never early", "[ttl]") {
  std::mt19937_64 rng(42);
  TimingWheel wheel(kStart);
  constexpr int kCount = 100'000;
  std::multimap<int64_t, std::string> expected;
  // Mix of spans so every level gets entries: ms, seconds, minutes, hours, days, months.
  const std::vector<int64_t> spans = {64, 4096, 262'144, 16'777'216, 30 * kDay, 400 * kDay};
  for (int i = 0; i < kCount; ++i) {
    const int64_t span = spans[static_cast<size_t>(i) % spans.size()];
    const int64_t deadline = kStart + 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(span));
    const std::string key = "k" + std::to_string(i);
    wheel.schedule(key, deadline);
    expected.emplace(deadline, key);
  }
  REQUIRE(wheel.size() == kCount);

  std::vector<Fired> fired;
  int64_t now = kStart;
  const int64_t end = kStart + 400 * kDay;
  while (now < end) {
    // Steps from 1 ms to about a day, so both fine-grained and jumping advances happen.
    const int64_t step = static_cast<int64_t>(1 + rng() % (rng() % 2 == 0 ? 100 : kDay));
    now = std::min(end, now + step);
    advance_into(wheel, now, kAll, fired);
    REQUIRE(wheel.due_backlog(now) == 0);
    const auto still_pending =
        static_cast<size_t>(std::distance(expected.upper_bound(now), expected.end()));
    REQUIRE(wheel.size() == still_pending);
    if (auto hint = wheel.next_deadline_hint()) {
      REQUIRE(*hint <= expected.upper_bound(now)->first);
      REQUIRE(*hint > now);
    } else {
      REQUIRE(still_pending == 0);
    }
  }
  REQUIRE(wheel.size() == 0);
  REQUIRE(fired.size() == static_cast<size_t>(kCount));
  require_sorted(fired);
  std::multiset<std::pair<int64_t, std::string>> got;
  for (const auto& f : fired) {
    got.emplace(f.deadline_ms, f.key);
  }
  std::multiset<std::pair<int64_t, std::string>> want(expected.begin(), expected.end());
  REQUIRE(got == want);
}

TEST_CASE("TimingWheel fires far-future deadlines when their time arrives", "[ttl]") {
  TimingWheel wheel(kStart);
  // 200 and 1000 years lie beyond the levels' 2^42 ms reach and go to the overflow list.
  const std::vector<std::pair<std::string, int64_t>> entries = {
      {"month", kStart + 30 * kDay},         {"year", kStart + kYear},
      {"decade", kStart + 10 * kYear},       {"two-centuries", kStart + 200 * kYear},
      {"millennium", kStart + 1000 * kYear}, {"max", std::numeric_limits<int64_t>::max()},
  };
  for (const auto& [key, deadline] : entries) {
    wheel.schedule(key, deadline);
  }
  std::vector<Fired> fired;

  SECTION("stepping to one millisecond before, then to each deadline") {
    for (const auto& [key, deadline] : entries) {
      REQUIRE(wheel.next_deadline_hint() <= deadline);
      REQUIRE(advance_into(wheel, deadline - 1, kAll, fired) == 0);
      REQUIRE(advance_into(wheel, deadline, kAll, fired) == 1);
      REQUIRE(fired.back().key == key);
      REQUIRE(fired.back().deadline_ms == deadline);
    }
    REQUIRE(wheel.size() == 0);
  }
  SECTION("one jump past all of them fires them in order") {
    REQUIRE(advance_into(wheel, std::numeric_limits<int64_t>::max(), kAll, fired) ==
            entries.size());
    for (size_t i = 0; i < entries.size(); ++i) {
      REQUIRE(fired[i].key == entries[i].first);
    }
  }
  SECTION("following the hints reaches each deadline exactly") {
    size_t wakeups = 0;
    while (auto hint = wheel.next_deadline_hint()) {
      advance_into(wheel, *hint, kAll, fired);
      REQUIRE(++wakeups < 100);
    }
    REQUIRE(fired.size() == entries.size());
    for (size_t i = 0; i < entries.size(); ++i) {
      REQUIRE(fired[i].key == entries[i].first);
      REQUIRE(fired[i].fired_at == entries[i].second);
    }
  }
}

TEST_CASE("TimingWheel spreads a mass expiry over bounded calls", "[ttl]") {
  TimingWheel wheel(kStart);
  constexpr int kCount = 1'000'000;
  constexpr size_t kBudget = 10'000;
  const int64_t second = kStart + 60'000;
  for (int i = 0; i < kCount; ++i) {
    wheel.schedule("key:" + std::to_string(i), second + i % 1000);
  }
  REQUIRE(wheel.size() == kCount);
  REQUIRE(wheel.due_backlog(second - 1) == 0);

  const int64_t now = second + 1000;
  size_t total = 0;
  int calls = 0;
  int64_t last_deadline = 0;
  while (true) {
    const size_t fired = wheel.advance(now, kBudget, [&](std::string_view, int64_t deadline) {
      REQUIRE(deadline >= last_deadline);
      last_deadline = deadline;
    });
    if (fired == 0) {
      break;
    }
    REQUIRE(fired <= kBudget);
    total += fired;
    ++calls;
    REQUIRE(wheel.due_backlog(now) == kCount - total);
    REQUIRE(wheel.size() == kCount - total);
  }
  REQUIRE(total == kCount);
  REQUIRE(calls == kCount / static_cast<int>(kBudget));
  REQUIRE(wheel.due_backlog(now) == 0);
  REQUIRE_FALSE(wheel.next_deadline_hint().has_value());
}

TEST_CASE("TimingWheel backlog reports due entries and 0 when none are due", "[ttl]") {
  TimingWheel wheel(kStart);
  for (int i = 0; i < 100; ++i) {
    wheel.schedule("a" + std::to_string(i), kStart + 10);
    wheel.schedule("b" + std::to_string(i), kStart + 5000);
  }
  REQUIRE(wheel.due_backlog(kStart + 9) == 0);
  REQUIRE(wheel.due_backlog(kStart + 4999) <= 100);
  REQUIRE(wheel.due_backlog(kStart + 4999) > 0);  // the level-0 slot at +10 is wholly due

  std::vector<Fired> fired;
  REQUIRE(advance_into(wheel, kStart + 4999, 30, fired) == 30);
  REQUIRE(wheel.due_backlog(kStart + 4999) == 70);
  REQUIRE(advance_into(wheel, kStart + 4999, kAll, fired) == 70);
  REQUIRE(wheel.due_backlog(kStart + 4999) == 0);
  REQUIRE(advance_into(wheel, kStart + 5000, 50, fired) == 50);
  REQUIRE(wheel.due_backlog(kStart + 5000) == 50);
}

TEST_CASE("TimingWheel handles big forward clock jumps", "[ttl]") {
  TimingWheel wheel(kStart);
  std::mt19937_64 rng(3);
  constexpr int kCount = 50'000;
  const int64_t ten_minutes = 10 * 60 * 1000;
  for (int i = 0; i < kCount; ++i) {
    wheel.schedule("k" + std::to_string(i), kStart + 1 + static_cast<int64_t>(rng() % ten_minutes));
  }
  wheel.schedule("later", kStart + 2 * ten_minutes);
  std::vector<Fired> fired;

  SECTION("a paused server catches up in one advance") {
    REQUIRE(advance_into(wheel, kStart + ten_minutes, kAll, fired) == kCount);
    require_sorted(fired);
    REQUIRE(wheel.size() == 1);
    REQUIRE(wheel.next_deadline_hint() <= kStart + 2 * ten_minutes);
  }
  SECTION("jumps of years over an empty wheel keep later schedules working") {
    REQUIRE(advance_into(wheel, kStart + 50 * kYear, kAll, fired) == kCount + 1);
    require_sorted(fired);
    const int64_t now = kStart + 50 * kYear;
    wheel.schedule("x", now + 3);
    wheel.schedule("y", now + 1);
    REQUIRE(advance_into(wheel, now + 2, kAll, fired) == 1);
    REQUIRE(fired.back().key == "y");
    REQUIRE(advance_into(wheel, now + 3, kAll, fired) == 1);
    REQUIRE(fired.back().key == "x");
  }
}

TEST_CASE("TimingWheel never fires early when the clock steps back", "[ttl]") {
  TimingWheel wheel(kStart);
  wheel.schedule("a", kStart + 100);
  wheel.schedule("b", kStart + 200);
  wheel.schedule("c", kStart + 300);
  std::vector<Fired> fired;
  REQUIRE(advance_into(wheel, kStart + 250, 1, fired) == 1);  // "b" stays due
  REQUIRE(fired.back().key == "a");

  REQUIRE(advance_into(wheel, kStart + 150, kAll, fired) == 0);  // back in time: b not yet
  REQUIRE(wheel.due_backlog(kStart + 150) == 0);
  REQUIRE(advance_into(wheel, kStart - kDay, kAll, fired) == 0);

  // Scheduled while the wheel's time is ahead of the caller's clock: fires only once reached.
  wheel.schedule("d", kStart + 180);
  REQUIRE(advance_into(wheel, kStart + 170, kAll, fired) == 0);
  REQUIRE(advance_into(wheel, kStart + 190, kAll, fired) == 1);
  REQUIRE(fired.back().key == "d");
  REQUIRE(advance_into(wheel, kStart + 250, kAll, fired) == 1);
  REQUIRE(fired.back().key == "b");
  REQUIRE(advance_into(wheel, kStart + 300, kAll, fired) == 1);
  REQUIRE(fired.back().key == "c");
  REQUIRE(wheel.size() == 0);
}

TEST_CASE("TimingWheel keeps deadline order for late schedules behind a backlog", "[ttl]") {
  TimingWheel wheel(kStart);
  wheel.schedule("w1", kStart + 10);
  wheel.schedule("w2", kStart + 20);
  std::vector<Fired> fired;
  REQUIRE(advance_into(wheel, kStart + 20, 0, fired) == 0);
  REQUIRE(wheel.due_backlog(kStart + 20) == 2);
  wheel.schedule("late15", kStart + 15);
  wheel.schedule("late5", kStart + 5);
  wheel.schedule("late20", kStart + 20);
  REQUIRE(wheel.next_deadline_hint() == kStart + 5);
  REQUIRE(advance_into(wheel, kStart + 20, kAll, fired) == 5);
  std::vector<int64_t> deadlines;
  for (const auto& f : fired) {
    deadlines.push_back(f.deadline_ms - kStart);
  }
  REQUIRE(deadlines == std::vector<int64_t>{5, 10, 15, 20, 20});
}

TEST_CASE("TimingWheel fires duplicate schedules and allows rescheduling in the callback",
          "[ttl]") {
  TimingWheel wheel(kStart);
  wheel.schedule("dup", kStart + 5);
  wheel.schedule("dup", kStart + 7);
  std::vector<std::pair<std::string, int64_t>> fired;
  int reschedules = 0;
  auto on_expire = [&](std::string_view key, int64_t deadline) {
    fired.emplace_back(std::string(key), deadline);
    if (key == "dup" && reschedules < 2) {
      ++reschedules;
      wheel.schedule("again", deadline + 1000);
      wheel.schedule("already", deadline - 1);  // already reached: fires in this same call
    }
  };
  REQUIRE(wheel.advance(kStart + 10, kAll, on_expire) == 4);
  REQUIRE(wheel.size() == 2);
  REQUIRE(wheel.advance(kStart + 2000, kAll, on_expire) == 2);
  REQUIRE(fired.size() == 6);
  REQUIRE(fired.back().first == "again");
}

TEST_CASE("TimingWheel hints lead a timer-driven owner to each deadline exactly", "[ttl]") {
  TimingWheel wheel(kStart);
  std::mt19937_64 rng(11);
  std::multiset<int64_t> deadlines;
  for (int i = 0; i < 2000; ++i) {
    const int64_t deadline = kStart + 1 + static_cast<int64_t>(rng() % (3 * kDay));
    deadlines.insert(deadline);
    wheel.schedule("k" + std::to_string(i), deadline);
  }
  std::vector<Fired> fired;
  size_t wakeups = 0;
  while (auto hint = wheel.next_deadline_hint()) {
    REQUIRE(*hint <= *deadlines.begin());
    const size_t n = advance_into(wheel, *hint, kAll, fired);
    for (size_t i = 0; i < n; ++i) {
      deadlines.erase(deadlines.begin());
    }
    REQUIRE(++wakeups < 20'000);
  }
  REQUIRE(deadlines.empty());
  REQUIRE(fired.size() == 2000);
  for (const auto& f : fired) {
    REQUIRE(f.fired_at == f.deadline_ms);
  }
}

TEST_CASE("TimingWheel works around zero and with negative times", "[ttl]") {
  TimingWheel wheel(-100);
  wheel.schedule("neg", -50);
  wheel.schedule("zero", 0);
  wheel.schedule("pos", 70);
  std::vector<Fired> fired;
  REQUIRE(advance_into(wheel, -51, kAll, fired) == 0);
  REQUIRE(advance_into(wheel, 0, kAll, fired) == 2);
  REQUIRE(advance_into(wheel, 100, kAll, fired) == 1);
  REQUIRE(fired[0].key == "neg");
  REQUIRE(fired[1].key == "zero");
  REQUIRE(fired[2].key == "pos");
}

TEST_CASE("TimingWheel clear drops everything and stays usable", "[ttl]") {
  TimingWheel wheel(kStart);
  for (int i = 0; i < 1000; ++i) {
    wheel.schedule("k" + std::to_string(i), kStart + (i % 3 == 0 ? -1 : i * 1000LL));
  }
  wheel.schedule("overflow", kStart + 500 * kYear);
  std::vector<Fired> fired;
  advance_into(wheel, kStart + 10, 5, fired);
  wheel.clear();
  REQUIRE(wheel.size() == 0);
  REQUIRE(wheel.due_backlog(kStart + 10) == 0);
  REQUIRE_FALSE(wheel.next_deadline_hint().has_value());
  fired.clear();
  REQUIRE(advance_into(wheel, kStart + 1000 * kYear, kAll, fired) == 0);

  wheel.schedule("fresh", kStart + 1000 * kYear + 1);
  REQUIRE(advance_into(wheel, kStart + 1000 * kYear + 1, kAll, fired) == 1);
}

TEST_CASE("TimingWheel moves leave the source empty", "[ttl]") {
  TimingWheel a(kStart);
  a.schedule("due", kStart);
  a.schedule("soon", kStart + 10);
  a.schedule("far", kStart + 300 * kYear);
  TimingWheel b(std::move(a));
  REQUIRE(b.size() == 3);
  REQUIRE(a.size() == 0);  // NOLINT(bugprone-use-after-move): moved-from state is specified
  std::vector<Fired> fired;
  REQUIRE(advance_into(a, kStart + 400 * kYear, kAll, fired) == 0);

  TimingWheel c(0);
  c.schedule("old", 5);
  c = std::move(b);
  REQUIRE(advance_into(c, kStart + 400 * kYear, kAll, fired) == 3);
  REQUIRE(fired[0].key == "due");
  REQUIRE(fired[2].key == "far");
}

TEST_CASE("TimingWheel agrees with a sorted model under random operations", "[ttl]") {
  std::mt19937_64 rng(2024);
  int64_t now = kStart;
  int64_t high_water = kStart;  // the latest time passed to advance
  TimingWheel wheel(now);
  std::multiset<std::pair<int64_t, std::string>> model;
  const std::vector<int64_t> spans = {1, 64, 5000, 300'000, 20'000'000, 2 * kYear, 300 * kYear};
  int next_key = 0;
  for (int op = 0; op < 20'000; ++op) {
    const uint64_t choice = rng() % 10;
    if (choice < 6) {
      const int64_t span = spans[rng() % spans.size()];
      // Mostly future deadlines, some already reached.
      const int64_t offset = static_cast<int64_t>(rng() % static_cast<uint64_t>(span)) -
                             (rng() % 8 == 0 ? span / 2 : 0);
      const int64_t deadline = high_water + offset;
      const std::string key = "k" + std::to_string(next_key++);
      wheel.schedule(key, deadline);
      model.emplace(deadline, key);
    } else {
      const uint64_t move = rng() % 4;
      if (move == 0) {
        now -= static_cast<int64_t>(rng() % 10'000);  // the clock steps back
      } else {
        now += static_cast<int64_t>(rng() % static_cast<uint64_t>(spans[rng() % spans.size()]));
      }
      high_water = std::max(high_water, now);
      const size_t budget = rng() % 3 == 0 ? static_cast<size_t>(rng() % 50) : kAll;
      std::vector<Fired> fired;
      advance_into(wheel, now, budget, fired);
      for (const auto& f : fired) {
        // Each fired entry must be the model's earliest one (up to ties on the deadline).
        REQUIRE_FALSE(model.empty());
        REQUIRE(f.deadline_ms == model.begin()->first);
        const auto it = model.find({f.deadline_ms, f.key});
        REQUIRE(it != model.end());
        model.erase(it);
      }
      const bool model_has_due = !model.empty() && model.begin()->first <= now;
      if (fired.size() < budget) {
        REQUIRE_FALSE(model_has_due);
      }
      if (!model_has_due) {
        REQUIRE(wheel.due_backlog(now) == 0);
      }
      if (now == high_water) {
        const auto due = static_cast<size_t>(
            std::distance(model.begin(), model.upper_bound({now, std::string(1, '\x7f')})));
        REQUIRE(wheel.due_backlog(now) == due);
      }
    }
    REQUIRE(wheel.size() == model.size());
    const auto hint = wheel.next_deadline_hint();
    REQUIRE(hint.has_value() == !model.empty());
    if (hint) {
      REQUIRE(*hint <= model.begin()->first);
    }
  }
}
