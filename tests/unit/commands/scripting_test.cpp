// Lua scripts through the real table and shards (TestServer): Redis's conversions in both
// directions, errors and their texts, the sandbox, the script cache, read-only scripts,
// scripts over several shards, and stopping a long script with SCRIPT KILL.
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <asio/post.hpp>
#include <catch2/catch.hpp>

#include "hotkv/commands/script_store.hpp"
#include "hotkv/util/sha1.hpp"
#include "support/test_server.hpp"

using hotkv::sha1_hex;
using hotkv::test::arr;
using hotkv::test::bulk;
using hotkv::test::error;
using hotkv::test::integer;
using hotkv::test::kNil;
using hotkv::test::key_on_another_shard;
using hotkv::test::kOk;
using hotkv::test::TestServer;

namespace {

std::string eval(TestServer& s, const std::string& body, std::vector<std::string> keys = {},
                 std::vector<std::string> args = {}) {
  std::vector<std::string> argv{"EVAL", body, std::to_string(keys.size())};
  argv.insert(argv.end(), keys.begin(), keys.end());
  argv.insert(argv.end(), args.begin(), args.end());
  return s.run(argv);
}

std::string script_error(const std::string& body, const std::string& text, int line) {
  return error(text + " script: " + sha1_hex(body) + ", on @user_script:" +
               std::to_string(line) + ".");
}

}  // namespace

TEST_CASE("Lua values become Redis replies", "[scripting]") {
  TestServer s;
  CHECK(eval(s, "return 1") == integer(1));
  CHECK(eval(s, "return 3.99") == integer(3));
  CHECK(eval(s, "return -3.99") == integer(-3));
  CHECK(eval(s, "return 'x'") == bulk("x"));
  CHECK(eval(s, "return true") == integer(1));
  CHECK(eval(s, "return false") == kNil);
  CHECK(eval(s, "return nil") == kNil);
  CHECK(eval(s, "return {1, 2, 3.7, 'x', nil, 5}") ==
        arr({integer(1), integer(2), integer(3), bulk("x")}));
  CHECK(eval(s, "return {1, {2, {'deep'}}}") ==
        arr({integer(1), arr({integer(2), arr({bulk("deep")})})}));
  CHECK(eval(s, "return {ok='FINE'}") == "+FINE\r\n");
  CHECK(eval(s, "return redis.status_reply('FINE')") == "+FINE\r\n");
  CHECK(eval(s, "return {err='My Error'}") == error("My Error"));
  CHECK(eval(s, "return redis.error_reply('E2 bad')") == error("E2 bad"));
  CHECK(eval(s, "return KEYS[1] .. ARGV[2]", {"k"}, {"a", "b"}) == bulk("kb"));
  CHECK(eval(s, "return #KEYS + #ARGV", {"k1", "k2"}, {"a"}) == integer(3));
}

TEST_CASE("RESP3 scripts return maps, sets, doubles and booleans", "[scripting]") {
  TestServer s;
  CHECK(s.run3({"EVAL", "return {map={a=1}}", "0"}) == "%1\r\n$1\r\na\r\n:1\r\n");
  CHECK(s.run3({"EVAL", "return {set={x=true}}", "0"}) == "~1\r\n$1\r\nx\r\n");
  CHECK(s.run3({"EVAL", "return {double=1.5}", "0"}) == ",1.5\r\n");
  // Booleans follow the script's protocol, not the client's.
  CHECK(s.run3({"EVAL", "return true", "0"}) == ":1\r\n");
  CHECK(s.run3({"EVAL", "return false", "0"}) == "_\r\n");
  CHECK(s.run3({"EVAL", "redis.setresp(3); return true", "0"}) == "#t\r\n");
  CHECK(s.run3({"EVAL", "redis.setresp(3); return false", "0"}) == "#f\r\n");
  CHECK(s.run3({"EVAL", "return nil", "0"}) == "_\r\n");
  // RESP2 clients get the RESP2 shapes.
  CHECK(s.run({"EVAL", "return {map={a=1}}", "0"}) == arr({bulk("a"), integer(1)}));
  // setresp(3): a command's RESP3 reply reaches the script typed.
  s.run({"SET", "n", "5"});
  CHECK(eval(s, "redis.setresp(3); local v = redis.call('GET', 'nope'); return v == nil") ==
        integer(1));
  CHECK(eval(s, "local v = redis.call('GET', 'nope'); return v == false") == integer(1));
}

