// Lua scripts: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT LOAD/EXISTS/FLUSH/KILL/HELP.
// The dispatcher routes a script like any command by its declared KEYS: to their shard, or
// with every shard of them parked; the script then runs in that shard's interpreter
// (scripting/lua_vm.hpp). Its commands' effects, not the script, go to the log, in one record
// per shard closed with the EVAL itself.
#include <algorithm>
#include <memory>
#include <string>
#include <unordered_map>

#include "hotkv/commands/command_call.hpp"
#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/errors_scripting.hpp"
#include "hotkv/commands/errors_server.hpp"
#include "hotkv/commands/errors_values.hpp"
#include "hotkv/commands/families.hpp"
#include "hotkv/commands/script_helpers.hpp"
#include "hotkv/commands/script_store.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/shard/eviction.hpp"
#include "hotkv/util/numbers.hpp"
#include "hotkv/util/sha1.hpp"
#include "hotkv/util/strings.hpp"

namespace hotkv {
namespace {


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
      ctx.error(err::kNoScript);
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
  // A script that declared flags and may write is refused before it runs, as Redis 7 does.
  if (script->has_shebang && !script->no_writes && !read_only) {
    if (const char* refusal = replication_write_refusal(ctx.engine, false)) {
      ctx.error(refusal);
      return;
    }
    if (!script->allow_oom && ctx.engine.eviction().oom()) {
      ctx.error(err::kOom);
      return;
    }
  }
  auto keys = ctx.argv.subspan(3, n);
  auto args = ctx.argv.subspan(3 + n);
  store.vm(ctx.shard.id()).run(ctx, script, keys, args, read_only, &script->key_mode);
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
      ctx.error(err::kScriptFlushOption);
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
    ctx.error(err::subcommand_arity("script", ctx.arg(1)));
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

namespace {

// The key mode of the script or function a command names, from a per-thread cache (the store
// is shared under a lock; a known script costs one hash lookup here). nullptr: not known yet
// (an EVAL of a new body, an EVALSHA that will answer NOSCRIPT).
const KeyModeCell* key_mode_of(std::string_view name, std::string_view what, ScriptStore& store) {
  struct Cache {
    struct Hash {
      using is_transparent = void;
      size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
    };
    uint64_t generation = 0;
    uint64_t functions_generation = 0;
    std::unordered_map<std::string, std::shared_ptr<const Script>, Hash, std::equal_to<>> scripts;
    std::unordered_map<std::string, std::shared_ptr<KeyModeCell>, Hash, std::equal_to<>> functions;
  };
  thread_local Cache cache;
  if (cache.generation != store.generation()) {
    cache.scripts.clear();
    cache.generation = store.generation();
  }
  if (cache.functions_generation != store.functions_generation()) {
    cache.functions.clear();
    cache.functions_generation = store.functions_generation();
  }
  constexpr size_t kMaxCached = 4096;
  if (name == "FCALL" || name == "FCALL_RO") {
    auto it = cache.functions.find(what);
    if (it != cache.functions.end()) {
      return it->second.get();
    }
    const LibraryFunction* fn = nullptr;
    if (!store.find_function(what, &fn)) {
      return nullptr;
    }
    if (cache.functions.size() >= kMaxCached) {
      cache.functions.clear();
    }
    return cache.functions.emplace(std::string(what), fn->key_mode).first->second.get();
  }
  // EVAL keys the cache by the body, EVALSHA by the id as sent.
  auto it = cache.scripts.find(what);
  if (it != cache.scripts.end()) {
    return &it->second->key_mode;
  }
  std::shared_ptr<const Script> script =
      name == "EVALSHA" || name == "EVALSHA_RO" ? store.find(what) : store.find(sha1_hex(what));
  if (!script) {
    return nullptr;
  }
  if (cache.scripts.size() >= kMaxCached) {
    cache.scripts.clear();
  }
  return &cache.scripts.emplace(std::string(what), std::move(script)).first->second->key_mode;
}

}  // namespace

bool script_needs_every_shard(const CommandSpec& spec, std::span<const std::string_view> argv,
                              Engine& engine) {
  if (engine.shard_count() == 1 || argv.size() < 3) {
    return false;
  }
  if ((spec.flags & kRunsScript) == 0) {
    return false;
  }
  const std::string& name = spec.name;
  const KeyModeCell* mode = key_mode_of(name, argv[1], engine.scripts());
  if (mode == nullptr) {
    // Not known: EVAL of a new body runs with every shard (its first run); an EVALSHA or FCALL
    // of nothing answers its error wherever it goes.
    return name == "EVAL" || name == "EVAL_RO";
  }
  return mode->load(std::memory_order_acquire) != KeyMode::kDeclared;
}

bool parse_numkeys_or_reply(CommandContext& ctx, size_t& out) {
  auto n = parse_int64(ctx.arg(2));
  if (!n) {
    ctx.error(err::kNotInteger);
    return false;
  }
  if (*n < 0) {
    ctx.error(err::kNumkeysNegative);
    return false;
  }
  if (static_cast<uint64_t>(*n) > ctx.argc() - 3) {
    ctx.error(err::kKeysMoreThanArgs);
    return false;
  }
  out = static_cast<size_t>(*n);
  return true;
}

void register_scripting(Table& t) {
  constexpr uint32_t kScript = kNoScript | kStale | kRunsScript;
  // clang-format off
  t.add({"EVAL",       -3, kScript, key_finder(0, 0, 0, numkeys_keys), cmd_eval, "scripting", "EVAL script numkeys [key [key ...]] [arg [arg ...]]", "Executes a server-side Lua script."});
  t.add({"EVALSHA",    -3, kScript, key_finder(0, 0, 0, numkeys_keys), cmd_evalsha, "scripting", "EVALSHA sha1 numkeys [key [key ...]] [arg [arg ...]]", "Executes a server-side Lua script by SHA1 digest."});
  t.add({"EVAL_RO",    -3, kScript | kReadOnly, key_finder(0, 0, 0, numkeys_keys), cmd_eval_ro, "scripting", "EVAL_RO script numkeys [key [key ...]] [arg [arg ...]]", "Executes a read-only server-side Lua script."});
  t.add({"EVALSHA_RO", -3, kScript | kReadOnly, key_finder(0, 0, 0, numkeys_keys), cmd_evalsha_ro, "scripting", "EVALSHA_RO sha1 numkeys [key [key ...]] [arg [arg ...]]", "Executes a read-only server-side Lua script by SHA1 digest."});
  CommandSpec script_spec{"SCRIPT",     -2, kNoScript | kStale, no_keys(), cmd_script, "scripting", "SCRIPT LOAD|EXISTS|FLUSH|KILL|HELP [arg ...]", "Manages the server-side Lua script cache.", {"load", "exists", "flush", "kill", "help"}};
  script_spec.allow_busy_subcommands = {"kill"};
  t.add(std::move(script_spec));
  // clang-format on
}

}  // namespace hotkv
