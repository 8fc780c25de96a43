// The thresholds at which a hash or a set leaves its compact encoding (hash-max-listpack-*,
// set-max-intset-entries), and the size of a stream's nodes (stream-node-max-*). A write compares
// the value with the limits in force when it runs, as Redis does, so a lowered limit takes effect
// on a value's next write and a raised one never turns a converted value back (the conversion is
// one way).
//
// A plain copy taken from the configuration for one command: the types layer never reads the
// configuration itself. Any thread may build one.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hotkv {

class Config;

struct EncodingLimits {
  // The defaults of Config (those of the redis.conf Redis ships).
  size_t hash_max_listpack_entries = 128;
  size_t hash_max_listpack_value = 64;
  size_t set_max_intset_entries = 512;
  // A stream's last node takes no more entry once it holds this many entries (deleted ones
  // included) or bytes; 0 means no limit of that kind, as in Redis.
  size_t stream_node_max_entries = 100;
  size_t stream_node_max_bytes = 4096;
  // A new list's node size (list-max-listpack-size) and compress depth (list-compress-depth):
  // a list keeps those it was made with, also when the log's replay makes it.
  int list_fill = -2;
  int64_t list_compress_depth = 0;

  // The limits currently configured (relaxed reads of Config's atomics).
  static EncodingLimits from(const Config& config);
};

}  // namespace hotkv
