// RDB files: every type HotKV holds survives a file (with deadlines, in several databases,
// beside function libraries), files redis-server 7.0 wrote are read (IDLE and FREQ opcodes
// included), and a wrong checksum, a cut file or a foreign header is refused before any key
// reaches the caller.
#include "hotkv/persist/rdb_file.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cerrno>
#include <csignal>
#include <map>
#include <string>
#include <vector>

#include "hotkv/shard/rdb_snapshot.hpp"
#include "hotkv/shard/value_dump.hpp"
#include "hotkv/util/config.hpp"

#include "support/hex.hpp"
#include "support/test_server.hpp"

using namespace hotkv;
using hotkv::test::TestServer;
using hotkv::test::unhex;

namespace {

// Runs `fn` with a descriptor and returns what it wrote there.
template <class F>
std::string written(F fn) {
  int fd = ::memfd_create("rdb-test", MFD_CLOEXEC);
  REQUIRE(fd >= 0);
  fn(fd);
  off_t size = ::lseek(fd, 0, SEEK_END);
  std::string out(static_cast<size_t>(size), '\0');
  REQUIRE(::pread(fd, out.data(), out.size(), 0) == size);
  ::close(fd);
  return out;
}

struct LoadedKey {
  uint64_t db;
  std::string key;
  uint8_t type;
  int64_t expire_at_ms;
};

// Records what a file holds; values are decoded into `into` (when given) or just checked.
class Collector : public RdbFileHandler {
 public:
  explicit Collector(TestServer* into = nullptr) : into_(into) {}
  bool aux(std::string_view k, std::string_view v) override {
    aux_fields[std::string(k)] = std::string(v);
    return true;
  }
  bool select_db(uint64_t db) override {
    db_ = db;
    dbs.push_back(db);
    return true;
  }
  bool resize_db(uint64_t keys, uint64_t expires) override {
    sizes.emplace_back(keys, expires);
    return true;
  }
  bool key(std::string_view key, uint8_t type, int64_t expire_at_ms, RdbReader& body) override {
    auto v = read_object_body(body, type, config_);
    if (!v) {
      return false;
    }
    keys.push_back({db_, std::string(key), type, expire_at_ms});
    if (into_ != nullptr) {
      Keyspace& ks = into_->engine().shard(0).keyspace(static_cast<size_t>(db_));
      Value& stored = ks.put(key, std::move(*v));
      if (expire_at_ms >= 0) {
        ks.set_expire(key, stored, expire_at_ms);
      }
    }
    return true;
  }
  bool function(std::string_view code) override {
    functions.emplace_back(code);
    return true;
  }

  std::map<std::string, std::string> aux_fields;
  std::vector<uint64_t> dbs;
  std::vector<std::pair<uint64_t, uint64_t>> sizes;
  std::vector<LoadedKey> keys;
  std::vector<std::string> functions;

 private:
  TestServer* into_;
  Config config_;
  uint64_t db_ = 0;
};

void fill(TestServer& s) {
  s.run({"SET", "str", "hello"});
  s.run({"SET", "int", "-12345"});
  s.run({"SET", "ttl", "soon", "PX", "60000"});
  s.run({"RPUSH", "list", "a", "b", "1", "c"});
  s.run({"SADD", "iset", "1", "2", "3"});
  s.run({"SADD", "set", "x", "y", "z"});
  s.run({"HSET", "hash", "f1", "v1", "f2", "v2"});
  s.run({"ZADD", "zset", "1", "a", "2.5", "b", "-inf", "c"});
  for (int i = 0; i < 300; ++i) {
    std::string n = std::to_string(i);
    s.run({"RPUSH", "biglist", "element-" + n});
    s.run({"SADD", "bigset", "member-" + n});
    s.run({"HSET", "bighash", "field-" + n, std::string(80, 'v') + n});
    s.run({"ZADD", "bigzset", n, "member-" + n});
  }
  s.run({"XADD", "stream", "1-1", "f", "v"});
  s.run({"XADD", "stream", "2-1", "f", "w", "g", "x"});
  s.run({"XGROUP", "CREATE", "stream", "grp", "0"});
  s.run({"XREADGROUP", "GROUP", "grp", "alice", "COUNT", "1", "STREAMS", "stream", ">"});
  s.run({"SELECT", "3"});
  s.run({"SET", "db3", "three", "PXAT", "1800000000000"});
  s.run({"HSET", "db3hash", "a", "1"});
  s.run({"SELECT", "0"});
}

// Every read that shows a key's content, order-insensitive where the type is unordered.
std::vector<std::string> observe(TestServer& s, const std::string& db, const std::string& key) {
  s.run({"SELECT", db});
  std::vector<std::string> out{s.run({"TYPE", key}), s.run({"PEXPIRETIME", key}),
                               s.run({"GET", key}), s.run({"LRANGE", key, "0", "-1"}),
                               s.run({"SORT", key, "ALPHA"}), s.run({"HLEN", key}),
                               s.run({"ZRANGE", key, "0", "-1", "WITHSCORES"}),
                               s.run({"XRANGE", key, "-", "+"}),
                               s.run({"XINFO", "STREAM", key, "FULL"})};
  for (int i = 0; i < 300; ++i) {
    out.push_back(s.run({"HGET", key, "field-" + std::to_string(i)}));
  }
  out.push_back(s.run({"HGET", key, "f1"}));
  out.push_back(s.run({"HGET", key, "a"}));
  s.run({"SELECT", "0"});
  return out;
}

}  // namespace

