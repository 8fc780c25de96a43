#!/usr/bin/python3
"""ACL users: rules, AUTH and HELLO, -NOPERM for commands, keys and channels at the top level,
in MULTI (queued and again at EXEC), in scripts, ACL LOG, ACL SAVE/LOAD with an aclfile, rules
reaching connections of every thread at once, and the sale deployment of docs/security.md
driven through redis-py's ACL API and `redis-cli --user U --pass P`.

The cases on Redis's own commands pass against redis-server 7.0 (`--kind redis`); the INV.*
parts of the sale deployment are HotKV's.

Run: /usr/bin/python3 test_acl.py --server build/hotkv --threads 4
"""

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import redis  # noqa: E402

from server import case, free_port, hotkv_only, run_cases, wait_for  # noqa: E402

NOPERM_CMD = "this user has no permissions to run the '%s' command"
NOPERM_KEY = "this user has no permissions to access one of the keys used as arguments"
NOPERM_CHANNEL = "this user has no permissions to access one of the channels used as arguments"
WRONGPASS = "invalid username-password pair or user is disabled."


def clean(srv):
    """Only the default user, open to all, and an empty ACL LOG."""
    r = srv.client()
    for name in r.acl_users():
        if name != "default":
            r.acl_deluser(name)
    r.execute_command("ACL", "SETUSER", "default", "reset", "on", "nopass", "~*", "&*", "+@all")
    r.acl_log_reset()
    return r


def user_client(srv, name, password, **kw):
    return srv.client(username=name, password=password, **kw)


def refused(fn, text):
    try:
        fn()
    except redis.exceptions.ResponseError as e:
        assert str(e) == text, "got %r, want %r" % (str(e), text)
        return
    raise AssertionError("no error, want %r" % text)


def log_fields(entry):
    return {k: entry[k] for k in ("count", "reason", "context", "object", "username")}


def cli_noperm(text):
    return "NOPERM " + text


def cli(srv, user, password, *args):
    exe = shutil.which("redis-cli") or "/usr/bin/redis-cli"
    cmd = [exe, "-p", str(srv.port), "--no-auth-warning"]
    if user is not None:
        cmd += ["--user", user, "--pass", password]
    out = subprocess.run(cmd + list(args), capture_output=True, text=True, timeout=20)
    return (out.stdout + out.stderr).strip()


@case
def setuser_getuser_list_and_whoami(t, srv):
    """Rules in, the same rules out through GETUSER and LIST; WHOAMI names the user."""
    r = clean(srv)
    assert r.acl_setuser("alice", enabled=True, passwords=["+pw1"], keys=["k:*"],
                         commands=["+get"])
    u = r.acl_getuser("alice")
    assert u["flags"] == ["on"], u
    assert u["passwords"] == [hashlib.sha256(b"pw1").hexdigest()], u
    assert u["keys"] == ["~k:*"], u
    assert u["channels"] == [], u
    assert "user alice on #" in r.acl_list()[0]
    line = [l for l in r.acl_list() if l.startswith("user alice ")][0]
    assert line.endswith(" ~k:* resetchannels -@all +get"), line
    assert r.acl_whoami() == "default"
    a = user_client(srv, "alice", "pw1")
    assert a.get("k:1") is None
    refused(lambda: a.acl_whoami(), NOPERM_CMD % "acl|whoami")
    assert sorted(r.acl_users()) == ["alice", "default"]
    assert r.acl_getuser("nobody") is None
    assert r.acl_deluser("alice", "nobody") == 1
    refused(lambda: r.acl_deluser("default"), "The 'default' user cannot be removed")


