// Unit tests for the latency monitor: the threshold gate, one sample per second keeping the
// worst, the 160-sample ring, reset by name, and the GRAPH and DOCTOR reports.
#include "hotkv/util/latency_monitor.hpp"

#include <catch2/catch.hpp>

using namespace hotkv;

TEST_CASE("The latency monitor records only events at or over the threshold", "[latency]") {
  std::atomic<int64_t> threshold{0};
  LatencyMonitor m(threshold);
  m.add_if_needed("command", 100, 500);
  CHECK(m.latest().empty());  // 0: off
  threshold = 100;
  m.add_if_needed("command", 100, 99);
  CHECK(m.latest().empty());
  m.add_if_needed("command", 100, 100);
  REQUIRE(m.latest().size() == 1);
  CHECK(m.latest()[0].event == "command");
  CHECK(m.latest()[0].last.latency_ms == 100);
}

TEST_CASE("The latency monitor keeps one sample per second, the worst", "[latency]") {
  std::atomic<int64_t> threshold{1};
  LatencyMonitor m(threshold);
  m.add("command", 100, 300);
  m.add("command", 100, 250);
  m.add("command", 100, 400);
  m.add("command", 101, 200);
  auto h = m.history("command");
  REQUIRE(h.size() == 2);
  CHECK(h[0].time_s == 100);
  CHECK(h[0].latency_ms == 400);
  CHECK(h[1].time_s == 101);
  CHECK(h[1].latency_ms == 200);
  auto latest = m.latest();
  REQUIRE(latest.size() == 1);
  CHECK(latest[0].last.time_s == 101);
  CHECK(latest[0].last.latency_ms == 200);
  CHECK(latest[0].max_ms == 400);
  CHECK(m.history("nothing").empty());
}

TEST_CASE("The latency monitor keeps the latest 160 samples of an event", "[latency]") {
  std::atomic<int64_t> threshold{1};
  LatencyMonitor m(threshold);
  for (int64_t t = 1; t <= 200; ++t) {
    m.add("expire-cycle", t, static_cast<uint64_t>(t));
  }
  auto h = m.history("expire-cycle");
  REQUIRE(h.size() == LatencyMonitor::kSamples);
  CHECK(h.front().time_s == 41);
  CHECK(h.back().time_s == 200);
  CHECK(m.latest()[0].max_ms == 200);
}

TEST_CASE("LATENCY RESET forgets the named events or all of them", "[latency]") {
  std::atomic<int64_t> threshold{1};
  LatencyMonitor m(threshold);
  m.add("command", 1, 10);
  m.add("fast-command", 1, 10);
  m.add("expire-cycle", 1, 10);
  std::vector<std::string_view> some = {"command", "blabla"};
  CHECK(m.reset(some) == 1);
  CHECK(m.latest().size() == 2);
  CHECK(m.reset({}) == 2);
  CHECK(m.latest().empty());
}

TEST_CASE("The latency graph and doctor describe the samples", "[latency]") {
  std::atomic<int64_t> threshold{100};
  LatencyMonitor m(threshold);
  CHECK_FALSE(m.graph("command", 10).has_value());
  CHECK(m.doctor(10).find("No event") != std::string::npos);
  m.add("command", 1, 300);
  m.add("command", 5, 500);
  std::string g = *m.graph("command", 10);
  CHECK(g.rfind("command - high 500 ms, low 300 ms (all time high 500 ms)\n", 0) == 0);
  CHECK(g.find("#") != std::string::npos);
  CHECK(g.find("9") != std::string::npos);  // the first column is 9 s old
  std::string d = m.doctor(10);
  CHECK(d.find("command: 2 spike(s)") != std::string::npos);
  CHECK(d.find("worst ever 500 ms") != std::string::npos);
  threshold = 0;
  m.reset({});
  CHECK(m.doctor(10).find("latency-monitor-threshold is 0") != std::string::npos);
}
