// LATENCY: the latency monitor's reports (LATEST, HISTORY, RESET, GRAPH, DOCTOR) and the
// per-command latency histograms (HISTOGRAM), with Redis 7.0's reply shapes. The monitor's
// samples live in the engine (util/latency_monitor.hpp), recorded by the dispatcher after a
// command ("command", "fast-command") and by a shard after an expiry round ("expire-cycle")
// when they took at least latency-monitor-threshold ms; the histograms are the per-shard
// command statistics (shard/shard.hpp), summed here.
#include <string>
#include <string_view>
#include <vector>

#include "hotkv/commands/command_call.hpp"
#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/errors_server.hpp"
#include "hotkv/commands/families.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/commands/subcommands.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/util/strings.hpp"

namespace hotkv {
namespace {

int64_t now_s(CommandContext& ctx) { return ctx.now_ms / 1000; }

void latency_latest(CommandContext& ctx) {
  auto rows = ctx.engine.latency().latest();
  ctx.reply.array(rows.size());
  for (const auto& r : rows) {
    ctx.reply.array(4);
    ctx.reply.bulk(r.event);
    ctx.reply.integer(r.last.time_s);
    ctx.reply.integer(static_cast<int64_t>(r.last.latency_ms));
    ctx.reply.integer(static_cast<int64_t>(r.max_ms));
  }
}

void latency_history(CommandContext& ctx) {
  auto samples = ctx.engine.latency().history(ctx.arg(2));
  ctx.reply.array(samples.size());
  for (const auto& s : samples) {
    ctx.reply.array(2);
    ctx.reply.integer(s.time_s);
    ctx.reply.integer(static_cast<int64_t>(s.latency_ms));
  }
}

void latency_reset(CommandContext& ctx) {
  std::vector<std::string_view> events(ctx.argv.begin() + 2, ctx.argv.end());
  ctx.reply.integer(static_cast<int64_t>(ctx.engine.latency().reset(events)));
}

void latency_graph(CommandContext& ctx) {
  auto graph = ctx.engine.latency().graph(ctx.arg(2), now_s(ctx));
  if (!graph) {
    ctx.error(err::latency_no_samples(ctx.arg(2)));
    return;
  }
  ctx.reply.verbatim(*graph);
}

// One histogram entry: {calls: n, histogram_usec: {bound: calls at most that long, ...}}.
void reply_histogram(CommandContext& ctx, const std::string& name, const CommandTotals& t) {
  LatencySummary s = t.latency.summary();
  ctx.reply.bulk(name);
  ctx.reply.map(2);
  ctx.reply.bulk("calls");
  ctx.reply.integer(static_cast<int64_t>(s.calls));
  ctx.reply.bulk("histogram_usec");
  ctx.reply.map(s.cumulative.size());
  for (const auto& [bound, calls] : s.cumulative) {
    ctx.reply.integer(static_cast<int64_t>(bound));
    ctx.reply.integer(static_cast<int64_t>(calls));
  }
}

// The statistics slots one HISTOGRAM argument names: "get", "client|id", or "client" for
// every subcommand of CLIENT (Redis's rule). Unknown names name nothing.
struct NamedSlot {
  std::string name;
  size_t slot;
};
void slots_named(const Table& table, std::string_view arg, std::vector<NamedSlot>& out) {
  std::string_view parent = arg;
  std::string_view sub;
  if (size_t bar = arg.find('|'); bar != std::string_view::npos) {
    parent = arg.substr(0, bar);
    sub = arg.substr(bar + 1);
  }
  const CommandSpec* spec = table.find(parent);
  if (spec == nullptr) {
    return;
  }
  if (spec->subcommands.empty()) {
    if (sub.empty()) {
      out.push_back({ascii_lower(spec->name), spec->id});
    }
    return;
  }
  for (size_t i = 0; i < spec->subcommands.size(); ++i) {
    if (sub.empty() || ascii_lower(sub) == spec->subcommands[i]) {
      out.push_back({stat_slot_name(*spec, i), table.subcommand_slot(*spec, i)});
    }
  }
}

void latency_histogram(CommandContext& ctx) {
  const Table& table = ctx.engine.table();
  std::vector<NamedSlot> slots;
  if (ctx.argc() == 2) {
    for (const CommandSpec& spec : table.all()) {
      slots.push_back({ascii_lower(spec.name), spec.id});
      for (size_t i = 0; i < spec.subcommands.size(); ++i) {
        slots.push_back({stat_slot_name(spec, i), table.subcommand_slot(spec, i)});
      }
    }
  } else {
    for (size_t i = 2; i < ctx.argc(); ++i) {
      slots_named(table, ctx.arg(i), slots);
    }
  }
  // Only commands called since the start or the last CONFIG RESETSTAT, as on Redis.
  std::vector<std::pair<const NamedSlot*, CommandTotals>> called;
  for (const NamedSlot& s : slots) {
    CommandTotals t = command_totals(ctx.engine, s.slot);
    if (t.calls > 0) {
      called.emplace_back(&s, std::move(t));
    }
  }
  ctx.reply.map(called.size());
  for (const auto& [s, t] : called) {
    reply_histogram(ctx, s->name, t);
  }
}

void latency_help(CommandContext& ctx) {
  static const char* kHelp[] = {
      "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "DOCTOR",
      "    Report on the recorded latency events, with advice.",
      "GRAPH <event>",
      "    Draw the samples of <event> as an ASCII chart.",
      "HISTORY <event>",
      "    Return the (time, latency) samples of <event>.",
      "LATEST",
      "    Return the latest sample and the worst latency of every event.",
      "RESET [<event> ...]",
      "    Forget the samples of the given events (of every event without arguments).",
      "HISTOGRAM [<command> ...]",
      "    Return the cumulative latency distribution of the given commands (of every",
      "    command called so far without arguments).",
      "HELP",
      "    Print this help."};
  ctx.reply.array(std::size(kHelp));
  for (const char* line : kHelp) {
    ctx.reply.simple(line);
  }
}

// Each subcommand with its arity (as Redis 7 checks subcommands like commands of their own).
constexpr Subcommand kLatencySubcommands[] = {
    {"LATEST", 2, latency_latest},
    {"HISTORY", 3, latency_history},
    {"RESET", -2, latency_reset},
    {"GRAPH", 3, latency_graph},
    {"DOCTOR", 2,
     [](CommandContext& ctx) { ctx.reply.verbatim(ctx.engine.latency().doctor(now_s(ctx))); }},
    {"HISTOGRAM", -2, latency_histogram},
    {"HELP", 2, latency_help},
};

void cmd_latency(CommandContext& ctx) { run_subcommand(ctx, kLatencySubcommands, "LATENCY"); }

}  // namespace

void register_latency(Table& t) {
  // clang-format off
  t.add({"LATENCY", -2, kAdmin | kNoScript | kLoading | kStale, no_keys(), cmd_latency, "server", "LATENCY LATEST|HISTORY|RESET|GRAPH|DOCTOR|HISTOGRAM|HELP [arguments]", "Reports latency spikes (latency-monitor-threshold) and per-command latency histograms.", {"latest", "history", "reset", "graph", "doctor", "histogram", "help"}});
  // clang-format on
}

}  // namespace hotkv
