// Stream consumer-group throughput driver for scripts/bench.sh (case `xreadgroup`), for any
// Redis-protocol server: fills one stream with pipelined XADDs, creates a group at 0, then
// CONSUMERS threads (one connection each) loop `XREADGROUP GROUP g c<i> COUNT n STREAMS key >`
// and one `XACK key g <ids...>` for what they got, until the stream is drained. Only the drain
// is timed, and with --server-pid the server's CPU ticks are read from /proc around the drain
// only, so the fill is not counted. Every loop is bounded by --time-limit.
//
// Prints one line of `name value` pairs on stdout (entries_acked, seconds, entries_per_sec,
// server_cpu_ticks, clk_tck); progress and errors go to stderr. Exit status 1 when the drain
// did not acknowledge every entry or left entries pending, 2 on a usage or connection error.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "bench_client.hpp"
#include "bench_options.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string host = "127.0.0.1";
  int port = 6379;
  std::string key = "bench:stream";
  std::string group = "g";
  int64_t entries = 200000;
  int consumers = 4;
  int count = 50;
  int fill_batch = 1000;
  double time_limit_s = 120;
  long server_pid = 0;  // 0: do not read server CPU
};

using bench::command;
using bench::Context;
using bench::error_text;
using bench::is_error;
using bench::Reply;

constexpr const char* kTool = "stream_consumers";

[[noreturn]] void usage_exit(const char* msg) {
  std::fprintf(stderr,
               "stream_consumers: %s\nusage: hotkv_stream_bench --port P [--host H] [--key K] "
               "[--group G] [--entries N] [--consumers C] [--count N] [--fill-batch N] "
               "[--time-limit S] [--server-pid PID]\n",
               msg);
  std::exit(2);
}

Options parse_options(int argc, char** argv) {
  Options o;
  bench::parse_options(argc, argv,
                       {{"--host", &o.host},
                        {"--port", &o.port},
                        {"--key", &o.key},
                        {"--group", &o.group},
                        {"--entries", &o.entries},
                        {"--consumers", &o.consumers},
                        {"--count", &o.count},
                        {"--fill-batch", &o.fill_batch},
                        {"--time-limit", &o.time_limit_s},
                        {"--server-pid", &o.server_pid}},
                       usage_exit);
  if (o.port <= 0 || o.entries <= 0 || o.consumers <= 0 || o.consumers > 256 || o.count <= 0 ||
      o.fill_batch <= 0 || o.time_limit_s <= 0) {
    usage_exit("bad option value");
  }
  return o;
}

Context connect_or_exit(const Options& o) { return bench::connect_or_exit(kTool, o.host, o.port); }

int64_t server_cpu_ticks(long pid) { return bench::server_cpu_ticks(kTool, pid); }

// Pipelines XADD key * field value in batches of fill_batch replies.
void fill_or_exit(redisContext* c, const Options& o) {
  Reply del = command(c, {"DEL", o.key});
  if (is_error(del)) {
    std::fprintf(stderr, "stream_consumers: DEL: %s\n", error_text(c, del));
    std::exit(2);
  }
  for (int64_t done = 0; done < o.entries;) {
    int64_t batch = std::min<int64_t>(o.fill_batch, o.entries - done);
    for (int64_t i = 0; i < batch; ++i) {
      const char* argv[] = {"XADD", o.key.c_str(), "*", "field", "value"};
      size_t lens[] = {4, o.key.size(), 1, 5, 5};
      redisAppendCommandArgv(c, 5, argv, lens);
    }
    for (int64_t i = 0; i < batch; ++i) {
      void* raw = nullptr;
      if (redisGetReply(c, &raw) != REDIS_OK) {
        std::fprintf(stderr, "stream_consumers: XADD: %s\n", c->errstr);
        std::exit(2);
      }
      Reply r(static_cast<redisReply*>(raw));
      if (r->type != REDIS_REPLY_STRING) {
        std::fprintf(stderr, "stream_consumers: XADD replied type %d: %s\n", r->type,
                     r->type == REDIS_REPLY_ERROR ? r->str : "");
        std::exit(2);
      }
    }
    done += batch;
  }
  Reply len = command(c, {"XLEN", o.key});
  if (is_error(len) || len->type != REDIS_REPLY_INTEGER || len->integer != o.entries) {
    std::fprintf(stderr, "stream_consumers: XLEN after fill is not %lld\n",
                 static_cast<long long>(o.entries));
    std::exit(2);
  }
  Reply create = command(c, {"XGROUP", "CREATE", o.key, o.group, "0"});
  if (is_error(create)) {
    std::fprintf(stderr, "stream_consumers: XGROUP CREATE: %s\n", error_text(c, create));
    std::exit(2);
  }
}

struct ConsumerResult {
  int64_t acked = 0;
  int64_t round_trips = 0;
  bool failed = false;
  bool timed_out = false;
};

