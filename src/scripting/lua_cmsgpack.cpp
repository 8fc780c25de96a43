// cmsgpack for scripts (lua_cmsgpack.hpp), on msgpack-c (Debian's libmsgpack-dev): its packer
// chooses the compact encodings, its unpacker parses and bounds-checks untrusted input. This
// file only maps Lua values to MessagePack values and back.
#include "hotkv/scripting/lua_cmsgpack.hpp"

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

extern "C" {
#include <lauxlib.h>
#include <lua.h>
}

#include <msgpack.h>

namespace hotkv {
namespace {

// Tables nested deeper than this are packed as nil (a table that contains itself would
// otherwise never end), as Redis's cmsgpack does.
constexpr int kMaxNesting = 16;

int write_to_string(void* data, const char* buf, size_t len) {
  static_cast<std::string*>(data)->append(buf, len);
  return 0;
}

// A table is packed as an array when its keys are exactly 1..n, else as a map.
bool is_array(lua_State* L, int index, size_t& n) {
  n = 0;
  double max = 0;
  lua_pushnil(L);
  while (lua_next(L, index) != 0) {
    lua_pop(L, 1);
    if (lua_type(L, -1) != LUA_TNUMBER) {
      lua_pop(L, 1);
      return false;
    }
    double k = lua_tonumber(L, -1);
    if (k < 1 || std::floor(k) != k) {
      lua_pop(L, 1);
      return false;
    }
    max = k > max ? k : max;
    ++n;
  }
  return max == static_cast<double>(n);
}

void pack_value(lua_State* L, int index, msgpack_packer& pk, int depth) {
  switch (lua_type(L, index)) {
    case LUA_TBOOLEAN:
      if (lua_toboolean(L, index) != 0) {
        msgpack_pack_true(&pk);
      } else {
        msgpack_pack_false(&pk);
      }
      return;
    case LUA_TNUMBER: {
      double d = lua_tonumber(L, index);
      if (std::isfinite(d) && std::floor(d) == d && d >= -9223372036854775808.0 &&
          d < 9223372036854775808.0) {
        if (d >= 0) {
          msgpack_pack_uint64(&pk, static_cast<uint64_t>(d));
        } else {
          msgpack_pack_int64(&pk, static_cast<int64_t>(d));
        }
      } else if (static_cast<double>(static_cast<float>(d)) == d || std::isnan(d)) {
        msgpack_pack_float(&pk, static_cast<float>(d));
      } else {
        msgpack_pack_double(&pk, d);
      }
      return;
    }
    case LUA_TSTRING: {
      size_t len = 0;
      const char* s = lua_tolstring(L, index, &len);
      msgpack_pack_str(&pk, len);
      msgpack_pack_str_body(&pk, s, len);
      return;
    }
    case LUA_TTABLE:
      break;
    default:
      msgpack_pack_nil(&pk);
      return;
  }
  if (depth >= kMaxNesting || !lua_checkstack(L, 4)) {
    msgpack_pack_nil(&pk);
    return;
  }
  index = index < 0 ? lua_gettop(L) + index + 1 : index;
  size_t n = 0;
  if (is_array(L, index, n)) {
    msgpack_pack_array(&pk, n);
    for (size_t i = 1; i <= n; ++i) {
      lua_rawgeti(L, index, static_cast<int>(i));
      pack_value(L, -1, pk, depth + 1);
      lua_pop(L, 1);
    }
    return;
  }
  n = 0;
  lua_pushnil(L);
  while (lua_next(L, index) != 0) {
    lua_pop(L, 1);
    ++n;
  }
  msgpack_pack_map(&pk, n);
  lua_pushnil(L);
  while (lua_next(L, index) != 0) {
    pack_value(L, -2, pk, depth + 1);
    pack_value(L, -1, pk, depth + 1);
    lua_pop(L, 1);
  }
}

int msgpack_pack(lua_State* L) {
  int n = lua_gettop(L);
  if (n == 0) {
    return luaL_argerror(L, 0, "MessagePack pack needs input.");
  }
  std::string out;
  msgpack_packer pk;
  msgpack_packer_init(&pk, &out, write_to_string);
  for (int i = 1; i <= n; ++i) {
    pack_value(L, i, pk, 0);
  }
  lua_pushlstring(L, out.data(), out.size());
  return 1;
}

// Pushes a parsed object; false if it is nested too deeply for the Lua stack.
bool push_object(lua_State* L, const msgpack_object& o, int depth) {
  if (depth > 1000 || !lua_checkstack(L, 4)) {
    return false;
  }
  switch (o.type) {
    case MSGPACK_OBJECT_NIL:
      lua_pushnil(L);
      return true;
    case MSGPACK_OBJECT_BOOLEAN:
      lua_pushboolean(L, o.via.boolean ? 1 : 0);
      return true;
    case MSGPACK_OBJECT_POSITIVE_INTEGER:
      lua_pushnumber(L, static_cast<lua_Number>(o.via.u64));
      return true;
    case MSGPACK_OBJECT_NEGATIVE_INTEGER:
      lua_pushnumber(L, static_cast<lua_Number>(o.via.i64));
      return true;
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64:
      lua_pushnumber(L, static_cast<lua_Number>(o.via.f64));
      return true;
    case MSGPACK_OBJECT_STR:
      lua_pushlstring(L, o.via.str.ptr, o.via.str.size);
      return true;
    case MSGPACK_OBJECT_BIN:
      lua_pushlstring(L, o.via.bin.ptr, o.via.bin.size);
      return true;
    case MSGPACK_OBJECT_ARRAY:
      lua_createtable(L, static_cast<int>(o.via.array.size), 0);
      for (uint32_t i = 0; i < o.via.array.size; ++i) {
        if (!push_object(L, o.via.array.ptr[i], depth + 1)) {
          return false;
        }
        lua_rawseti(L, -2, static_cast<int>(i + 1));
      }
      return true;
    case MSGPACK_OBJECT_MAP:
      lua_createtable(L, 0, static_cast<int>(o.via.map.size));
      for (uint32_t i = 0; i < o.via.map.size; ++i) {
        if (!push_object(L, o.via.map.ptr[i].key, depth + 1) ||
            !push_object(L, o.via.map.ptr[i].val, depth + 1)) {
          return false;
        }
        if (lua_isnil(L, -2)) {
          lua_pop(L, 2);  // a nil key cannot be stored
        } else {
          lua_rawset(L, -3);
        }
      }
      return true;
    default:
      lua_pushnil(L);  // extension types: nothing Lua can hold
      return true;
  }
}

// Decodes up to `limit` objects (0: all) from `offset`; pushes them and returns how many.
// `next` is the offset after the last one decoded, or -1 at the end of the data.
int unpack_objects(lua_State* L, std::string_view data, size_t offset, int limit, long long& next) {
  msgpack_unpacked result;
  msgpack_unpacked_init(&result);
  int pushed = 0;
  size_t off = offset;
  while (off < data.size() && (limit == 0 || pushed < limit)) {
    msgpack_unpack_return r = msgpack_unpack_next(&result, data.data(), data.size(), &off);
    if (r != MSGPACK_UNPACK_SUCCESS && r != MSGPACK_UNPACK_EXTRA_BYTES) {
      msgpack_unpacked_destroy(&result);
      return luaL_error(L, "Bad data format in input.");
    }
    if (!push_object(L, result.data, 0)) {
      msgpack_unpacked_destroy(&result);
      return luaL_error(L, "Bad data format in input.");
    }
    ++pushed;
  }
  msgpack_unpacked_destroy(&result);
  next = off >= data.size() ? -1 : static_cast<long long>(off);
  return pushed;
}

std::string_view arg_string(lua_State* L, int i) {
  size_t len = 0;
  const char* s = luaL_checklstring(L, i, &len);
  return std::string_view(s, len);
}

// cmsgpack.unpack(s): every object in s.
int msgpack_unpack(lua_State* L) {
  std::string_view data = arg_string(L, 1);
  lua_settop(L, 1);
  long long next = 0;
  return unpack_objects(L, data, 0, 0, next);
}

// cmsgpack.unpack_limit(s, limit, offset) / unpack_one(s, offset): the next offset (-1 at the
// end) and then the objects.
int unpack_from(lua_State* L, std::string_view data, int limit, lua_Integer offset) {
  if (offset < 0 || static_cast<size_t>(offset) > data.size()) {
    return luaL_error(L, "Start offset %d greater than input length %d.", static_cast<int>(offset),
                      static_cast<int>(data.size()));
  }
  lua_pushnil(L);  // replaced by the next offset
  int slot = lua_gettop(L);
  long long next = 0;
  int n = unpack_objects(L, data, static_cast<size_t>(offset), limit, next);
  lua_pushnumber(L, static_cast<lua_Number>(next));
  lua_replace(L, slot);
  return n + 1;
}

int msgpack_unpack_limit(lua_State* L) {
  std::string_view data = arg_string(L, 1);
  int limit = static_cast<int>(luaL_checkinteger(L, 2));
  lua_Integer offset = luaL_optinteger(L, 3, 0);
  lua_settop(L, 1);
  return unpack_from(L, data, limit < 0 ? 0 : limit, offset);
}

int msgpack_unpack_one(lua_State* L) {
  std::string_view data = arg_string(L, 1);
  lua_Integer offset = luaL_optinteger(L, 2, 0);
  lua_settop(L, 1);
  return unpack_from(L, data, 1, offset);
}

}  // namespace

void open_cmsgpack(lua_State* L) {
  lua_newtable(L);
  const luaL_Reg fns[] = {{"pack", msgpack_pack},
                          {"unpack", msgpack_unpack},
                          {"unpack_one", msgpack_unpack_one},
                          {"unpack_limit", msgpack_unpack_limit},
                          {nullptr, nullptr}};
  for (const luaL_Reg* f = fns; f->name != nullptr; ++f) {
    lua_pushcfunction(L, f->func);
    lua_setfield(L, -2, f->name);
  }
  lua_pushliteral(L, "lua-cmsgpack");
  lua_setfield(L, -2, "_NAME");
  lua_setglobal(L, "cmsgpack");
}

}  // namespace hotkv
