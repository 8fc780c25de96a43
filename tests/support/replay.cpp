#include "support/replay.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "hotkv/persist/record.hpp"
#include "hotkv/shard/op_effects.hpp"
#include "hotkv/shard/shard.hpp"

namespace hotkv::test {

void replay(const std::string& log, TestServer& dst) {
  RecordDecoder dec(log);
  Record r;
  DecodeStatus st;
  while ((st = dec.next(r)) == DecodeStatus::kOk) {
    for (const Effect& e : r.effects) {
      Keyspace& ks = dst.engine().shard(dst.engine().shard_of(e.key)).keyspace(e.db);
      std::string err;
      switch (e.kind) {
        case EffectKind::kOp:
          REQUIRE(apply_op_effect(ks, e, dst.now(), err));
          break;
        case EffectKind::kDel:
          ks.erase(e.key);
          break;
        case EffectKind::kExpire:
          if (Value* v = ks.find(e.key, dst.now())) {
            ks.set_expire(e.key, *v, e.at_ms);
          }
          break;
        case EffectKind::kPut: {
          Value v = e.is_int ? Value::from_int(e.integer) : Value::from_string(e.str);
          v.set_expire_raw(e.at_ms);
          ks.put(e.key, std::move(v));
          break;
        }
        case EffectKind::kFlush:
          ks.clear();
          break;
        case EffectKind::kSwapDb:
          dst.engine().shard(0).swap_dbs(e.db, e.db2);
          break;
        default:
          FAIL("unexpected effect kind");
      }
    }
  }
  REQUIRE(st == DecodeStatus::kEnd);
}

LogFile::LogFile(TestServer& s, size_t shard) : server_(s), shard_(shard) {
  char path[] = "/tmp/hotkv_effects_log_XXXXXX";
  int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  ::unlink(path);
  reader_ = ::dup(fd);
  s.engine().shard(shard).log().attach(fd, 0, FsyncPolicy::kNo);
}

LogFile::~LogFile() { ::close(reader_); }

std::string LogFile::contents() {
  REQUIRE(server_.engine().shard(shard_).log().flush());
  std::string out(static_cast<size_t>(::lseek(reader_, 0, SEEK_END)), '\0');
  REQUIRE(::pread(reader_, out.data(), out.size(), 0) == static_cast<ssize_t>(out.size()));
  return out;
}

std::string encode_key(TestServer& s, const std::string& key, size_t* checkpoints) {
  Value* v = s.engine().shard(0).keyspace(0).find(key, s.now());
  REQUIRE(v != nullptr);
  std::string buf;
  RecordEncoder enc(buf);
  std::string scratch;
  enc.open();
  size_t cuts = 0;
  encode_value(enc, key, *v, scratch, [&] {
    ++cuts;
    enc.close(0, 1, cuts);
    enc.open();
  });
  enc.close(0, 1, cuts + 1);
  if (checkpoints != nullptr) {
    *checkpoints = cuts;
  }
  return buf;
}

bool apply_op(TestServer& s, uint16_t code, std::vector<std::string> args, std::string key) {
  Effect e;
  e.kind = EffectKind::kOp;
  e.key = std::move(key);
  e.op = code;
  e.args = std::move(args);
  std::string err;
  bool ok = apply_op_effect(s.engine().shard(0).keyspace(0), e, s.now(), err);
  CHECK(ok == err.empty());
  return ok;
}

size_t count_records(const std::string& log, size_t max_effects) {
  RecordDecoder dec(log);
  Record r;
  size_t records = 0;
  while (dec.next(r) == DecodeStatus::kOk) {
    ++records;
    CHECK(r.effects.size() <= max_effects);
  }
  return records;
}

}  // namespace hotkv::test
