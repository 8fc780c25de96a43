// Redis 7 functions through the real table (TestServer): FUNCTION LOAD/LIST/DELETE/FLUSH,
// FCALL/FCALL_RO with KEYS and ARGV as arguments, flags, name clashes, errors, and the
// libraries file that keeps them across restarts.
#include <cstdio>
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "hotkv/commands/script_store.hpp"
#include "support/resp_value.hpp"
#include "support/test_server.hpp"

using hotkv::test::arr;
using hotkv::test::bulk;
using hotkv::test::error;
using hotkv::test::integer;
using hotkv::test::kOk;
using hotkv::test::TestServer;

namespace {

const std::string kLib =
    "#!lua name=sale\n"
    "redis.register_function('reserve', function(keys, args)\n"
    "  local left = tonumber(redis.call('GET', keys[1]) or '0')\n"
    "  if left <= 0 then return -1 end\n"
    "  return redis.call('DECRBY', keys[1], args[1])\n"
    "end)\n"
    "redis.register_function{function_name = 'peek', callback = function(keys)\n"
    "  return redis.call('GET', keys[1]) end, flags = {'no-writes'}}\n";

}  // namespace

TEST_CASE("FUNCTION LOAD registers functions FCALL runs", "[functions]") {
  TestServer s;
  CHECK(s.run({"FUNCTION", "LOAD", kLib}) == bulk("sale"));
  s.run({"SET", "{sku}:stock", "3"});
  CHECK(s.run({"FCALL", "reserve", "1", "{sku}:stock", "2"}) == integer(1));
  CHECK(s.run({"FCALL", "reserve", "1", "{sku}:stock", "1"}) == integer(0));
  CHECK(s.run({"FCALL", "reserve", "1", "{sku}:stock", "1"}) == integer(-1));
  CHECK(s.run({"FCALL_RO", "peek", "1", "{sku}:stock"}) == bulk("0"));
  CHECK(s.run({"FCALL_RO", "reserve", "1", "{sku}:stock", "1"}) ==
        error("ERR Can not execute a script with write flag using *_ro command."));
  CHECK(s.run({"FCALL", "nosuch", "0"}) == error("ERR Function not found"));
  CHECK(s.run({"FUNCTION", "LOAD", kLib}) == error("ERR Library 'sale' already exists"));
  CHECK(s.run({"FUNCTION", "LOAD", "REPLACE", kLib}) == bulk("sale"));
  CHECK(s.run({"FUNCTION", "LOAD",
               "#!lua name=other\nredis.register_function('peek', function() return 1 end)"}) ==
        error("ERR Function peek already exists"));
}

TEST_CASE("FUNCTION LOAD refuses bad libraries", "[functions]") {
  TestServer s;
  CHECK(s.run({"FUNCTION", "LOAD", "return 1"}) == error("ERR Missing library metadata"));
  CHECK(s.run({"FUNCTION", "LOAD", "#!lua name=empty\nlocal x = 1"}) ==
        error("ERR No functions registered"));
  CHECK(s.run({"FUNCTION", "LOAD", "#!lua name=bad\nredis.register_function('a-b', function() end)"})
            .rfind("-ERR", 0) == 0);
  CHECK(s.run({"FUNCTION", "LOAD", "#!lua name=loop\nwhile true do end"}).find("timeout") !=
        std::string::npos);
  // Scripts have no register_function (as on Redis 7, where it exists only at load).
  CHECK(s.run({"EVAL", "redis.register_function('x', function() end)", "0"})
            .find("attempt to call field 'register_function'") != std::string::npos);
  CHECK(s.run({"FUNCTION", "LIST"}) == "*0\r\n");
}

