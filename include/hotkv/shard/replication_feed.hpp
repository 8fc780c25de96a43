// The master's side of the replication stream: every shard's log records, as they are written,
// become Redis commands appended to the one stream replicas follow (Replication::feed). Shards
// flush independently, so the feed is where their records meet: a single-shard record goes out
// as soon as it arrives, and a cross-shard operation waits until each shard holding a part has
// handed it over, with the records those shards wrote after it queued behind it, so the stream
// applies it in one MULTI/EXEC and never reorders a shard's own records.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "hotkv/persist/record.hpp"
#include "hotkv/persist/shard_log.hpp"
#include "hotkv/shard/effect_commands.hpp"

namespace hotkv {

class Replication;

class ReplicationFeed : public LogTap {
 public:
  ReplicationFeed(Replication& replication, size_t shards);

  // LogTap: called by the thread flushing shard `shard`'s log.
  void on_records(size_t shard, std::string_view records) override;
  // Appends a command that comes from no shard (a keep-alive PING, REPLCONF GETACK) at the
  // stream's current end. Any thread.
  void feed_command(const CommandArgv& argv);
  // Worker 0's cron: a master with replicas attached sends them a PING every `period_s`
  // seconds (repl-ping-replica-period), so an idle stream still shows its link is alive.
  void ping_if_due(int64_t now_ms, int64_t period_s);
  // Appends REPLCONF GETACK * unless the stream holds nothing new since the last one: WAIT asks
  // the replicas to acknowledge now. Any thread.
  void request_acks();
  // A full sync takes its offset here: the next command names its database again, as the
  // snapshot's reader starts in database 0. REQUIRES every shard parked (nothing in flight).
  void restart_database_tracking();
  // The stream's end after the last write it carries (GETACKs and PINGs after it do not count):
  // what WAIT waits for, since a replica acknowledges a GETACK with the offset before it.
  uint64_t data_end() const;
  // Records that could not be translated (a bug, logged once each); they are left out.
  uint64_t dropped() const;

 private:
  struct Pending {
    uint32_t parts = 0;
    std::vector<Record> records;
    std::vector<size_t> shards;
  };
  // Takes one decoded record of `shard` (mu_ held).
  void take(size_t shard, Record&& r);
  // Translates and feeds one operation (mu_ held).
  void emit(std::span<const Record* const> parts);

  Replication& repl_;
  mutable std::mutex mu_;
  CommandStreamState state_;
  // Per shard: the bytes of a record a partial write cut (completed by the next call), the
  // cross-shard operation the shard waits on (0: none) and the records queued behind it.
  std::vector<std::string> carry_;
  std::vector<uint64_t> blocked_on_;
  std::vector<std::deque<Record>> queued_;
  std::map<uint64_t, Pending> waiting_;
  std::string out_;
  uint64_t dropped_ = 0;
  uint64_t getack_at_ = UINT64_MAX;
  uint64_t data_end_ = 0;
  int64_t last_ping_ms_ = 0;  // the stream's end after the last GETACK
};

}  // namespace hotkv