TEST_CASE("an RDB snapshot holds every type, deadline and database, and reads back equal",
          "[persist][rdb]") {
  TestServer src;
  fill(src);
  RdbSnapshotAux aux;
  aux.function_codes = {"#!lua name=lib\nredis.register_function('f', function() return 1 end)"};
  aux.repl_id = std::string(40, 'a');
  aux.used_mem = 1234;
  std::string file =
      written([&](int fd) { REQUIRE(write_rdb_snapshot(src.engine(), fd, aux, src.now())); });
  REQUIRE(file.substr(0, 9) == "REDIS0010");

  TestServer dst;
  Collector c(&dst);
  RdbFileResult r = read_rdb_file(file, c);
  INFO(r.message());
  REQUIRE(r.error == RdbFileError::kNone);
  CHECK(r.version == 10);
  CHECK(c.aux_fields["redis-ver"] == "7.0.0");
  CHECK(c.aux_fields["redis-bits"] == "64");
  CHECK(c.aux_fields["used-mem"] == "1234");
  CHECK(c.aux_fields["repl-id"] == std::string(40, 'a'));
  CHECK(c.aux_fields["repl-offset"] == "0");
  CHECK(c.aux_fields["repl-stream-db"] == "0");
  CHECK(c.aux_fields["aof-base"] == "0");
  CHECK(c.aux_fields.count("ctime") == 1);
  CHECK(c.functions == aux.function_codes);
  CHECK(c.dbs == std::vector<uint64_t>{0, 3});
  REQUIRE(c.sizes.size() == 2);
  CHECK(c.sizes[0] == std::pair<uint64_t, uint64_t>{13, 1});
  CHECK(c.sizes[1] == std::pair<uint64_t, uint64_t>{2, 1});
  REQUIRE(c.keys.size() == 15);
  for (const LoadedKey& k : c.keys) {
    std::string db = std::to_string(k.db);
    CAPTURE(k.key, db);
    CHECK(observe(src, db, k.key) == observe(dst, db, k.key));
  }
}

TEST_CASE("keys whose deadline passed are left out of a snapshot", "[persist][rdb]") {
  TestServer s;
  s.run({"SET", "keep", "1"});
  s.run({"SET", "gone", "1", "PX", "10"});
  std::string file =
      written([&](int fd) { REQUIRE(write_rdb_snapshot(s.engine(), fd, {}, s.now() + 10)); });
  Collector c;
  REQUIRE(read_rdb_file(file, c).error == RdbFileError::kNone);
  REQUIRE(c.keys.size() == 1);
  CHECK(c.keys[0].key == "keep");
  CHECK(c.keys[0].expire_at_ms == -1);
}

