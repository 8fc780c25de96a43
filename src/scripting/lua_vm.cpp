#include "hotkv/scripting/lua_vm.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

extern "C" {
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <luajit.h>
int luaopen_cjson(lua_State* L);
}

#include "hotkv/commands/command_call.hpp"
#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors_scripting.hpp"
#include "hotkv/commands/script_store.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/scripting/lua_cmsgpack.hpp"
#include "hotkv/scripting/lua_sandbox.hpp"
#include "hotkv/scripting/lua_struct.hpp"
#include "hotkv/scripting/script_undo.hpp"
#include "hotkv/util/clock.hpp"
#include "hotkv/util/log.hpp"

#include <spdlog/spdlog.h>

namespace hotkv {
namespace {

// Registry keys of the library functions (name -> function) and of those a library being
// loaded has registered so far.
constexpr const char* kLibraryFunctions = "hotkv_library_functions";
constexpr const char* kPendingFunctions = "hotkv_pending_functions";
// How long a library's top level may run at FUNCTION LOAD, as in Redis.
constexpr int64_t kLoadTimeoutMs = 500;
// The hook checks the clock every this many VM instructions.
constexpr int kHookEvery = 100000;

thread_local LuaVm* running_vm = nullptr;

void open_lib(lua_State* L, lua_CFunction open, const char* name) {
  lua_pushcfunction(L, open);
  lua_pushstring(L, name);
  lua_call(L, 1, 0);
}

std::string sanitize(std::string s) {
  // An error reply is one line.
  std::replace(s.begin(), s.end(), '\r', ' ');
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

// LuaJIT drops the caller's frame for `return redis.call(...)` (a tail call), so an error
// raised there has no script line. The statement is almost always the script's last
// `return redis.` line; a one-line script is line 1.
int guess_tail_call_line(const std::string& source) {
  int line = 1;
  int found = 1;
  size_t start = 0;
  while (start <= source.size()) {
    size_t end = source.find('\n', start);
    std::string_view l(source.data() + start,
                       (end == std::string::npos ? source.size() : end) - start);
    if (l.find("return redis.") != std::string_view::npos) {
      found = line;
    }
    if (end == std::string::npos) {
      break;
    }
    start = end + 1;
    ++line;
  }
  return found;
}

void push_strings(lua_State* L, std::span<const std::string_view> items) {
  lua_createtable(L, static_cast<int>(items.size()), 0);
  for (size_t i = 0; i < items.size(); ++i) {
    lua_pushlstring(L, items[i].data(), items[i].size());
    lua_rawseti(L, -2, static_cast<int>(i + 1));
  }
}

}  // namespace

void* LuaVm::allocate(void* ud, void* ptr, size_t old_size, size_t new_size) {
  auto* vm = static_cast<LuaVm*>(ud);
  if (new_size == 0) {
    std::free(ptr);
    vm->allocated_ -= old_size;
    return nullptr;
  }
  size_t before = ptr == nullptr ? 0 : old_size;
  if (new_size > before && vm->allocated_ + (new_size - before) > kMemoryLimit) {
    return nullptr;  // Lua turns this into a "not enough memory" error
  }
  void* out = std::realloc(ptr, new_size);
  if (out != nullptr) {
    vm->allocated_ = vm->allocated_ - before + new_size;
  }
  return out;
}

ScriptStore::VmFactory lua_vm_factory() {
  return [](ScriptStore& store, size_t shard) -> std::unique_ptr<ScriptVm> {
    return std::make_unique<LuaVm>(store, shard);
  };
}

LuaVm::LuaVm(ScriptStore& store, size_t shard)
    : store_(store), shard_(shard), undo_(std::make_unique<ScriptUndo>()) {
  L_ = lua_newstate(&LuaVm::allocate, this);
  if (L_ == nullptr) {
    throw std::runtime_error("cannot create a Lua state");
  }
  // Interpreter only: compiled traces do not run count hooks, and the hook is what lets a
  // long script be noticed and killed. Scripts are short; the interpreter is fast enough.
  luaJIT_setmode(L_, 0, LUAJIT_MODE_ENGINE | LUAJIT_MODE_OFF);
  open_sandbox();
  lua_sethook(L_, &LuaVm::hook, LUA_MASKCOUNT, kHookEvery);
  generation_ = store_.generation();
}

LuaVm::~LuaVm() {
  if (L_ != nullptr) {
    lua_close(L_);
  }
}

void LuaVm::open_sandbox() {
  lua_State* L = L_;
  open_lib(L, luaopen_base, "");
  open_lib(L, luaopen_table, LUA_TABLIBNAME);
  open_lib(L, luaopen_string, LUA_STRLIBNAME);
  open_lib(L, luaopen_math, LUA_MATHLIBNAME);
  open_lib(L, luaopen_bit, LUA_BITLIBNAME);
  lua_pushcfunction(L, luaopen_cjson);
  lua_call(L, 0, 1);
  lua_setglobal(L, "cjson");
  open_cmsgpack(L);
  open_struct(L);
  // Whatever can reach files, the process or the interpreter's internals goes.
  for (const char* name : {"dofile", "loadfile", "print", "module", "require", "gcinfo",
                           "newproxy", "collectgarbage"}) {
    lua_pushnil(L);
    lua_setglobal(L, name);
  }
  open_redis_api(L, *this);
  make_sandbox_readonly(L);
  // Globals become read-only: a script keeps its state in locals.
  protect_globals(L);
  push_load_redis_api(L, *this);
  install_load_environment(L);
}

void LuaVm::check_every_line(lua_State* L) { lua_sethook(L, &LuaVm::hook, LUA_MASKLINE, 0); }

void LuaVm::hook(lua_State* L, lua_Debug*) {
  LuaVm* vm = running_vm;
  if (vm != nullptr && vm->registering_ != nullptr &&
      mono_ms() - vm->load_started_ms_ > kLoadTimeoutMs) {
    // A library's top level only registers functions; one that loops is refused.
    luaL_error(L, "FUNCTION LOAD timeout");
  }
  if (vm == nullptr || vm->current_ == nullptr) {
    return;
  }
  Call& call = *vm->current_;
  int64_t limit = call.ctx->engine.config().busy_reply_threshold.load(std::memory_order_relaxed);
  ScriptSlot& slot = vm->store_.slot(vm->shard_);
  if (limit > 0 && mono_ms() - call.started_ms > limit) {
    if (!slot.timed_out.load()) {
      spdlog::warn("slow script detected: still in execution after {} ms",
                   mono_ms() - call.started_ms);
      bool function = std::strcmp(call.chunk, "@user_function") == 0;
      std::vector<std::string> command;
      if (function) {
        for (std::string_view a : call.ctx->argv) {
          command.emplace_back(a);
        }
      }
      vm->store_.mark_timed_out(vm->shard_, function, function ? *call.label : std::string(),
                                std::move(command), call.started_unix_ms);
      // Its own shard and every shard parked for it now answer -BUSY; the parked threads
      // start serving their clients too.
      call.ctx->shard.set_script_busy(true);
      for (size_t s : call.allowed) {
        call.ctx->engine.shard(s).set_script_busy(true);
      }
      Engine::wake_parked_for_busy();
    }
    slot.wrote.store(call.wrote);
    if (!slot.kill.load(std::memory_order_acquire)) {
      // Redis answers its other clients from inside a busy script; so does this thread,
      // with everything that would touch the shards the script holds answering -BUSY.
      call.ctx->shard.serve_while_busy();
    }
  }
  if (call.rerun) {
    // Being taken back to run with every shard (the line hook is already on): nothing it
    // does from here counts, so it stops at its next line even if it caught the error.
    lua_newtable(L);
    lua_pushstring(L, err::kScriptRerun);
    lua_setfield(L, -2, "err");
    lua_error(L);
  }
  if (slot.kill.load(std::memory_order_acquire)) {
    // From now on at every line, so a script that catches the error with pcall and loops
    // still ends (invoke puts the count hook back).
    lua_sethook(L, &LuaVm::hook, LUA_MASKLINE, 0);
    lua_newtable(L);
    lua_pushstring(L, err::kScriptKilled);
    lua_setfield(L, -2, "err");
    lua_error(L);
  }
}

int LuaVm::message_handler(lua_State* L) {
  // Find the script line the error comes from (the innermost frame of the user's chunk).
  LuaVm* vm = running_vm;
  lua_Debug ar;
  for (int level = 0; level < 50 && lua_getstack(L, level, &ar); ++level) {
    const char* chunk = vm != nullptr && vm->current_ != nullptr ? vm->current_->chunk
                                                                  : "@user_function";
    if (lua_getinfo(L, "Sl", &ar) != 0 && std::strcmp(ar.source, chunk) == 0) {
      if (vm != nullptr && vm->current_ != nullptr && vm->current_->error_line < 0) {
        vm->current_->error_line = ar.currentline;
      }
      break;
    }
  }
  return 1;  // the error object itself; run() formats it
}

const CommandSpec* LuaVm::lookup_command(const Table& table, std::string_view name) {
  size_t slot = (name.size() * 31 + static_cast<unsigned char>(name.empty() ? 0 : name[0]) +
                 static_cast<unsigned char>(name.empty() ? 0 : name.back())) %
                command_cache_.size();
  CommandCacheEntry& e = command_cache_[slot];
  if (e.spec != nullptr && e.name == name) {
    return e.spec;
  }
  const CommandSpec* spec = table.find(name);
  if (spec != nullptr) {
    e.name.assign(name);
    e.spec = spec;
  }
  return spec;
}

void LuaVm::check_generation() {
  uint64_t gen = store_.generation();
  if (gen != generation_) {
    // SCRIPT FLUSH happened: drop every compiled function.
    for (auto& [sha, cached] : cache_) {
      luaL_unref(L_, LUA_REGISTRYINDEX, cached.ref);
    }
    cache_.clear();
    generation_ = gen;
    lua_gc(L_, LUA_GCCOLLECT, 0);
  }
}

std::shared_ptr<const Script> LuaVm::cached_script(std::string_view sha) {
  check_generation();
  auto it = cache_.find(sha);
  return it == cache_.end() ? nullptr : it->second.script;
}

bool LuaVm::push_function(CommandContext& ctx, const std::shared_ptr<const Script>& script) {
  lua_State* L = L_;
  check_generation();
  // Compiled once per interpreter and kept by reference: a call costs one array lookup.
  auto it = cache_.find(script->sha);
  if (it != cache_.end()) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, it->second.ref);
    return true;
  }
  if (luaL_loadbuffer(L, script->source.data(), script->source.size(), "@user_script") != 0) {
    std::string msg = lua_tostring(L, -1) ? lua_tostring(L, -1) : "?";
    lua_pop(L, 1);
    ctx.error(sanitize(err::compile_script(msg)));
    return false;
  }
  lua_pushvalue(L, -1);
  int ref = luaL_ref(L, LUA_REGISTRYINDEX);
  cache_.emplace(script->sha, CachedScript{script, ref});
  return true;
}

