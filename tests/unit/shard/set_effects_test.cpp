// Set persistence effects: the effects every set command logs, and encode_set's snapshot of a
// whole set, replayed with apply_op_effect into a fresh server give the same members, encoding
// and deadline as the original -- SPOP's random choice included.
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "hotkv/persist/record.hpp"
#include "hotkv/shard/op_effects.hpp"
#include "hotkv/shard/shard.hpp"
#include "support/resp_value.hpp"
#include "support/replay.hpp"
#include "support/test_server.hpp"

using hotkv::Effect;
using hotkv::EffectKind;
using hotkv::OpCode;
using hotkv::test::bulk;
using hotkv::test::integer;
using hotkv::test::kOk;
using hotkv::test::encode_key;
using hotkv::test::replay;
using hotkv::test::TestServer;

namespace {


// Everything observable about key: type, encoding, sorted members, deadline.
std::string snapshot(TestServer& s, const std::string& key) {
  std::string out = s.run({"TYPE", key}) + s.run({"OBJECT", "ENCODING", key});
  auto r = hotkv::test::parse_resp(s.run({"SMEMBERS", key}));
  std::vector<std::string> members;
  for (const auto& m : r.items) {
    members.push_back(m.str);
  }
  std::sort(members.begin(), members.end());
  for (const auto& m : members) {
    out += m + ",";
  }
  return out + s.run({"PTTL", key});
}

}  // namespace

TEST_CASE("encode_set then replay rebuilds each encoding and the deadline", "[sets]") {
  TestServer a;
  REQUIRE(a.run({"SADD", "ints", "5", "-3", "100"}) == integer(3));
  REQUIRE(a.run({"SADD", "strs", "a", "b", std::string("bin\0ary", 7)}) == integer(3));
  // A hashtable holding only integers: replay must not turn it back into an intset.
  REQUIRE(a.run({"SADD", "was", "1", "2", "x"}) == integer(3));
  REQUIRE(a.run({"SREM", "was", "x"}) == integer(1));
  REQUIRE(a.run({"PEXPIRE", "ints", "100000"}) == integer(1));
  TestServer b;
  b.advance(a.now() - b.now());
  for (const char* key : {"ints", "strs", "was"}) {
    INFO(key);
    replay(encode_key(a, key), b);
    CHECK(snapshot(b, key) == snapshot(a, key));
  }
  CHECK(b.run({"OBJECT", "ENCODING", "was"}) == bulk("hashtable"));
}

TEST_CASE("encode_set cuts a large set into bounded records", "[sets]") {
  TestServer a;
  std::vector<std::string> cmd = {"SADD", "big"};
  for (int i = 0; i < 20000; ++i) {
    cmd.push_back("m" + std::to_string(i));
  }
  REQUIRE(a.run(cmd) == integer(20000));
  size_t checkpoints = 0;
  std::string log = encode_key(a, "big", &checkpoints);
  CHECK(checkpoints >= 2);
  CHECK(hotkv::test::count_records(log, 65) == checkpoints + 1);
  TestServer b;
  b.advance(a.now() - b.now());
  replay(log, b);
  CHECK(snapshot(b, "big") == snapshot(a, "big"));
}

TEST_CASE("the effects set commands log replay to the same state", "[sets]") {
  TestServer a;
  hotkv::test::LogFile logfile(a);

  std::vector<std::string> cmd = {"SADD", "s"};
  for (int i = 0; i < 600; ++i) {
    cmd.push_back(std::to_string(i));  // converts to hashtable at the 513th
  }
  REQUIRE(a.run(cmd) == integer(600));
  REQUIRE(a.run({"SREM", "s", "0", "1", "nope"}) == integer(2));
  REQUIRE(a.run({"SPOP", "s"}) != "");
  REQUIRE(a.run({"SPOP", "s", "5"}) != "");    // drawn one at a time
  REQUIRE(a.run({"SPOP", "s", "300"}) != "");  // partial shuffle
  REQUIRE(a.run({"SADD", "t", "1", "2", "3"}) == integer(3));
  REQUIRE(a.run({"SMOVE", "s", "t", "500"}) != "");
  REQUIRE(a.run({"SMOVE", "t", "u", "1"}) == integer(1));
  REQUIRE(a.run({"SADD", "v", "x", "y"}) == integer(2));
  REQUIRE(a.run({"SPOP", "v", "10"}) != "");  // the whole set: v goes
  REQUIRE(a.run({"SET", "dst", "old"}) == kOk);
  REQUIRE(a.run({"SINTERSTORE", "dst", "s", "t"}) != "");
  REQUIRE(a.run({"SUNIONSTORE", "un", "t", "u"}) != "");
  REQUIRE(a.run({"SDIFFSTORE", "df", "t", "u"}) != "");
  REQUIRE(a.run({"SADD", "gone", "1"}) == integer(1));
  REQUIRE(a.run({"SINTERSTORE", "gone", "t", "missing"}) == integer(0));
  REQUIRE(a.run({"SADD", "e", "only"}) == integer(1));
  REQUIRE(a.run({"SREM", "e", "only"}) == integer(1));
  REQUIRE(a.run({"SADD", "ttl", "1"}) == integer(1));
  REQUIRE(a.run({"EXPIRE", "ttl", "100"}) == integer(1));
  REQUIRE(a.run({"COPY", "s", "copied"}) == integer(1));
  REQUIRE(a.run({"RENAME", "ttl", "renamed"}) == kOk);
  std::string log = logfile.contents();
  TestServer b;
  b.advance(a.now() - b.now());
  replay(log, b);
  for (const char* key :
       {"s", "t", "u", "v", "dst", "un", "df", "gone", "e", "ttl", "copied", "renamed"}) {
    INFO(key);
    CHECK(snapshot(b, key) == snapshot(a, key));
  }
  CHECK(b.run({"SCARD", "s"}) == a.run({"SCARD", "s"}));
  CHECK(b.run({"EXISTS", "v"}) == integer(0));
}