TEST_CASE("files redis-server 7.0 wrote are read, IDLE and FREQ opcodes included",
          "[persist][rdb]") {
  SECTION("LFU: FREQ before every key, a function library, an expiring key, two databases") {
    std::string file = unhex(
        "524544495330303130fa0972656469732d76657206372e302e3135fa0a72656469732d62697473c040fa05"
        "6374696d65c2b481126bfa08757365642d6d656dc288be1100fa08616f662d62617365c000f54047232"
        "16c7561206e616d653d6d796c69620a72656469732e72656769737465725f66756e6374696f6e28276631"
        "272c2066756e6374696f6e28292072657475726e203120656e6429fe00fb0701fc00d8c32cbb030000f90"
        "00001650178f90000016ec13930f9000b0273690e0200000003000000010002000300f9000001730568656c"
        "6c6ff90012016c010210100000000300816102816202816302fff90011017a1414000000040081610201"
        "0181620283322e3504fff90010016813130000000400816602817602816702817702fffe02fb0100f9000"
        "0026432027632ff2977ee6962b60815");
    Collector c;
    RdbFileResult r = read_rdb_file(file, c);
    INFO(r.message());
    REQUIRE(r.error == RdbFileError::kNone);
    CHECK(c.aux_fields["redis-ver"] == "7.0.15");
    CHECK(c.aux_fields["redis-bits"] == "64");
    REQUIRE(c.functions.size() == 1);
    CHECK(c.functions[0].starts_with("#!lua name=mylib\n"));
    CHECK(c.dbs == std::vector<uint64_t>{0, 2});
    REQUIRE(c.keys.size() == 8);
    CHECK(c.keys[0].key == "e");
    CHECK(c.keys[0].expire_at_ms == 4102444800000);
    CHECK(c.keys[7].key == "d2");
    CHECK(c.keys[7].db == 2);
  }
  SECTION("LRU: IDLE before the key") {
    std::string file = unhex(
        "524544495330303130fa0972656469732d76657206372e302e3135fa0a72656469732d62697473c040fa05"
        "6374696d65c2ba81126bfa08757365642d6d656dc210550e00fa08616f662d62617365c000fe00fb0100f8"
        "0000016b0176ffa7b5c83bc16b26d0");
    Collector c;
    REQUIRE(read_rdb_file(file, c).error == RdbFileError::kNone);
    REQUIRE(c.keys.size() == 1);
    CHECK(c.keys[0].key == "k");
  }
}

TEST_CASE("a corrupt, cut or foreign RDB file is refused before any key is handed out",
          "[persist][rdb]") {
  TestServer s;
  s.run({"SET", "a", "1"});
  s.run({"RPUSH", "l", "x", "y"});
  std::string file =
      written([&](int fd) { REQUIRE(write_rdb_snapshot(s.engine(), fd, {}, s.now())); });
  Collector c;
  SECTION("a flipped byte in a value: the checksum") {
    std::string bad = file;
    bad[bad.size() / 2] ^= 0x20;
    RdbFileResult r = read_rdb_file(bad, c);
    CHECK(r.error == RdbFileError::kChecksum);
    CHECK(r.message().find("checksum") != std::string::npos);
  }
  SECTION("cut at every length") {
    for (size_t n = 0; n < file.size(); ++n) {
      Collector cut;
      RdbFileResult r = read_rdb_file(std::string_view(file).substr(0, n), cut);
      CAPTURE(n);
      CHECK(r.error != RdbFileError::kNone);
      CHECK(cut.keys.empty());
    }
  }
  SECTION("a newer version, or not an RDB file") {
    std::string newer = file;
    newer[8] = '1';  // REDIS0011
    CHECK(read_rdb_file(newer, c).error == RdbFileError::kVersion);
    CHECK(read_rdb_file("*1\r\n$4\r\nPING\r\n", c).error == RdbFileError::kMagic);
  }
  SECTION("a zero checksum is a writer with checksums off, and accepted") {
    std::string off = file;
    off.replace(off.size() - 8, 8, std::string(8, '\0'));
    CHECK(read_rdb_file(off, c).error == RdbFileError::kNone);
    CHECK(c.keys.size() == 2);
  }
  CHECK(c.keys.size() <= 2);
}

TEST_CASE("the writer reports a descriptor that refuses writes", "[persist][rdb]") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  ::close(fds[0]);  // no reader: writes fail with EPIPE
  auto old = ::signal(SIGPIPE, SIG_IGN);
  RdbFileWriter w(fds[1]);
  w.begin();
  w.aux("k", "v");
  CHECK_FALSE(w.finish());
  CHECK(w.error() == EPIPE);
  ::close(fds[1]);
  ::signal(SIGPIPE, old);
}