TEST_CASE("redis.call runs commands and raises their errors, pcall returns them",
          "[scripting]") {
  TestServer s;
  CHECK(eval(s, "return redis.call('SET', KEYS[1], ARGV[1])", {"k"}, {"v"}) == "+OK\r\n");
  CHECK(s.run({"GET", "k"}) == bulk("v"));
  CHECK(eval(s, "return redis.call('INCRBY', 'n', 5)") == integer(5));
  CHECK(eval(s, "return redis.call('INCRBY', 'n', 2.0)") == integer(7));
  const std::string incr = "return redis.call('INCR', KEYS[1])";
  CHECK(eval(s, incr, {"k"}) ==
        script_error(incr, "ERR value is not an integer or out of range", 1));
  CHECK(eval(s, "return redis.pcall('INCR', KEYS[1])", {"k"}) ==
        error("ERR value is not an integer or out of range"));
  CHECK(eval(s, "local r = redis.pcall('INCR', KEYS[1]); return type(r) == 'table' and r.err",
             {"k"}) == bulk("ERR value is not an integer or out of range"));
  const std::string unknown = "return redis.call('nosuch')";
  CHECK(eval(s, unknown) == script_error(unknown, "ERR Unknown Redis command called from script", 1));
  const std::string arity = "\nreturn redis.call('GET')";
  CHECK(eval(s, arity) ==
        script_error(arity, "ERR Wrong number of args calling Redis command from script", 2));
  const std::string sub = "return redis.call('SUBSCRIBE', 'x')";
  CHECK(eval(s, sub) == script_error(sub, "ERR This Redis command is not allowed from script", 1));
  const std::string cluster = "return redis.call('cluster', 'reset', 'hard')";
  CHECK(eval(s, cluster) ==
        script_error(cluster, "ERR This Redis command is not allowed from script", 1));
  CHECK(s.run({"CLUSTER", "INFO"}) == error("ERR This instance has cluster support disabled"));
  const std::string nested = "return redis.call('EVAL', 'return 1', 0)";
  CHECK(eval(s, nested) ==
        script_error(nested, "ERR This Redis command is not allowed from script", 1));
  // XREAD/XREADGROUP BLOCK are refused with their own error; without BLOCK they read.
  CHECK(eval(s, "return redis.pcall('xread', 'BLOCK', 0, 'STREAMS', KEYS[1], '$')", {"st"}) ==
        error("ERR xread command is not allowed with BLOCK option from scripts"));
  CHECK(eval(s,
             "return redis.pcall('XREADGROUP', 'GROUP', 'g', 'c', 'BLOCK', 0, 'STREAMS', "
             "KEYS[1], '>')",
             {"st"}) ==
        error("ERR XREADGROUP command is not allowed with BLOCK option from scripts"));
  CHECK(eval(s, "return redis.pcall('xread', 'STREAMS', KEYS[1], '$')", {"st"}) ==
        hotkv::test::kNil);
  const std::string bad_arg = "return redis.call('SET', 'k', {})";
  CHECK(eval(s, bad_arg) ==
        script_error(bad_arg, "ERR Lua redis lib command arguments must be strings or integers", 1));
  // A failed write in the middle is not undone: Redis scripts are isolated, not transactional.
  CHECK(eval(s, "redis.call('SET', 'a', '1'); redis.call('INCR', 'k'); redis.call('SET', 'b', '2')")
            .rfind("-ERR value is not an integer", 0) == 0);
  CHECK(s.run({"GET", "a"}) == bulk("1"));
  CHECK(s.run({"EXISTS", "b"}) == integer(0));
}

TEST_CASE("Lua errors carry the script id and line", "[scripting]") {
  TestServer s;
  const std::string boom = "local x = 1\nerror('boom')";
  CHECK(eval(s, boom) == script_error(boom, "ERR user_script:2: boom", 2));
  const std::string tbl = "error({err='TABLEERR x'})";
  CHECK(eval(s, tbl) == script_error(tbl, "TABLEERR x", 1));
  CHECK(eval(s, "return +").rfind("-ERR Error compiling script (new function): user_script:1:", 0) ==
        0);
}