@case
def bad_rules_are_refused_whole(t, srv):
    """A bad rule names itself and Redis's reason; nothing of the call is applied."""
    r = clean(srv)
    r.execute_command("ACL", "SETUSER", "bob", "on", "+get")
    refused(lambda: r.execute_command("ACL", "SETUSER", "bob", "+set", "badrule"),
            "Error in ACL SETUSER modifier 'badrule': Syntax error")
    refused(lambda: r.execute_command("ACL", "SETUSER", "bob", "+nosuchcmd"),
            "Error in ACL SETUSER modifier '+nosuchcmd': Unknown command or category name in ACL")
    refused(lambda: r.execute_command("ACL", "SETUSER", "bob", "+@nosuch"),
            "Error in ACL SETUSER modifier '+@nosuch': Unknown command or category name in ACL")
    refused(lambda: r.execute_command("ACL", "SETUSER", "bob", "#abc"),
            "Error in ACL SETUSER modifier '#abc': The password hash must be exactly 64 "
            "characters and contain only lowercase hexadecimal characters")
    refused(lambda: r.execute_command("ACL", "SETUSER", "bob", "(~a", "+get"),
            "Unmatched parenthesis in acl selector starting at '(~a'.")
    assert r.acl_getuser("bob")["commands"] == ["+get"]
    refused(lambda: r.execute_command("ACL", "CAT", "nosuch"), "Unknown category 'nosuch'")
    for cat in ("read", "write", "keyspace", "string", "dangerous", "connection", "pubsub"):
        assert cat in r.acl_cat()
    assert "get" in r.acl_cat("read") and "set" in r.acl_cat("write")
    assert "set" not in r.acl_cat("read")
    assert len(r.acl_genpass()) == 64
    assert len(r.execute_command("ACL", "GENPASS", "5")) == 2
    refused(lambda: r.execute_command("ACL", "GENPASS", "0"),
            "ACL GENPASS argument must be the number of bits for the output password, a "
            "positive number up to 4096")


@case
def noperm_texts_and_acl_log(t, srv):
    """Command, key and channel refusals: Redis 7's texts and ACL LOG entries."""
    r = clean(srv)
    r.execute_command("ACL", "SETUSER", "u1", "on", ">p", "~k*", "&news", "+get", "+publish")
    u = user_client(srv, "u1", "p")
    assert u.get("k1") is None
    refused(lambda: u.set("k1", "v"), NOPERM_CMD % "set")
    refused(lambda: u.get("other"), NOPERM_KEY)
    refused(lambda: u.publish("sports", "x"), NOPERM_CHANNEL)
    assert u.publish("news", "x") == 0
    try:
        user_client(srv, "u1", "wrong").ping()
        raise AssertionError("AUTH with a wrong password passed")
    except (redis.exceptions.AuthenticationError, redis.exceptions.ResponseError) as e:
        assert WRONGPASS in str(e), str(e)
    log = r.acl_log()
    assert [log_fields(e) for e in log] == [
        {"count": 1, "reason": "auth", "context": "toplevel", "object": "AUTH",
         "username": "u1"},
        {"count": 1, "reason": "channel", "context": "toplevel", "object": "sports",
         "username": "u1"},
        {"count": 1, "reason": "key", "context": "toplevel", "object": "other", "username": "u1"},
        {"count": 1, "reason": "command", "context": "toplevel", "object": "set",
         "username": "u1"},
    ], log
    assert log[1]["client-info"]["user"] == "u1"
    assert log[1]["client-info"]["cmd"] == "publish"
    refused(lambda: u.get("other"), NOPERM_KEY)
    assert r.acl_log(1)[0]["count"] == 2  # the same denial again: one entry, counted twice
    assert len(r.acl_log(2)) == 2
    assert r.acl_log_reset()
    assert r.acl_log() == []


@case
def hello_auth_and_auth_forms(t, srv):
    """HELLO 3 AUTH user pass SETNAME; AUTH user pass; a disabled user cannot log in."""
    r = clean(srv)
    r.execute_command("ACL", "SETUSER", "h", "on", ">hp", "+@all", "~*")
    c = srv.raw(auth=False)
    reply = c.call("HELLO", "3", "AUTH", "h", "hp", "SETNAME", "conn-h")
    assert reply["proto"] == 3, reply
    assert c.call("ACL", "WHOAMI") == "h"
    assert c.call("CLIENT", "GETNAME") == "conn-h"
    line = [l for l in r.client_list() if l["name"] == "conn-h"][0]
    assert line["user"] == "h", line
    assert str(c.call("HELLO", "2", "AUTH", "h", "bad")).startswith("WRONGPASS")
    assert c.call("AUTH", "default", "anything") == "OK"
    assert c.call("ACL", "WHOAMI") == "default"
    r.execute_command("ACL", "SETUSER", "h", "off")
    assert str(c.call("AUTH", "h", "hp")).startswith("WRONGPASS")
    c.close()


