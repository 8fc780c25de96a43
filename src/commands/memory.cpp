// MEMORY: USAGE (one key's bytes), STATS, DOCTOR, MALLOC-STATS, PURGE and HELP, with Redis 7's
// reply shapes. The figures are memory_figures.hpp's (measured where the allocator or the
// kernel says, estimated where noted there); MALLOC-STATS is the allocator's own report and
// PURGE asks it to hand free pages back (util/memory.hpp).

#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/errors_values.hpp"
#include "hotkv/commands/families.hpp"
#include "hotkv/commands/memory_figures.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/commands/subcommands.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/util/memory.hpp"

namespace hotkv {
namespace {

// USAGE key [SAMPLES count]. The usage is the value's own estimate (Value::memory_bytes: its
// structures and strings, counted whole, so SAMPLES is validated and otherwise has no effect)
// plus the key and its table entry; nil for a missing key.
void memory_usage(CommandContext& ctx) {
  if (ctx.argc() < 3) {
    ctx.error(err::kMemoryUsageArity);
    return;
  }
  for (size_t i = 3; i < ctx.argc(); i += 2) {
    int64_t samples = 0;
    if (!strcasecmp_view(ctx.arg(i), "SAMPLES") || i + 1 >= ctx.argc()) {
      ctx.error(err::kSyntax);
      return;
    }
    if (!ctx.int_arg_or_reply(i + 1, samples)) {
      return;
    }
    if (samples < 0) {
      ctx.error(err::kSyntax);
      return;
    }
  }
  Value* v = ctx.db(ctx.arg(2)).find(ctx.arg(2), ctx.now_ms);
  if (v == nullptr) {
    ctx.reply.null();
    return;
  }
  // The key's bytes and a table entry (chain pointer, key length, the value: types/dict.hpp).
  size_t usage = v->memory_bytes() + ctx.arg(2).size() + sizeof(void*) + sizeof(uint32_t);
  ctx.reply.integer(static_cast<int64_t>(usage));
}

double percent(uint64_t part, uint64_t whole) {
  return whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

// STATS: Redis 7.0's fields in its order. Client buffers, AOF buffers and cluster links are
// not accounted apart (0); per-database hash table overheads are not listed.
void memory_stats(CommandContext& ctx) {
  MemoryFigures m = memory_figures(ctx.engine);
  uint64_t net = m.used > m.startup ? m.used - m.startup : 0;
  ctx.reply.map(27);
  auto num = [&](const char* name, int64_t v) {
    ctx.reply.bulk(name);
    ctx.reply.integer(v);
  };
  auto real = [&](const char* name, double v) {
    ctx.reply.bulk(name);
    ctx.reply.dbl(v);
  };
  num("peak.allocated", static_cast<int64_t>(m.peak));
  num("total.allocated", static_cast<int64_t>(m.used));
  num("startup.allocated", static_cast<int64_t>(m.startup));
  num("replication.backlog", static_cast<int64_t>(m.replication_backlog));
  num("clients.slaves", 0);
  num("clients.normal", 0);
  num("cluster.links", 0);
  num("aof.buffer", 0);
  num("lua.caches", static_cast<int64_t>(m.scripts));
  num("functions.caches", 0);
  num("overhead.total", static_cast<int64_t>(m.overhead));
  num("keys.count", static_cast<int64_t>(m.keys));
  num("keys.bytes-per-key", m.keys == 0 ? 0 : static_cast<int64_t>(net / m.keys));
  num("dataset.bytes", static_cast<int64_t>(m.dataset));
  real("dataset.percentage", percent(m.dataset, net));
  real("peak.percentage", percent(m.used, m.peak));
  num("allocator.allocated", static_cast<int64_t>(m.allocator_allocated));
  num("allocator.active", static_cast<int64_t>(m.allocator_active));
  num("allocator.resident", static_cast<int64_t>(m.allocator_resident));
  real("allocator-fragmentation.ratio", memory_ratio(m.allocator_active, m.allocator_allocated));
  num("allocator-fragmentation.bytes",
      memory_difference(m.allocator_active, m.allocator_allocated));
  real("allocator-rss.ratio", memory_ratio(m.allocator_resident, m.allocator_active));
  num("allocator-rss.bytes", memory_difference(m.allocator_resident, m.allocator_active));
  real("rss-overhead.ratio", memory_ratio(m.rss, m.allocator_resident));
  num("rss-overhead.bytes", memory_difference(m.rss, m.allocator_resident));
  real("fragmentation", memory_ratio(m.rss, m.used));
  num("fragmentation.bytes", memory_difference(m.rss, m.used));
}

// DOCTOR: a short report on what the figures suggest, in plain words.
void memory_doctor(CommandContext& ctx) {
  MemoryFigures m = memory_figures(ctx.engine);
  constexpr uint64_t kSmall = 5 * 1024 * 1024;
  std::string report;
  if (m.used < kSmall || m.keys == 0) {
    report = "This instance holds too little data for a memory diagnosis (" + human_bytes(m.used) +
             " in use, " + std::to_string(m.keys) + " keys). Ask again once it holds a data set.\n";
  } else {
    if (m.peak > m.used + m.used / 2) {
      report += fmt::format(
          "* Peak memory: {} were in use at the peak, {} now. Memory freed since may still be "
          "held by the allocator (see the fragmentation below); MEMORY PURGE asks it to give "
          "free pages back.\n",
          human_bytes(m.peak), human_bytes(m.used));
    }
    if (m.rss > m.used + m.used * 2 / 5 && m.rss - m.used > 10 * 1024 * 1024) {
      report += fmt::format(
          "* High fragmentation: the process is resident in {} for {} in use (ratio {:.2f}). "
          "Many deleted or shrunk values leave holes the allocator cannot return; MEMORY PURGE "
          "may help, a restart from the log or a snapshot always does.\n",
          human_bytes(m.rss), human_bytes(m.used), memory_ratio(m.rss, m.used));
    }
    if (m.keys > 0 && (m.used - std::min(m.used, m.startup)) / m.keys > 1024 * 1024) {
      report +=
          "* Big values: keys average more than 1 MB each; MEMORY USAGE and "
          "redis-cli --memkeys find the largest.\n";
    }
    report = report.empty() ? "No memory problem found: use, peak and fragmentation look healthy.\n"
                            : "Memory report:\n\n" + report;
  }
  ctx.reply.verbatim(report);
}

// MALLOC-STATS: the allocator's own report (jemalloc's malloc_stats_print, as on Redis).
void memory_malloc_stats(CommandContext& ctx) { ctx.reply.verbatim(allocator_report()); }

void memory_help(CommandContext& ctx) {
  static const char* kHelp[] = {
      "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "DOCTOR",
      "    Return a report on what the memory figures suggest.",
      "MALLOC-STATS",
      "    Return the allocator's own statistics.",
      "PURGE",
      "    Ask the allocator to return free memory to the system.",
      "STATS",
      "    Return the memory figures of the server.",
      "USAGE <key> [SAMPLES <count>]",
      "    Return memory in bytes used by <key> and its value (nested values are",
      "    counted whole; <count> is accepted for compatibility).",
      "HELP",
      "    Print this help."};
  ctx.reply.array(std::size(kHelp));
  for (const char* line : kHelp) {
    ctx.reply.simple(line);
  }
}

constexpr Subcommand kMemorySubcommands[] = {
    {"USAGE", -3, memory_usage},
    {"STATS", 2, memory_stats},
    {"DOCTOR", 2, memory_doctor},
    {"MALLOC-STATS", 2, memory_malloc_stats},
    {"PURGE", 2,
     [](CommandContext& ctx) {
       release_free_memory();
       ctx.reply.ok();
     }},
    {"HELP", 2, memory_help},
};

void cmd_memory(CommandContext& ctx) { run_subcommand(ctx, kMemorySubcommands, "MEMORY"); }

// MEMORY USAGE's key; the other subcommands have none.
void memory_keys(std::span<const std::string_view> argv, std::vector<size_t>& out) {
  if (argv.size() >= 3 && strcasecmp_view(argv[1], "USAGE")) {
    out.push_back(2);
  }
}

}  // namespace

void register_memory(Table& t) {
  // clang-format off
  t.add({"MEMORY", -2, kReadOnly, key_finder(2, 2, 1, memory_keys), cmd_memory, "server", "MEMORY USAGE key [SAMPLES count] | STATS | DOCTOR | MALLOC-STATS | PURGE | HELP", "Reports memory use: of one key (USAGE), of the server (STATS, DOCTOR, MALLOC-STATS); PURGE returns free memory to the system.", {"usage", "stats", "doctor", "malloc-stats", "purge", "help"}});
  // clang-format on
}

}  // namespace hotkv
