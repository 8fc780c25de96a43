// A script run's journal of first writes, and its undo (see script_undo.hpp).
#include "hotkv/scripting/script_undo.hpp"

#include <algorithm>

#include "hotkv/commands/inventory_soldout.hpp"
#include "hotkv/shard/engine.hpp"
#include "hotkv/shard/keyspace.hpp"
#include "hotkv/shard/op_effects.hpp"

namespace hotkv {

namespace {

// Below this many kept keys the first-write test scans them; scripts mostly write one to four.
constexpr size_t kScanLimit = 8;

}  // namespace

void ScriptUndo::clear() {
  for (size_t i = 0; i < used_; ++i) {
    entries_[i].before.reset();  // a copy is not kept alive past its run
  }
  used_ = 0;
  if (!index_.empty()) {
    index_.clear();
  }
}

bool ScriptUndo::kept(size_t shard, uint32_t db, std::string_view key) {
  if (used_ <= kScanLimit) {
    for (size_t i = 0; i < used_; ++i) {
      const Entry& e = entries_[i];
      if (e.key == key && e.shard == shard && e.db == db) {
        return true;
      }
    }
    return false;
  }
  if (index_.empty()) {
    for (size_t i = 0; i < used_; ++i) {
      const Entry& e = entries_[i];
      id_scratch_.assign(reinterpret_cast<const char*>(&e.shard), sizeof e.shard);
      id_scratch_.append(reinterpret_cast<const char*>(&e.db), sizeof e.db);
      id_scratch_.append(e.key);
      index_.insert(id_scratch_);
    }
  }
  id_scratch_.assign(reinterpret_cast<const char*>(&shard), sizeof shard);
  id_scratch_.append(reinterpret_cast<const char*>(&db), sizeof db);
  id_scratch_.append(key);
  return !index_.insert(id_scratch_).second;
}

bool ScriptUndo::capture(Engine& engine, size_t shard, uint32_t db, std::string_view key,
                         int64_t now_ms) {
  if (kept(shard, db, key)) {
    return true;
  }
  Keyspace& ks = engine.shard(shard).keyspace(db);
  // As the write will find it: an expired key is deleted (and logged) now, so it is absent.
  const Value* v = ks.peek(key, now_ms);
  if (v != nullptr && v->memory_bytes() > kMaxCopyBytes) {
    return false;
  }
  if (used_ == entries_.size()) {
    entries_.emplace_back();
  }
  Entry& e = entries_[used_++];
  e.shard = shard;
  e.db = db;
  e.key.assign(key);
  if (v != nullptr) {
    e.before = v->clone();
  } else {
    e.before.reset();
  }
  return true;
}

std::vector<size_t> ScriptUndo::undo(Engine& engine) {
  std::vector<size_t> logged;
  std::string scratch;
  for (size_t i = 0; i < used_; ++i) {
    Entry& e = entries_[i];
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
    // Logged whole, as COPY logs its destination.
    RecordEncoder& rec = log.record();
    rec.select(e.db);
    encode_replacement(rec, e.key, restored, scratch);
    if (std::find(logged.begin(), logged.end(), e.shard) == logged.end()) {
      logged.push_back(e.shard);
    }
  }
  clear();
  return logged;
}

}  // namespace hotkv
