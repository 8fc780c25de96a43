// hotkv-sale --report FILE.html: the sale over time as one self-contained page (no network:
// the data is embedded as JSON and a small script draws SVG charts from it). The page also
// recomputes the sale's totals from the same series (units paid, holds taken, sold-out
// answers, rate-limit refusals), so a reader -- or a test driving a browser -- can check the
// charts against the printed summary.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace hotkv::sale {

// One sampling interval of the sale. Counts are for the interval; stock levels and latencies
// are as measured at its end.
struct Sample {
  double t_s = 0;              // seconds since the drop opened (end of the interval)
  int64_t available = 0;       // the server's available units (INV.GET, or the stock counter)
  int64_t held = 0;            // units in live holds
  int64_t sold = 0;            // units paid so far
  int64_t reserves = 0;        // holds taken in the interval
  int64_t soldout = 0;         // reserves answered sold out (or owner limit) in the interval
  int64_t limited_bots = 0;    // bots refused by the rate limit in the interval
  int64_t limited_humans = 0;  // humans refused by the rate limit in the interval
  double p50_ms = 0;           // reserve latency of the interval's reserves (0 if none)
  double p99_ms = 0;
};

struct ReportMeta {
  std::string title;                                       // e.g. "hotkv-sale: native on ..."
  std::vector<std::pair<std::string, std::string>> facts;  // label, value (the summary)
};

// Writes the page; returns an empty string or the reason it could not.
std::string write_report(const std::string& path, const ReportMeta& meta,
                         const std::vector<Sample>& samples);

}  // namespace hotkv::sale
