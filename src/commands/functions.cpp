// Redis 7 functions: FUNCTION LOAD/DELETE/FLUSH/LIST/DUMP/RESTORE/STATS/KILL/HELP, FCALL and
// FCALL_RO. A library is Lua code whose first line is `#!lua name=<lib>` and which registers
// functions with redis.register_function; the store keeps the code, each shard's interpreter runs
// it once to get the functions, and with appendonly the libraries are kept in <dir>/functions.hotkv
// across restarts. FCALL routes like EVAL, by its declared keys.
#include <algorithm>

#include <spdlog/spdlog.h>

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
#include "hotkv/persist/rdb_format.hpp"
#include "hotkv/shard/eviction.hpp"
#include "hotkv/util/clock.hpp"
#include "hotkv/util/glob.hpp"
#include "hotkv/util/numbers.hpp"
#include "hotkv/util/strings.hpp"

namespace hotkv {
namespace {

void run_fcall(CommandContext& ctx, bool read_only) {
  // Redis looks the function up before it reads numkeys.
  ScriptStore& store = ctx.engine.scripts();
  const LibraryFunction* fn = nullptr;
  auto lib = store.find_function(ctx.arg(1), &fn);
  if (!lib) {
    ctx.error(err::kFunctionNotFound);
    return;
  }
  size_t n = 0;
  if (!parse_int64(ctx.arg(2))) {
    ctx.error(err::kFcallBadNumkeys);  // FCALL's text for it, not EVAL's
    return;
  }
  if (!parse_numkeys_or_reply(ctx, n)) {
    return;
  }
  if (read_only && !fn->no_writes) {
    ctx.error(err::kWriteFunctionReadOnly);
    return;
  }
  if (!fn->no_writes) {
    // A function that may write is refused before it runs, as Redis 7 does.
    if (const char* refusal = replication_write_refusal(ctx.engine, false)) {
      ctx.error(refusal);
      return;
    }
    if (!fn->allow_oom && ctx.engine.eviction().oom()) {
      ctx.error(err::kOom);
      return;
    }
  }
  auto keys = ctx.argv.subspan(3, n);
  auto args = ctx.argv.subspan(3 + n);
  store.vm(ctx.shard.id()).call_function(ctx, *lib, *fn, keys, args, read_only, fn->key_mode.get());
}

void cmd_fcall(CommandContext& ctx) { run_fcall(ctx, false); }
void cmd_fcall_ro(CommandContext& ctx) { run_fcall(ctx, true); }

void save_or_warn(CommandContext& ctx) {
  std::string error;
  if (!ctx.engine.scripts().save_libraries(error)) {
    spdlog::warn("functions not saved: {}", error);
  }
}

// FUNCTION STATS: the function running past busy-reply-threshold (it is allowed while one
// is) and, per engine, how many libraries and functions are loaded.
void function_stats(CommandContext& ctx) {
  ScriptStore& store = ctx.engine.scripts();
  ctx.reply.map(2);
  ctx.reply.bulk("running_script");
  ScriptStore::RunningFunction running;
  if (store.running_function(running)) {
    ctx.reply.map(3);
    ctx.reply.bulk("name");
    ctx.reply.bulk(running.name);
    ctx.reply.bulk("command");
    ctx.reply.array(running.command.size());
    for (const std::string& a : running.command) {
      ctx.reply.bulk(a);
    }
    ctx.reply.bulk("duration_ms");
    ctx.reply.integer(std::max<int64_t>(0, unix_ms() - running.started_ms));
  } else {
    ctx.reply.null();
  }
  size_t libraries = 0;
  size_t functions = 0;
  for (const auto& lib : store.libraries()) {
    ++libraries;
    functions += lib->functions.size();
  }
  ctx.reply.bulk("engines");
  ctx.reply.map(1);
  ctx.reply.bulk("LUA");
  ctx.reply.map(2);
  ctx.reply.bulk("libraries_count");
  ctx.reply.integer(static_cast<int64_t>(libraries));
  ctx.reply.bulk("functions_count");
  ctx.reply.integer(static_cast<int64_t>(functions));
}

void function_load(CommandContext& ctx) {
  bool replace = false;
  size_t code_at = ctx.argc() - 1;  // the code comes last, after the options
  for (size_t i = 2; i < code_at; ++i) {
    if (!strcasecmp_view(ctx.arg(i), "REPLACE")) {
      ctx.error(err::function_option(ctx.arg(i)));
      return;
    }
    replace = true;
  }
  std::string error;
  auto lib = parse_library(ctx.arg(code_at), error);
  if (!lib || !ctx.engine.scripts().vm(ctx.shard.id()).register_library(*lib, false, error)) {
    ctx.error(error);
    return;
  }
  std::string name = lib->name;
  if (!ctx.engine.scripts().add_library(std::move(lib), replace, error)) {
    ctx.error(error);
    return;
  }
  save_or_warn(ctx);
  ctx.reply.bulk(name);
}

// FUNCTION DUMP: every library as Redis 7.0 serializes them (one function opcode and the code
// per library, then the RDB version and a CRC-64), so redis-server restores what HotKV dumps
// and the reverse. Libraries go in name order: the same set dumps to the same bytes.
void function_dump(CommandContext& ctx) {
  auto libs = ctx.engine.scripts().libraries();
  std::sort(libs.begin(), libs.end(),
            [](const auto& a, const auto& b) { return a->name < b->name; });
  std::string payload;
  for (const auto& lib : libs) {
    payload.push_back(static_cast<char>(kRdbOpcodeFunction));
    rdb_append_string(payload, lib->code);
  }
  rdb_seal_payload(payload);
  ctx.reply.bulk(payload);
}

// FUNCTION RESTORE payload [FLUSH|APPEND|REPLACE]: all the payload's libraries or none.
void function_restore(CommandContext& ctx) {
  using Policy = ScriptStore::RestorePolicy;
  Policy policy = Policy::kAppend;
  if (ctx.argc() == 4) {
    if (strcasecmp_view(ctx.arg(3), "FLUSH")) {
      policy = Policy::kFlush;
    } else if (strcasecmp_view(ctx.arg(3), "REPLACE")) {
      policy = Policy::kReplace;
    } else if (!strcasecmp_view(ctx.arg(3), "APPEND")) {
      ctx.error(err::kRestorePolicy);
      return;
    }
  }
  std::string_view body;
  if (!rdb_open_payload(ctx.arg(2), body)) {
    ctx.error(err::kDumpPayload);  // Redis's DUMP text for a bad envelope
    return;
  }
  RdbReader reader(body);
  std::vector<std::shared_ptr<Library>> libs;
  std::string error;
  ScriptVm& vm = ctx.engine.scripts().vm(ctx.shard.id());
  while (!reader.at_end()) {
    uint8_t opcode = 0;
    std::string code;
    if (!reader.read_byte(opcode) || opcode != kRdbOpcodeFunction) {
      ctx.error(err::kNotAFunction);
      return;
    }
    if (!reader.read_string(code)) {
      ctx.error(err::kFunctionPayload);
      return;
    }
    auto lib = parse_library(code, error);
    if (!lib || !vm.register_library(*lib, false, error)) {
      ctx.error(error);
      return;
    }
    libs.push_back(std::move(lib));
  }
  if (!ctx.engine.scripts().restore_libraries(std::move(libs), policy, error)) {
    ctx.error(error);
    return;
  }
  save_or_warn(ctx);
  ctx.reply.ok();
}

void function_list(CommandContext& ctx) {
  std::string_view pattern;
  bool with_code = false;
  bool with_pattern = false;
  for (size_t i = 2; i < ctx.argc(); ++i) {
    // Each option at most once, with Redis's texts.
    if (strcasecmp_view(ctx.arg(i), "WITHCODE") && !with_code) {
      with_code = true;
    } else if (strcasecmp_view(ctx.arg(i), "LIBRARYNAME") && !with_pattern) {
      if (i + 1 >= ctx.argc()) {
        ctx.error(err::kLibraryNameMissing);
        return;
      }
      with_pattern = true;
      pattern = ctx.arg(++i);
    } else {
      ctx.error(err::function_argument(ctx.arg(i)));
      return;
    }
  }
  std::vector<std::shared_ptr<const Library>> libs;
  for (auto& lib : ctx.engine.scripts().libraries()) {
    if (pattern.empty() || glob_match(pattern, lib->name)) {
      libs.push_back(lib);
    }
  }
  ctx.reply.array(libs.size());
  for (const auto& lib : libs) {
    ctx.reply.map(with_code ? 4 : 3);
    ctx.reply.bulk("library_name");
    ctx.reply.bulk(lib->name);
    ctx.reply.bulk("engine");
    ctx.reply.bulk("LUA");
    ctx.reply.bulk("functions");
    ctx.reply.array(lib->functions.size());
    for (const LibraryFunction& f : lib->functions) {
      ctx.reply.map(3);
      ctx.reply.bulk("name");
      ctx.reply.bulk(f.name);
      ctx.reply.bulk("description");
      if (f.has_description) {
        ctx.reply.bulk(f.description);
      } else {
        ctx.reply.null();
      }
      ctx.reply.bulk("flags");
      ctx.reply.set(f.no_writes ? 1 : 0);
      if (f.no_writes) {
        ctx.reply.bulk("no-writes");
      }
    }
    if (with_code) {
      ctx.reply.bulk("library_code");
      ctx.reply.bulk(lib->code);
    }
  }
}

void cmd_function(CommandContext& ctx) {
  std::string sub = ascii_lower(ctx.arg(1));
  ScriptStore& store = ctx.engine.scripts();
  if (sub == "load" && ctx.argc() >= 3) {
    function_load(ctx);
  } else if (sub == "delete" && ctx.argc() == 3) {
    if (!store.delete_library(ctx.arg(2))) {
      ctx.error(err::kLibraryNotFound);
      return;
    }
    save_or_warn(ctx);
    ctx.reply.ok();
  } else if (sub == "flush" && ctx.argc() <= 3) {
    if (ctx.argc() == 3 && !strcasecmp_view(ctx.arg(2), "SYNC") &&
        !strcasecmp_view(ctx.arg(2), "ASYNC")) {
      ctx.error(err::kFunctionFlushOption);
      return;
    }
    store.flush_libraries();
    save_or_warn(ctx);
    ctx.reply.ok();
  } else if (sub == "list") {
    function_list(ctx);
  } else if (sub == "dump" && ctx.argc() == 2) {
    function_dump(ctx);
  } else if (sub == "restore" && (ctx.argc() == 3 || ctx.argc() == 4)) {
    function_restore(ctx);
  } else if (sub == "stats" && ctx.argc() == 2) {
    function_stats(ctx);
  } else if (sub == "kill" && ctx.argc() == 2) {
    bool ok = false;
    std::string text = store.request_kill(ok, true);
    if (ok) {
      ctx.reply.ok();
    } else {
      ctx.error(text);
    }
  } else if (sub == "help" && ctx.argc() == 2) {
    const char* lines[] = {
        "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "LOAD [REPLACE] <FUNCTION CODE>",
        "    Create a new library with the given library name and code.",
        "DELETE <LIBRARY NAME>",
        "    Delete the given library.",
        "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
        "    Return general information on all the libraries.",
        "FLUSH [ASYNC|SYNC]",
        "    Delete all the libraries.",
        "DUMP",
        "    Return a serialized payload representing the current libraries.",
        "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
        "    Restore the libraries represented by the given payload (APPEND by default).",
        "STATS",
        "    Return information about the current function running.",
        "KILL",
        "    Kill the current running function.",
        "HELP",
        "    Print this help."};
    ctx.reply.array(std::size(lines));
    for (const char* l : lines) {
      ctx.reply.simple(l);
    }
  } else {
    // Redis checks FLUSH's and RESTORE's upper bound itself, so too many arguments get the
    // older wording there.
    bool too_many = (sub == "flush" && ctx.argc() > 3) || (sub == "restore" && ctx.argc() > 4);
    ctx.error(too_many ? err::subcommand_syntax("FUNCTION", ctx.arg(1))
                       : err::subcommand_arity("function", sub));
  }
}

// At engine start: with appendonly, libraries live in <dir>/functions.hotkv; load them.
void load_saved_libraries(Engine& engine) {
  Config& config = engine.config();
  if (config.get_string("appendonly") != "yes") {
    return;
  }
  ScriptStore& store = engine.scripts();
  store.set_functions_file(config.get_string("dir") + "/functions.hotkv");
  std::vector<std::string> codes;
  std::string error;
  if (!store.read_libraries_file(codes, error)) {
    spdlog::error("functions not loaded: {}", error);
    return;
  }
  // Validated in a private interpreter: the shards' own are created on their threads.
  std::unique_ptr<ScriptVm> validator = store.make_vm();
  for (const std::string& code : codes) {
    auto lib = parse_library(code, error);
    if (!lib || !validator->register_library(*lib, false, error) ||
        !store.add_library(std::move(lib), true, error)) {
      spdlog::error("function library not loaded: {}", error);
    }
  }
  if (!codes.empty()) {
    spdlog::info("loaded {} function libraries", codes.size());
  }
}

}  // namespace

void register_functions(Table& t) {
  constexpr uint32_t kScript = kNoScript | kStale | kRunsScript;
  // clang-format off
  t.add({"FCALL",    -3, kScript, key_finder(0, 0, 0, numkeys_keys), cmd_fcall, "scripting", "FCALL function numkeys [key [key ...]] [arg [arg ...]]", "Invokes a function."});
  t.add({"FCALL_RO", -3, kScript | kReadOnly, key_finder(0, 0, 0, numkeys_keys), cmd_fcall_ro, "scripting", "FCALL_RO function numkeys [key [key ...]] [arg [arg ...]]", "Invokes a read-only function."});
  CommandSpec function_spec{"FUNCTION", -2, kNoScript | kStale, no_keys(), cmd_function, "scripting", "FUNCTION LOAD|DELETE|FLUSH|LIST|DUMP|RESTORE|STATS|KILL|HELP [arg ...]", "Manages Redis 7 function libraries.", {"load", "delete", "flush", "list", "dump", "restore", "stats", "kill", "help"}};
  function_spec.allow_busy_subcommands = {"kill", "stats"};
  t.add(std::move(function_spec));
  // clang-format on
  t.add_engine_init(load_saved_libraries);
}

}  // namespace hotkv
