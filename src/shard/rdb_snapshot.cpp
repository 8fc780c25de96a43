// The engine's keyspaces to an RDB file and back. Writing reads the shards' dictionaries in
// place (they are parked, or frozen in a forked child) and encodes one value at a time, so a
// snapshot needs memory for the largest value, not for the data set. Loading decodes on the
// calling thread and hands finished values to the shards in batches, as the log's replay does.
#include "hotkv/shard/rdb_snapshot.hpp"

#include <atomic>
#include <memory>
#include <optional>
#include <thread>
#include <utility>

#include <asio/post.hpp>

#include "hotkv/persist/rdb_file.hpp"
#include "hotkv/shard/engine.hpp"
#include "hotkv/shard/value_dump.hpp"
#include "hotkv/types/encoding_limits.hpp"
#include "hotkv/util/numbers.hpp"

namespace hotkv {
namespace {

// The Redis version an RDB of this format is written by (the redis-ver aux field: a loader
// only logs it).
constexpr const char* kRdbRedisVersion = "7.0.0";
constexpr size_t kSnapshotBatch = 1024;
constexpr int kSnapshotBatchesInFlight = 64;

struct LoadedKey {
  uint32_t db;
  std::string key;
  Value value;
  int64_t expire_at_ms;
};

// Sends the file's keys to their shards as they are decoded.
class EngineLoader : public RdbFileHandler {
 public:
  EngineLoader(Engine& engine, int64_t now_ms, RdbLoadResult& result,
               const std::atomic<bool>* abort)
      : engine_(engine),
        now_ms_(now_ms),
        result_(result),
        abort_(abort),
        batches_(engine.shard_count()),
        in_flight_(std::make_shared<std::atomic<int>>(0)) {}

  bool aux(std::string_view key, std::string_view value) override {
    if (key == "repl-stream-db") {
      result_.repl_stream_db = parse_int64(value).value_or(0);
    }
    return true;
  }

  bool select_db(uint64_t db) override {
    if (db >= engine_.shard(0).db_count()) {
      result_.error = "the RDB file holds keys of database " + std::to_string(db) +
                      ", but databases is " + std::to_string(engine_.shard(0).db_count()) +
                      ": start with a larger databases setting";
      return false;
    }
    db_ = static_cast<uint32_t>(db);
    return true;
  }

  bool key(std::string_view key, uint8_t type, int64_t expire_at_ms, RdbReader& body) override {
    if (aborted()) {
      result_.error = "loading aborted";
      return false;
    }
    std::optional<Value> v = read_object_body(body, type, engine_.config());
    if (!v) {
      result_.error = "the value of key '" + std::string(key) + "' (RDB type " +
                      std::to_string(type) + ") does not decode";
      return false;
    }
    if (expire_at_ms >= 0 && expire_at_ms <= now_ms_) {
      ++result_.keys_expired;
      return true;
    }
    ++result_.keys_loaded;
    size_t target = engine_.shard_of(key);
    batches_[target].push_back(LoadedKey{db_, std::string(key), std::move(*v), expire_at_ms});
    if (batches_[target].size() >= kSnapshotBatch) {
      send(target);
    }
    return true;
  }

  bool function(std::string_view code) override {
    result_.function_codes.emplace_back(code);
    return true;
  }

  // Sends what is left and waits until every batch has been applied.
  void finish() {
    for (size_t s = 0; s < batches_.size(); ++s) {
      send(s);
    }
    while (in_flight_->load() > 0 && !aborted()) {
      std::this_thread::yield();
    }
  }

 private:
  bool aborted() const { return abort_ != nullptr && abort_->load(); }

  void send(size_t target) {
    if (batches_[target].empty()) {
      return;
    }
    while (in_flight_->load() >= kSnapshotBatchesInFlight && !aborted()) {
      std::this_thread::yield();
    }
    if (aborted()) {
      batches_[target].clear();
      return;
    }
    in_flight_->fetch_add(1);
    Shard* sh = &engine_.shard(target);
    auto batch = std::make_shared<std::vector<LoadedKey>>(std::move(batches_[target]));
    batches_[target].clear();  // moved from: make it a valid empty vector
    asio::post(sh->io(), [sh, batch, in_flight = in_flight_] {
      for (LoadedKey& k : *batch) {
        Keyspace& ks = sh->keyspace(k.db);
        Value& stored = ks.put(k.key, std::move(k.value));
        if (k.expire_at_ms >= 0) {
          ks.set_expire(k.key, stored, k.expire_at_ms);
        }
      }
      in_flight->fetch_sub(1);
    });
  }

  Engine& engine_;
  int64_t now_ms_;
  RdbLoadResult& result_;
  const std::atomic<bool>* abort_;
  uint32_t db_ = 0;
  std::vector<std::vector<LoadedKey>> batches_;
  std::shared_ptr<std::atomic<int>> in_flight_;
};

}  // namespace

bool write_rdb_snapshot(Engine& engine, int fd, const RdbSnapshotAux& aux, int64_t now_ms) {
  RdbFileWriter out(fd);
  out.begin();
  // Redis 7.0's set of AUX fields, in its order.
  out.aux("redis-ver", kRdbRedisVersion);
  out.aux("redis-bits", static_cast<int64_t>(sizeof(void*) * 8));
  out.aux("ctime", now_ms / 1000);
  out.aux("used-mem", static_cast<int64_t>(aux.used_mem));
  out.aux("repl-stream-db", aux.repl_stream_db);
  out.aux("repl-id", aux.repl_id);
  out.aux("repl-offset", aux.repl_offset);
  out.aux("aof-base", static_cast<int64_t>(aux.aof_base ? 1 : 0));
  for (const std::string& code : aux.function_codes) {
    out.function(code);
  }
  const EncodingLimits limits = EncodingLimits::from(engine.config());
  const size_t databases = engine.shard(0).db_count();
  std::string object;
  for (size_t db = 0; db < databases && out.ok(); ++db) {
    uint64_t keys = 0;
    uint64_t expires = 0;
    for (size_t s = 0; s < engine.shard_count(); ++s) {
      keys += engine.shard(s).keyspace(db).size();
      expires += engine.shard(s).keyspace(db).expires_count();
    }
    if (keys == 0) {
      continue;
    }
    out.select_db(static_cast<uint32_t>(db), keys, expires);
    for (size_t s = 0; s < engine.shard_count() && out.ok(); ++s) {
      engine.shard(s).keyspace(db).dict().for_each([&](std::string_view key, Value& v) {
        if (!out.ok() || (v.has_expiry() && v.expire_at_ms() <= now_ms)) {
          return;
        }
        object.clear();
        if (!dump_object(v, object, limits)) {
          return;  // a type without an RDB form (none today)
        }
        out.key(key, object, v.has_expiry() ? v.expire_at_ms() : -1);
      });
    }
  }
  return out.finish();
}

RdbLoadResult load_rdb_snapshot(Engine& engine, std::string_view data, int64_t now_ms,
                                const std::atomic<bool>* abort) {
  RdbLoadResult result;
  EngineLoader loader(engine, now_ms, result, abort);
  RdbFileResult r = read_rdb_file(data, loader);
  loader.finish();
  if (r.error != RdbFileError::kNone && result.error.empty()) {
    result.error = r.message();
  } else if (r.error != RdbFileError::kNone) {
    result.error += " (" + r.message() + ")";
  }
  return result;
}

}  // namespace hotkv