void LuaVm::run(CommandContext& ctx, const std::shared_ptr<const Script>& script_ptr,
                std::span<const std::string_view> keys, std::span<const std::string_view> args,
                bool read_only, KeyModeCell* key_mode) {
  if (running_vm != nullptr) {
    // Reached from a handler that a busy script's hook let run on this thread: a second
    // script would run inside the first one's interpreter (and clear its stack). Every path
    // there is meant to answer -BUSY before this; this is the last line.
    ctx.error(store_.busy_error());
    return;
  }
  const Script& script = *script_ptr;
  lua_State* L = L_;
  lua_settop(L, 0);
  lua_pushcfunction(L, &LuaVm::message_handler);
  if (!push_function(ctx, script_ptr)) {
    lua_settop(L, 0);
    return;
  }
  // KEYS and ARGV are fresh tables per call; rawset, since globals are read-only to scripts.
  lua_pushstring(L, "KEYS");
  push_strings(L, keys);
  lua_rawset(L, LUA_GLOBALSINDEX);
  lua_pushstring(L, "ARGV");
  push_strings(L, args);
  lua_rawset(L, LUA_GLOBALSINDEX);
  legacy_script_ = !script.has_shebang;
  invoke(ctx, 0, keys, read_only || script.no_writes, script.sha, "@user_script", script.source,
         key_mode);
}

