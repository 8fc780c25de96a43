// The read-only sandbox (lua_sandbox.hpp). LuaJIT has no read-only tables (Redis patches its
// Lua for them), so every library table is replaced by an empty proxy whose metatable reads
// through to the real table and refuses writes; the raw routes around a metatable (rawset,
// setmetatable, setfenv) refuse protected tables; and the real tables are reachable from no
// script (the string metatable points at the proxy and hides itself).
#include "hotkv/scripting/lua_sandbox.hpp"

#include <string_view>

extern "C" {
#include <lauxlib.h>
#include <lua.h>
}

namespace hotkv {
namespace {

// Registry key of the set {protected table -> true} (weak keys).
constexpr const char* kReadOnlyRegistryKey = "hotkv_readonly_tables";
// Registry keys of the metatable of the globals view (its __index decides what global names
// read), of the scripts' globals and of FUNCTION LOAD's environment.
constexpr const char* kGlobalsViewMeta = "hotkv_globals_view_meta";
constexpr const char* kScriptGlobals = "hotkv_script_globals";
constexpr const char* kLoadGlobals = "hotkv_load_globals";
constexpr const char* kReadOnlyError = "Attempt to modify a readonly table";

int readonly_error(lua_State* L) { return luaL_error(L, kReadOnlyError); }

int nonexistent_global(lua_State* L) {
  const char* name = lua_tostring(L, 2);
  return luaL_error(L, "Script attempted to access nonexistent global variable '%s'",
                    name ? name : "?");
}

// Gives the table at `index` a metatable that raises on every name it lacks, read or written.
void refuse_unknown_names(lua_State* L, int index) {
  index = index < 0 ? lua_gettop(L) + index + 1 : index;
  lua_newtable(L);
  lua_pushcfunction(L, nonexistent_global);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, readonly_error);
  lua_setfield(L, -2, "__newindex");
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "__metatable");
  lua_setmetatable(L, index);
}

bool is_protected(lua_State* L, int index) {
  if (!lua_istable(L, index)) {
    return false;
  }
  lua_getfield(L, LUA_REGISTRYINDEX, kReadOnlyRegistryKey);
  lua_pushvalue(L, index);
  lua_rawget(L, -2);
  bool yes = lua_toboolean(L, -1) != 0;
  lua_pop(L, 2);
  return yes;
}

void mark_protected(lua_State* L, int index) {
  index = index < 0 ? lua_gettop(L) + index + 1 : index;
  lua_getfield(L, LUA_REGISTRYINDEX, kReadOnlyRegistryKey);
  lua_pushvalue(L, index);
  lua_pushboolean(L, 1);
  lua_rawset(L, -3);
  lua_pop(L, 1);
}

// Pushes what getmetatable answers for a protected table: an empty table that refuses writes
// and shows nothing (the real metatable, and what it leads to, stay out of reach).
void push_hidden_metatable(lua_State* L) {
  lua_newtable(L);
  lua_newtable(L);
  lua_pushcfunction(L, readonly_error);
  lua_setfield(L, -2, "__newindex");
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "__metatable");
  lua_setmetatable(L, -2);
  mark_protected(L, -1);
}

// Pushes an empty, protected view of the table at `real`: reads go to the table, writes of
// any name raise, getmetatable shows a hidden table.
void push_readonly_view(lua_State* L, int real) {
  lua_newtable(L);  // the view
  lua_newtable(L);  // its metatable
  lua_pushvalue(L, real);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, readonly_error);
  lua_setfield(L, -2, "__newindex");
  push_hidden_metatable(L);
  lua_setfield(L, -2, "__metatable");
  mark_protected(L, -1);
  lua_setmetatable(L, -2);
  mark_protected(L, -1);
}

// Replaces the table at the top of the stack by a read-only view of it.
void to_readonly_view(lua_State* L) {
  int real = lua_gettop(L);
  mark_protected(L, real);
  push_readonly_view(L, real);
  lua_replace(L, real);
}

