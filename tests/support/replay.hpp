// Helpers for the effect-logging tests of each value type: capture what a shard logs, encode
// one key as the rewrite would, and replay a log into a TestServer as start-up would.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "support/test_server.hpp"

namespace hotkv::test {

// Replays `log`, every effect applied to the shard owning its key. REQUIREs that every record
// decodes and every op applies.
void replay(const std::string& log, TestServer& dst);

// Shard `shard` of `s` logs into a temporary (already unlinked) file; contents() flushes the
// log and reads back everything written so far.
class LogFile {
 public:
  explicit LogFile(TestServer& s, size_t shard = 0);
  ~LogFile();
  LogFile(const LogFile&) = delete;
  LogFile& operator=(const LogFile&) = delete;
  std::string contents();

 private:
  TestServer& server_;
  size_t shard_;
  int reader_ = -1;
};

// The records BGREWRITEAOF would write for `key` (on shard 0 of `s`): its value rebuilt from
// nothing, cut into records at every checkpoint; `checkpoints` (optional) counts the cuts.
std::string encode_key(TestServer& s, const std::string& key, size_t* checkpoints = nullptr);

// Applies one op effect to shard 0 of `s` as replay would; CHECKs that a failure comes with an
// error text and success without one. Returns whether it applied.
bool apply_op(TestServer& s, uint16_t code, std::vector<std::string> args, std::string key);

// Records in `log`; CHECKs that none holds more than `max_effects` effects.
size_t count_records(const std::string& log, size_t max_effects);

}  // namespace hotkv::test
