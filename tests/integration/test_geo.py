#!/usr/bin/python3
"""Geo commands, compared with redis-server 7.0.

- GEOADD (NX, XX, CH) stores the very scores Redis stores; GEOPOS, GEOHASH and GEODIST (every
  unit) answer the same text, in RESP2 and RESP3.
- GEOSEARCH (FROMMEMBER | FROMLONLAT, BYRADIUS | BYBOX, ASC | DESC, COUNT [ANY], WITHCOORD,
  WITHDIST, WITHHASH), GEORADIUS, GEORADIUSBYMEMBER and the _RO forms over 2,000 random points
  and some cities: the same members in the same order as redis-server (its scan order too when
  no order is asked), errors word for word.
- GEOSEARCHSTORE (STOREDIST) and GEORADIUS STORE / STOREDIST into destinations on other shards,
  with their keyspace events; a missing source deletes the destination.
- A kill -9 with appendfsync always keeps the geo sets and the stored results.

Run: /usr/bin/python3 test_geo.py --server build/hotkv --threads 4   (or --kind redis)
"""

import os
import random
import shutil
import signal
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from server import Server, case, run_cases, spread_keys  # noqa: E402

POINTS = 2000
CITIES = [
    (13.361389, 38.115556, "Palermo"), (15.087269, 37.502669, "Catania"),
    (12.496366, 41.902782, "Rome"), (2.352222, 48.856613, "Paris"),
    (-0.127758, 51.507351, "London"), (-74.005973, 40.712775, "New York"),
    (139.691706, 35.689487, "Tokyo"), (151.209296, -33.86882, "Sydney"),
    (-43.172896, -22.906847, "Rio"), (179.9999, 0.0001, "east-edge"),
    (-179.9999, -0.0001, "west-edge"), (0, 85.05112878, "north"), (0, -85.05112878, "south"),
]


def load(c, key, rng):
    args = []
    for lon, lat, name in CITIES:
        args += [lon, lat, name]
    assert c.call("GEOADD", key, *args) == len(CITIES)
    # Points clustered around a few centres, so searches find many.
    centres = [(13.4, 38.1), (2.35, 48.85), (-74.0, 40.7), (150.0, -33.8), (0.0, 0.0)]
    args = []
    for i in range(POINTS):
        lon0, lat0 = centres[i % len(centres)]
        lon = max(-180, min(180, lon0 + rng.uniform(-3, 3)))
        lat = max(-85, min(85, lat0 + rng.uniform(-2, 2)))
        args += ["%.6f" % lon, "%.6f" % lat, "p%d" % i]
    assert c.call("GEOADD", key, *args) == POINTS


