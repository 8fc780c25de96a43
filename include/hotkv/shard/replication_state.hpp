// Where a replica's stream stood when it shut down cleanly, kept in `dir` so that a restart
// which reloads the same data (from the append-only log, or from the RDB file SHUTDOWN SAVE
// wrote) asks its master to continue (PSYNC replid offset+1) instead of syncing fully, as
// Redis does with the replication fields of its RDB file. The file is removed when read: a
// node that later crashes, whose data may be older or newer than the position, syncs fully.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "hotkv/util/status.hpp"

namespace hotkv {

class Replication;

struct ReplicationPosition {
  std::string replid;
  uint64_t offset = 0;
  uint32_t db = 0;       // the database the stream had selected
  std::string source;    // what holds the data: "aof" or "rdb"
};

Status save_replication_position(const std::string& dir, const ReplicationPosition& p);
// Reads and removes the file; nullopt if there is none or it does not parse.
std::optional<ReplicationPosition> take_replication_position(const std::string& dir);

}  // namespace hotkv
