// INFO's memory details, modules, latencystats and cluster sections (see info_sections.hpp).
#include "hotkv/commands/info_sections.hpp"

#include <fmt/format.h>

#include "hotkv/commands/command_call.hpp"
#include "hotkv/commands/context.hpp"
#include "hotkv/commands/memory_figures.hpp"
#include "hotkv/commands/script_store.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/util/strings.hpp"

namespace hotkv {

void info_memory_details(CommandContext& ctx, std::string& out) {
  MemoryFigures m = memory_figures(ctx.engine);
  size_t functions = 0;
  auto libraries = ctx.engine.scripts().libraries();
  for (const auto& lib : libraries) {
    functions += lib->functions.size();
  }
  out += fmt::format(
      "used_memory_peak:{}\r\nused_memory_peak_human:{}\r\nused_memory_peak_perc:{:.2f}%\r\n"
      "used_memory_overhead:{}\r\nused_memory_startup:{}\r\nused_memory_dataset:{}\r\n"
      "used_memory_dataset_perc:{:.2f}%\r\nallocator_allocated:{}\r\nallocator_active:{}\r\n"
      "allocator_resident:{}\r\ntotal_system_memory:{}\r\ntotal_system_memory_human:{}\r\n"
      "used_memory_scripts_human:{}\r\nnumber_of_functions:{}\r\nnumber_of_libraries:{}\r\n"
      "allocator_frag_ratio:{:.2f}\r\nallocator_frag_bytes:{}\r\nallocator_rss_ratio:{:.2f}\r\n"
      "allocator_rss_bytes:{}\r\nrss_overhead_ratio:{:.2f}\r\nrss_overhead_bytes:{}\r\n"
      "mem_fragmentation_bytes:{}\r\nlazyfree_pending_objects:0\r\nlazyfreed_objects:0\r\n",
      m.peak, human_bytes(m.peak), 100.0 * memory_ratio(m.used, m.peak), m.overhead, m.startup,
      m.dataset, 100.0 * memory_ratio(m.dataset, m.used > m.startup ? m.used - m.startup : 0),
      m.allocator_allocated, m.allocator_active, m.allocator_resident, m.total_system,
      human_bytes(m.total_system), human_bytes(m.scripts), functions, libraries.size(),
      memory_ratio(m.allocator_active, m.allocator_allocated),
      memory_difference(m.allocator_active, m.allocator_allocated),
      memory_ratio(m.allocator_resident, m.allocator_active),
      memory_difference(m.allocator_resident, m.allocator_active),
      memory_ratio(m.rss, m.allocator_resident), memory_difference(m.rss, m.allocator_resident),
      memory_difference(m.rss, m.used));
}

void info_modules(CommandContext&, std::string& out) { out += "# Modules\r\n\r\n"; }

void info_latencystats(CommandContext& ctx, std::string& out) {
  out += "# Latencystats\r\n";
  if (!ctx.engine.config().latency_tracking.load(std::memory_order_relaxed)) {
    out += "\r\n";
    return;
  }
  std::vector<double> percentiles = ctx.engine.config().latency_percentiles();
  auto line = [&](const std::string& name, const CommandTotals& t) {
    if (t.latency.summary().calls == 0) {  // none timed (latency-tracking was off)
      return;
    }
    std::string figures;
    for (double p : percentiles) {
      figures +=
          fmt::format("{}p{}={:.3f}", figures.empty() ? "" : ",", p, t.latency.percentile(p));
    }
    out += fmt::format("latency_percentiles_usec_{}:{}\r\n", name, figures);
  };
  const Table& table = ctx.engine.table();
  for (const auto& spec : table.all()) {
    line(ascii_lower(spec.name), command_totals(ctx.engine, spec.id));
    for (size_t i = 0; i < spec.subcommands.size(); ++i) {
      line(stat_slot_name(spec, i), command_totals(ctx.engine, table.subcommand_slot(spec, i)));
    }
  }
  out += "\r\n";
}

void info_cluster(CommandContext&, std::string& out) {
  out += "# Cluster\r\ncluster_enabled:0\r\n\r\n";
}

}  // namespace hotkv
