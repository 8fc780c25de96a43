// MEMORY through TestServer: USAGE (nil for a missing key, SAMPLES checked), STATS's fields in
// Redis 7's order, DOCTOR, MALLOC-STATS, PURGE and HELP; INFO's memory details, latencystats
// and cluster sections.
#include <catch2/catch.hpp>

#include "hotkv/util/memory.hpp"
#include "support/test_server.hpp"

using hotkv::test::bulk;
using hotkv::test::kNil;
using hotkv::test::kOk;
using hotkv::test::TestServer;

namespace {
bool contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}
}  // namespace

TEST_CASE("MEMORY USAGE answers nil for a missing key and checks SAMPLES", "[memory]") {
  TestServer s;
  CHECK(s.run({"MEMORY", "USAGE", "missing"}) == kNil);
  s.run({"SET", "k", "value"});
  CHECK(s.run({"MEMORY", "USAGE", "k"}).front() == ':');
  CHECK(s.run({"MEMORY", "USAGE", "k", "SAMPLES", "0"}).front() == ':');
  CHECK(s.run({"MEMORY", "USAGE", "k", "SAMPLES", "-1"}) == "-ERR syntax error\r\n");
  CHECK(s.run({"MEMORY", "USAGE", "k", "SAMPLES", "x"}) ==
        "-ERR value is not an integer or out of range\r\n");
  CHECK(s.run({"MEMORY", "USAGE", "k", "FOO"}) == "-ERR syntax error\r\n");
  CHECK(s.run({"MEMORY", "USAGE"}) ==
        "-ERR wrong number of arguments for 'memory|usage' command\r\n");
}

TEST_CASE("MEMORY STATS DOCTOR MALLOC-STATS PURGE and HELP", "[memory]") {
  TestServer s;
  s.run({"SET", "k", "v"});
  std::string stats = s.run3({"MEMORY", "STATS"});
  REQUIRE(stats.rfind("%27\r\n" + bulk("peak.allocated") + ":", 0) == 0);
  const char* fields[] = {"total.allocated",     "startup.allocated",  "replication.backlog",
                          "overhead.total",      "keys.count",         "keys.bytes-per-key",
                          "dataset.bytes",       "dataset.percentage", "peak.percentage",
                          "allocator.allocated", "allocator.active",   "allocator.resident",
                          "fragmentation",       "fragmentation.bytes"};
  size_t at = 0;
  for (const char* f : fields) {
    INFO(f);
    size_t next = stats.find(bulk(f), at);
    REQUIRE(next != std::string::npos);  // present, and in Redis's order
    at = next;
  }
  CHECK(contains(stats, bulk("keys.count") + ":1\r\n"));
  CHECK(contains(stats, bulk("peak.percentage") + ","));  // a double in RESP3
  CHECK(s.run({"MEMORY", "STATS", "x"}) ==
        "-ERR wrong number of arguments for 'memory|stats' command\r\n");
  CHECK(contains(s.run({"MEMORY", "DOCTOR"}), "too little data"));
  // The allocator's own report: jemalloc's text, or glibc's XML under the sanitizers.
  bool jemalloc = hotkv::allocator_name().rfind("jemalloc-", 0) == 0;
  CHECK(contains(s.run({"MEMORY", "MALLOC-STATS"}),
                 jemalloc ? "jemalloc statistics" : "<malloc version="));
  CHECK(contains(s.run({"INFO", "memory"}), "mem_allocator:" + hotkv::allocator_name() + "\r\n"));
  CHECK(s.run({"MEMORY", "PURGE"}) == kOk);
  CHECK(s.run({"MEMORY", "HELP"}).rfind("*14\r\n+MEMORY <subcommand>", 0) == 0);
  CHECK(s.run({"MEMORY", "NOPE"}) == "-ERR unknown subcommand 'NOPE'. Try MEMORY HELP.\r\n");
}

TEST_CASE("INFO has memory details, latencystats and cluster", "[memory][info]") {
  TestServer s;
  s.run({"SET", "a", "1"});
  s.run({"GET", "a"});
  std::string info = s.run({"INFO"});
  for (const char* f :
       {"used_memory_peak:", "used_memory_peak_human:", "used_memory_peak_perc:",
        "used_memory_dataset:", "total_system_memory:", "mem_fragmentation_bytes:",
        "allocator_allocated:", "number_of_cached_scripts:", "instantaneous_input_kbps:",
        "instantaneous_output_kbps:", "# Modules\r\n", "# Cluster\r\ncluster_enabled:0\r\n"}) {
    INFO(f);
    CHECK(contains(info, f));
  }
  CHECK_FALSE(contains(info, "# Latencystats"));
  std::string lat = s.run({"INFO", "latencystats"});
  CHECK(contains(lat, "# Latencystats\r\nlatency_percentiles_usec_"));
  CHECK(contains(lat, "latency_percentiles_usec_set:p50="));
  CHECK(contains(lat, ",p99="));
  CHECK(contains(lat, ",p99.9="));
  CHECK(s.run({"CONFIG", "SET", "latency-tracking-info-percentiles", "90"}) == kOk);
  CHECK(contains(s.run({"INFO", "latencystats"}), "latency_percentiles_usec_get:p90="));
  CHECK(s.run({"CONFIG", "RESETSTAT"}) == kOk);
  CHECK(s.run({"CONFIG", "SET", "latency-tracking", "no"}) == kOk);
  s.run({"GET", "a"});
  CHECK_FALSE(contains(s.run({"INFO", "latencystats"}), "latency_percentiles_usec_get"));
  CHECK(contains(s.run({"INFO", "commandstats"}), "cmdstat_get:calls=1,"));
  // HotKV's own commands are counted and timed like every other.
  CHECK(s.run({"CONFIG", "SET", "latency-tracking", "yes"}) == kOk);
  s.run({"GCRA.LIMIT", "rl", "1000", "10"});
  s.run({"INV.CREATE", "item", "5"});
  s.run({"INV.RESERVE", "item", "h1", "1", "60000"});
  std::string own = s.run({"INFO", "commandstats", "latencystats"});
  for (const char* name : {"gcra.limit", "inv.create", "inv.reserve"}) {
    INFO(name);
    CHECK(contains(own, std::string("cmdstat_") + name + ":calls=1,"));
    CHECK(contains(own, std::string("latency_percentiles_usec_") + name + ":p90="));
  }
  std::string everything = s.run({"INFO", "everything"});
  CHECK(contains(everything, "# Latencystats"));
  CHECK(contains(everything, "# Commandstats"));
}