@case
def requirepass_is_the_default_users_password(t, srv):
    """CONFIG SET requirepass: new connections need it (NOAUTH), AUTH <pass> opens default."""
    r = clean(srv)
    r.config_set("requirepass", "s3cret")
    try:
        c = srv.raw(auth=False)
        assert str(c.call("GET", "x")).startswith("NOAUTH")
        assert str(c.call("AUTH", "nope")).startswith("WRONGPASS")
        assert c.call("AUTH", "s3cret") == "OK"
        assert c.call("ACL", "WHOAMI") == "default"
        assert "nopass" not in r.acl_getuser("default")["flags"]
        c.close()
    finally:
        r.config_set("requirepass", "")
    assert "nopass" in r.acl_getuser("default")["flags"]


@case
def multi_checks_when_queued_and_again_at_exec(t, srv):
    """A refused command aborts the transaction when queued; a command allowed when queued but
    refused by EXEC time gets -NOPERM in the EXEC reply while the others run."""
    r = clean(srv)
    r.execute_command("ACL", "SETUSER", "m", "on", ">mp", "~*", "+@all", "-flushall")
    c = srv.raw(auth=False)
    assert c.call("AUTH", "m", "mp") == "OK"
    assert c.call("MULTI") == "OK"
    assert str(c.call("FLUSHALL")) == "NOPERM " + NOPERM_CMD % "flushall"
    assert str(c.call("EXEC")).startswith("EXECABORT")
    assert log_fields(r.acl_log(1)[0])["context"] == "multi"
    assert c.call("MULTI") == "OK"
    assert c.call("SET", "a", "1") == "QUEUED"
    assert c.call("GET", "a") == "QUEUED"
    r.execute_command("ACL", "SETUSER", "m", "-get")
    out = c.call("EXEC")
    assert out[0] == "OK", out
    assert str(out[1]) == ("NOPERM ACLs rules changed between the moment the transaction was "
                           "accumulated and the EXEC call. This command is no longer allowed "
                           "for the following reason: no permission to execute the command or "
                           "subcommand"), out
    assert r.get("a") == "1"
    c.close()


@case
def scripts_run_with_their_callers_rights(t, srv):
    """redis.call of a command or key the caller may not use fails inside the script."""
    r = clean(srv)
    r.execute_command("ACL", "SETUSER", "s", "on", ">sp", "~k*", "+eval", "+get", "+set", "-del")
    u = user_client(srv, "s", "sp")
    assert u.eval("return redis.call('set', KEYS[1], 'v')", 1, "k1") == "OK"
    try:
        u.eval("return redis.call('del', KEYS[1])", 1, "k1")
        raise AssertionError("DEL ran in a script")
    except redis.exceptions.ResponseError as e:
        assert str(e).startswith(
            "The user executing the script can't run this command or subcommand"), str(e)
    try:
        u.eval("return redis.call('get', 'other')", 0)
        raise AssertionError("GET other ran in a script")
    except redis.exceptions.ResponseError as e:
        assert str(e).startswith("The user executing the script can't access at least one of "
                                 "the keys mentioned in the command arguments"), str(e)
    entry = r.acl_log(1)[0]
    assert log_fields(entry) == {"count": 1, "reason": "key", "context": "lua",
                                 "object": "other", "username": "s"}, entry
    refused(lambda: u.eval("return 1", 1, "x"), NOPERM_KEY)  # the script's own keys
    # redis.acl_check_cmd asks the same question without running the command or logging.
    logged = len(r.acl_log())
    assert u.eval("return redis.acl_check_cmd('set', 'k2', 1)", 0) == 1
    assert u.eval("return redis.acl_check_cmd('del', 'k2')", 0) is None  # false is a nil
    assert u.eval("return redis.acl_check_cmd('get', 'other')", 0) is None
    assert len(r.acl_log()) == logged
    for script, text in (("return redis.acl_check_cmd('nosuch')",
                          "Invalid command passed to redis.acl_check_cmd()"),
                         ("return redis.acl_check_cmd({})",
                          "Lua redis lib command arguments must be strings or integers")):
        try:
            u.eval(script, 0)
            raise AssertionError("no error from %s" % script)
        except redis.exceptions.ResponseError as e:
            assert text in str(e), str(e)