TEST_CASE("The sandbox has no os, io, require or global writes", "[scripting]") {
  TestServer s;
  const std::string glob = "x = 1";
  CHECK(eval(s, glob) == script_error(glob, "ERR user_script:1: Attempt to modify a readonly table", 1));
  for (const char* name : {"os", "io", "require", "loadfile", "dofile", "ffi", "jit", "debug",
                           "package"}) {
    std::string body = std::string("return ") + name;
    INFO(name);
    CHECK(eval(s, body) ==
          script_error(body, std::string("ERR user_script:1: Script attempted to access "
                                         "nonexistent global variable '") + name + "'", 1));
  }
  CHECK(eval(s, "local t = {}; t.x = 1; return t.x") == integer(1));
  CHECK(eval(s, "return string.rep('a', 3) .. math.floor(2.5) .. bit.band(6, 3)") ==
        bulk("aaa22"));
  CHECK(eval(s, "return cjson.encode({a=1})") == bulk("{\"a\":1}"));
  CHECK(eval(s, "return cjson.decode('[1,2,3]')[2]") == integer(2));
  CHECK(eval(s, "return redis.sha1hex('')") == bulk("da39a3ee5e6b4b0d3255bfef95601890afd80709"));
  CHECK(eval(s, "return redis.REDIS_VERSION") == bulk("7.2.0"));
  CHECK(eval(s, "redis.log(redis.LOG_WARNING, 'hello from a script'); return 1") == integer(1));
}

TEST_CASE("EVALSHA, SCRIPT LOAD, EXISTS and FLUSH", "[scripting]") {
  TestServer s;
  const std::string body = "return 1";
  const std::string sha = sha1_hex(body);
  CHECK(s.run({"EVALSHA", sha, "0"}) == error("NOSCRIPT No matching script. Please use EVAL."));
  CHECK(s.run({"SCRIPT", "LOAD", body}) == bulk(sha));
  CHECK(s.run({"EVALSHA", sha, "0"}) == integer(1));
  CHECK(s.run({"EVALSHA", "E0E1F9FABFC9D4800C877A703B823AC0578FF8DB", "0"}) == integer(1));
  CHECK(s.run({"SCRIPT", "EXISTS", sha, "ffff"}) == arr({integer(1), integer(0)}));
  CHECK(s.run({"EVAL", "return 2", "0"}) == integer(2));
  CHECK(s.run({"EVALSHA", sha1_hex("return 2"), "0"}) == integer(2));  // EVAL caches too
  CHECK(s.run({"SCRIPT", "FLUSH"}) == kOk);
  CHECK(s.run({"EVALSHA", sha, "0"}) == error("NOSCRIPT No matching script. Please use EVAL."));
  CHECK(s.run({"SCRIPT", "FLUSH", "BAD"}) == error("ERR SCRIPT FLUSH only support SYNC|ASYNC option"));
  CHECK(s.run({"SCRIPT", "KILL"}) == error("NOTBUSY No scripts in execution right now."));
  CHECK(s.run({"EVAL", "return 1", "-1"}) == error("ERR Number of keys can't be negative"));
  CHECK(s.run({"EVAL", "return 1", "2", "a"}) ==
        error("ERR Number of keys can't be greater than number of args"));
  CHECK(s.run({"EVAL", "return 1", "x"}) == error("ERR value is not an integer or out of range"));
}

TEST_CASE("Read-only scripts refuse writes", "[scripting]") {
  TestServer s;
  const std::string w = "return redis.call('SET','a','b')";
  CHECK(s.run({"EVAL_RO", w, "1", "a"}) ==
        script_error(w, "ERR Write commands are not allowed from read-only scripts.", 1));
  const std::string flagged = "#!lua flags=no-writes\nreturn redis.call('SET','a','b')";
  CHECK(eval(s, flagged, {"a"}) ==
        script_error(flagged, "ERR Write commands are not allowed from read-only scripts.", 2));
  CHECK(eval(s, "#!lua flags=no-writes\nreturn redis.call('GET','a')", {"a"}) == kNil);
  CHECK(eval(s, "#!lua flags=bogus\nreturn 1") ==
        error("ERR Unexpected flag in script shebang: bogus"));
  CHECK(s.run({"EXISTS", "a"}) == integer(0));
}