def search_commands(g, d, st):
    cmds = []
    rng = random.Random(5)
    for _ in range(150):
        frm = (["FROMMEMBER", rng.choice(["Palermo", "Paris", "p%d" % rng.randrange(POINTS)])]
               if rng.random() < 0.5 else
               ["FROMLONLAT", "%.4f" % rng.uniform(-5, 16), "%.4f" % rng.uniform(36, 50)])
        unit = rng.choice(["m", "km", "mi", "ft", "KM"])
        scale = {"m": 1000, "km": 1, "mi": 0.62, "ft": 3280, "KM": 1}[unit]
        size = rng.choice([1, 10, 50, 100, 300, 1000, 2000])
        by = (["BYRADIUS", size * scale, unit] if rng.random() < 0.5 else
              ["BYBOX", size * scale, size * scale * rng.choice([0.5, 1, 2]), unit])
        opts = []
        for o in ("WITHCOORD", "WITHDIST", "WITHHASH"):
            if rng.random() < 0.4:
                opts.append(o)
        r = rng.random()
        if r < 0.3:
            opts.append("ASC")
        elif r < 0.6:
            opts.append("DESC")
        r = rng.random()
        if r < 0.3:
            opts += ["COUNT", rng.choice([1, 3, 10, 50])]
        elif r < 0.4:
            opts += ["COUNT", rng.choice([1, 3, 10]), "ANY"]
        cmds.append(["GEOSEARCH", g] + frm + by + opts)
    for _ in range(40):
        lon, lat = "%.4f" % rng.uniform(0, 15), "%.4f" % rng.uniform(37, 49)
        r = rng.choice([10, 100, 500])
        cmds.append(["GEORADIUS", g, lon, lat, r, "km", "WITHDIST", "ASC"])
        cmds.append(["GEORADIUS_RO", g, lon, lat, r * 1000, "m", "COUNT", 5, "WITHHASH"])
        who = rng.choice(["Palermo", "Paris", "p%d" % rng.randrange(POINTS)])
        cmds.append(["GEORADIUSBYMEMBER", g, who, r, "mi", "WITHCOORD", "DESC"])
        cmds.append(["GEORADIUSBYMEMBER_RO", g, who, r, "km"])
        cmds.append(["GEOSEARCHSTORE", d, g, "FROMMEMBER", who, "BYRADIUS", r, "km"])
        cmds.append(["ZRANGE", d, 0, -1, "WITHSCORES"])
        cmds.append(["GEOSEARCHSTORE", d, g, "FROMLONLAT", lon, lat, "BYBOX", r, r, "km",
                     "STOREDIST", "COUNT", 20])
        cmds.append(["ZRANGE", d, 0, -1, "WITHSCORES"])
        cmds.append(["GEORADIUS", g, lon, lat, r, "km", "STORE", d])
        cmds.append(["ZRANGE", d, 0, -1, "WITHSCORES"])
        cmds.append(["GEORADIUSBYMEMBER", g, who, r, "km", "STOREDIST", d, "COUNT", 7, "DESC"])
        cmds.append(["ZRANGE", d, 0, -1, "WITHSCORES"])
    # Points, hashes and distances.
    names = [n for _, _, n in CITIES] + ["p%d" % i for i in range(0, POINTS, 97)] + ["nobody"]
    cmds.append(["GEOPOS", g] + names)
    cmds.append(["GEOHASH", g] + names)
    cmds.append(["GEOPOS", "missing", "a", "b"])
    cmds.append(["GEOHASH", "missing", "a"])
    cmds.append(["GEOPOS", g])
    for a, b in (("Palermo", "Catania"), ("Paris", "London"), ("Tokyo", "Sydney"),
                 ("east-edge", "west-edge"), ("north", "south"), ("Rome", "Rome"),
                 ("Rome", "nobody")):
        for unit in ([], ["m"], ["km"], ["mi"], ["ft"], ["Km"]):
            cmds.append(["GEODIST", g, a, b] + unit)
    cmds.append(["GEODIST", "missing", "a", "b"])
    # Edge searches: poles, the antimeridian, zero and huge radii.
    for frm in (["FROMMEMBER", "east-edge"], ["FROMMEMBER", "north"],
                ["FROMLONLAT", 180, 0], ["FROMLONLAT", -180, 85], ["FROMLONLAT", 0, 0]):
        for by in (["BYRADIUS", 0, "m"], ["BYRADIUS", 100, "km"], ["BYRADIUS", 5000, "km"],
                   ["BYRADIUS", 20000, "km"], ["BYBOX", 400, 400, "km"],
                   ["BYBOX", 40000, 100, "km"]):
            cmds.append(["GEOSEARCH", g] + frm + by + ["ASC", "WITHDIST"])
            cmds.append(["GEOSEARCH", g] + frm + by)
    # Errors, in Redis's order.
    cmds += [
        ["GEOADD", g, 200, 10, "x"], ["GEOADD", g, 10, 86, "x"], ["GEOADD", g, "a", 1, "x"],
        ["GEOADD", g, 1, 2], ["GEOADD", g, "NX", "XX", 1, 2, "x"], ["GEOADD", g, "NX", 1, 2],
        ["GEOADD", g, "GT", 1, 2, "x"], ["GEOADD", st, 1, 2, "x"],
        ["GEODIST", g, "a", "b", "parsec"], ["GEODIST", g, "a", "b", "km", "x"],
        ["GEODIST", st, "a", "b"], ["GEOPOS", st, "a"], ["GEOHASH", st, "a"],
        ["GEOSEARCH", g, "FROMMEMBER", "nobody", "BYRADIUS", 1, "km"],
        ["GEOSEARCH", g, "BYRADIUS", 1, "km"], ["GEOSEARCH", g, "FROMMEMBER", "Rome"],
        ["geosearch", g, "BYRADIUS", 1, "km", "ASC"],
        ["GEOSEARCH", g, "FROMMEMBER", "Rome", "FROMLONLAT", 1, 2, "BYRADIUS", 1, "km"],
        ["GEOSEARCH", g, "FROMMEMBER", "Rome", "BYRADIUS", 1, "km", "BYBOX", 1, 1, "km"],
        ["GEOSEARCH", g, "FROMMEMBER", "Rome", "BYRADIUS", -1, "km"],
        ["GEOSEARCH", g, "FROMMEMBER", "Rome", "BYRADIUS", "x", "km"],
        ["GEOSEARCH", g, "FROMMEMBER", "Rome", "BYRADIUS", 1, "au"],
        ["GEOSEARCH", g, "FROMMEMBER", "Rome", "BYBOX", "x", 1, "km"],
        ["GEOSEARCH", g, "FROMMEMBER", "Rome", "BYBOX", 1, "x", "km"],
        ["GEOSEARCH", g, "FROMMEMBER", "Rome", "BYBOX", -1, 1, "km"],
        ["GEOSEARCH", g, "FROMLONLAT", 200, 1, "BYRADIUS", 1, "km"],
        ["GEOSEARCH", g, "FROMLONLAT", "x", 1, "BYRADIUS", 1, "km"],
        ["GEOSEARCH", g, "FROMMEMBER", "Rome", "BYRADIUS", 1, "km", "COUNT", 0],
        ["GEOSEARCH", g, "FROMMEMBER", "Rome", "BYRADIUS", 1, "km", "COUNT", "x"],
        ["GEOSEARCH", g, "FROMMEMBER", "Rome", "BYRADIUS", 1, "km", "ANY"],
        ["GEOSEARCH", g, "FROMMEMBER", "Rome", "BYRADIUS", 1, "km", "STORE", d],
        ["GEOSEARCH", g, "FROMMEMBER", "Rome", "BYRADIUS", 1, "km", "STOREDIST"],
        ["GEOSEARCH", st, "FROMMEMBER", "Rome", "BYRADIUS", 1, "km"],
        ["GEOSEARCH", "missing", "FROMMEMBER", "Rome", "BYRADIUS", 1, "km"],
        ["GEOSEARCH", "missing", "FROMMEMBER", "Rome", "BYRADIUS", "x", "km"],
        ["GEOSEARCHSTORE", d, g, "FROMMEMBER", "Rome", "BYRADIUS", 1, "km", "WITHDIST"],
        ["GEOSEARCHSTORE", d, "missing", "FROMMEMBER", "Rome", "BYRADIUS", 1, "km"],
        ["EXISTS", d],
        ["GEORADIUS", g, 1, 2, 3, "km", "STORE", d, "WITHCOORD"],
        ["GEORADIUS", g, 1, 2, -3, "km"], ["GEORADIUS", g, 1, 2, "x", "km"],
        ["GEORADIUS", g, 1, 2, 3, "xx"], ["GEORADIUS", g, 1, 2, 3, "km", "FROMMEMBER", "a"],
        ["GEORADIUS_RO", g, 1, 2, 3, "km", "STORE", d],
        ["GEORADIUSBYMEMBER", g, "nobody", 3, "km"],
        ["GEORADIUSBYMEMBER", "missing", "nobody", "x", "km"],
        ["GEORADIUSBYMEMBER", "missing", "nobody", 3, "km", "STORE", d],
        ["GEORADIUSBYMEMBER_RO", g, "Rome", 3, "km", "STOREDIST", d],
        ["GEORADIUS", st, 1, 2, 3, "km"],
    ]
    return cmds