TEST_CASE("A library's top level sees only what registering needs", "[functions]") {
  TestServer s;
  auto load = [&](const std::string& body) {
    return s.run({"FUNCTION", "LOAD", "REPLACE", "#!lua name=lib\n" + body});
  };
  auto refused = [](const std::string& reply, const std::string& name) {
    return reply.rfind("-ERR", 0) == 0 &&
           reply.find("nonexistent global variable '" + name + "'") != std::string::npos;
  };
  // Commands, random numbers, metatables and the other libraries are out of reach at load.
  CHECK(refused(load("return redis.call('PING')"), "call"));
  CHECK(refused(load("return redis.setresp(3)"), "setresp"));
  CHECK(refused(load("return math.random()"), "math"));
  CHECK(refused(load("local mt = getmetatable(_G)"), "getmetatable"));
  CHECK(refused(load("return redis.redis.call('PING')"), "redis"));
  // log and the version are there; the registered functions see the full API once it loaded.
  CHECK(load("redis.log(redis.LOG_NOTICE, redis.REDIS_VERSION)\n"
             "local lib = redis\n"
             "redis.register_function('f', function() return redis.call('PING') end)\n"
             "redis.register_function('keep', function() lib.x = 1 end)\n"
             "redis.register_function('again', function()\n"
             "  lib.register_function('g', function() return 1 end) end)\n"
             "redis.register_function('inner', function()\n"
             "  redis.register_function('h', function() return 1 end) end)") == bulk("lib"));
  CHECK(s.run({"FCALL", "f", "0"}) == "+PONG\r\n");
  // The load `redis` kept in an upvalue stays read-only and cannot register from a call;
  // the scripts' `redis` has no register_function at all.
  CHECK(s.run({"FCALL", "keep", "0"}).find("Attempt to modify a readonly table") !=
        std::string::npos);
  CHECK(s.run({"FCALL", "again", "0"}).find("can only be called on FUNCTION LOAD command") !=
        std::string::npos);
  CHECK(s.run({"FCALL", "inner", "0"}).find("attempt to call field 'register_function'") !=
        std::string::npos);
  CHECK(s.run({"EVAL", "return redis.register_function", "0"}) == hotkv::test::kNil);
}

TEST_CASE("FUNCTION LIST, DELETE and FLUSH", "[functions]") {
  TestServer s;
  s.run({"FUNCTION", "LOAD", kLib});
  std::string list = s.run({"FUNCTION", "LIST"});
  CHECK(list.find("$12\r\nlibrary_name\r\n$4\r\nsale\r\n") != std::string::npos);
  CHECK(list.find("$9\r\nno-writes\r\n") != std::string::npos);
  CHECK(s.run({"FUNCTION", "LIST", "WITHCODE"}).find("redis.register_function") !=
        std::string::npos);
  CHECK(s.run({"FUNCTION", "LIST", "LIBRARYNAME", "nomatch*"}) == "*0\r\n");
  CHECK(s.run({"FUNCTION", "DELETE", "nope"}) == error("ERR Library not found"));
  CHECK(s.run({"FUNCTION", "DELETE", "sale"}) == kOk);
  CHECK(s.run({"FCALL", "reserve", "0"}) == error("ERR Function not found"));
  s.run({"FUNCTION", "LOAD", kLib});
  CHECK(s.run({"FUNCTION", "FLUSH"}) == kOk);
  CHECK(s.run({"FUNCTION", "LIST"}) == "*0\r\n");
}

TEST_CASE("Libraries survive a restart through their file", "[functions]") {
  auto path = std::filesystem::temp_directory_path() / "hotkv-functions-test.hotkv";
  std::filesystem::remove(path);
  {
    TestServer s;
    s.engine().scripts().set_functions_file(path.string());
    CHECK(s.run({"FUNCTION", "LOAD", kLib}) == bulk("sale"));
  }
  hotkv::ScriptStore store(1);
  store.set_functions_file(path.string());
  std::vector<std::string> codes;
  std::string err;
  REQUIRE(store.read_libraries_file(codes, err));
  REQUIRE(codes.size() == 1);
  CHECK(codes[0] == kLib);
  std::filesystem::remove(path);
}