TEST_CASE("The seed's check-and-decrement script sells each unit once", "[scripting]") {
  TestServer s;
  const std::string body =
      "local stock = tonumber(redis.call('GET', KEYS[1]))\n"
      "if stock == nil or stock <= 0 then return -1 end\n"
      "if redis.call('EXISTS', KEYS[2]) == 1 then return -2 end\n"
      "redis.call('DECR', KEYS[1])\n"
      "redis.call('SET', KEYS[2], 1, 'EX', ARGV[1])\n"
      "return stock - 1";
  s.run({"SET", "{sku}:stock", "2"});
  CHECK(eval(s, body, {"{sku}:stock", "{sku}:hold:1"}, {"600"}) == integer(1));
  CHECK(eval(s, body, {"{sku}:stock", "{sku}:hold:1"}, {"600"}) == integer(-2));
  CHECK(eval(s, body, {"{sku}:stock", "{sku}:hold:2"}, {"600"}) == integer(0));
  CHECK(eval(s, body, {"{sku}:stock", "{sku}:hold:3"}, {"600"}) == integer(-1));
  CHECK(s.run({"TTL", "{sku}:hold:1"}) == integer(600));
}

TEST_CASE("Scripts over several shards touch only their declared shards", "[scripting]") {
  TestServer s(4);
  // Two keys on different shards, declared: the script sees both.
  std::string a = "a";
  std::string b = key_on_another_shard(s, a);
  CHECK(eval(s, "redis.call('SET', KEYS[1], 1); redis.call('SET', KEYS[2], 2); return 1",
             {a, b}) == integer(1));
  CHECK(s.run({"MGET", a, b}) == arr({bulk("1"), bulk("2")}));
  // The same key under a hash tag shared with KEYS[1] is fine.
  CHECK(eval(s, "return redis.call('SET', KEYS[1] .. ':x', 1)", {"{" + a + "}"}) == kOk);
}

TEST_CASE("Scripts that reach beyond their KEYS run with every shard", "[scripting]") {
  TestServer s(4);
  std::string a = "a";
  std::string b = key_on_another_shard(s, a);
  CHECK(s.run({"SET", b, "far"}) == kOk);
  auto mode = [&](const std::string& body) {
    auto script = s.engine().scripts().find(sha1_hex(body));
    REQUIRE(script);
    return script->key_mode.load();
  };
  // Its first run holds every shard, and shows that it reads a key it did not declare.
  const std::string sneaky = "return redis.call('GET', ARGV[1])";
  CHECK(eval(s, sneaky, {a}, {b}) == bulk("far"));
  CHECK(mode(sneaky) == hotkv::KeyMode::kUndeclared);
  CHECK(eval(s, sneaky, {a}, {b}) == bulk("far"));
  // Zero KEYS, names from ARGV; KEYS and DBSIZE inside a script see every shard.
  CHECK(eval(s, "redis.call('SET', 'x:' .. ARGV[1], 1) return redis.call('DBSIZE')", {}, {"1"}) ==
        integer(2));
  CHECK(eval(s, "return #redis.call('KEYS', '*')") == integer(2));
  // A script that kept to its KEYS runs on their shard from its second call; should it reach
  // beyond them later, that call is undone and runs again with every shard, and so do the
  // next ones: the caller only ever sees the script's own answer.
  const std::string later =
      "if ARGV[1] == 'far' then return redis.call('GET', ARGV[2]) end "
      "return redis.call('GET', KEYS[1])";
  CHECK(eval(s, later, {a}, {"near"}) == kNil);
  CHECK(mode(later) == hotkv::KeyMode::kDeclared);
  CHECK(eval(s, later, {a}, {"far", b}) == bulk("far"));
  CHECK(mode(later) == hotkv::KeyMode::kUndeclared);
  CHECK(eval(s, later, {a}, {"far", b}) == bulk("far"));
}