@case
def geo_replies_match_redis(t, srv):
    """Positions, hashes, distances and every search form reply exactly as redis-server."""
    g, d, st = spread_keys("geo:", 3)
    with Server("redis") as ref, srv.raw() as ours, ref.raw() as theirs:
        for proto in (2, 3):
            for c in (ours, theirs):
                c.call("FLUSHALL")
                c.call("HELLO", proto)
                load(c, g, random.Random(42))
                c.call("SET", st, "string")
            assert ours.call("ZRANGE", g, 0, -1, "WITHSCORES") == theirs.call(
                "ZRANGE", g, 0, -1, "WITHSCORES")
            diffs = []
            for cmd in search_commands(g, d, st):
                got, want = ours.call(*cmd), theirs.call(*cmd)
                if got != want:
                    diffs.append((proto, cmd, got, want))
            assert not diffs, "%d diffs\n" % len(diffs) + "\n".join(
                "RESP%d %r\n  hotkv: %r\n  redis: %r" % (p, c, str(g_)[:400], str(w)[:400])
                for p, c, g_, w in diffs[:6])


@case
def geoadd_options_and_scores(t, srv):
    """NX, XX, CH as ZADD's; the score is Redis's 52-bit geohash."""
    with srv.raw() as c:
        assert c.call("GEOADD", "Sicily", 13.361389, 38.115556, "Palermo", 15.087269, 37.502669,
                      "Catania") == 2
        assert c.call("ZSCORE", "Sicily", "Palermo") == "3479099956230698"
        assert c.call("ZSCORE", "Sicily", "Catania") == "3479447370796909"
        assert c.call("GEOHASH", "Sicily", "Palermo", "Catania", "x") == [
            "sqc8b49rny0", "sqdtr74hyu0", None]
        assert c.call("GEOPOS", "Sicily", "Palermo", "x") == [
            ["13.36138933897018433", "38.11555639549629859"], None]
        assert c.call("GEODIST", "Sicily", "Palermo", "Catania") == "166274.1516"
        assert c.call("GEODIST", "Sicily", "Palermo", "Catania", "km") == "166.2742"
        assert c.call("GEOADD", "Sicily", "NX", 13, 38, "Palermo", 14, 37, "Agrigento") == 1
        assert c.call("ZSCORE", "Sicily", "Palermo") == "3479099956230698"
        assert c.call("GEOADD", "Sicily", "XX", 13, 38, "Palermo", 14, 37, "Nowhere") == 0
        assert c.call("ZSCORE", "Sicily", "Nowhere") is None
        assert c.call("GEOADD", "Sicily", "XX", "CH", 13.1, 38, "Palermo") == 1
        assert c.call("GEOADD", "Sicily", "CH", 13.1, 38, "Palermo", 1, 1, "new") == 1
        assert c.call("GEOADD", "missing", "XX", 1, 1, "a") == 0
        assert c.call("EXISTS", "missing") == 0
        assert c.call("HELLO", 3)["proto"] == 3
        assert c.call("GEOPOS", "Sicily", "Catania") == [
            [15.087267458438873, 37.50266842333162]]
        assert c.call("GEOSEARCH", "Sicily", "FROMLONLAT", 15, 37, "BYRADIUS", 200, "km", "ASC",
                      "WITHDIST", "WITHCOORD", "WITHHASH")[0] == [
            "Catania", "56.4413", 3479447370796909, [15.087267458438873, 37.50266842333162]]


