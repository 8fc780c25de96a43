#!/usr/bin/python3
"""hotkv-sale --report: the sale over time as a self-contained page, checked in a browser.

- A native sale against hotkv and a Lua sale against a redis-server started alongside each
  write a report; headless Chromium (Debian's `chromium`) opens it from disk with the network
  off, runs its script and renders the charts; the totals the page recomputes from its own
  series (holds taken, units paid, sold-out answers, rate-limit refusals) equal the numbers
  the simulator printed.
- The page loads nothing: no src or href attribute, no URL but the SVG namespace.

Every run is bounded by --duration-s and a subprocess timeout.

Run: /usr/bin/python3 test_sale_report.py --server build/hotkv --threads 0
"""

import html.parser
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from server import Server, case, hotkv_only, run_cases  # noqa: E402

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--virtual-time-budget=5000"]


def chromium():
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    raise AssertionError("chromium not found (scripts/deps.sh --test installs it)")


class IdText(html.parser.HTMLParser):
    """Text of every element with an id, and the attributes of <body>."""

    def __init__(self):
        super().__init__()
        self.by_id = {}
        self.body = {}
        self.urls = []
        self._stack = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "body":
            self.body = a
        for k in ("src", "href"):
            if k in a:
                self.urls.append(a[k])
        self._stack.append(a.get("id"))
        if a.get("id"):
            self.by_id.setdefault(a["id"], "")

    def handle_endtag(self, tag):
        if self._stack:
            self._stack.pop()

    def handle_data(self, data):
        for i in self._stack:
            if i:
                self.by_id[i] = self.by_id.get(i, "") + data


def run_sale(t, port, style, extra, report):
    exe = os.path.join(os.path.dirname(t.binary), "hotkv-sale")
    assert os.access(exe, os.X_OK), "missing %s" % exe
    cmd = [exe, "--port", str(port), "--style", style, "--shoppers", "400", "--units", "60",
           "--bots", "0.2", "--abandon", "0.3", "--hold-ttl-ms", "800", "--pay-min-ms", "20",
           "--pay-max-ms", "300", "--arrival-ms", "300", "--linger-ms", "500",
           "--duration-s", "30", "--seed", "11", "--cleanup", "--report", report] + extra
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=90)
    assert p.returncode == 0, "%s\n%s\n%s" % (" ".join(cmd), p.stdout, p.stderr)
    return p.stdout


def printed(out):
    """The summary numbers the page must reproduce."""
    def grab(pattern):
        m = re.search(pattern, out, re.M)
        assert m, "no %r in\n%s" % (pattern, out)
        return [int(g) for g in m.groups()]
    taken, paid = grab(r"^\s+holds\s+(\d+) taken, (\d+) paid")
    limited, soldout, owner = grab(r"^\s+attempts\s+\d+ \(rate limited (\d+), sold out (\d+), "
                                   r"owner limit (\d+)\)")
    # ("available at end" is read a moment after the last sample, while expired holds may
    # still be coming back, so it is shown on the page but not compared.)
    return {"total-reserves": taken, "final-sold": paid, "total-limited": limited,
            "total-soldout": soldout + owner}


def check_in_browser(report, want):
    with open(report) as f:
        page = f.read()
    profile = tempfile.mkdtemp(prefix="hotkv-chromium-")
    try:
        p = subprocess.run([chromium()] + CHROMIUM_FLAGS + ["--user-data-dir=" + profile,
                                                            "--dump-dom", "file://" + report],
                           capture_output=True, text=True, timeout=120)
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    assert p.returncode == 0 and "<svg" in p.stdout, p.stderr[-2000:]
    dom = IdText()
    dom.feed(p.stdout)
    assert dom.body.get("data-rendered") == "yes", "the page's script did not finish"
    assert dom.urls == [], dom.urls
    urls = set(re.findall(r"https?://[^\s\"'`<>]+", page))
    assert urls <= {"http://www.w3.org/2000/svg"}, urls
    # Four charts, each with a line per series.
    assert p.stdout.count("<svg") == 4 and p.stdout.count("<polyline") == 9, p.stdout[:500]
    got = {k: int(dom.by_id[k]) for k in want}
    assert got == want, "page %r, printed %r" % (got, want)
    assert int(dom.by_id["samples"]) >= 3


@case
@hotkv_only("hotkv-sale is built next to hotkv")
def native_sale_report_matches_the_summary_in_chromium(t, srv):
    """Native sale on hotkv: the page's recomputed totals equal the printed summary."""
    with tempfile.TemporaryDirectory() as d:
        report = os.path.join(d, "sale.html")
        out = run_sale(t, srv.port, "native", [], report)
        want = printed(out)
        assert want["final-sold"] > 0 and want["total-limited"] > 0, out
        check_in_browser(report, want)


@case
@hotkv_only("hotkv-sale is built next to hotkv")
def lua_sale_report_against_redis_server_matches_too(t, srv):
    """The same report for the seed's Lua reserve against a redis-server it starts."""
    with Server("redis") as ref, tempfile.TemporaryDirectory() as d:
        report = os.path.join(d, "sale.html")
        out = run_sale(t, ref.port, "lua", ["--no-ratelimit"], report)
        want = printed(out)
        assert want["final-sold"] > 0 and want["total-limited"] == 0, out
        check_in_browser(report, want)


if __name__ == "__main__":
    run_cases(__doc__.splitlines()[0])
