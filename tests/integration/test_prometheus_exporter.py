#!/usr/bin/python3
"""The Prometheus exporter (Debian's prometheus-redis-exporter) scraping the server, as an
operator's dashboard would.

The exporter runs INFO ALL, CONFIG GET *, SLOWLOG and the keyspace section on every scrape and
turns each field into a series; a field it cannot parse, or a command that fails, shows up as
a scrape error, a missing series or a line in its log. After traffic (SET/GET, an INV.RESERVE
on hotkv, commands slow enough for the slow log when the server has one), one scrape must
show:

- no scrape errors (redis_up 1, redis_exporter_last_scrape_error 0) and no errors or
  warnings in the exporter's log;
- memory (redis_memory_used_bytes > 0, redis_memory_max_bytes, peak and fragmentation),
  clients (redis_connected_clients), commands (redis_commands_total and
  redis_commands_duration_seconds_total per cmd, inv.reserve among them), errors per type,
  the keyspace (redis_db_keys), latency percentiles per command (from INFO latencystats),
  uptime and config (redis_config_maxclients);
- the slow log's length and last id, only if the server answers SLOWLOG LEN.

Run: /usr/bin/python3 test_prometheus_exporter.py --server build/hotkv --threads 4
     (or --kind redis)
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from server import RespError, case, free_port, run_cases, wait_for  # noqa: E402

EXPORTER = shutil.which("prometheus-redis-exporter") or "/usr/bin/prometheus-redis-exporter"
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)$')
LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


class Exporter:
    """One exporter process pointed at `port`, on a port of its own, logging to a file."""

    def __init__(self, port):
        if not os.access(EXPORTER, os.X_OK):
            raise AssertionError("%s is not installed (scripts/deps.sh --test installs it)"
                                 % EXPORTER)
        self.port = free_port()
        self.log = tempfile.NamedTemporaryFile(prefix="exporter-", suffix=".log", delete=False)
        self.proc = subprocess.Popen(
            [EXPORTER, "--redis.addr", "redis://127.0.0.1:%d" % port,
             "--web.listen-address", "127.0.0.1:%d" % self.port],
            stdout=self.log, stderr=subprocess.STDOUT)

    def __enter__(self):
        wait_for(lambda: self._up(), "the exporter to listen", timeout=10,
                 tolerate=(OSError,))
        return self

    def __exit__(self, *exc):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        os.unlink(self.log.name)

    def _up(self):
        with urllib.request.urlopen("http://127.0.0.1:%d/" % self.port, timeout=2):
            return True

    def scrape(self):
        """{name: [(labels dict, value)]} of one /metrics page."""
        url = "http://127.0.0.1:%d/metrics" % self.port
        with urllib.request.urlopen(url, timeout=20) as r:
            text = r.read().decode()
        series = {}
        for line in text.splitlines():
            if not line or line.startswith("#"):
                continue
            m = SAMPLE.match(line)
            assert m, "unparsable metrics line: %r" % line
            labels = dict(LABEL.findall(m.group(3) or ""))
            series.setdefault(m.group(1), []).append((labels, float(m.group(4))))
        return series

    def log_text(self):
        with open(self.log.name, errors="replace") as f:
            return f.read()


def one(series, name, **labels):
    """The value of the one sample of `name` whose labels include `labels`."""
    found = [v for l, v in series.get(name, []) if all(l.get(k) == w for k, w in labels.items())]
    assert len(found) == 1, "%s%r: %r" % (name, labels, series.get(name))
    return found[0]


def traffic(t, c):
    """SET/GET, a missing key, an error, and on hotkv a stock item with one hold."""
    for i in range(50):
        assert c.call("SET", "k%d" % i, "v%d" % i) == "OK"
    for i in range(60):
        c.call("GET", "k%d" % i)
    assert isinstance(c.call("INCR", "k0"), RespError)  # "v0" is not an integer
    if t.is_hotkv:
        assert c.call("INV.CREATE", "stock:1", 10) == "OK"
        assert c.call("INV.RESERVE", "stock:1", "hold-1", 2, 60000) == 8
        return 51
    return 50


def has_slowlog(c):
    return not isinstance(c.call("SLOWLOG", "LEN"), RespError)


@case
def a_scrape_has_the_dashboard_series(t, srv):
    """No scrape errors; memory, clients, commands, keyspace, latency, uptime and config."""
    with srv.raw() as c:
        assert c.call("CONFIG", "RESETSTAT") == "OK"
        slowlog = has_slowlog(c)
        if slowlog:
            assert c.call("CONFIG", "SET", "slowlog-log-slower-than", "0") == "OK"
        keys = traffic(t, c)
        with Exporter(srv.port) as ex:
            s = ex.scrape()
            assert one(s, "redis_up") == 1
            assert one(s, "redis_exporter_last_scrape_error") == 0
            assert one(s, "redis_memory_used_bytes") > 0
            assert one(s, "redis_memory_max_bytes") == 0
            assert one(s, "redis_memory_used_peak_bytes") >= one(s, "redis_memory_used_bytes") * 0.5
            assert one(s, "redis_mem_fragmentation_ratio") > 0
            assert one(s, "redis_memory_used_rss_bytes") > 0
            assert one(s, "redis_connected_clients") >= 2  # this client and the exporter
            assert one(s, "redis_commands_total", cmd="set") == 50
            assert one(s, "redis_commands_total", cmd="get") == 60
            assert one(s, "redis_commands_duration_seconds_total", cmd="set") > 0
            assert one(s, "redis_commands_failed_calls_total", cmd="incr") == 1
            assert one(s, "redis_errors_total", err="ERR") >= 1
            assert one(s, "redis_db_keys", db="db0") == keys
            assert one(s, "redis_keyspace_hits_total") >= 50
            assert one(s, "redis_keyspace_misses_total") >= 10
            for q in ("50", "99", "99.9"):
                p = one(s, "redis_latency_percentiles_usec", cmd="set", quantile=q)
                assert 0 < p < 1_000_000, (q, p)
            assert one(s, "redis_latency_percentiles_usec_count", cmd="set") == 50
            assert one(s, "redis_uptime_in_seconds") >= 0
            assert one(s, "redis_config_maxclients") > 0
            if t.is_hotkv:
                assert one(s, "redis_commands_total", cmd="inv.reserve") == 1
                assert one(s, "redis_commands_duration_seconds_total", cmd="inv.reserve") > 0
                assert one(s, "redis_latency_percentiles_usec", cmd="inv.reserve",
                           quantile="99") > 0
            if slowlog:
                assert one(s, "redis_slowlog_length") > 0
                assert one(s, "redis_slowlog_last_id") >= 0
            log = ex.log_text()
            bad = [line for line in log.splitlines()
                   if "level=error" in line or "level=warn" in line]
            assert not bad, log
        if slowlog:
            c.call("CONFIG", "SET", "slowlog-log-slower-than", "10000")


@case
def scrapes_follow_the_server(t, srv):
    """A second scrape sees the new commands and keys; the scrape count grows; still no errors."""
    with srv.raw() as c, Exporter(srv.port) as ex:
        first = ex.scrape()
        assert one(first, "redis_exporter_last_scrape_error") == 0
        sets = one(first, "redis_commands_total", cmd="set") if any(
            l.get("cmd") == "set" for l, _ in first.get("redis_commands_total", [])) else 0
        for i in range(20):
            c.call("SET", "again%d" % i, i)
        second = ex.scrape()
        assert one(second, "redis_exporter_last_scrape_error") == 0
        assert one(second, "redis_commands_total", cmd="set") == sets + 20
        assert one(second, "redis_db_keys", db="db0") == 20
        assert one(second, "redis_exporter_scrapes_total") > one(first,
                                                                 "redis_exporter_scrapes_total")
        assert one(second, "redis_connected_clients") >= 2


if __name__ == "__main__":
    run_cases(__doc__.splitlines()[0])
