// Persistence commands: SAVE and BGSAVE write the data set as an RDB file (`dir`/`dbfilename`,
// shard/rdb_saver.hpp), BGREWRITEAOF compacts the append-only log, LASTSAVE tells when the last
// RDB save succeeded. They run with every shard parked (kAllShards): that instant is the
// snapshot. Also the start-up load of the RDB file when the log is off.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/errors_server.hpp"
#include "hotkv/commands/families.hpp"
#include "hotkv/commands/rdb_snapshots.hpp"
#include "hotkv/commands/script_store.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/shard/persistence.hpp"
#include "hotkv/shard/rdb_saver.hpp"
#include "hotkv/util/clock.hpp"
#include "hotkv/util/memory.hpp"

namespace hotkv {
namespace {

constexpr const char* kChildActive =
    "ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE "
    "in order to schedule a BGSAVE whenever possible.";

// The log if persistence is on; otherwise replies the error and returns nullptr.
Persistence* persistence_or_reply(CommandContext& ctx) {
  Persistence* p = ctx.engine.persistence();
  if (p == nullptr || !p->enabled()) {
    ctx.error(err::kAppendOnlyDisabled);
    return nullptr;
  }
  return p;
}

bool rewrite_running(Engine& engine) {
  Persistence* p = engine.persistence();
  return p != nullptr && p->rewrite_in_progress();
}

void cmd_bgrewriteaof(CommandContext& ctx) {
  Persistence* p = persistence_or_reply(ctx);
  if (p == nullptr) {
    return;
  }
  std::string err = p->start_rewrite();
  if (!err.empty()) {
    ctx.error(err);
    return;
  }
  ctx.reply.simple("Background append only file rewriting started");
}

// SAVE: the snapshot is written before the reply, every shard parked meanwhile (Redis blocks
// the whole server the same way).
void cmd_save(CommandContext& ctx) {
  RdbSaver& saver = ctx.engine.rdb_saver();
  if (saver.in_progress()) {
    ctx.error(err::kBackgroundSaveRunning);
    return;
  }
  if (!saver.save_parked(rdb_snapshot_aux(ctx.engine)).empty()) {
    ctx.error("ERR");  // Redis answers a bare error; the log says why
    return;
  }
  ctx.reply.ok();
}

// BGSAVE [SCHEDULE]: a forked child writes the snapshot of this instant.
void cmd_bgsave(CommandContext& ctx) {
  bool schedule = false;
  if (ctx.argc() > 1) {
    if (ctx.argc() == 2 && strcasecmp_view(ctx.arg(1), "SCHEDULE")) {
      schedule = true;
    } else {
      ctx.error(err::kSyntax);
      return;
    }
  }
  RdbSaver& saver = ctx.engine.rdb_saver();
  if (saver.in_progress()) {
    ctx.error(err::kBackgroundSaveRunning);
    return;
  }
  if (rewrite_running(ctx.engine)) {
    if (!schedule) {
      ctx.error(kChildActive);
      return;
    }
    saver.schedule();  // worker 0's cron starts it when the compaction is over
    ctx.reply.simple("Background saving scheduled");
    return;
  }
  std::string err = saver.start_bgsave_parked(rdb_snapshot_aux(ctx.engine));
  if (!err.empty()) {
    spdlog::warn("BGSAVE: {}", err);
    ctx.error("ERR");
    return;
  }
  ctx.reply.simple("Background saving started");
}

void cmd_lastsave(CommandContext& ctx) { ctx.reply.integer(ctx.engine.rdb_saver().last_save_unix()); }

// Maps a whole file for reading; empty `out` and "" for a missing file.
std::string map_file(const std::string& path, std::string_view& out, size_t& mapped) {
  out = {};
  mapped = 0;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return errno == ENOENT ? "" : "cannot open " + path + ": " + std::strerror(errno);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    std::string err = "cannot stat " + path + ": " + std::strerror(errno);
    ::close(fd);
    return err;
  }
  if (st.st_size == 0) {
    ::close(fd);
    return "the RDB file " + path + " is empty";
  }
  void* p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) {
    return "cannot map " + path + ": " + std::strerror(errno);
  }
  mapped = static_cast<size_t>(st.st_size);
  out = std::string_view(static_cast<const char*>(p), mapped);
  return "";
}

}  // namespace