TEST_CASE("A script that reaches a shard it does not hold is undone and run again whole",
          "[scripting]") {
  TestServer s(4);
  std::string stock = "stock:a";
  std::string hold = key_on_another_shard(s, stock);
  auto mode = [&](const std::string& body) {
    auto script = s.engine().scripts().find(sha1_hex(body));
    REQUIRE(script);
    return script->key_mode.load();
  };
  // The sale's case: decrement, then on some calls write a hold the script did not declare.
  const std::string reserve =
      "local left = redis.call('DECR', KEYS[1]) "
      "if tonumber(ARGV[1]) > 0 then redis.call('SET', ARGV[2], 1) end "
      "return left";
  CHECK(s.run({"SET", stock, "10"}) == kOk);
  CHECK(eval(s, reserve, {stock}, {"0", hold}) == integer(9));  // first run: every shard
  CHECK(eval(s, reserve, {stock}, {"0", hold}) == integer(8));
  CHECK(eval(s, reserve, {stock}, {"0", hold}) == integer(7));
  CHECK(mode(reserve) == hotkv::KeyMode::kDeclared);
  const uint64_t undone = s.engine().stats().script_runs_undone.load();
  CHECK(eval(s, reserve, {stock}, {"1", hold}) == integer(6));  // undone once, not twice
  CHECK(s.engine().stats().script_runs_undone.load() == undone + 1);
  CHECK(s.run({"GET", stock}) == bulk("6"));
  CHECK(s.run({"GET", hold}) == bulk("1"));
  CHECK(mode(reserve) == hotkv::KeyMode::kUndeclared);

  // Every kind of value the first attempt changed is put back before the run again: a
  // string with its deadline, a hash, a list, a key the attempt created, one it deleted.
  std::string far = key_on_another_shard(s, "h");
  CHECK(s.run({"SET", "{h}s", "5", "EX", "100"}) == kOk);
  CHECK(s.run({"HSET", "{h}h", "n", "1"}) == integer(1));
  CHECK(s.run({"RPUSH", "{h}l", "x"}) == integer(1));
  CHECK(s.run({"SET", "{h}gone", "v"}) == kOk);
  const std::string touch_all =
      "redis.call('INCR', KEYS[1]) redis.call('HINCRBY', KEYS[2], 'n', 1) "
      "redis.call('RPUSH', KEYS[3], 'y') redis.call('SET', KEYS[4], 'new') "
      "redis.call('DEL', KEYS[5]) "
      "if ARGV[1] ~= '' then pcall(redis.call, 'GET', ARGV[1]) redis.call('SET', 'spin', 1) end "
      "return redis.call('LLEN', KEYS[3])";
  std::vector<std::string> keys{"{h}s", "{h}h", "{h}l", "{h}made", "{h}gone"};
  CHECK(eval(s, touch_all, keys, {""}) == integer(2));
  CHECK(mode(touch_all) == hotkv::KeyMode::kDeclared);
  CHECK(s.run({"SET", "{h}gone", "v"}) == kOk);
  CHECK(s.run({"DEL", "{h}made"}) == integer(1));
  // This call's first attempt does everything, then catches the stop with pcall and tries to
  // go on: none of that may stay, and the second attempt does it all once.
  CHECK(eval(s, touch_all, keys, {far}) == integer(3));
  CHECK(s.run({"GET", "{h}s"}) == bulk("7"));
  CHECK(s.run({"TTL", "{h}s"}) == integer(100));
  CHECK(s.run({"HGET", "{h}h", "n"}) == bulk("3"));
  CHECK(s.run({"LRANGE", "{h}l", "0", "-1"}) == arr({bulk("x"), bulk("y"), bulk("y")}));
  CHECK(s.run({"GET", "{h}made"}) == bulk("new"));
  CHECK(s.run({"EXISTS", "{h}gone"}) == integer(0));
  CHECK(s.run({"GET", "spin"}) == bulk("1"));
  CHECK(mode(touch_all) == hotkv::KeyMode::kUndeclared);

  // KEYS inside a script that kept to its KEYS so far: undone, then run with every shard.
  const std::string count =
      "redis.call('INCR', KEYS[1]) if ARGV[1] == 'all' then return #redis.call('KEYS', "
      "'{h}*') end return 0";
  CHECK(eval(s, count, {"{h}c"}, {"one"}) == integer(0));
  CHECK(eval(s, count, {"{h}c"}, {"one"}) == integer(0));
  CHECK(eval(s, count, {"{h}c"}, {"all"}) == integer(5));
  CHECK(s.run({"GET", "{h}c"}) == bulk("3"));
}

