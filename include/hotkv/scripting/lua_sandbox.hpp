// Redis 7's sandbox on LuaJIT: nothing a script does survives into the next script except data
// in the keyspace. The library tables and the globals are read-only in every way a script can
// reach (assignment, rawset, setmetatable, setfenv, the string metatable), and binary chunks
// are refused (the route by which crafted bytecode escapes a Lua sandbox). Errors read as
// Redis's: "Attempt to modify a readonly table".
#pragma once

struct lua_State;

namespace hotkv {

// The libraries made read-only (those present; cmsgpack and struct once they exist).
inline constexpr const char* kReadOnlyLibraries[] = {
    "redis", "string", "table", "math", "bit", "cjson", "cmsgpack", "struct", "coroutine"};

// After the libraries are opened and before the globals are locked: turns every library of
// kReadOnlyLibraries into a read-only view and guards rawset, setmetatable, setfenv,
// loadstring and load.
void make_sandbox_readonly(lua_State* L);
// Last, once every global exists: unknown global names raise "Script attempted to access
// nonexistent global variable", and the globals become a read-only view (also through
// rawset, setmetatable and _G).
void protect_globals(lua_State* L);

// FUNCTION LOAD's environment, as Redis 7's: a library's top level sees only `redis`, and that
// `redis` has only what registering needs (the table at the top of the stack, popped here:
// register_function, log, LOG_* and the version). Any other name raises "nonexistent global
// variable", so a library cannot call commands, draw random numbers or reach metatables
// while it loads. Call after protect_globals.
void install_load_environment(lua_State* L);
// Global names read from the load environment (true, while a library's top level runs) or
// from the scripts' globals (false). The functions a library registers keep the same globals
// view, so once the load ends they see the full API.
void use_load_environment(lua_State* L, bool load);

}  // namespace hotkv