// Calls the function the guard wraps (its upvalue) with the guard's arguments.
int call_original(lua_State* L) {
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

// rawset(t, k, v) and setmetatable(t, mt), refusing protected tables; the originals are the
// closures' upvalue.
int guarded_rawset(lua_State* L) {
  if (is_protected(L, 1)) {
    return readonly_error(L);
  }
  return call_original(L);
}

// setfenv on a stack level (the script's own chunk, cached for its next call, or the whole
// interpreter with 0) would outlive the script; a function of the script's own may get any
// environment.
int guarded_setfenv(lua_State* L) {
  if (lua_isnumber(L, 1) || is_protected(L, 1)) {
    return readonly_error(L);
  }
  return call_original(L);
}

// loadstring/load of source only: a binary chunk (string.dump's output, or crafted bytecode)
// answers nil and an error, as on Redis.
int guarded_load(lua_State* L) {
  size_t len = 0;
  const char* s = lua_tolstring(L, 1, &len);
  if (s != nullptr && len > 0 && s[0] == LUA_SIGNATURE[0]) {
    lua_pushnil(L);
    lua_pushstring(L, "binary chunks are not allowed");
    return 2;
  }
  return call_original(L);
}

void wrap_global(lua_State* L, const char* name, lua_CFunction guard) {
  lua_getglobal(L, name);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    return;
  }
  lua_pushcclosure(L, guard, 1);
  lua_setglobal(L, name);
}

}  // namespace

void make_sandbox_readonly(lua_State* L) {
  lua_newtable(L);
  lua_newtable(L);
  lua_pushstring(L, "k");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
  lua_setfield(L, LUA_REGISTRYINDEX, kReadOnlyRegistryKey);

  wrap_global(L, "rawset", guarded_rawset);
  wrap_global(L, "setmetatable", guarded_rawset);
  wrap_global(L, "setfenv", guarded_setfenv);
  wrap_global(L, "loadstring", guarded_load);
  wrap_global(L, "load", guarded_load);

  for (const char* name : kReadOnlyLibraries) {
    lua_getglobal(L, name);
    if (!lua_istable(L, -1)) {
      lua_pop(L, 1);
      continue;
    }
    to_readonly_view(L);
    if (std::string_view(name) == "string") {
      // ("x"):upper() finds the library through the string metatable: point it at the view,
      // and hide the metatable itself.
      lua_pushliteral(L, "");
      lua_getmetatable(L, -1);
      lua_pushvalue(L, -3);
      lua_setfield(L, -2, "__index");
      push_hidden_metatable(L);
      lua_setfield(L, -2, "__metatable");
      lua_pop(L, 2);
    }
    lua_setglobal(L, name);
  }
}

void protect_globals(lua_State* L) {
  // Scripts see the globals through an empty view: every name, existing or not, is written
  // through the view and refused (Lua calls __newindex only for names a table lacks), reads
  // go through to the globals table, whose own metatable refuses unknown names. The view is
  // the interpreter's globals from now on (KEYS and ARGV are set in it, raw, per call) and
  // is what _G names; getmetatable(_G) answers a hidden table.
  lua_pushvalue(L, LUA_GLOBALSINDEX);
  int globals = lua_gettop(L);
  refuse_unknown_names(L, globals);
  mark_protected(L, globals);
  lua_getmetatable(L, globals);
  mark_protected(L, -1);
  push_hidden_metatable(L);
  lua_setfield(L, -2, "__metatable");
  lua_pop(L, 1);
  lua_pushvalue(L, globals);
  lua_setfield(L, LUA_REGISTRYINDEX, kScriptGlobals);
  push_readonly_view(L, globals);
  lua_getmetatable(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, kGlobalsViewMeta);
  lua_pushstring(L, "_G");
  lua_pushvalue(L, -2);
  lua_rawset(L, globals);
  lua_replace(L, LUA_GLOBALSINDEX);
  lua_pop(L, 1);
}

void install_load_environment(lua_State* L) {
  // {redis = <the load redis table>}, both raising on names they lack, both read-only views:
  // a library that keeps `redis` in an upvalue still cannot change it from a function later.
  int api = lua_gettop(L);
  refuse_unknown_names(L, api);
  to_readonly_view(L);
  lua_newtable(L);
  lua_pushvalue(L, api);
  lua_setfield(L, -2, "redis");
  refuse_unknown_names(L, -1);
  to_readonly_view(L);
  lua_setfield(L, LUA_REGISTRYINDEX, kLoadGlobals);
  lua_pop(L, 1);
}

void use_load_environment(lua_State* L, bool load) {
  lua_getfield(L, LUA_REGISTRYINDEX, kGlobalsViewMeta);
  lua_getfield(L, LUA_REGISTRYINDEX, load ? kLoadGlobals : kScriptGlobals);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
}

}  // namespace hotkv
