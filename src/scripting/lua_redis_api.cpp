// The `redis` table a script sees, and the conversions between Lua values and replies, with
// Redis's rules: integers become numbers, bulk strings strings, nulls false (RESP2) or nil
// (RESP3), arrays tables, status and error replies {ok=...} / {err=...}; in the other
// direction numbers are truncated to integers, false is a null, a table is an array up to
// its first nil unless it is one of {err=}, {ok=}, {double=}, {map=}, {set=}.
#include <algorithm>
#include <charconv>
#include <cctype>
#include <cmath>
#include <cstring>
#include <iterator>

extern "C" {
#include <lauxlib.h>
#include <lua.h>
}

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "hotkv/commands/acl_session.hpp"
#include "hotkv/commands/command_call.hpp"
#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors_scripting.hpp"
#include "hotkv/commands/errors_server.hpp"
#include "hotkv/commands/redaction.hpp"
#include "hotkv/commands/script_store.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/scripting/lua_vm.hpp"
#include "hotkv/scripting/script_undo.hpp"
#include "hotkv/shard/eviction.hpp"
#include "hotkv/util/numbers.hpp"
#include "hotkv/util/sha1.hpp"

namespace hotkv {
namespace {

constexpr int kMaxDepth = 100;

LuaVm& vm_of(lua_State* L) { return *static_cast<LuaVm*>(lua_touserdata(L, lua_upvalueindex(1))); }

void push_error_table(lua_State* L, std::string_view text) {
  lua_newtable(L);
  lua_pushlstring(L, text.data(), text.size());
  lua_setfield(L, -2, "err");
}

// An error table whose error the server has already counted (INFO errorstats): the command's
// own error reply, or its refusal. If the script raises it or returns it, the script's reply
// is not counted a second time, as Redis marks such tables.
void mark_error_counted(lua_State* L) {
  lua_pushboolean(L, 1);
  lua_setfield(L, -2, kErrorCountedField);
}

// --- RESP to Lua ------------------------------------------------------------------------

struct ReplyReader {
  std::string_view in;
  size_t pos = 0;

  bool line(std::string_view& out) {
    size_t end = in.find("\r\n", pos);
    if (end == std::string_view::npos) {
      return false;
    }
    out = in.substr(pos, end - pos);
    pos = end + 2;
    return true;
  }
  static bool number(std::string_view s, int64_t& v) {
    auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    return r.ec == std::errc() && r.ptr == s.data() + s.size();
  }