@case
def channels_for_publish_subscribe_and_psubscribe(t, srv):
    """&patterns: PUBLISH and SUBSCRIBE match them, PSUBSCRIBE only names one literally."""
    r = clean(srv)
    r.execute_command("ACL", "SETUSER", "p", "on", ">pp", "&orders.*", "+@pubsub", "+ping")
    c = srv.raw(auth=False)
    assert c.call("AUTH", "p", "pp") == "OK"
    assert str(c.call("SUBSCRIBE", "stock.1")) == "NOPERM " + NOPERM_CHANNEL
    assert str(c.call("PSUBSCRIBE", "orders.a*")) == "NOPERM " + NOPERM_CHANNEL
    assert c.call("PSUBSCRIBE", "orders.*")[0] == "psubscribe"
    c.close()
    d = srv.raw(auth=False)
    assert d.call("AUTH", "p", "pp") == "OK"
    assert d.call("SUBSCRIBE", "orders.eu")[0] == "subscribe"
    d.close()
    assert r.acl_dryrun("p", "publish", "stock.1", "x") == \
        "This user has no permissions to access the 'stock.1' channel"
    assert r.acl_dryrun("p", "publish", "orders.1", "x") == "OK"
    assert r.acl_dryrun("p", "get", "k") == \
        "This user has no permissions to run the 'get' command"


@case
def changes_reach_connections_on_every_thread(t, srv):
    """SETUSER applies to connections already authenticated, whatever thread serves them;
    DELUSER closes them; CLIENT KILL USER closes a user's connections."""
    r = clean(srv)
    r.execute_command("ACL", "SETUSER", "w", "on", ">wp", "~*", "+get", "+set", "+ping")
    conns = [user_client(srv, "w", "wp", single_connection_client=True) for _ in range(12)]
    for i, c in enumerate(conns):
        assert c.set("key:%d" % i, "v")
    users = [l["user"] for l in r.client_list()]
    assert users.count("w") == 12, users
    r.execute_command("ACL", "SETUSER", "w", "-set")
    for i, c in enumerate(conns):
        refused(lambda: c.set("key:%d" % i, "v"), NOPERM_CMD % "set")
        assert c.get("key:%d" % i) == "v"
    assert r.client_kill_filter(user="w") == 12
    wait_for(lambda: [l["user"] for l in r.client_list()].count("w") == 0, "killed")
    conns = [user_client(srv, "w", "wp", single_connection_client=True) for _ in range(6)]
    for c in conns:
        assert c.ping()
    assert r.acl_deluser("w") == 1
    for c in conns:
        try:
            c.ping()
            raise AssertionError("a deleted user's connection still answers")
        except (redis.exceptions.ConnectionError, redis.exceptions.AuthenticationError):
            pass
    refused(lambda: r.client_kill_filter(user="w"), "No such user 'w'")


