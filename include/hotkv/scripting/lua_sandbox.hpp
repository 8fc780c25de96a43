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
// After the globals table got its read-only metatable: hides that metatable and protects both
// from rawset and setmetatable.
void protect_globals(lua_State* L);

}  // namespace hotkv
