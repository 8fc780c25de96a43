// Lua scripts: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT LOAD/EXISTS/FLUSH/KILL/HELP.
// The dispatcher routes a script like any command by its declared KEYS: to their shard, or
// with every shard of them parked; the script then runs in that shard's interpreter
// (scripting/lua_vm.hpp). Its commands' effects, not the script, go to the log, in one record
// per shard closed with the EVAL itself.
#include <algorithm>

#include "hotkv/commands/context.hpp"
#include "hotkv/commands/families.hpp"
#include "hotkv/commands/script_helpers.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/scripting/lua_vm.hpp"
#include "hotkv/scripting/script_store.hpp"
#include "hotkv/util/numbers.hpp"
#include "hotkv/util/strings.hpp"

namespace hotkv {
namespace {

constexpr const char* kNoScriptErr = "NOSCRIPT No matching script. Please use EVAL.";

void run_script(CommandContext& ctx, bool by_sha, bool read_only) {
  size_t n = 0;
  if (!parse_numkeys_or_reply(ctx, n)) {
    return;
  }
  ScriptStore& store = ctx.engine.scripts();
  std::shared_ptr<const Script> script;
  if (by_sha) {
    script = store.vm(ctx.shard.id()).cached_script(ctx.arg(1));
    if (!script) {
      script = store.find(ctx.arg(1));
    }
    if (!script) {
      ctx.error(kNoScriptErr);
      return;
    }
  } else {
    std::string error;
    script = store.add(ctx.arg(1), error);
    if (!script) {
      ctx.error(error);
      return;
    }
  }
  auto keys = ctx.argv.subspan(3, n);
  auto args = ctx.argv.subspan(3 + n);
  store.vm(ctx.shard.id()).run(ctx, script, keys, args, read_only);
}

void cmd_eval(CommandContext& ctx) { run_script(ctx, false, false); }
void cmd_evalsha(CommandContext& ctx) { run_script(ctx, true, false); }
void cmd_eval_ro(CommandContext& ctx) { run_script(ctx, false, true); }
void cmd_evalsha_ro(CommandContext& ctx) { run_script(ctx, true, true); }

void cmd_script(CommandContext& ctx) {
  std::string sub = ascii_lower(ctx.arg(1));
  ScriptStore& store = ctx.engine.scripts();
  if (sub == "load" && ctx.argc() == 3) {
    std::string error;
    auto script = store.add(ctx.arg(2), error);
    if (!script) {
      ctx.error(error);
      return;
    }
    ctx.reply.bulk(script->sha);
  } else if (sub == "exists" && ctx.argc() >= 3) {
    ctx.reply.array(ctx.argc() - 2);
    for (size_t i = 2; i < ctx.argc(); ++i) {
      ctx.reply.integer(store.find(ctx.arg(i)) ? 1 : 0);
    }
  } else if (sub == "flush" && ctx.argc() <= 3) {
    if (ctx.argc() == 3 && !strcasecmp_view(ctx.arg(2), "SYNC") &&
        !strcasecmp_view(ctx.arg(2), "ASYNC")) {
      ctx.error("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
      return;
    }
    store.flush();
    ctx.reply.ok();
  } else if (sub == "kill" && ctx.argc() == 2) {
    bool ok = false;
    std::string text = store.request_kill(ok, false);
    if (ok) {
      ctx.reply.ok();
    } else {
      ctx.error(text);
    }
  } else if (sub == "help" && ctx.argc() == 2) {
    const char* lines[] = {
        "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "EXISTS <sha1> [<sha1> ...]",
        "    Return information about the existence of the scripts in the script cache.",
        "FLUSH [ASYNC|SYNC]",
        "    Flush the Lua scripts cache.",
        "KILL",
        "    Kill the currently executing Lua script.",
        "LOAD <script>",
        "    Load a script into the scripts cache without executing it.",
        "HELP",
        "    Print this help."};
    ctx.reply.array(std::size(lines));
    for (const char* l : lines) {
      ctx.reply.simple(l);
    }
  } else {
    ctx.error("ERR unknown subcommand or wrong number of arguments for '" +
              std::string(ctx.arg(1).substr(0, 128)) + "'. Try SCRIPT HELP.");
  }
}

}  // namespace

void numkeys_keys(std::span<const std::string_view> argv, std::vector<size_t>& out) {
  if (argv.size() < 3) {
    return;
  }
  auto n = parse_int64(argv[2]);
  if (!n || *n <= 0 || static_cast<uint64_t>(*n) > argv.size() - 3) {
    return;
  }
  for (int64_t i = 0; i < *n; ++i) {
    out.push_back(3 + static_cast<size_t>(i));
  }
}

bool parse_numkeys_or_reply(CommandContext& ctx, size_t& out) {
  auto n = parse_int64(ctx.arg(2));
  if (!n) {
    ctx.error("ERR value is not an integer or out of range");
    return false;
  }
  if (*n < 0) {
    ctx.error("ERR Number of keys can't be negative");
    return false;
  }
  if (static_cast<uint64_t>(*n) > ctx.argc() - 3) {
    ctx.error("ERR Number of keys can't be greater than number of args");
    return false;
  }
  out = static_cast<size_t>(*n);
  return true;
}

void register_scripting(Table& t) {
  constexpr uint32_t kScript = kNoScript | kStale;
  // clang-format off
  t.add({"EVAL",       -3, kScript, key_finder(0, 0, 0, numkeys_keys), cmd_eval, "scripting", "EVAL script numkeys [key [key ...]] [arg [arg ...]]", "Executes a server-side Lua script."});
  t.add({"EVALSHA",    -3, kScript, key_finder(0, 0, 0, numkeys_keys), cmd_evalsha, "scripting", "EVALSHA sha1 numkeys [key [key ...]] [arg [arg ...]]", "Executes a server-side Lua script by SHA1 digest."});
  t.add({"EVAL_RO",    -3, kScript | kReadOnly, key_finder(0, 0, 0, numkeys_keys), cmd_eval_ro, "scripting", "EVAL_RO script numkeys [key [key ...]] [arg [arg ...]]", "Executes a read-only server-side Lua script."});
  t.add({"EVALSHA_RO", -3, kScript | kReadOnly, key_finder(0, 0, 0, numkeys_keys), cmd_evalsha_ro, "scripting", "EVALSHA_RO sha1 numkeys [key [key ...]] [arg [arg ...]]", "Executes a read-only server-side Lua script by SHA1 digest."});
  t.add({"SCRIPT",     -2, kScript, no_keys(), cmd_script, "scripting", "SCRIPT LOAD|EXISTS|FLUSH|KILL|HELP [arg ...]", "Manages the server-side Lua script cache."});
  // clang-format on
}

}  // namespace hotkv