TEST_CASE("An undone script that wrote many keys, some twice, puts each back once",
          "[scripting]") {
  TestServer s(4);
  std::string far = key_on_another_shard(s, "{m}");
  // Twenty keys, each written twice, then (ARGV[1] = 1) a key on another shard.
  const std::string many =
      "for i = 1, 20 do redis.call('INCR', '{m}' .. i) redis.call('INCR', '{m}' .. i) end "
      "if ARGV[1] == '1' then redis.call('SET', ARGV[2], 'x') end return 1";
  CHECK(eval(s, many, {"{m}1"}, {"0", far}) == integer(1));  // every shard: learns "undeclared"
  // Known undeclared now (it touched keys outside KEYS): a fresh copy of the body is declared
  // only if it keeps to KEYS, so this one lists all twenty.
  std::vector<std::string> keys;
  for (int i = 1; i <= 20; ++i) {
    keys.push_back("{m}" + std::to_string(i));
  }
  const std::string declared = "-- declared\n" + many;
  CHECK(eval(s, declared, keys, {"0", far}) == integer(1));
  auto script = s.engine().scripts().find(sha1_hex(declared));
  REQUIRE(script);
  CHECK(script->key_mode.load() == hotkv::KeyMode::kDeclared);
  const uint64_t undone = s.engine().stats().script_runs_undone.load();
  CHECK(eval(s, declared, keys, {"1", far}) == integer(1));
  CHECK(s.engine().stats().script_runs_undone.load() == undone + 1);
  for (const std::string& k : keys) {
    CHECK(s.run({"GET", k}) == bulk("6"));  // three runs of two increments: none undone twice
  }
  CHECK(s.run({"GET", far}) == bulk("x"));
  CHECK(script->key_mode.load() == hotkv::KeyMode::kUndeclared);
}

TEST_CASE("A script writing a value too large to keep a copy of runs with every shard",
          "[scripting]") {
  TestServer s(4);
  std::vector<std::string> hset{"HSET", "big"};
  for (int i = 0; i < 3000; ++i) {
    hset.push_back("field-" + std::to_string(i));
    hset.push_back(std::string(40, 'v'));
  }
  CHECK(s.run(hset) == integer(3000));
  const std::string bump = "return redis.call('HINCRBY', KEYS[1], 'count', 1)";
  CHECK(eval(s, bump, {"big"}) == integer(1));  // first run: every shard, nothing kept
  auto script = s.engine().scripts().find(sha1_hex(bump));
  REQUIRE(script);
  CHECK(script->key_mode.load() == hotkv::KeyMode::kDeclared);
  CHECK(eval(s, bump, {"big"}) == integer(2));  // one increment: the attempt wrote nothing
  CHECK(script->key_mode.load() == hotkv::KeyMode::kUndeclared);
  CHECK(eval(s, bump, {"big"}) == integer(3));
  CHECK(s.run({"HLEN", "big"}) == integer(3001));
}