@case
def stores_across_shards_and_their_events(t, srv):
    """STORE / STOREDIST / GEOSEARCHSTORE into another shard; events as Redis publishes them."""
    g, d1, d2 = spread_keys("geost:", 3)
    r = srv.client()
    r.config_set("notify-keyspace-events", "Ezg")
    p = r.pubsub()
    try:
        p.psubscribe("__keyevent@0__:*")
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            m = p.get_message(timeout=0.5)
            if m and m["type"] == "psubscribe":
                break
        with srv.raw() as c:
            c.call("GEOADD", g, 13.361389, 38.115556, "Palermo", 15.087269, 37.502669, "Catania")
            assert c.call("GEORADIUS", g, 15, 37, 200, "km", "STORE", d1) == 2
            assert c.call("ZSCORE", d1, "Palermo") == "3479099956230698"
            assert c.call("GEORADIUS", g, 15, 37, 200, "km", "STOREDIST", d2, "ASC",
                          "COUNT", 1) == 1
            assert c.call("ZRANGE", d2, 0, -1, "WITHSCORES") == ["Catania",
                                                                "56.441257870158204"]
            assert c.call("GEOSEARCHSTORE", d1, g, "FROMMEMBER", "Palermo", "BYBOX", 400, 400,
                          "km", "STOREDIST") == 2
            assert c.call("GEOSEARCHSTORE", d1, g, "FROMMEMBER", "Palermo", "BYRADIUS", 1,
                          "m") == 1
            assert c.call("GEOSEARCHSTORE", d1, "missing", "FROMMEMBER", "Palermo", "BYRADIUS",
                          1, "m") == 0
            assert c.call("GEORADIUSBYMEMBER", "missing", "x", 1, "m", "STORE", d2) == 0
            c.call("SET", "done", 1)
            c.call("DEL", "done")
        events = []
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            m = p.get_message(timeout=0.5)
            if not m or m["type"] != "pmessage":
                continue
            if m["data"] == "done":
                break
            events.append("%s|%s" % (m["channel"].split(":", 1)[1], m["data"]))
        assert events == ["zadd|" + g, "georadiusstore|" + d1, "georadiusstore|" + d2,
                          "geosearchstore|" + d1, "geosearchstore|" + d1, "del|" + d1,
                          "del|" + d2], events
    finally:
        p.close()
        r.config_set("notify-keyspace-events", "")