  // Pushes one value; returns false on malformed input. `is_error` is set for a top-level
  // error reply.
  bool push(lua_State* L, int depth, bool& is_error) {
    std::string_view l;
    if (depth > kMaxDepth || !line(l) || l.empty() || !lua_checkstack(L, 4)) {
      return false;
    }
    char type = l[0];
    std::string_view rest = l.substr(1);
    int64_t n = 0;
    switch (type) {
      case '+':
        lua_newtable(L);
        lua_pushlstring(L, rest.data(), rest.size());
        lua_setfield(L, -2, "ok");
        return true;
      case '-':
        is_error = depth == 0;
        push_error_table(L, rest);
        return true;
      case ':':
        if (!number(rest, n)) {
          return false;
        }
        lua_pushnumber(L, static_cast<lua_Number>(n));
        return true;
      case '$':
      case '=':
        if (!number(rest, n)) {
          return false;
        }
        if (n < 0) {
          lua_pushboolean(L, 0);
          return true;
        }
        if (pos + static_cast<size_t>(n) + 2 > in.size()) {
          return false;
        }
        {
          std::string_view body = in.substr(pos, static_cast<size_t>(n));
          if (type == '=' && body.size() >= 4) {
            body.remove_prefix(4);  // "txt:"
          }
          lua_pushlstring(L, body.data(), body.size());
        }
        pos += static_cast<size_t>(n) + 2;
        return true;
      case '*':
      case '>':
        if (!number(rest, n)) {
          return false;
        }
        if (n < 0) {
          lua_pushboolean(L, 0);
          return true;
        }
        lua_createtable(L, static_cast<int>(std::min<int64_t>(n, 1024)), 0);
        for (int64_t i = 0; i < n; ++i) {
          bool ignored = false;
          if (!push(L, depth + 1, ignored)) {
            return false;
          }
          lua_rawseti(L, -2, static_cast<int>(i + 1));
        }
        return true;
      case '%':
      case '~':
        if (!number(rest, n) || n < 0) {
          return false;
        }
        lua_newtable(L);  // {map = {...}} or {set = {...}}
        lua_newtable(L);
        for (int64_t i = 0; i < n; ++i) {
          bool ignored = false;
          if (!push(L, depth + 1, ignored)) {
            return false;
          }
          if (type == '%') {
            if (!push(L, depth + 1, ignored)) {
              return false;
            }
          } else {
            lua_pushboolean(L, 1);
          }
          lua_rawset(L, -3);
        }
        lua_setfield(L, -2, type == '%' ? "map" : "set");
        return true;
      case '_':
        lua_pushnil(L);
        return true;
      case '#':
        lua_pushboolean(L, rest == "t");
        return true;
      case ',': {
        lua_newtable(L);
        std::string text(rest);
        double d = text == "inf"    ? HUGE_VAL
                   : text == "-inf" ? -HUGE_VAL
                                    : std::strtod(text.c_str(), nullptr);
        lua_pushnumber(L, d);
        lua_setfield(L, -2, "double");
        return true;
      }
      case '(':
        lua_newtable(L);
        lua_pushlstring(L, rest.data(), rest.size());
        lua_setfield(L, -2, "big_number");
        return true;
      default:
        return false;
    }
  }
};

// --- redis.* functions -------------------------------------------------------------------

bool command_allowed_in_scripts(const CommandSpec& spec) {
  // Connection commands need a session, which a script has not: every one is kNoScript except
  // PING and ECHO, which need none, and SELECT, which changes only the script's own database
  // (as on Redis 7: not the caller's). A unit test holds the table to that.
  return (spec.flags & (kNoScript | kPubSub)) == 0;
}

// XREAD/XREADGROUP with a BLOCK option: Redis 7 refuses these in a script with an error of
// their own (other blocking commands answer there as timed out). Options come before STREAMS.
bool stream_read_with_block(const CommandSpec& spec, std::span<const std::string_view> argv) {
  if ((spec.flags & kBlocking) == 0) {
    return false;  // every other redis.call: one flag test
  }
  size_t first = spec.name == "XREAD" ? 1 : spec.name == "XREADGROUP" ? 4 : argv.size();
  for (size_t i = first; i + 1 < argv.size(); ++i) {
    if (strcasecmp_view(argv[i], "STREAMS")) {
      break;
    }
    if (strcasecmp_view(argv[i], "BLOCK")) {
      return true;
    }
  }
  return false;
}

// The command on the Lua stack (1..argc) as views in sc.argv: into the Lua strings, alive for
// the whole call, and for numbers into reusable buffers formatted first, so no view moves.
// False when an argument is neither a string nor a number.
bool stack_argv(lua_State* L, LuaVm::Scratch& sc, int argc) {
  sc.argv.clear();
  if (sc.numbers.size() < static_cast<size_t>(argc)) {
    sc.numbers.resize(static_cast<size_t>(argc));
  }
  for (int i = 1; i <= argc; ++i) {
    int t = lua_type(L, i);
    if (t == LUA_TNUMBER) {
      std::string& buf = sc.numbers[static_cast<size_t>(i - 1)];
      buf.clear();
      fmt::format_to(std::back_inserter(buf), "{}", lua_tonumber(L, i));
    } else if (t != LUA_TSTRING) {
      return false;
    }
  }
  for (int i = 1; i <= argc; ++i) {
    if (lua_type(L, i) == LUA_TNUMBER) {
      sc.argv.emplace_back(sc.numbers[static_cast<size_t>(i - 1)]);
    } else {
      size_t len = 0;
      const char* s = lua_tolstring(L, i, &len);
      sc.argv.emplace_back(s, len);
    }
  }
  return true;
}

// The script reached beyond the shards it holds: its run stops here, is undone and the
// command runs again with every shard (lua_vm.cpp, invoke). The error it raises is never
// answered; a script that catches it stops at its next line, and runs nothing more meanwhile.
int stop_to_run_with_every_shard(lua_State* L, LuaVm::Call& call) {
  call.rerun = true;
  LuaVm::check_every_line(L);
  push_error_table(L, err::kScriptRerun);
  mark_error_counted(L);
  return 1;
}

// Runs one command for redis.call/pcall and pushes its reply. Returns 1 if the reply was
// an error (pushed as {err=...}), 0 otherwise. Keeps no C++ object alive across lua_error,
// which the caller raises.
int run_command(lua_State* L, LuaVm& vm) {
  LuaVm::Call* call = vm.current();
  int argc = lua_gettop(L);
  if (call == nullptr) {
    push_error_table(L, err::kCallOutsideScript);
    return 1;
  }
  if (call->rerun) {
    return stop_to_run_with_every_shard(L, *call);
  }
  if (argc == 0) {
    push_error_table(L, err::kCallNoArgs);
    return 1;
  }
  LuaVm::Scratch& sc = vm.scratch();
  if (!stack_argv(L, sc, argc)) {
    push_error_table(L, err::kCallArgType);
    return 1;
  }
  std::span<const std::string_view> argv(sc.argv);
  CommandContext& ctx = *call->ctx;
  const CommandSpec* spec = vm.lookup_command(ctx.engine.table(), argv[0]);
  if (spec == nullptr) {
    push_error_table(L, err::kCallUnknownCommand);
    return 1;
  }
  if (!command_allowed_in_scripts(*spec)) {
    push_error_table(L, err::kCallNotAllowed);
    return 1;
  }
  int arity = spec->arity;
  if ((arity > 0 && argc != arity) || (arity < 0 && argc < -arity)) {
    push_error_table(L, err::kCallArity);
    return 1;
  }
  if (stream_read_with_block(*spec, argv)) {
    push_error_table(L, err::call_with_block(argv[0]));
    return 1;
  }
  // Refusals for the server's state or the script's flags count as the command's rejected
  // call and as an error reply, once: the script's own error reply, if it ends on it, is not
  // counted again (mark_error_counted).
  auto reject = [&](const char* text) {
    count_rejected_call(*spec, argv, ctx.engine, ctx.shard, text);
    push_error_table(L, text);
    mark_error_counted(L);
    return 1;
  };
  // The user who called the script must be allowed each command it runs (one pointer test
  // when that user's rules allow everything).
  if (const char* refusal = acl_script_refusal(ctx.engine, *spec, argv)) {
    return reject(refusal);
  }
  if ((spec->flags & kWrite) != 0 && call->read_only) {
    return reject(err::kCallWriteReadOnly);
  }
  if ((spec->flags & kWrite) != 0) {
    // A script without flags finds out at its first write, as in Redis.
    if (const char* refusal = replication_write_refusal(ctx.engine, false)) {
      return reject(refusal);
    }
  }
  if ((spec->flags & kDenyOom) != 0 && call->oom_on_first_write && !call->wrote &&
      ctx.engine.eviction().oom()) {
    // Out of memory when the script started, and it has changed nothing yet: it can still be
    // refused whole. After a write it must run to its end. (Scripts with flags were refused
    // before they ran unless they declared allow-oom.)
    return reject(err::kOom);
  }
  if (needs_every_shard(*spec, argv) && ctx.engine.shard_count() > 1) {
    // KEYS, SCAN, DBSIZE, SORT ... BY weight_*: from now on it runs with every shard
    call->undeclared = true;
    if (call->allowed.size() < ctx.engine.shard_count()) {
      return stop_to_run_with_every_shard(L, *call);
    }
  }
  std::vector<size_t>& key_idx = sc.key_indexes;
  key_idx.clear();
  Table::key_indexes(*spec, argv, key_idx);
  for (size_t idx : key_idx) {
    std::string_view key = argv[idx];
    if (!call->undeclared &&
        std::find(call->keys.begin(), call->keys.end(), key) == call->keys.end()) {
      call->undeclared = true;
    }
    if (ctx.engine.shard_count() == 1) {
      continue;
    }
    size_t s = ctx.engine.shard_of(key);
    if (!std::binary_search(call->allowed.begin(), call->allowed.end(), s)) {
      // Only a script that stayed within its KEYS before gets here; from now on it runs with
      // every shard, this call included.
      return stop_to_run_with_every_shard(L, *call);
    }
  }
  if (call->undo != nullptr && (spec->flags & kWrite) != 0) {
    // What the write may change is kept first, so the run can still be taken back.
    for (size_t idx : key_idx) {
      std::string_view key = argv[idx];
      size_t s = ctx.multi_shard ? ctx.engine.shard_of(key) : ctx.shard.id();
      if (!call->undo->capture(ctx.engine, s, ctx.db_index, key, ctx.now_ms)) {
        // Too large to copy on every call: this script runs with every shard from now on.
        call->undeclared = true;
        return stop_to_run_with_every_shard(L, *call);
      }
    }
  }
  // MONITOR shows a script's commands with "lua" for the client's address, as Redis does.
  if (ctx.engine.monitors().active() && (spec->flags & kAdmin) == 0) {
    ctx.engine.monitors().feed(ctx.db_index, "lua", redacted_args(argv));
  }
  std::string& out = sc.reply;
  out.clear();
  ReplyWriter w(out, call->resp);
  execute_command(*spec, argv, ctx.engine, ctx.shard, ctx.multi_shard, nullptr, ctx.db_index, w,
                  nullptr, false, &call->logged);
  if (spec->name == "SELECT" && out == "+OK\r\n") {
    // Validated by the handler: the script's later calls run in that database.
    ctx.db_index = static_cast<uint32_t>(*parse_int64(argv[1]));
  }
  // The arguments have served: drop them before the reply goes on the stack, so a call with
  // thousands of arguments (unpack of a big table) leaves room for its reply.
  lua_settop(L, 0);
  bool is_error = false;
  ReplyReader reader{out, 0};
  if (!reader.push(L, 0, is_error)) {
    push_error_table(L, err::kCallReplyUnreadable);
    return 1;
  }
  if (is_error) {
    mark_error_counted(L);  // execute_command counted it
  }
  if (!is_error && (spec->flags & kWrite) != 0) {
    call->wrote = true;
    vm.store().slot(vm.shard()).wrote.store(true, std::memory_order_relaxed);
  }
  return is_error ? 1 : 0;
}

int l_call(lua_State* L) {
  LuaVm& vm = vm_of(L);
  if (run_command(L, vm) != 0) {
    // The error names the script line that made the call (level 1: our caller).
    lua_Debug ar;
    if (vm.current() != nullptr && lua_getstack(L, 1, &ar) != 0 && lua_getinfo(L, "l", &ar) != 0) {
      vm.current()->error_line = ar.currentline;
    }
    return lua_error(L);  // the {err=...} table on top
  }
  return 1;
}

int l_pcall(lua_State* L) {
  run_command(L, vm_of(L));
  return 1;
}

int l_error_reply(lua_State* L) {
  size_t len = 0;
  const char* s = luaL_checklstring(L, 1, &len);
  lua_newtable(L);
  lua_pushlstring(L, s, len);
  lua_setfield(L, -2, "err");
  return 1;
}

int l_status_reply(lua_State* L) {
  size_t len = 0;
  const char* s = luaL_checklstring(L, 1, &len);
  lua_newtable(L);
  lua_pushlstring(L, s, len);
  lua_setfield(L, -2, "ok");
  return 1;
}

int l_sha1hex(lua_State* L) {
  if (lua_gettop(L) != 1) {
    return luaL_error(L, "wrong number of arguments");
  }
  size_t len = 0;
  const char* s = lua_tolstring(L, 1, &len);
  std::string hex = sha1_hex(std::string_view(s ? s : "", s ? len : 0));
  lua_pushlstring(L, hex.data(), hex.size());
  return 1;
}

int l_log(lua_State* L) {
  if (lua_gettop(L) < 2) {
    return luaL_error(L, "redis.log() requires two arguments or more.");
  }
  int level = static_cast<int>(lua_tointeger(L, 1));
  std::string msg;
  for (int i = 2; i <= lua_gettop(L); ++i) {
    if (i > 2) {
      msg += ' ';
    }
    size_t len = 0;
    const char* s = lua_tolstring(L, i, &len);
    if (s != nullptr) {
      msg.append(s, len);
    }
  }
  switch (level) {
    case 0:
      spdlog::debug("script: {}", msg);
      break;
    case 1:
    case 2:
      spdlog::info("script: {}", msg);
      break;
    default:
      spdlog::warn("script: {}", msg);
      break;
  }
  return 0;
}

int l_setresp(lua_State* L) {
  LuaVm& vm = vm_of(L);
  int v = static_cast<int>(luaL_checkinteger(L, 1));
  if (v != 2 && v != 3) {
    return luaL_error(L, "RESP version must be 2 or 3.");
  }
  if (vm.current() != nullptr) {
    vm.current()->resp = v;
  }
  return 0;
}

// redis.replicate_commands(): effects are what is logged and replicated anyway (Redis 7
// answers true and ignores it; the common Go GCRA limiter calls it first).
int l_replicate_commands(lua_State* L) {
  lua_pushboolean(L, 1);
  return 1;
}

// Where a script's effects go (redis.REPL_*). HotKV always logs every effect; the flags are
// checked as Redis checks them and change nothing.
constexpr int kReplAll = 3;
int l_set_repl(lua_State* L) {
  if (lua_gettop(L) != 1) {
    return luaL_error(L, "redis.set_repl() requires one argument.");
  }
  lua_Integer flags = luaL_checkinteger(L, 1);
  if (flags < 0 || flags > kReplAll) {
    push_error_table(L, err::kReplicationFlags);
    return lua_error(L);
  }
  return 0;
}

// redis.breakpoint() / redis.debug(...): the Lua debugger (SCRIPT DEBUG) is not there, so, as
// on Redis outside a debugging session, they do nothing.
int l_breakpoint(lua_State* L) {
  lua_pushboolean(L, 0);
  return 1;
}
int l_debug(lua_State*) { return 0; }

// redis.acl_check_cmd(command, ...): whether the user who called the script may run that
// command with those arguments (its command, key and channel rules), without running it and
// without an ACL LOG entry, as on Redis.
int l_acl_check_cmd(lua_State* L) {
  LuaVm& vm = vm_of(L);
  int argc = lua_gettop(L);
  LuaVm::Call* call = vm.current();
  if (call == nullptr) {
    return luaL_error(L, "%s", err::kCallOutsideScript);
  }
  if (argc == 0) {
    return luaL_error(L, "%s", err::kCallNoArgs);
  }
  LuaVm::Scratch& sc = vm.scratch();
  if (!stack_argv(L, sc, argc)) {
    return luaL_error(L, "%s", err::kCallArgType);
  }
  Engine& engine = call->ctx->engine;
  const CommandSpec* spec = vm.lookup_command(engine.table(), sc.argv[0]);
  if (spec == nullptr) {
    return luaL_error(L, "Invalid command passed to redis.acl_check_cmd()");
  }
  lua_pushboolean(L, acl_script_allows(engine, *spec, sc.argv) ? 1 : 0);
  return 1;
}

bool valid_function_name(const char* s, size_t len) {
  if (len == 0) {
    return false;
  }
  for (size_t i = 0; i < len; ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (!std::isalnum(c) && c != '_') {
      return false;
    }
  }
  return true;
}

// redis.register_function('name', fn) or redis.register_function{function_name = 'name',
// callback = fn, flags = {'no-writes'}, description = '...'}; only while FUNCTION LOAD runs.
// Reads the flags table at `index` into fn; false (with `error`) on a flag Redis does not know.
bool read_flags(lua_State* L, int index, LibraryFunction& fn, const char*& error) {
  for (int i = 1;; ++i) {
    lua_rawgeti(L, index, i);
    if (lua_isnil(L, -1)) {
      lua_pop(L, 1);
      return true;
    }
    const char* flag = lua_tostring(L, -1);
    lua_pop(L, 1);
    if (flag != nullptr && std::strcmp(flag, "no-writes") == 0) {
      fn.no_writes = true;
    } else if (flag != nullptr && std::strcmp(flag, "allow-oom") == 0) {
      fn.allow_oom = true;
    } else if (flag == nullptr ||
               (std::strcmp(flag, "allow-stale") != 0 &&
                std::strcmp(flag, "no-cluster") != 0 &&
                std::strcmp(flag, "allow-cross-slot-keys") != 0)) {
      error = "unknown flag given";
      return false;
    }
  }
}

// redis.register_function('name', fn) or redis.register_function{function_name = 'name',
// callback = fn, flags = {'no-writes'}, description = '...'}; only while FUNCTION LOAD runs.
// The checks and their texts are Redis 7's.
int l_register_function(lua_State* L) {
  LuaVm& vm = vm_of(L);
  Library* lib = vm.registering();
  if (lib == nullptr) {
    return luaL_error(L, "redis.register_function can only be called on FUNCTION LOAD command");
  }
  LibraryFunction fn;
  int argc = lua_gettop(L);
  int name_at = 0;
  int cb_at = 0;
  if (argc == 1) {
    if (!lua_istable(L, 1)) {
      return luaL_error(L,
                        "calling redis.register_function with a single argument is only "
                        "applicable to Lua table (representing named arguments).");
    }
    lua_pushnil(L);
    while (lua_next(L, 1) != 0) {
      // key at -2, value at -1
      const char* key = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "";
      if (std::strcmp(key, "function_name") == 0) {
        if (lua_type(L, -1) != LUA_TSTRING) {
          return luaL_error(L,
                            "function_name argument given to redis.register_function must "
                            "be a string");
        }
      } else if (std::strcmp(key, "callback") == 0) {
        if (!lua_isfunction(L, -1)) {
          return luaL_error(L,
                            "callback argument given to redis.register_function must be a "
                            "function");
        }
      } else if (std::strcmp(key, "description") == 0) {
        if (lua_type(L, -1) != LUA_TSTRING) {
          return luaL_error(L,
                            "description argument given to redis.register_function must be "
                            "a string");
        }
        fn.description = lua_tostring(L, -1);
        fn.has_description = true;
      } else if (std::strcmp(key, "flags") == 0) {
        const char* error = nullptr;
        if (!lua_istable(L, -1)) {
          return luaL_error(L,
                            "flags argument to redis.register_function must be a table "
                            "representing function flags");
        }
        if (!read_flags(L, lua_gettop(L), fn, error)) {
          return luaL_error(L, "%s", error);
        }
      } else {
        return luaL_error(L, "unknown argument given to redis.register_function");
      }
      lua_pop(L, 1);
    }
    lua_settop(L, 1);
    lua_getfield(L, 1, "function_name");
    lua_getfield(L, 1, "callback");
    name_at = 2;
    cb_at = 3;
    if (lua_isnil(L, name_at)) {
      return luaL_error(L, "redis.register_function must get a function name argument");
    }
    if (lua_isnil(L, cb_at)) {
      return luaL_error(L, "redis.register_function must get a callback argument");
    }
  } else if (argc == 2) {
    name_at = 1;
    cb_at = 2;
    if (lua_type(L, 1) != LUA_TSTRING) {
      return luaL_error(L, "first argument to redis.register_function must be a string");
    }
    if (!lua_isfunction(L, 2)) {
      return luaL_error(L, "second argument to redis.register_function must be a function");
    }
  } else {
    return luaL_error(L, "wrong number of arguments to redis.register_function");
  }
  size_t len = 0;
  const char* name = lua_tolstring(L, name_at, &len);
  if (!valid_function_name(name, len)) {
    return luaL_error(L,
                      "Library names can only contain letters, numbers, or underscores(_) "
                      "and must be at least one character long");
  }
  fn.name.assign(name, len);
  for (const LibraryFunction& f : lib->functions) {
    if (f.name == fn.name) {
      return luaL_error(L, "Function already exists in the library");
    }
  }
  lua_getfield(L, LUA_REGISTRYINDEX, "hotkv_pending_functions");
  lua_pushvalue(L, cb_at);
  lua_setfield(L, -2, fn.name.c_str());
  lua_pop(L, 1);
  lib->functions.push_back(std::move(fn));
  return 0;
}

void set_function(lua_State* L, LuaVm& vm, const char* name, lua_CFunction f) {
  lua_pushlightuserdata(L, &vm);
  lua_pushcclosure(L, f, 1);
  lua_setfield(L, -2, name);
}

bool table_field(lua_State* L, int index, const char* name, int type) {
  // Raw: a metatable on the returned table (even _G's, whose __index raises) plays no part
  // in the reply, and cannot raise an error outside the script's protected call.
  lua_pushstring(L, name);
  lua_rawget(L, index);
  if (lua_type(L, -1) == type) {
    return true;
  }
  lua_pop(L, 1);
  return false;
}

// What both `redis` tables have: log, its levels and the version.
void set_log_and_version(lua_State* L, LuaVm& vm) {
  set_function(L, vm, "log", l_log);
  const std::pair<const char*, int> levels[] = {
      {"LOG_DEBUG", 0}, {"LOG_VERBOSE", 1}, {"LOG_NOTICE", 2}, {"LOG_WARNING", 3}};
  for (auto [name, v] : levels) {
    lua_pushinteger(L, v);
    lua_setfield(L, -2, name);
  }
  lua_pushstring(L, "7.2.0");
  lua_setfield(L, -2, "REDIS_VERSION");
  lua_pushinteger(L, 0x070200);
  lua_setfield(L, -2, "REDIS_VERSION_NUM");
}

}  // namespace

void push_load_redis_api(lua_State* L, LuaVm& vm) {
  lua_newtable(L);
  set_function(L, vm, "register_function", l_register_function);
  set_log_and_version(L, vm);
}

void open_redis_api(lua_State* L, LuaVm& vm) {
  lua_newtable(L);
  set_function(L, vm, "call", l_call);
  set_function(L, vm, "pcall", l_pcall);
  set_function(L, vm, "error_reply", l_error_reply);
  set_function(L, vm, "status_reply", l_status_reply);
  set_function(L, vm, "sha1hex", l_sha1hex);
  set_function(L, vm, "setresp", l_setresp);
  set_function(L, vm, "replicate_commands", l_replicate_commands);
  set_function(L, vm, "set_repl", l_set_repl);
  set_function(L, vm, "breakpoint", l_breakpoint);
  set_function(L, vm, "debug", l_debug);
  set_function(L, vm, "acl_check_cmd", l_acl_check_cmd);
  const std::pair<const char*, int> repl[] = {
      {"REPL_NONE", 0}, {"REPL_AOF", 1}, {"REPL_SLAVE", 2}, {"REPL_REPLICA", 2}, {"REPL_ALL", 3}};
  for (auto [name, v] : repl) {
    lua_pushinteger(L, v);
    lua_setfield(L, -2, name);
  }
  set_log_and_version(L, vm);
  lua_setglobal(L, "redis");
}

bool push_reply(lua_State* L, std::string_view resp, bool& is_error) {
  ReplyReader r{resp, 0};
  is_error = false;
  return r.push(L, 0, is_error);
}

bool write_lua_value(lua_State* L, int index, ReplyWriter& w, bool script_resp3, int depth) {
  if (depth > kMaxDepth || !lua_checkstack(L, 4)) {
    return false;
  }
  index = index < 0 ? lua_gettop(L) + index + 1 : index;
  switch (lua_type(L, index)) {
    case LUA_TSTRING: {
      size_t len = 0;
      const char* s = lua_tolstring(L, index, &len);
      w.bulk(std::string_view(s, len));
      return true;
    }
    case LUA_TBOOLEAN:
      if (script_resp3) {
        w.boolean(lua_toboolean(L, index) != 0);
      } else if (lua_toboolean(L, index) != 0) {
        w.integer(1);
      } else {
        w.null();
      }
      return true;
    case LUA_TNUMBER:
      w.integer(static_cast<int64_t>(lua_tonumber(L, index)));
      return true;
    case LUA_TTABLE:
      break;
    default:
      w.null();
      return true;
  }
  if (table_field(L, index, "err", LUA_TSTRING)) {
    std::string text = lua_tostring(L, -1);
    lua_pop(L, 1);
    std::replace(text.begin(), text.end(), '\r', ' ');
    std::replace(text.begin(), text.end(), '\n', ' ');
    if (text.empty()) {
      text = "ERR";  // an error needs a code: redis.error_reply("") is a bare ERR, as on Redis
    }
    w.error(text);
    return true;
  }
  if (table_field(L, index, "ok", LUA_TSTRING)) {
    std::string text = lua_tostring(L, -1);
    lua_pop(L, 1);
    std::replace(text.begin(), text.end(), '\r', ' ');
    std::replace(text.begin(), text.end(), '\n', ' ');
    w.simple(text);
    return true;
  }
  if (table_field(L, index, "double", LUA_TNUMBER)) {
    double d = lua_tonumber(L, -1);
    lua_pop(L, 1);
    w.dbl(d);
    return true;
  }
  for (const char* kind : {"map", "set"}) {
    if (table_field(L, index, kind, LUA_TTABLE)) {
      int t = lua_gettop(L);
      size_t n = 0;
      lua_pushnil(L);
      while (lua_next(L, t) != 0) {
        ++n;
        lua_pop(L, 1);
      }
      bool is_map = std::strcmp(kind, "map") == 0;
      if (is_map) {
        w.map(n);
      } else {
        w.set(n);
      }
      lua_pushnil(L);
      while (lua_next(L, t) != 0) {
        // key at -2, value at -1
        if (!write_lua_value(L, -2, w, script_resp3, depth + 1) ||
            (is_map && !write_lua_value(L, -1, w, script_resp3, depth + 1))) {
          return false;
        }
        lua_pop(L, 1);
      }
      lua_pop(L, 1);
      return true;
    }
  }
  // An array: elements 1..n up to the first nil.
  size_t n = 0;
  for (;;) {
    lua_rawgeti(L, index, static_cast<int>(n + 1));
    bool present = !lua_isnil(L, -1);
    lua_pop(L, 1);
    if (!present) {
      break;
    }
    ++n;
  }
  w.array(n);
  for (size_t i = 1; i <= n; ++i) {
    lua_rawgeti(L, index, static_cast<int>(i));
    bool ok = write_lua_value(L, -1, w, script_resp3, depth + 1);
    lua_pop(L, 1);
    if (!ok) {
      return false;
    }
  }
  return true;
}

}  // namespace hotkv
