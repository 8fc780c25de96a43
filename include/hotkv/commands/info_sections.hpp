// INFO sections and fields beyond the core ones in server.cpp: the memory section's details
// (peak, allocator, fragmentation, dataset), and the modules, latencystats and cluster
// sections, with Redis 7.0's field names (what exporters and dashboards read).
#pragma once

#include <string>

namespace hotkv {

struct CommandContext;

// Appended to "# Memory" (before its blank line).
void info_memory_details(CommandContext& ctx, std::string& out);
// "# Modules": none are loaded.
void info_modules(CommandContext& ctx, std::string& out);
// "# Latencystats": each called command's latency percentiles
// (latency-tracking-info-percentiles) from its histogram, as Redis 7 prints them.
void info_latencystats(CommandContext& ctx, std::string& out);
// "# Cluster": cluster_enabled:0.
void info_cluster(CommandContext& ctx, std::string& out);

}  // namespace hotkv
