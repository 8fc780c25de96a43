// Effects as Redis commands (effect_commands.hpp): the plain effects (put, del, expire, flush,
// swapdb) here, ops through their family's registry entry; then the grouping of one
// operation's commands (SELECT only on a change of database, MULTI/EXEC around several) and the
// ordering of several shards' logs into one stream.
#include "hotkv/shard/effect_commands.hpp"

#include <algorithm>
#include <unordered_map>

#include "hotkv/shard/effect_registry.hpp"

namespace hotkv {

void internal_effect_command(const Effect& e, CommandSink& out) {
  out.begin(kEffectApplyCommand).arg(e.key).arg(static_cast<int64_t>(e.op)).args(e.args);
}

bool effect_to_commands(const Effect& e, CommandSink& out, std::string& error) {
  switch (e.kind) {
    case EffectKind::kPut:
      out.begin("SET").arg(e.key);
      if (e.is_int) {
        out.arg(e.integer);
      } else {
        out.arg(e.str);
      }
      if (e.at_ms >= 0) {
        // An absolute deadline, as logged: the replica expires the key when HotKV does.
        out.arg("PXAT").arg(e.at_ms);
      }
      return true;
    case EffectKind::kDel:
      out.begin("DEL").arg(e.key);
      return true;
    case EffectKind::kExpire:
      if (e.at_ms < 0) {
        out.begin("PERSIST").arg(e.key);
      } else {
        out.begin("PEXPIREAT").arg(e.key).arg(e.at_ms);
      }
      return true;
    case EffectKind::kFlush:
      out.begin("FLUSHDB");
      return true;
    case EffectKind::kSwapDb:
      out.begin("SWAPDB").arg(static_cast<int64_t>(e.db)).arg(static_cast<int64_t>(e.db2));
      return true;
    case EffectKind::kOp: {
      const EffectOp* op = find_effect_op(e.op);
      auto fn = op != nullptr ? op->to_commands : nullptr;
      if (fn == nullptr) {
        error = "no command for op code " + std::to_string(e.op);
        return false;
      }
      size_t before = out.commands().size();
      if (!fn(e, out, error)) {
        out.commands().resize(before);
        error = std::string(op != nullptr ? op->name : "op") + " on '" + e.key + "': " + error;
        return false;
      }
      return true;
    }
    case EffectKind::kSelect:
      return true;  // consumed by the decoder; never in a decoded record
  }
  error = "unknown effect kind " + std::to_string(static_cast<int>(e.kind));
  return false;
}

namespace {

bool whole_database(const Effect& e) {
  return e.kind == EffectKind::kFlush || e.kind == EffectKind::kSwapDb;
}

// The commands of one effect, each tagged with the database it must run in (-1: any).
struct Tagged {
  int64_t db;
  CommandArgv argv;
};

bool add_effect(const Effect& e, std::vector<Tagged>& out, std::string& error) {
  CommandSink sink;
  if (!effect_to_commands(e, sink, error)) {
    return false;
  }
  int64_t db = e.kind == EffectKind::kSwapDb ? -1 : static_cast<int64_t>(e.db);
  for (CommandArgv& argv : sink.commands()) {
    out.push_back({db, std::move(argv)});
  }
  return true;
}

}  // namespace

bool operation_to_commands(std::span<const Record* const> parts, CommandStreamState& state,
                           std::vector<CommandArgv>& out, std::string& error) {
  // Every part of a cross-shard operation holds the same whole-database effects in the same
  // order (each shard logs its own share of a FLUSHDB or SWAPDB), so the parts are cut at
  // them: the k-th cut of every part, then the k-th whole-database effect once. Keys of
  // different parts live on different shards, so their effects commute within a cut.
  std::vector<Tagged> cmds;
  std::vector<size_t> at(parts.size(), 0);
  for (;;) {
    const Effect* barrier = nullptr;
    bool more = false;
    for (size_t p = 0; p < parts.size(); ++p) {
      const std::vector<Effect>& effects = parts[p]->effects;
      size_t& i = at[p];
      while (i < effects.size() && !whole_database(effects[i])) {
        if (!add_effect(effects[i], cmds, error)) {
          return false;
        }
        ++i;
      }
      if (i < effects.size()) {
        if (barrier == nullptr) {
          barrier = &effects[i];
        }
        ++i;
        more = true;
      }
    }
    if (barrier != nullptr && !add_effect(*barrier, cmds, error)) {
      return false;
    }
    if (!more) {
      break;
    }
  }
  if (cmds.empty()) {
    return true;
  }
  const bool atomic = cmds.size() > 1;
  bool selected_inside = false;
  if (atomic) {
    // Select the first database before MULTI where possible: fewer commands inside.
    auto first = std::find_if(cmds.begin(), cmds.end(), [](const Tagged& t) { return t.db >= 0; });
    if (first != cmds.end() && first->db != state.db) {
      out.push_back({"SELECT", std::to_string(first->db)});
      state.db = first->db;
    }
    out.push_back({"MULTI"});
  }
  for (Tagged& t : cmds) {
    if (t.db >= 0 && t.db != state.db) {
      out.push_back({"SELECT", std::to_string(t.db)});
      state.db = t.db;
      selected_inside = selected_inside || atomic;
    }
    out.push_back(std::move(t.argv));
  }
  if (atomic) {
    out.push_back({"EXEC"});
    if (selected_inside) {
      // A server that refuses the transaction (EXECABORT: redis-server for an internal
      // command it does not know) drops the SELECTs queued in it too: say it again outside.
      out.push_back({"SELECT", std::to_string(state.db)});
    }
  }
  return true;
}

void append_resp_command(const CommandArgv& argv, std::string& out) {
  out += '*';
  out += std::to_string(argv.size());
  out += "\r\n";
  for (const std::string& a : argv) {
    out += '$';
    out += std::to_string(a.size());
    out += "\r\n";
    out += a;
    out += "\r\n";
  }
}

bool operation_to_resp(std::span<const Record* const> parts, CommandStreamState& state,
                       std::string& out, std::string& error) {
  std::vector<CommandArgv> cmds;
  CommandStreamState next = state;
  if (!operation_to_commands(parts, next, cmds, error)) {
    return false;
  }
  for (const CommandArgv& c : cmds) {
    append_resp_command(c, out);
  }
  state = next;
  return true;
}

size_t merge_shard_logs(std::span<const std::vector<Record>> shards,
                        const std::function<void(std::span<const Record* const>)>& emit) {
  std::vector<size_t> pos(shards.size(), 0);
  // A cross-shard operation whose parts are at the head of some shards but not all yet.
  struct Waiting {
    std::vector<size_t> shards;
    std::vector<const Record*> parts;
  };
  std::unordered_map<uint64_t, Waiting> waiting;
  std::vector<uint64_t> blocked_on(shards.size(), 0);
  bool progress = true;
  while (progress) {
    progress = false;
    for (size_t s = 0; s < shards.size(); ++s) {
      while (pos[s] < shards[s].size() && blocked_on[s] == 0) {
        const Record& r = shards[s][pos[s]];
        if (r.txn_id == 0 || r.parts <= 1) {
          const Record* one = &r;
          emit({&one, 1});
          ++pos[s];
          progress = true;
          continue;
        }
        Waiting& w = waiting[r.txn_id];
        w.shards.push_back(s);
        w.parts.push_back(&r);
        blocked_on[s] = r.txn_id;
        if (w.parts.size() >= r.parts) {
          emit(w.parts);
          for (size_t b : w.shards) {
            ++pos[b];
            blocked_on[b] = 0;
          }
          waiting.erase(r.txn_id);
          progress = true;
        }
      }
    }
  }
  size_t left = 0;
  for (size_t s = 0; s < shards.size(); ++s) {
    left += shards[s].size() - pos[s];
  }
  return left;
}

}  // namespace hotkv
