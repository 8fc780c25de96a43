// The sale report page (see sale_report.hpp).
#include "sale_report.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fmt/core.h>

namespace hotkv::sale {
namespace {

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// The series as a JSON array of objects; every value is a number, so nothing needs escaping.
std::string samples_json(const std::vector<Sample>& samples) {
  std::string out = "[";
  for (size_t i = 0; i < samples.size(); ++i) {
    const Sample& s = samples[i];
    out += fmt::format(
        "{}{{\"t\":{:.3f},\"available\":{},\"held\":{},\"sold\":{},\"reserves\":{},"
        "\"soldout\":{},\"limited_bots\":{},\"limited_humans\":{},\"p50\":{:.3f},\"p99\":{:.3f}}}",
        i == 0 ? "" : ",\n", s.t_s, s.available, s.held, s.sold, s.reserves, s.soldout,
        s.limited_bots, s.limited_humans, s.p50_ms, s.p99_ms);
  }
  out += "]";
  return out;
}

// Draws the charts from DATA and fills the "recomputed" table. Plain DOM and SVG, no library.
constexpr const char* kScript = R"JS(
const NS = "http://www.w3.org/2000/svg";
function el(name, attrs, parent) {
  const e = document.createElementNS(NS, name);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (parent) parent.appendChild(e);
  return e;
}
function chart(id, title, unit, series) {
  const W = 720, H = 240, L = 60, R = 150, T = 28, B = 36;
  const host = document.getElementById(id);
  const svg = el("svg", {width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: "img"}, host);
  const t = el("text", {x: L, y: 18, "font-size": 14, "font-weight": "bold"}, svg);
  t.textContent = `${title} (${unit})`;
  const xs = DATA.map(d => d.t);
  const xmax = Math.max(0.001, ...xs);
  let ymax = 1;
  for (const s of series) for (const d of DATA) ymax = Math.max(ymax, s.get(d));
  const X = x => L + (W - L - R) * x / xmax;
  const Y = y => H - B - (H - T - B) * y / ymax;
  el("line", {x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: "#444"}, svg);
  el("line", {x1: L, y1: T, x2: L, y2: H - B, stroke: "#444"}, svg);
  for (let i = 0; i <= 4; i++) {
    const v = ymax * i / 4, y = Y(v);
    el("line", {x1: L - 4, y1: y, x2: W - R, y2: y, stroke: "#ddd"}, svg);
    const lab = el("text", {x: L - 6, y: y + 4, "font-size": 10, "text-anchor": "end"}, svg);
    lab.textContent = v >= 100 ? Math.round(v) : v.toFixed(v >= 10 ? 1 : 2);
    const tx = xmax * i / 4;
    const xl = el("text", {x: X(tx), y: H - B + 14, "font-size": 10, "text-anchor": "middle"}, svg);
    xl.textContent = tx.toFixed(1) + " s";
  }
  series.forEach((s, i) => {
    const pts = DATA.map(d => `${X(d.t).toFixed(1)},${Y(s.get(d)).toFixed(1)}`).join(" ");
    el("polyline", {points: pts, fill: "none", stroke: s.color, "stroke-width": 2}, svg);
    el("rect", {x: W - R + 12, y: T + 16 * i, width: 10, height: 10, fill: s.color}, svg);
    const n = el("text", {x: W - R + 28, y: T + 9 + 16 * i, "font-size": 11}, svg);
    n.textContent = s.name;
  });
}
function per_second(field) {
  return d => { const i = DATA.indexOf(d); const dt = i == 0 ? d.t : d.t - DATA[i - 1].t;
                return dt > 0 ? d[field] / dt : 0; };
}
chart("stock", "Stock over the sale", "units", [
  {name: "available", color: "#2a7", get: d => d.available},
  {name: "held", color: "#e90", get: d => d.held},
  {name: "sold", color: "#36c", get: d => d.sold}]);
chart("rates", "Reserves and sold-out answers", "per s", [
  {name: "holds taken", color: "#2a7", get: per_second("reserves")},
  {name: "sold out", color: "#c33", get: per_second("soldout")}]);
chart("latency", "Reserve latency", "ms", [
  {name: "p50", color: "#36c", get: d => d.p50},
  {name: "p99", color: "#c33", get: d => d.p99}]);
chart("bots", "Refused by the rate limit", "per s", [
  {name: "bots", color: "#c33", get: per_second("limited_bots")},
  {name: "humans", color: "#888", get: per_second("limited_humans")}]);
const sum = f => DATA.reduce((a, d) => a + d[f], 0);
const last = DATA.length ? DATA[DATA.length - 1] : {sold: 0, available: 0, held: 0};
const totals = {
  "total-reserves": sum("reserves"),
  "total-soldout": sum("soldout"),
  "total-limited-bots": sum("limited_bots"),
  "total-limited": sum("limited_bots") + sum("limited_humans"),
  "final-sold": last.sold,
  "final-available": last.available,
  "samples": DATA.length,
};
for (const k in totals) document.getElementById(k).textContent = totals[k];
document.body.setAttribute("data-rendered", "yes");
)JS";

}  // namespace

std::string write_report(const std::string& path, const ReportMeta& meta,
                         const std::vector<Sample>& samples) {
  std::string facts;
  for (const auto& [label, value] : meta.facts) {
    facts +=
        fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", html_escape(label), html_escape(value));
  }
  std::string page = fmt::format(
      R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{0}</title>
<style>
body {{ font-family: sans-serif; margin: 24px; color: #222; }}
table {{ border-collapse: collapse; margin-bottom: 16px; }}
th, td {{ text-align: left; padding: 2px 12px 2px 0; font-size: 13px; }}
.charts div {{ margin: 8px 0; }}
</style></head>
<body data-rendered="no">
<h1>{0}</h1>
<h2>Summary (as printed by hotkv-sale)</h2>
<table id="summary">
{1}</table>
<h2>Over time</h2>
<div class="charts"><div id="stock"></div><div id="rates"></div><div id="latency"></div>
<div id="bots"></div></div>
<h2>Totals recomputed from the charts' data</h2>
<table id="recomputed">
<tr><th>holds taken</th><td id="total-reserves"></td></tr>
<tr><th>sold-out answers</th><td id="total-soldout"></td></tr>
<tr><th>bots refused by the rate limit</th><td id="total-limited-bots"></td></tr>
<tr><th>refused by the rate limit</th><td id="total-limited"></td></tr>
<tr><th>units paid at the end</th><td id="final-sold"></td></tr>
<tr><th>available at the end</th><td id="final-available"></td></tr>
<tr><th>samples</th><td id="samples"></td></tr>
</table>
<script>
const DATA = {2};
{3}
</script>
</body></html>
)",
      html_escape(meta.title), facts, samples_json(samples), kScript);
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    return fmt::format("cannot write {}: {}", path, std::strerror(errno));
  }
  bool ok = std::fwrite(page.data(), 1, page.size(), f) == page.size();
  ok = std::fclose(f) == 0 && ok;
  return ok ? std::string() : fmt::format("cannot write {}: {}", path, std::strerror(errno));
}

}  // namespace hotkv::sale