void LuaVm::call_function(CommandContext& ctx, const Library& lib, const LibraryFunction& fn,
                          std::span<const std::string_view> keys,
                          std::span<const std::string_view> args, bool read_only,
                          KeyModeCell* key_mode) {
  if (running_vm != nullptr) {
    // Reached from a handler that a busy script's hook let run on this thread: a second
    // script would run inside the first one's interpreter (and clear its stack). Every path
    // there is meant to answer -BUSY before this; this is the last line.
    ctx.error(store_.busy_error());
    return;
  }
  lua_State* L = L_;
  std::string error;
  if (!refresh_functions(error)) {
    ctx.error(sanitize(error));
    return;
  }
  lua_settop(L, 0);
  lua_pushcfunction(L, &LuaVm::message_handler);
  lua_getfield(L, LUA_REGISTRYINDEX, kLibraryFunctions);
  lua_getfield(L, -1, fn.name.c_str());
  lua_remove(L, -2);
  if (!lua_isfunction(L, -1)) {
    lua_settop(L, 0);
    ctx.error(err::kFunctionNotFound);
    return;
  }
  // A function gets KEYS and ARGV as its two arguments, not as globals.
  push_strings(L, keys);
  push_strings(L, args);
  legacy_script_ = false;
  invoke(ctx, 2, keys, read_only || fn.no_writes, fn.name, "@user_function", lib.source, key_mode);
}