@case
def acl_save_and_load_with_an_aclfile(t, srv):
    """ACL SAVE writes ACL LIST's lines; ACL LOAD reads them back (all or nothing) and closes
    the connections of users it removed. Without an aclfile both are refused."""
    r = clean(srv)
    refused(lambda: r.acl_save(), "This Redis instance is not configured to use an ACL file. "
            "You may want to specify users via the ACL SETUSER command and then issue a CONFIG "
            "REWRITE (assuming you have a Redis configuration file set) in order to store users "
            "in the Redis configuration.")
    d = tempfile.mkdtemp(prefix="hotkv-acl-")
    path = os.path.join(d, "users.acl")
    open(path, "w").close()
    try:
        with t.server(config={"aclfile": path}) as s:
            c = s.client()
            assert c.acl_setuser("saved", enabled=True, passwords=["+sp"], keys=["a*"],
                                 commands=["+get"])
            assert c.acl_save()
            text = open(path).read()
            assert "user saved on #" in text and " ~a* resetchannels -@all +get" in text, text
            assert c.acl_deluser("saved") == 1
            assert c.acl_load()
            assert c.acl_getuser("saved")["keys"] == ["~a*"]
            victim = user_client(s, "saved", "sp", single_connection_client=True)
            assert victim.get("a1") is None
            with open(path, "a") as f:
                f.write("user broken on +nosuchcommand\n")
            try:
                c.acl_load()
                raise AssertionError("ACL LOAD took a bad file")
            except redis.exceptions.ResponseError as e:
                assert "Unknown command or category name in ACL" in str(e), str(e)
            assert c.acl_getuser("saved") is not None  # nothing changed
            with open(path, "w") as f:
                f.write("user default on nopass ~* &* +@all\n")
            assert c.acl_load()
            assert c.acl_users() == ["default"]
            wait_for(lambda: not any(l["user"] == "saved" for l in c.client_list()), "closed")
    finally:
        shutil.rmtree(d, ignore_errors=True)


@case
def aclfile_and_user_lines_together_are_refused(t, srv):
    """Like Redis, a server given both an aclfile and `user` lines in its config does not
    start; `user` lines alone define users."""
    d = tempfile.mkdtemp(prefix="hotkv-acl-")
    try:
        acl = os.path.join(d, "users.acl")
        open(acl, "w").close()
        conf = os.path.join(d, "both.conf")
        with open(conf, "w") as f:
            f.write("aclfile %s\nuser extra on nopass ~* +@all\n" % acl)
        port = str(free_port())
        if t.is_hotkv:
            cmd = [t.binary, "--config", conf, "--port", port, "--bind", "127.0.0.1"]
        else:
            cmd = [shutil.which("redis-server"), conf, "--port", port, "--bind", "127.0.0.1"]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
        assert out.returncode != 0
        assert "ACL file path is invalid" in out.stdout + out.stderr, out.stdout + out.stderr
        with t.server(config={"user": "cfguser on >cp ~c* +get"}) as s:
            assert s.client().acl_users() == ["cfguser", "default"]
            assert user_client(s, "cfguser", "cp").get("c1") is None
    finally:
        shutil.rmtree(d, ignore_errors=True)


SALE_ACL = """\
user default off
user admin on >admin-pass ~* &* +@all
user storefront on >shop-pass resetchannels ~stock:* -@all +inv.reserve +inv.mreserve +inv.commit +inv.release +inv.extend +inv.get +inv.hold +inv.holds +ping
user fulfilment on >ship-pass resetchannels ~orders* -@all +xread +xreadgroup +xack +ping
"""

SALE_ACL_REDIS = SALE_ACL.replace(
    "+inv.reserve +inv.mreserve +inv.commit +inv.release +inv.extend +inv.get +inv.hold "
    "+inv.holds", "+get")


