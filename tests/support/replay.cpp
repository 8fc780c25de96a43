#include "support/replay.hpp"

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
      Keyspace& ks = dst.engine().shard(dst.engine().shard_of(e.key)).keyspace();
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
        default:
          FAIL("unexpected effect kind");
      }
    }
  }
  REQUIRE(st == DecodeStatus::kEnd);
}

}  // namespace hotkv::test