void LuaVm::invoke(CommandContext& ctx, int nargs, std::span<const std::string_view> keys,
                   bool read_only, const std::string& label, const char* chunk,
                   const std::string& source, KeyModeCell* key_mode) {
  lua_State* L = L_;
  Call call;
  call.ctx = &ctx;
  call.read_only = read_only;
  call.oom_on_first_write = legacy_script_;
  call.chunk = chunk;
  call.label = &label;
  call.started_ms = mono_ms();
  call.started_unix_ms = unix_ms();
  call.keys = keys;
  // The script may touch every key of the shards it holds: its own, or those parked for it
  // (every shard, when it was routed so because it reaches beyond its KEYS).
  if (const std::vector<size_t>* held = Engine::held_shards(); ctx.multi_shard && held) {
    call.allowed = *held;
  } else if (ctx.multi_shard) {
    ctx.engine.add_shards_of(keys, call.allowed);
  } else {
    call.allowed.push_back(ctx.shard.id());
  }
  // Holding fewer than every shard, the run may have to be undone (script_undo.hpp).
  if (call.allowed.size() < ctx.engine.shard_count()) {
    undo_->clear();
    call.undo = undo_.get();
  }
  current_ = &call;
  // A SCRIPT KILL that raced with the end of the previous script must not stop this one; but
  // while a script of this shard is busy the flag is that script's, whoever starts here.
  if (!store_.slot(shard_).timed_out.load()) {
    store_.slot(shard_).kill.store(false, std::memory_order_relaxed);
  }
  LuaVm* outer = running_vm;
  running_vm = this;
  int status;
  {
    FrozenClock clock(ctx.now_ms);
    status = lua_pcall(L, nargs, 1, 1);
  }
  running_vm = outer;
  current_ = nullptr;
  if (key_mode != nullptr) {
    // What this run showed: a script that reached beyond its KEYS runs with every shard from
    // now on; one that stayed within them (on its first run, made with every shard) keeps to
    // its KEYS' shards.
    if (call.undeclared) {
      key_mode->store(KeyMode::kUndeclared, std::memory_order_release);
    } else {
      KeyMode expected = KeyMode::kUnknown;
      key_mode->compare_exchange_strong(expected, KeyMode::kDeclared, std::memory_order_acq_rel);
    }
  }
  if (store_.slot(shard_).kill.load() || call.rerun) {
    lua_sethook(L, &LuaVm::hook, LUA_MASKCOUNT, kHookEvery);
  }
  if (store_.slot(shard_).timed_out.load()) {
    for (size_t s : call.allowed) {
      ctx.engine.shard(s).set_script_busy(false);
    }
    ctx.shard.set_script_busy(false);
    store_.clear_timed_out(shard_);
    ctx.shard.release_deferred();
  }

  if (call.rerun) {
    // Reached beyond the shards it holds: everything it changed goes back (logged into the
    // records still open, so they carry no net change) and the command runs again with
    // every shard; this run answers nothing.
    ctx.engine.stats().script_runs_undone.fetch_add(1, std::memory_order_relaxed);
    for (size_t s : call.undo->undo(ctx.engine)) {
      if (std::find(call.logged.begin(), call.logged.end(), s) == call.logged.end()) {
        call.logged.push_back(s);
      }
    }
  }
  // The inner commands' log records close with this command (one record per shard).
  if (ctx.multi_shard) {
    for (size_t s : call.logged) {
      if (std::find(ctx.logged_shards.begin(), ctx.logged_shards.end(), s) ==
          ctx.logged_shards.end()) {
        ctx.logged_shards.push_back(s);
      }
    }
  }

  if (call.rerun) {
    lua_settop(L, 0);
    request_rerun_with_every_shard();
    return;
  }
  if (lua_istable(L, -1)) {
    // An error the script raised or returned that its command already counted. A raw get:
    // the table may be anything the script returns (_G, one with a metatable that raises).
    lua_pushstring(L, kErrorCountedField);
    lua_rawget(L, -2);
    if (lua_toboolean(L, -1)) {
      mark_error_reply_counted();
    }
    lua_pop(L, 1);
  }
  if (status != 0) {
    std::string text;
    if (lua_istable(L, -1)) {
      lua_pushstring(L, "err");
      lua_rawget(L, -2);
      text = lua_isstring(L, -1) ? lua_tostring(L, -1) : err::kUnknownScriptError;
      lua_pop(L, 1);
    } else if (lua_isstring(L, -1)) {
      text = err::script_runtime(lua_tostring(L, -1));
    } else {
      text = err::kUnknownScriptError;
    }
    int line = call.error_line > 0 ? call.error_line : guess_tail_call_line(source);
    text += std::string(" script: ") + label + ", on " + chunk + ":" +
            std::to_string(line) + ".";
    ctx.error(sanitize(std::move(text)));
  } else {
    std::string out;
    ReplyWriter w(out, ctx.reply.proto());
    if (write_lua_value(L, -1, w, call.resp == 3)) {
      ctx.reply.buffer() += out;
    } else {
      ctx.error(err::kLuaStackLimit);
    }
  }
  lua_settop(L, 0);
}

