// What a script run changed, kept so that the run can be taken back whole.
//
// A script that so far kept to its KEYS runs holding only their shards. When a later call
// reaches a key on a shard it does not hold (or a command that needs every shard), it cannot
// wait for that shard while holding others without risking a deadlock, so the run is undone
// and the command runs again with every shard (docs/scripting.md, "Keys a script did not
// declare"). The journal makes that possible: before the first write to a key, the key's
// value (a deep copy, deadline included) or its absence is kept; undo puts every kept key
// back and logs each one whole into the script's still-open record, so the record a crash or
// a replica sees holds the attempt and its reversal together: no net change.
//
// Copies cost time and memory in proportion to the value, so a value past kMaxCopyBytes is not
// copied: capture() says so and the caller runs the script with every shard instead, where no
// undo can be needed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "hotkv/types/value.hpp"

namespace hotkv {

class Engine;

class ScriptUndo {
 public:
  // Values up to this many bytes (Value::memory_bytes) are copied before a write.
  static constexpr size_t kMaxCopyBytes = 64 * 1024;

  // Forgets everything kept (start of a run).
  void clear();
  bool empty() const { return used_ == 0; }
  size_t size() const { return used_; }

  // Keeps the state of `key` in database `db` of `shard` unless it is kept already. An
  // expired key is dropped first (as any write would find it), so it is kept as absent.
  // False if the value is too large to copy: nothing is kept for it.
  bool capture(Engine& engine, size_t shard, uint32_t db, std::string_view key, int64_t now_ms);

  // Puts every kept key back as it was, logging each into its shard's open record, and
  // returns the shards whose logs received effects. Forgets what it kept.
  std::vector<size_t> undo(Engine& engine);

 private:
  struct Entry {
    size_t shard = 0;
    uint32_t db = 0;
    std::string key;
    std::optional<Value> before;  // nullopt: the key did not exist
  };
  bool kept(size_t shard, uint32_t db, std::string_view key);
  // The first used_ entries are this run's; the others keep their strings' capacity for the
  // next runs, so a script's few writes allocate nothing here in steady state.
  std::vector<Entry> entries_;
  size_t used_ = 0;
  // Past a handful of keys, the first-write test looks them up here (shard, db and key).
  std::unordered_set<std::string> index_;
  std::string id_scratch_;
};

}  // namespace hotkv
