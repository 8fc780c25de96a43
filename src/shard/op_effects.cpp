// Dispatch of aggregate-value effects to their family (see op_effects.hpp).
#include "hotkv/shard/op_effects.hpp"

namespace hotkv {

bool apply_op_effect(Keyspace& ks, const Effect& e, int64_t now_ms, std::string& error,
                     const EncodingLimits& limits) {
  if (e.op >= kSetOpFirst && e.op <= kSetOpLast) {
    return apply_set_op(ks, e, now_ms, error, limits);
  }
  if (e.op >= kHashOpFirst && e.op <= kHashOpLast) {
    return apply_hash_op(ks, e, now_ms, error, limits);
  }
  if (e.op >= kZSetOpFirst && e.op <= kZSetOpLast) {
    return apply_zset_op(ks, e, now_ms, error);
  }
  if (e.op >= kListOpFirst && e.op <= kListOpLast) {
    return apply_list_op(ks, e, now_ms, error);
  }
  if (e.op >= kStreamOpFirst && e.op <= kStreamOpLast) {
    return apply_stream_op(ks, e, now_ms, error, limits);
  }
  if (e.op >= kInventoryOpFirst && e.op <= kInventoryOpLast) {
    return apply_inventory_op(ks, e, now_ms, error);
  }
  error = "unknown op code " + std::to_string(e.op);
  return false;
}

void encode_value(RecordEncoder& enc, std::string_view key, const Value& v, std::string& scratch,
                  const std::function<void()>& checkpoint) {
  switch (v.type()) {
    case ValueType::kString:
      if (v.is_int()) {
        enc.add_put_int(key, v.int_value(), v.expire_at_ms());
      } else {
        enc.add_put_string(key, v.str(scratch), v.expire_at_ms());
      }
      return;
    case ValueType::kStream:
      encode_stream(enc, key, v, checkpoint);
      break;
    case ValueType::kInventory:
      encode_inventory(enc, key, v, checkpoint);
      break;
    case ValueType::kSet:
      encode_set(enc, key, v, checkpoint);
      break;
    case ValueType::kHash:
      encode_hash(enc, key, v, checkpoint);
      break;
    case ValueType::kZSet:
      encode_zset(enc, key, v, checkpoint);
      break;
    case ValueType::kList:
      encode_list(enc, key, v, checkpoint);
      break;
  }
  if (v.has_expiry()) {
    enc.add_expire(key, v.expire_at_ms());
  }
}

}  // namespace hotkv