bool LuaVm::register_library(Library& lib, bool keep, std::string& error) {
  lua_State* L = L_;
  lua_settop(L, 0);
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, kPendingFunctions);
  lib.functions.clear();
  lua_pushcfunction(L, &LuaVm::message_handler);
  if (luaL_loadbuffer(L, lib.source.data(), lib.source.size(), "@user_function") != 0) {
    error = err::compile_function(lua_tostring(L, -1) ? lua_tostring(L, -1) : "?");
    lua_settop(L, 0);
    return false;
  }
  registering_ = &lib;
  load_started_ms_ = mono_ms();
  LuaVm* outer = running_vm;
  running_vm = this;
  use_load_environment(L, true);
  int status = lua_pcall(L, 0, 0, 1);
  use_load_environment(L, false);
  running_vm = outer;
  registering_ = nullptr;
  if (status != 0) {
    if (lua_istable(L, -1)) {
      lua_pushstring(L, "err");
      lua_rawget(L, -2);
      error = lua_isstring(L, -1) ? lua_tostring(L, -1) : err::kUnknownScriptError;
    } else {
      error = err::register_functions(lua_isstring(L, -1) ? lua_tostring(L, -1) : "?");
    }
    lua_settop(L, 0);
    return false;
  }
  lua_settop(L, 0);
  if (lib.functions.empty()) {
    error = err::kNoFunctionsRegistered;
    return false;
  }
  if (keep) {
    lua_getfield(L, LUA_REGISTRYINDEX, kLibraryFunctions);
    lua_getfield(L, LUA_REGISTRYINDEX, kPendingFunctions);
    lua_pushnil(L);
    while (lua_next(L, -2) != 0) {
      lua_pushvalue(L, -2);
      lua_insert(L, -2);
      lua_settable(L, -5);
    }
    lua_settop(L, 0);
  }
  lua_pushnil(L);
  lua_setfield(L, LUA_REGISTRYINDEX, kPendingFunctions);
  return true;
}

bool LuaVm::refresh_functions(std::string& error) {
  uint64_t gen = store_.functions_generation();
  if (gen == functions_generation_) {
    return true;
  }
  lua_newtable(L_);
  lua_setfield(L_, LUA_REGISTRYINDEX, kLibraryFunctions);
  for (const auto& lib : store_.libraries()) {
    Library copy = *lib;
    if (!register_library(copy, true, error)) {
      return false;
    }
  }
  functions_generation_ = gen;
  return true;
}

}  // namespace hotkv
