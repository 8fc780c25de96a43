// Redis 7 functions through the real table (TestServer): FUNCTION LOAD/LIST/DELETE/FLUSH,
// FCALL/FCALL_RO with KEYS and ARGV as arguments, flags, name clashes, errors, and the
// libraries file that keeps them across restarts.
#include <cstdio>
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "hotkv/scripting/script_store.hpp"
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
  CHECK(s.run({"EVAL", "redis.register_function('x', function() end)", "0"}).find(
            "can only be called on FUNCTION LOAD") != std::string::npos);
  CHECK(s.run({"FUNCTION", "LIST"}) == "*0\r\n");
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
