// Job-queue driver for scripts/bench.sh (case `brpop`), for any Redis-protocol server: CONSUMERS
// threads (one connection each) wait in `BRPOP key 1` on one empty list while PRODUCERS threads
// (one connection each) push the entries one `LPUSH key <n>` at a time, as workers and
// enqueuers of a job framework do. With far more consumers than producers most pushes find a
// blocked consumer, so this measures waking and serving blocked clients, not popping a backlog.
//
// Every entry is a distinct number; each one popped is marked, so an entry delivered twice or
// never fails the run. The clock runs from the first push to the last entry popped; with
// --server-pid the server's CPU ticks are read around the same window (plus the consumers'
// last timed-out BRPOPs, which cost nothing). Every loop is bounded by --time-limit.
//
// Prints one line of `name value` pairs on stdout (entries_popped, seconds, entries_per_sec,
// server_cpu_ticks, clk_tck, empty_pops); progress and errors go to stderr. Exit status 1 when
// an entry was lost or duplicated, 2 on a usage or connection error.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "bench_client.hpp"
#include "bench_options.hpp"

namespace {

using bench::command;
using bench::Context;
using bench::error_text;
using bench::is_error;
using bench::Reply;
using Clock = std::chrono::steady_clock;

constexpr const char* kTool = "blocking_queue";

struct Options {
  std::string host = "127.0.0.1";
  int port = 6379;
  std::string key = "bench:queue";
  int64_t entries = 200000;
  int consumers = 50;
  int producers = 4;
  double time_limit_s = 120;
  long server_pid = 0;  // 0: do not read server CPU
};

[[noreturn]] void usage_exit(const char* msg) {
  std::fprintf(stderr,
               "%s: %s\nusage: hotkv_queue_bench --port P [--host H] [--key K] [--entries N] "
               "[--consumers C] [--producers P] [--time-limit S] [--server-pid PID]\n",
               kTool, msg);
  std::exit(2);
}

Options parse_options(int argc, char** argv) {
  Options o;
  bench::parse_options(argc, argv,
                       {{"--host", &o.host},
                        {"--port", &o.port},
                        {"--key", &o.key},
                        {"--entries", &o.entries},
                        {"--consumers", &o.consumers},
                        {"--producers", &o.producers},
                        {"--time-limit", &o.time_limit_s},
                        {"--server-pid", &o.server_pid}},
                       usage_exit);
  if (o.port <= 0 || o.entries <= 0 || o.consumers <= 0 || o.consumers > 1000 || o.producers <= 0 ||
      o.producers > 64 || o.time_limit_s <= 0) {
    usage_exit("bad option value");
  }
  return o;
}

// What the threads share: the entries seen (one flag each), how many were popped, and when the
// last one was.
struct Shared {
  explicit Shared(int64_t entries) : seen(static_cast<size_t>(entries)) {}
  std::vector<std::atomic<bool>> seen;
  std::atomic<int64_t> popped{0};
  std::atomic<int64_t> duplicates{0};
  std::atomic<int64_t> foreign{0};  // values that are not one of our entries
  std::atomic<bool> failed{false};
  std::atomic<bool> go{false};
  std::atomic<int64_t> last_pop_ns{0};
};

void wait_go(const Shared& sh) {
  while (!sh.go.load(std::memory_order_acquire)) {
    std::this_thread::yield();
  }
}

// Producer `index` pushes entries index, index + producers, ... one LPUSH per round trip.
void produce(redisContext* c, const Options& o, int index, Clock::time_point deadline, Shared& sh) {
  wait_go(sh);
  std::string value;
  for (int64_t v = index; v < o.entries; v += o.producers) {
    if (Clock::now() >= deadline || sh.failed.load(std::memory_order_relaxed)) {
      return;
    }
    value = std::to_string(v);
    Reply r = command(c, {"LPUSH", o.key, value});
    if (is_error(r) || r->type != REDIS_REPLY_INTEGER) {
      std::fprintf(stderr, "%s: LPUSH: %s\n", kTool, is_error(r) ? error_text(c, r) : "type");
      sh.failed.store(true);
      return;
    }
  }
}

// A consumer pops until every entry was popped (by anyone) or the time is up. BRPOP's 1 s
// timeout lets it notice the end; a nil reply is an empty pop, counted.
void consume(redisContext* c, const Options& o, Clock::time_point deadline, Clock::time_point t0,
             Shared& sh, int64_t& empty_pops) {
  wait_go(sh);
  while (sh.popped.load(std::memory_order_acquire) < o.entries) {
    if (Clock::now() >= deadline || sh.failed.load(std::memory_order_relaxed)) {
      return;
    }
    Reply r = command(c, {"BRPOP", o.key, "1"});
    if (is_error(r)) {
      std::fprintf(stderr, "%s: BRPOP: %s\n", kTool, error_text(c, r));
      sh.failed.store(true);
      return;
    }
    if (r->type == REDIS_REPLY_NIL) {
      ++empty_pops;
      continue;
    }
    // [key, value]
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
        r->element[1]->type != REDIS_REPLY_STRING) {
      std::fprintf(stderr, "%s: unexpected BRPOP reply shape\n", kTool);
      sh.failed.store(true);
      return;
    }
    char* end = nullptr;
    long long v = std::strtoll(r->element[1]->str, &end, 10);
    if (end == r->element[1]->str || v < 0 || v >= o.entries) {
      sh.foreign.fetch_add(1);
    } else if (sh.seen[static_cast<size_t>(v)].exchange(true)) {
      sh.duplicates.fetch_add(1);
    }
    if (sh.popped.fetch_add(1, std::memory_order_acq_rel) + 1 == o.entries) {
      sh.last_pop_ns.store(
          std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count());
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse_options(argc, argv);
  Context admin = bench::connect_or_exit(kTool, o.host, o.port);
  Reply del = command(admin.get(), {"DEL", o.key});
  if (is_error(del)) {
    std::fprintf(stderr, "%s: DEL: %s\n", kTool, error_text(admin.get(), del));
    return 2;
  }

  std::vector<Context> consumer_conns;
  std::vector<Context> producer_conns;
  for (int i = 0; i < o.consumers; ++i) {
    consumer_conns.push_back(bench::connect_or_exit(kTool, o.host, o.port));
  }
  for (int i = 0; i < o.producers; ++i) {
    producer_conns.push_back(bench::connect_or_exit(kTool, o.host, o.port));
  }
  Shared sh(o.entries);
  std::vector<int64_t> empty(static_cast<size_t>(o.consumers), 0);
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(o.time_limit_s));
  const auto t0 = Clock::now();
  std::vector<std::thread> threads;
  for (int i = 0; i < o.consumers; ++i) {
    threads.emplace_back(consume, consumer_conns[static_cast<size_t>(i)].get(), std::cref(o),
                         deadline, t0, std::ref(sh), std::ref(empty[static_cast<size_t>(i)]));
  }
  // The consumers block first: give them a moment to be waiting in BRPOP.
  sh.go.store(true, std::memory_order_release);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const int64_t ticks_before = bench::server_cpu_ticks(kTool, o.server_pid);
  const auto start = Clock::now();
  for (int i = 0; i < o.producers; ++i) {
    threads.emplace_back(produce, producer_conns[static_cast<size_t>(i)].get(), std::cref(o), i,
                         deadline, std::ref(sh));
  }
  for (std::thread& t : threads) {
    t.join();
  }
  const int64_t ticks_after = bench::server_cpu_ticks(kTool, o.server_pid);

  bool ok = !sh.failed.load();
  const int64_t popped = sh.popped.load();
  int64_t missing = 0;
  for (const auto& s : sh.seen) {
    missing += s.load() ? 0 : 1;
  }
  if (popped != o.entries || missing != 0 || sh.duplicates.load() != 0 || sh.foreign.load() != 0) {
    std::fprintf(stderr,
                 "%s: popped %lld of %lld entries: %lld missing, %lld twice, %lld foreign\n", kTool,
                 static_cast<long long>(popped), static_cast<long long>(o.entries),
                 static_cast<long long>(missing), static_cast<long long>(sh.duplicates.load()),
                 static_cast<long long>(sh.foreign.load()));
    ok = false;
  }
  if (Clock::now() >= deadline) {
    std::fprintf(stderr, "%s: time limit of %.0f s reached\n", kTool, o.time_limit_s);
    ok = false;
  }
  command(admin.get(), {"DEL", o.key});

  int64_t empty_pops = 0;
  for (int64_t e : empty) {
    empty_pops += e;
  }
  const double seconds = std::max(1e-9, static_cast<double>(sh.last_pop_ns.load()) / 1e9 -
                                            std::chrono::duration<double>(start - t0).count());
  std::printf(
      "entries_popped %lld seconds %.6f entries_per_sec %.0f server_cpu_ticks %lld clk_tck %ld "
      "empty_pops %lld\n",
      static_cast<long long>(popped), seconds, static_cast<double>(popped) / seconds,
      static_cast<long long>(ticks_after - ticks_before), sysconf(_SC_CLK_TCK),
      static_cast<long long>(empty_pops));
  return ok ? 0 : 1;
}