@case
def the_sale_deployment(t, srv):
    """docs/security.md's aclfile: the storefront reserves and reads stock, the fulfilment
    service reads the orders stream, admin does everything; each is refused the rest with the
    exact -NOPERM texts and ACL LOG entries (checked with redis-cli --user/--pass)."""
    d = tempfile.mkdtemp(prefix="hotkv-acl-")
    path = os.path.join(d, "users.acl")
    with open(path, "w") as f:
        f.write(SALE_ACL if t.is_hotkv else SALE_ACL_REDIS)
    try:
        with t.server(config={"aclfile": path}) as s:
            assert cli(s, None, None, "GET", "x").startswith("NOAUTH")
            adm = s.client(username="admin", password="admin-pass")
            adm.xgroup_create("orders", "ship", id="0", mkstream=True)
            adm.xadd("orders", {"order": "7781", "sku": "sneaker-x"})
            if t.is_hotkv:
                assert cli(s, "admin", "admin-pass", "INV.CREATE", "stock:{sneaker-x}", "500") \
                    == "OK"
                assert cli(s, "storefront", "shop-pass", "INV.RESERVE", "stock:{sneaker-x}",
                           "order-7781", "1", "600000") == "499"
                assert cli(s, "storefront", "shop-pass", "INV.COMMIT", "stock:{sneaker-x}",
                           "order-7781") == "1"
                assert "sold" in cli(s, "storefront", "shop-pass", "INV.GET", "stock:{sneaker-x}")
                assert cli(s, "storefront", "shop-pass", "INV.RESTOCK", "stock:{sneaker-x}",
                           "10") == cli_noperm(NOPERM_CMD % "inv.restock")
                assert cli(s, "storefront", "shop-pass", "INV.RESERVE", "other:{x}", "h", "1",
                           "1000") == cli_noperm(NOPERM_KEY)
            else:
                adm.set("stock:{sneaker-x}", "500")
                assert cli(s, "storefront", "shop-pass", "GET", "stock:{sneaker-x}") == "500"
            assert cli(s, "storefront", "shop-pass", "SET", "stock:{sneaker-x}", "0") == \
                cli_noperm(NOPERM_CMD % "set")
            assert cli(s, "storefront", "shop-pass", "XREAD", "STREAMS", "orders", "0") == \
                cli_noperm(NOPERM_CMD % "xread")
            got = cli(s, "fulfilment", "ship-pass", "XREADGROUP", "GROUP", "ship", "c1",
                      "COUNT", "10", "STREAMS", "orders", ">")
            assert "7781" in got, got
            assert cli(s, "fulfilment", "ship-pass", "XADD", "orders", "*", "a", "b") == \
                cli_noperm(NOPERM_CMD % "xadd")
            assert cli(s, "fulfilment", "ship-pass", "XREAD", "STREAMS", "stock:{sneaker-x}",
                       "0") == cli_noperm(NOPERM_KEY)
            assert "AUTH failed: WRONGPASS " + WRONGPASS in cli(s, "fulfilment", "wrong", "PING")
            log = [log_fields(e) for e in adm.acl_log()]
            want = [
                {"count": 1, "reason": "auth", "context": "toplevel", "object": "AUTH",
                 "username": "fulfilment"},
                {"count": 1, "reason": "key", "context": "toplevel", "object": "stock:{sneaker-x}",
                 "username": "fulfilment"},
                {"count": 1, "reason": "command", "context": "toplevel", "object": "xadd",
                 "username": "fulfilment"},
                {"count": 1, "reason": "command", "context": "toplevel", "object": "xread",
                 "username": "storefront"},
                {"count": 1, "reason": "command", "context": "toplevel", "object": "set",
                 "username": "storefront"},
            ]
            if t.is_hotkv:
                want += [
                    {"count": 1, "reason": "key", "context": "toplevel", "object": "other:{x}",
                     "username": "storefront"},
                    {"count": 1, "reason": "command", "context": "toplevel",
                     "object": "inv.restock", "username": "storefront"},
                ]
            assert log == want, log
            assert adm.flushall()
    finally:
        shutil.rmtree(d, ignore_errors=True)


@case
@hotkv_only("INV.* and GCRA.LIMIT are HotKV's categories")
def hotkv_categories(t, srv):
    """@inventory holds the INV.* commands, @ratelimit GCRA.LIMIT and CL.THROTTLE."""
    r = clean(srv)
    assert "inventory" in r.acl_cat() and "ratelimit" in r.acl_cat()
    inv = r.acl_cat("inventory")
    assert "inv.reserve" in inv and "inv.get" in inv and "get" not in inv
    assert sorted(r.acl_cat("ratelimit")) == ["cl.throttle", "gcra.limit"]
    r.execute_command("ACL", "SETUSER", "rl", "on", ">rp", "~rl:*", "+@ratelimit")
    u = user_client(srv, "rl", "rp")
    assert len(u.execute_command("GCRA.LIMIT", "rl:a", "1000", "10")) == 4
    refused(lambda: u.execute_command("GET", "rl:a"), NOPERM_CMD % "get")


if __name__ == "__main__":
    run_cases(__doc__.splitlines()[0])