TEST_CASE("SCRIPT KILL stops a long script that has not written", "[scripting]") {
  TestServer s;
  s.config().busy_reply_threshold.store(50);
  auto& store = s.engine().scripts();
  std::atomic<bool> killed{false};
  std::thread killer([&] {
    for (int i = 0; i < 2000 && !store.busy(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    bool ok = false;
    CHECK(store.request_kill(ok, false) == "OK");
    killed = ok;
  });
  const std::string loop = "local i = 0\nwhile true do i = i + 1 end";
  std::string reply = eval(s, loop);
  killer.join();
  CHECK(killed);
  CHECK(reply == script_error(loop, "ERR Script killed by user with SCRIPT KILL...", 2));
  CHECK_FALSE(store.busy());
  // A script that wrote cannot be killed.
  std::thread refuser([&] {
    for (int i = 0; i < 2000 && !store.busy(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    bool ok = true;
    CHECK(store.request_kill(ok, false).rfind("UNKILLABLE", 0) == 0);
    CHECK_FALSE(ok);
  });
  std::string r2 = eval(s,
                        "redis.call('SET', 'w', 1)\nlocal t = redis.call('TIME')\n"
                        "local i = 0\nwhile i < 100000000 do i = i + 1 end\nreturn 1");
  refuser.join();
  CHECK(r2 == integer(1));
}

TEST_CASE("A busy script serves its thread's other handlers, which get -BUSY", "[scripting]") {
  TestServer s(2);
  s.config().busy_reply_threshold.store(30);
  auto& store = s.engine().scripts();
  std::string here = "k0";  // a key on the script's shard, and one on the other shard
  std::string there;
  for (int i = 1; i < 100 && there.empty(); ++i) {
    std::string k = "k" + std::to_string(i);
    if (s.engine().shard_of(k) != s.engine().shard_of(here)) {
      there = k;
    }
  }
  REQUIRE_FALSE(there.empty());
  size_t home = s.engine().shard_of(here);
  std::atomic<bool> ran{false};
  std::string inside_here, inside_there, inside_ping, kill_function, kill_script;
  std::thread helper([&] {
    for (int i = 0; i < 2000 && !store.busy(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    // Runs on the script's own thread, from inside the script (the nested event loop).
    asio::post(s.engine().shard(home).io(), [&] {
      CHECK(s.engine().shard(home).serving_while_busy());
      inside_here = s.run({"GET", here});
      inside_ping = s.run({"PING"});
      ran = true;
    });
    for (int i = 0; i < 2000 && !ran; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    // Only the shard the script holds is busy.
    CHECK(s.engine().shard(home).script_busy());
    CHECK_FALSE(s.engine().shard(s.engine().shard_of(there)).script_busy());
    bool ok = true;
    kill_function = store.request_kill(ok, true);
    CHECK_FALSE(ok);
    kill_script = store.request_kill(ok, false);
    CHECK(ok);
  });
  // Run to its end once first: a script's first run holds every shard.
  const std::string loop =
      "local n = tonumber(ARGV[1]) local i = 0\nwhile n == 0 or i < n do i = i + 1 end return i";
  REQUIRE(s.run({"EVAL", loop, "1", here, "5"}) == integer(5));
  std::string reply = s.run({"EVAL", loop, "1", here, "0"});
  helper.join();
  CHECK(ran);
  CHECK(inside_here == error(hotkv::ScriptStore::busy_error(false)));
  CHECK(inside_ping == error(hotkv::ScriptStore::busy_error(false)));
  // FUNCTION KILL does not stop an EVAL script; it names the command that would.
  CHECK(kill_function == hotkv::ScriptStore::busy_error(false));
  CHECK(kill_script == "OK");
  CHECK(reply.find("Script killed by user") != std::string::npos);
  CHECK_FALSE(store.busy());
  CHECK_FALSE(s.engine().shard(home).script_busy());
  // Everyone carries on.
  CHECK(s.run({"SET", here, "v"}) == kOk);
  CHECK(s.run({"GET", here}) == bulk("v"));
}

TEST_CASE("Kill requests name the kind of the busy script", "[scripting]") {
  hotkv::ScriptStore store(2);
  bool ok = true;
  CHECK(store.request_kill(ok, false) == "NOTBUSY No scripts in execution right now.");
  CHECK_FALSE(ok);
  store.mark_timed_out(1, true);  // a function is busy on shard 1
  CHECK(store.busy());
  CHECK(store.busy_error() == hotkv::ScriptStore::busy_error(true));
  CHECK(store.request_kill(ok, false) ==
        "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN "
        "NOSAVE.");
  CHECK_FALSE(ok);
  store.slot(1).wrote.store(true);
  CHECK(store.request_kill(ok, true).rfind("UNKILLABLE Sorry the script already executed", 0) == 0);
  CHECK_FALSE(ok);
  store.slot(1).wrote.store(false);
  CHECK(store.request_kill(ok, true) == "OK");
  CHECK(ok);
  CHECK(store.slot(1).kill.load());
  store.clear_timed_out(1);
  CHECK_FALSE(store.busy());
  CHECK(store.busy_error() == hotkv::ScriptStore::busy_error(false));
}