TEST_CASE("FUNCTION DUMP and RESTORE with each policy, all or nothing", "[functions]") {
  TestServer s;
  const std::string lib_b =
      "#!lua name=b\nredis.register_function('fb', function() return 'b' end)";
  const std::string lib_c =
      "#!lua name=c\nredis.register_function('fc', function() return 'c' end)";
  CHECK(s.run({"FUNCTION", "LOAD", kLib}) == bulk("sale"));
  CHECK(s.run({"FUNCTION", "LOAD", lib_b}) == bulk("b"));
  auto dump = hotkv::test::parse_resp(s.run({"FUNCTION", "DUMP"})).str;
  // The same libraries dump to the same bytes.
  CHECK(hotkv::test::parse_resp(s.run({"FUNCTION", "DUMP"})).str == dump);

  CHECK(s.run({"FUNCTION", "FLUSH"}) == kOk);
  CHECK(s.run({"FUNCTION", "RESTORE", dump}) == kOk);  // APPEND by default
  CHECK(s.run({"FCALL", "fb", "0"}) == bulk("b"));
  CHECK(s.run({"FCALL_RO", "peek", "1", "{sku}:stock"}) == hotkv::test::kNil);
  // APPEND: a library that exists refuses the whole payload.
  CHECK(s.run({"FUNCTION", "RESTORE", dump, "APPEND"}) == error("ERR Library b already exists"));
  // REPLACE: same-named libraries are replaced; a function another library owns refuses.
  CHECK(s.run({"FUNCTION", "RESTORE", dump, "REPLACE"}) == kOk);
  CHECK(s.run({"FUNCTION", "DELETE", "b"}) == kOk);
  CHECK(s.run({"FUNCTION", "LOAD",
               "#!lua name=other\nredis.register_function('fb', function() return 'x' end)"}) ==
        bulk("other"));
  CHECK(s.run({"FUNCTION", "RESTORE", dump, "REPLACE"}) == error("ERR Function fb already exists"));
  CHECK(s.run({"FCALL", "fb", "0"}) == bulk("x"));
  // FLUSH: exactly the payload's libraries afterwards.
  CHECK(s.run({"FUNCTION", "LOAD", lib_c}) == bulk("c"));
  CHECK(s.run({"FUNCTION", "RESTORE", dump, "flush"}) == kOk);
  CHECK(s.run({"FCALL", "fb", "0"}) == bulk("b"));
  CHECK(s.run({"FCALL", "fc", "0"}) == error("ERR Function not found"));
  // Bad payloads, policies and argument counts leave everything as it was.
  CHECK(s.run({"FUNCTION", "RESTORE", "bad_payload"}) ==
        error("ERR DUMP payload version or checksum are wrong"));
  std::string changed = dump;
  changed[3] ^= 1;
  CHECK(s.run({"FUNCTION", "RESTORE", changed}) ==
        error("ERR DUMP payload version or checksum are wrong"));
  CHECK(s.run({"FUNCTION", "RESTORE", dump, "MERGE"}) ==
        error("ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE."));
  CHECK(s.run({"FUNCTION", "RESTORE", dump, "FLUSH", "x"}) ==
        error("ERR unknown subcommand or wrong number of arguments for 'RESTORE'. Try FUNCTION "
              "HELP."));
  CHECK(s.run({"FCALL", "fb", "0"}) == bulk("b"));
  // An empty set of libraries dumps to a payload that restores to nothing.
  CHECK(s.run({"FUNCTION", "FLUSH"}) == kOk);
  auto empty = hotkv::test::parse_resp(s.run({"FUNCTION", "DUMP"})).str;
  CHECK(empty.size() == 10);
  CHECK(s.run({"FUNCTION", "RESTORE", empty}) == kOk);
  CHECK(s.run({"FUNCTION", "LIST"}) == "*0\r\n");
}