// One consumer: read up to COUNT new entries, acknowledge them all with one XACK, repeat until
// XREADGROUP returns nil (nothing left to deliver to the group). Each round trip that delivers
// anything consumes at least one entry, so entries + 1 rounds is a hard cap besides the time.
void consume(redisContext* c, const Options& o, int index, Clock::time_point deadline,
             const std::atomic<bool>& go, ConsumerResult& out) {
  while (!go.load(std::memory_order_acquire)) {
    std::this_thread::yield();
  }
  // Appended rather than "c" + to_string(): GCC 12 warns falsely (-Wrestrict, bug 105329).
  std::string consumer = "c";
  consumer += std::to_string(index);
  const std::string count = std::to_string(o.count);
  std::vector<std::string> ids;
  std::vector<std::string_view> ack;
  for (int64_t round = 0; round <= o.entries; ++round) {
    if (Clock::now() >= deadline) {
      out.timed_out = true;
      return;
    }
    Reply r = command(
        c, {"XREADGROUP", "GROUP", o.group, consumer, "COUNT", count, "STREAMS", o.key, ">"});
    ++out.round_trips;
    if (is_error(r)) {
      std::fprintf(stderr, "stream_consumers: %s XREADGROUP: %s\n", consumer.c_str(),
                   error_text(c, r));
      out.failed = true;
      return;
    }
    if (r->type == REDIS_REPLY_NIL || (r->type == REDIS_REPLY_ARRAY && r->elements == 0)) {
      return;  // drained
    }
    // [[key, [[id, [field, value]], ...]]]
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 1 ||
        r->element[0]->type != REDIS_REPLY_ARRAY || r->element[0]->elements != 2 ||
        r->element[0]->element[1]->type != REDIS_REPLY_ARRAY) {
      std::fprintf(stderr, "stream_consumers: %s: unexpected XREADGROUP reply shape\n",
                   consumer.c_str());
      out.failed = true;
      return;
    }
    const redisReply* list = r->element[0]->element[1];
    ids.clear();
    for (size_t i = 0; i < list->elements; ++i) {
      const redisReply* entry = list->element[i];
      if (entry->type != REDIS_REPLY_ARRAY || entry->elements != 2 ||
          entry->element[0]->type != REDIS_REPLY_STRING) {
        std::fprintf(stderr, "stream_consumers: %s: unexpected entry shape\n", consumer.c_str());
        out.failed = true;
        return;
      }
      ids.emplace_back(entry->element[0]->str, entry->element[0]->len);
    }
    if (ids.empty()) {
      return;
    }
    ack.assign({"XACK", o.key, o.group});
    for (const std::string& id : ids) {
      ack.push_back(id);
    }
    Reply a = command(c, ack);
    ++out.round_trips;
    if (is_error(a) || a->type != REDIS_REPLY_INTEGER ||
        a->integer != static_cast<long long>(ids.size())) {
      std::fprintf(stderr, "stream_consumers: %s XACK of %zu ids: %s\n", consumer.c_str(),
                   ids.size(), is_error(a) ? error_text(c, a) : "wrong count");
      out.failed = true;
      return;
    }
    out.acked += static_cast<int64_t>(ids.size());
  }
}

// XPENDING key group -> [count, ...]; returns the pending count, or -1 on error.
long long pending(redisContext* c, const Options& o) {
  Reply r = command(c, {"XPENDING", o.key, o.group});
  if (is_error(r) || r->type != REDIS_REPLY_ARRAY || r->elements < 1 ||
      r->element[0]->type != REDIS_REPLY_INTEGER) {
    return -1;
  }
  return r->element[0]->integer;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse_options(argc, argv);
  Context admin = connect_or_exit(o);
  fill_or_exit(admin.get(), o);

  std::vector<Context> conns;
  for (int i = 0; i < o.consumers; ++i) {
    conns.push_back(connect_or_exit(o));
  }
  std::vector<ConsumerResult> results(static_cast<size_t>(o.consumers));
  std::atomic<bool> go{false};
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(o.time_limit_s));
  std::vector<std::thread> threads;
  for (int i = 0; i < o.consumers; ++i) {
    threads.emplace_back(consume, conns[static_cast<size_t>(i)].get(), std::cref(o), i, deadline,
                         std::cref(go), std::ref(results[static_cast<size_t>(i)]));
  }

  const int64_t ticks_before = server_cpu_ticks(o.server_pid);
  const auto start = Clock::now();
  go.store(true, std::memory_order_release);
  for (std::thread& t : threads) {
    t.join();
  }
  const auto stop = Clock::now();
  const int64_t ticks_after = server_cpu_ticks(o.server_pid);

  int64_t acked = 0;
  int64_t round_trips = 0;
  bool ok = true;
  for (const ConsumerResult& r : results) {
    acked += r.acked;
    round_trips += r.round_trips;
    if (r.failed) {
      ok = false;
    }
    if (r.timed_out) {
      std::fprintf(stderr, "stream_consumers: time limit of %.0f s reached\n", o.time_limit_s);
      ok = false;
    }
  }
  const long long left = pending(admin.get(), o);
  if (acked != o.entries || left != 0) {
    std::fprintf(stderr, "stream_consumers: acknowledged %lld of %lld entries, %lld pending\n",
                 static_cast<long long>(acked), static_cast<long long>(o.entries), left);
    ok = false;
  }
  command(admin.get(), {"DEL", o.key});

  const double seconds = std::chrono::duration<double>(stop - start).count();
  std::printf(
      "entries_acked %lld seconds %.6f entries_per_sec %.0f server_cpu_ticks %lld clk_tck %ld "
      "round_trips %lld\n",
      static_cast<long long>(acked), seconds, static_cast<double>(acked) / seconds,
      static_cast<long long>(ticks_after - ticks_before), sysconf(_SC_CLK_TCK),
      static_cast<long long>(round_trips));
  return ok ? 0 : 1;
}