TEST_CASE("apply_set_op rejects malformed effects and leaves other types alone", "[sets]") {
  TestServer s;
  auto op = [&](OpCode code, std::vector<std::string> args, std::string key = "s") {
    return hotkv::test::apply_op(s, static_cast<uint16_t>(code), std::move(args), std::move(key));
  };
  CHECK(op(OpCode::kSetRem, {"1"}));  // a missing key: nothing happens
  CHECK(s.run({"EXISTS", "s"}) == integer(0));
  CHECK(op(OpCode::kSetAdd, {"1", "2"}));
  CHECK(s.run({"SCARD", "s"}) == integer(2));
  CHECK(s.run({"OBJECT", "ENCODING", "s"}) == bulk("intset"));
  CHECK(op(OpCode::kSetRem, {"1", "2"}));
  CHECK(s.run({"EXISTS", "s"}) == integer(0));  // emptied: deleted
  CHECK(op(OpCode::kSetCreate, {"hashtable"}, "h"));
  CHECK(op(OpCode::kSetAdd, {"7"}, "h"));
  CHECK(s.run({"OBJECT", "ENCODING", "h"}) == bulk("hashtable"));
  CHECK(!op(OpCode::kSetCreate, {"listpack"}, "x"));
  CHECK(!op(OpCode::kSetCreate, {}, "x"));
  CHECK(!op(OpCode::kSetAdd, {}));
  CHECK(!op(OpCode::kSetRem, {}));
  CHECK(!op(static_cast<OpCode>(47), {"a"}));
  CHECK(s.run({"SET", "str", "x"}) == kOk);
  CHECK(op(OpCode::kSetAdd, {"1"}, "str"));
  CHECK(op(OpCode::kSetRem, {"1"}, "str"));
  CHECK(op(OpCode::kSetCreate, {"intset"}, "str"));
  CHECK(s.run({"GET", "str"}) == bulk("x"));
}

TEST_CASE("a cross-shard SMOVE and STORE log one record part per shard under one id", "[sets]") {
  TestServer a(4);
  // Two keys on different shards.
  std::string src = "k0";
  std::string dst;
  for (int i = 1; i < 1000 && dst.empty(); ++i) {
    std::string k = "k" + std::to_string(i);
    if (a.engine().shard_of(k) != a.engine().shard_of(src)) {
      dst = k;
    }
  }
  REQUIRE(!dst.empty());
  REQUIRE(a.run({"SADD", src, "1", "2"}) == integer(2));
  REQUIRE(a.run({"SADD", dst, "3"}) == integer(1));
  size_t s_src = a.engine().shard_of(src);
  size_t s_dst = a.engine().shard_of(dst);
  int readers[2];
  size_t shards[2] = {s_src, s_dst};
  for (int i = 0; i < 2; ++i) {
    char path[] = "/tmp/hotkv_set_xshard_XXXXXX";
    int fd = ::mkstemp(path);
    REQUIRE(fd >= 0);
    ::unlink(path);
    readers[i] = ::dup(fd);
    a.engine().shard(shards[i]).log().attach(fd, 0, hotkv::FsyncPolicy::kNo);
  }
  REQUIRE(a.run({"SMOVE", src, dst, "1"}) == integer(1));
  REQUIRE(a.run({"SUNIONSTORE", src, src, dst}) == integer(3));
  std::vector<hotkv::Record> records[2];
  for (int i = 0; i < 2; ++i) {
    REQUIRE(a.engine().shard(shards[i]).log().flush());
    std::string log(static_cast<size_t>(::lseek(readers[i], 0, SEEK_END)), '\0');
    REQUIRE(::pread(readers[i], log.data(), log.size(), 0) == static_cast<ssize_t>(log.size()));
    ::close(readers[i]);
    hotkv::RecordDecoder dec(log);
    hotkv::Record r;
    while (dec.next(r) == hotkv::DecodeStatus::kOk) {
      records[i].push_back(r);
    }
  }
  // SMOVE: a kSetRem part on the source's shard and a kSetAdd part on the destination's.
  REQUIRE(records[0].size() == 2);
  REQUIRE(records[1].size() == 1);
  const hotkv::Record& rem = records[0][0];
  const hotkv::Record& add = records[1][0];
  CHECK(rem.parts == 2);
  CHECK(add.parts == 2);
  CHECK(rem.txn_id != 0);
  CHECK(rem.txn_id == add.txn_id);
  REQUIRE(rem.effects.size() == 1);
  CHECK(rem.effects[0].op == static_cast<uint16_t>(OpCode::kSetRem));
  CHECK(rem.effects[0].args == std::vector<std::string>{"1"});
  REQUIRE(add.effects.size() == 1);
  CHECK(add.effects[0].op == static_cast<uint16_t>(OpCode::kSetAdd));
  CHECK(add.effects[0].args == std::vector<std::string>{"1"});
  // SUNIONSTORE only changed the destination's shard: one plain record, delete then rebuild.
  const hotkv::Record& store = records[0][1];
  CHECK(store.parts == 1);
  REQUIRE(store.effects.size() == 3);
  CHECK(store.effects[0].kind == EffectKind::kDel);
  CHECK(store.effects[1].op == static_cast<uint16_t>(OpCode::kSetCreate));
  CHECK(store.effects[2].op == static_cast<uint16_t>(OpCode::kSetAdd));
  std::vector<std::string> members = store.effects[2].args;
  std::sort(members.begin(), members.end());
  CHECK(members == std::vector<std::string>{"1", "2", "3"});
}
