// A script run's journal of first writes, and its undo (see script_undo.hpp).
#include "hotkv/scripting/script_undo.hpp"

#include <algorithm>

#include "hotkv/commands/inventory_soldout.hpp"
#include "hotkv/shard/engine.hpp"
#include "hotkv/shard/keyspace.hpp"
#include "hotkv/shard/op_effects.hpp"

namespace hotkv {

void ScriptUndo::clear() {
  entries_.clear();
  seen_.clear();
}

bool ScriptUndo::capture(Engine& engine, size_t shard, uint32_t db, std::string_view key,
                         int64_t now_ms) {
  // One string names the key in its shard and database; a script touches few keys, and
  // this runs only before its writes.
  id_scratch_.clear();
  id_scratch_.append(reinterpret_cast<const char*>(&shard), sizeof shard);
  id_scratch_.append(reinterpret_cast<const char*>(&db), sizeof db);
  id_scratch_.append(key);
  if (seen_.count(id_scratch_) != 0) {
    return true;
  }
  Keyspace& ks = engine.shard(shard).keyspace(db);
  // As the write will find it: an expired key is deleted (and logged) now, so it is absent.
  const Value* v = ks.peek(key, now_ms);
  if (v != nullptr && v->type() != ValueType::kString && v->memory_bytes() > kMaxCopyBytes) {
    return false;
  }
  if (v != nullptr && v->type() == ValueType::kString && v->str_len() > kMaxCopyBytes) {
    return false;
  }
  seen_.insert(id_scratch_);
  Entry e{shard, db, std::string(key), std::nullopt};
  if (v != nullptr) {
    e.before = v->clone();
  }
  entries_.push_back(std::move(e));
  return true;
}

std::vector<size_t> ScriptUndo::undo(Engine& engine) {
  std::vector<size_t> logged;
  std::string scratch;
  for (Entry& e : entries_) {
    Shard& home = engine.shard(e.shard);
    Keyspace& ks = home.keyspace(e.db);
    const Value* restored = nullptr;
    if (e.before) {
      restored = &ks.put(e.key, std::move(*e.before));
    } else {
      ks.erase(e.key);
    }
    if (e.db == 0) {
      forget_soldout_beacon(engine, home, e.key);
    }
    ShardLog& log = home.log();
    if (!log.enabled()) {
      continue;
    }
    // Logged whole, as COPY logs its destination: a delete, then the value from nothing.
    RecordEncoder& rec = log.record();
    rec.select(e.db);
    rec.add_del(e.key);
    if (restored != nullptr) {
      encode_value(rec, e.key, *restored, scratch, [] {});
    }
    if (std::find(logged.begin(), logged.end(), e.shard) == logged.end()) {
      logged.push_back(e.shard);
    }
  }
  clear();
  return logged;
}

}  // namespace hotkv
