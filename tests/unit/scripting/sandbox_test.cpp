// The sandbox: every trick a script can use to change what later scripts see is refused with
// Redis's error, binary chunks do not load, and the libraries keep working through their
// read-only views.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "support/test_server.hpp"

using hotkv::test::bulk;
using hotkv::test::integer;
using hotkv::test::TestServer;

namespace {

std::string eval(TestServer& s, const std::string& body) { return s.run({"EVAL", body, "0"}); }

bool refused_readonly(const std::string& reply) {
  return reply.rfind("-ERR ", 0) == 0 &&
         reply.find("Attempt to modify a readonly table") != std::string::npos;
}

}  // namespace

TEST_CASE("Scripts cannot change the Lua world of later scripts", "[scripting][sandbox]") {
  TestServer s;
  const std::vector<std::string> tricks = {
      "redis.call = function() return 'x' end",
      "rawset(redis, 'call', function() return 'x' end)",
      "rawset(_G, 'leak', 1)",
      "leak = 1",
      "_G = {}",
      "redis = function() return 1 end",
      "setmetatable(_G, {})",
      "local g = getmetatable(_G); g.__index = {}",
      "string.len = function() return 42 end",
      "rawset(string, 'len', function() return 42 end)",
      "getmetatable('').__index = {}",
      "table.insert = nil",
      "math.floor = nil",
      "bit.band = nil",
      "cjson.encode = nil",
      "cmsgpack.pack = nil",
      "struct.pack = nil",
      "setmetatable(redis, {})",
      "setfenv(1, {})",
      "setfenv(0, {})",
  };
  for (const std::string& t : tricks) {
    INFO(t);
    CHECK(refused_readonly(eval(s, t)));
  }
  // What the next script sees is the world as it was.
  CHECK(eval(s, "return redis.call('PING')") == "+PONG\r\n");
  CHECK(eval(s, "return string.len('abc')") == integer(3));
  CHECK(eval(s, "return ('abc'):upper()") == bulk("ABC"));
  CHECK(eval(s, "return tostring(rawget(_G, 'leak'))") == bulk("nil"));
  CHECK(eval(s, "return table.concat({'a', 'b'}, ',')") == bulk("a,b"));
  CHECK(eval(s, "return math.floor(2.5) + bit.band(7, 3)") == integer(5));
  CHECK(eval(s, "return cjson.encode({1, 2})") == bulk("[1,2]"));
  CHECK(eval(s, "return cmsgpack.unpack(cmsgpack.pack({7}))[1]") == integer(7));
  CHECK(eval(s, "return struct.unpack('<i4', struct.pack('<i4', -9))") == integer(-9));
  // The real tables stay out of reach.
  CHECK(eval(s, "return tostring(getmetatable(redis).__index)") == bulk("nil"));
  CHECK(eval(s, "return tostring(getmetatable('').__index)") == bulk("nil"));
  // A function of the script's own may still get an environment of its own.
  CHECK(eval(s, "local f = function() return x end; setfenv(f, {x = 7}); return f()") ==
        integer(7));
}

TEST_CASE("Binary chunks do not load, source does", "[scripting][sandbox]") {
  TestServer s;
  std::string r = eval(s, "return loadstring(string.dump(function() return 1 end))()");
  CHECK(r.find("attempt to call a nil value") != std::string::npos);
  CHECK(eval(s, "local f, err = loadstring(string.dump(function() return 1 end)); return err") ==
        bulk("binary chunks are not allowed"));
  CHECK(eval(s, "return loadstring('return 6 * 7')()") == integer(42));
  for (const char* absent : {"print", "loadfile", "dofile", "require", "debug", "os", "io"}) {
    CHECK(eval(s, std::string("return tostring(") + absent + ")")
              .find("Script attempted to access nonexistent global variable '" +
                    std::string(absent) + "'") != std::string::npos);
  }
}
