// ShardLog's file handling: with appendfsync always the file is extended with zeros ahead of
// the records (so each fdatasync leaves the size alone), the records land in place at the
// log's end, the zeros read back as the end of the log, and closing the file cuts them off.
// Other policies append without zeros.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "hotkv/persist/record.hpp"
#include "hotkv/persist/shard_log.hpp"

using hotkv::DecodeStatus;
using hotkv::FsyncPolicy;
using hotkv::Record;
using hotkv::RecordDecoder;
using hotkv::ShardLog;

namespace {

struct TempFile {
  std::string path;
  TempFile() {
    char tmpl[] = "/tmp/hotkv-shard-log-XXXXXX";
    int fd = ::mkstemp(tmpl);
    REQUIRE(fd >= 0);
    ::close(fd);
    path = tmpl;
  }
  ~TempFile() { ::unlink(path.c_str()); }
  int open_for_log() const {
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    return fd;
  }
  uint64_t size() const {
    struct stat st {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    return static_cast<uint64_t>(st.st_size);
  }
  std::string read() const {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return std::move(ss).str();
  }
};

// One group: SETs of k<from>..k<to-1>, then the flush a reply pass would do.
void log_group(ShardLog& log, int from, int to) {
  for (int i = from; i < to; ++i) {
    log.record().add_put_string("k" + std::to_string(i), std::string(100, 'v'), -1);
    log.end_record(0, 1);
  }
  REQUIRE(log.flush());
}

// Decodes `data`; returns the keys in order and checks the log ends cleanly at `end`.
std::vector<std::string> keys_in(const std::string& data, uint64_t end) {
  RecordDecoder dec(data);
  Record r;
  std::vector<std::string> keys;
  DecodeStatus st;
  while ((st = dec.next(r)) == DecodeStatus::kOk) {
    for (const auto& e : r.effects) {
      keys.push_back(e.key);
    }
  }
  CHECK(st == DecodeStatus::kEnd);
  CHECK(dec.offset() == end);
  return keys;
}

}  // namespace

TEST_CASE("appendfsync always writes zeros ahead and its records in place", "[persist]") {
  TempFile f;
  {
    ShardLog log;
    log.attach(f.open_for_log(), 0, FsyncPolicy::kAlways);
    log_group(log, 0, 10);
    uint64_t end = log.file_size();
    CHECK(end == log.lsn());
    CHECK(log.synced_lsn() == end);
    CHECK(log.allocated() >= end + ShardLog::kPreallocChunk);
    CHECK(f.size() == log.allocated());
    // A second group goes where the first ended, inside the zeros: the file does not grow.
    uint64_t allocated = log.allocated();
    log_group(log, 10, 20);
    CHECK(log.allocated() == allocated);
    CHECK(f.size() == allocated);
    // What a crash would leave: the records, then zeros that read as the end of the log.
    std::string data = f.read();
    auto keys = keys_in(data, log.file_size());
    REQUIRE(keys.size() == 20);
    CHECK(keys.front() == "k0");
    CHECK(keys.back() == "k19");
    // Running past the zeros extends them again.
    while (log.file_size() + 2000 < allocated) {
      log_group(log, 0, 10);
    }
    log_group(log, 0, 30);
    CHECK(log.allocated() > allocated);
    CHECK(log.allocated() >= log.file_size() + ShardLog::kPreallocChunk);
  }
  // Closing the file cut the zeros: it ends with its last record.
  std::string data = f.read();
  CHECK(keys_in(data, data.size()).size() >= 60);
}

TEST_CASE("a file switch cuts the old file's zeros and continues at the new one's end",
          "[persist]") {
  TempFile a;
  TempFile b;
  ShardLog log;
  log.attach(a.open_for_log(), 0, FsyncPolicy::kAlways);
  log_group(log, 0, 5);
  uint64_t a_end = log.file_size();
  REQUIRE(a.size() > a_end);
  // The new file already holds records of its own (a restart appending to its last file).
  {
    ShardLog first;
    first.attach(b.open_for_log(), 0, FsyncPolicy::kNo);
    log_group(first, 100, 103);
  }
  uint64_t b_start = b.size();
  log.attach(b.open_for_log(), b_start, FsyncPolicy::kAlways);
  CHECK(a.size() == a_end);
  CHECK(log.synced_lsn() == log.lsn());
  log_group(log, 5, 8);
  auto keys = keys_in(b.read(), log.file_size());
  REQUIRE(keys.size() == 6);
  CHECK(keys[0] == "k100");
  CHECK(keys[3] == "k5");
}

TEST_CASE("everysec and no append without zeros", "[persist]") {
  for (FsyncPolicy p : {FsyncPolicy::kEverysec, FsyncPolicy::kNo}) {
    TempFile f;
    ShardLog log;
    log.attach(f.open_for_log(), 0, p);
    log_group(log, 0, 10);
    CHECK(f.size() == log.file_size());
    CHECK(log.allocated() == log.file_size());
    CHECK(keys_in(f.read(), log.file_size()).size() == 10);
  }
}

TEST_CASE("a flush writes the closed records and leaves an open one in memory", "[persist]") {
  // The thread of a busy script serves other clients (and flushes for them) while the
  // script's record is open: none of the script's effects may reach the file before it ends.
  TempFile f;
  ShardLog log;
  log.attach(f.open_for_log(), 0, FsyncPolicy::kEverysec);
  log_group(log, 0, 3);
  log.record().add_put_string("script-half", "x", -1);
  REQUIRE(log.flush());
  CHECK(keys_in(f.read(), log.file_size()) == std::vector<std::string>{"k0", "k1", "k2"});
  // Closed records behind the open one are not possible (one open record at a time), but a
  // second flush still writes nothing of it.
  REQUIRE(log.flush());
  CHECK(keys_in(f.read(), log.file_size()).size() == 3);
  log.record().add_put_string("script-done", "y", -1);
  log.end_record(0, 1);
  REQUIRE(log.flush());
  CHECK(keys_in(f.read(), log.file_size()) ==
        std::vector<std::string>{"k0", "k1", "k2", "script-half", "script-done"});
}