// The libraries an RDB file carried, validated as FUNCTION RESTORE would (in a private
// interpreter: the shards' own are created on their threads).
std::string add_rdb_libraries(Engine& engine, const std::vector<std::string>& codes) {
  ScriptStore& store = engine.scripts();
  std::unique_ptr<ScriptVm> validator = store.make_vm();
  std::string error;
  for (const std::string& code : codes) {
    auto lib = parse_library(code, error);
    if (!lib || !validator->register_library(*lib, false, error) ||
        !store.add_library(std::move(lib), false, error)) {
      return "function library in the RDB file not loaded: " + error;
    }
  }
  return "";
}

RdbSnapshotAux rdb_snapshot_aux(Engine& engine) {
  RdbSnapshotAux aux;
  auto libs = engine.scripts().libraries();
  std::sort(libs.begin(), libs.end(),
            [](const auto& a, const auto& b) { return a->name < b->name; });
  for (const auto& lib : libs) {
    aux.function_codes.push_back(lib->code);
  }
  aux.used_mem = used_memory_bytes();
  // The stream's id and offset, as Redis writes them (a replica's full sync overrides both).
  aux.repl_id = engine.replication().ids().replid;
  aux.repl_offset = static_cast<int64_t>(engine.replication().offset());
  return aux;
}

std::string load_rdb_at_startup(Engine& engine) {
  const std::string path = engine.rdb_saver().path();
  std::string_view data;
  size_t mapped = 0;
  if (std::string err = map_file(path, data, mapped); !err.empty()) {
    return err;
  }
  if (mapped == 0) {
    return "";  // no file: start empty
  }
  int64_t started = mono_us();
  RdbLoadResult r =
      load_rdb_snapshot(engine, data, unix_ms(), &engine.rdb_saver().load_abort_flag());
  ::munmap(const_cast<char*>(data.data()), mapped);
  if (!r.error.empty()) {
    return "cannot load the RDB file " + path + ": " + r.error;
  }
  if (std::string err = add_rdb_libraries(engine, r.function_codes); !err.empty()) {
    return err;
  }
  engine.rdb_saver().set_load_stats(r.keys_loaded, r.keys_expired);
  engine.mark_key_changes_saved();  // what was loaded is what the file holds
  spdlog::info("DB loaded from disk: {} keys ({} expired skipped), {} function libraries, "
               "{:.3f} seconds",
               r.keys_loaded, r.keys_expired, r.function_codes.size(),
               static_cast<double>(mono_us() - started) / 1e6);
  return "";
}

void register_persistence(Table& t) {
  constexpr uint32_t kSnapshot = kAdmin | kNoScript | kAllShards;
  // clang-format off
  t.add({"BGREWRITEAOF", 1, kSnapshot, no_keys(), cmd_bgrewriteaof, "server", "BGREWRITEAOF", "Compacts the append-only log in the background: a base snapshot plus a fresh tail."});
  t.add({"SAVE",         1, kSnapshot | kNoMulti, no_keys(), cmd_save, "server", "SAVE", "Writes the data set to the RDB file (dir/dbfilename) before replying."});
  t.add({"BGSAVE",      -1, kSnapshot, no_keys(), cmd_bgsave, "server", "BGSAVE [SCHEDULE]", "Writes the data set to the RDB file from a forked child."});
  t.add({"LASTSAVE",     1, kLoading | kStale | kFast, no_keys(), cmd_lastsave, "server", "LASTSAVE", "Returns the Unix time of the last successful RDB save (or of start-up)."});
  // clang-format on
}

}  // namespace hotkv