@case
def kill9_keeps_geo_sets(t, srv):
    """appendfsync always, GEOADD and stores, kill -9: positions and results come back."""
    d = tempfile.mkdtemp(prefix="hotkv-geo-")
    args = ["--appendonly", "yes", "--appendfsync", "always", "--dir", d]
    g, d1, d2 = spread_keys("geop:", 3)
    try:
        s = t.server(extra_args=args, expect_exit=None).start()
        try:
            c = s.raw()
            load(c, g, random.Random(9))
            c.call("GEOADD", g, "XX", 1, 1, "Palermo")
            c.call("GEOSEARCHSTORE", d1, g, "FROMMEMBER", "Paris", "BYRADIUS", 300, "km")
            c.call("GEORADIUS", g, 13, 38, 100, "km", "STOREDIST", d2)
            before = [c.call("ZRANGE", k, 0, -1, "WITHSCORES") for k in (g, d1, d2)]
            pos = c.call("GEOPOS", g, "Palermo", "Paris")
            c.close()
            os.kill(s.pid(), signal.SIGKILL)
            s.wait(timeout=10)
        finally:
            s.cleanup()
        s2 = t.server(extra_args=args).start()
        try:
            with s2.raw() as c:
                assert [c.call("ZRANGE", k, 0, -1, "WITHSCORES") for k in (g, d1, d2)] == before
                assert c.call("GEOPOS", g, "Palermo", "Paris") == pos
        finally:
            s2.stop()
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    run_cases(__doc__.splitlines()[0])
