// Stream effects in the append-only log (op codes in op_effects.hpp): apply_stream_op replays
// one, encode_stream writes the effects that rebuild a whole stream (the rewrite's snapshot,
// COPY and RENAME). Replay applies recorded results only (ids, absolute times, counts), so a
// replayed stream reports the same XINFO STREAM FULL as the one that was logged.
#include <string>
#include <vector>

#include "hotkv/shard/op_args.hpp"
#include "hotkv/shard/effect_registry.hpp"
#include "hotkv/shard/op_effects.hpp"
#include "hotkv/types/stream.hpp"
#include "hotkv/util/numbers.hpp"

namespace hotkv {
namespace {

// The stream under key, or nullptr if the key is missing or holds another type.
Stream* existing_stream(Keyspace& ks, const Effect& e, int64_t now_ms) {
  Value* v = ks.find(e.key, now_ms);
  return v != nullptr && v->type() == ValueType::kStream ? v->stream() : nullptr;
}

Stream* stream_or_create(Keyspace& ks, const Effect& e, int64_t now_ms) {
  Value* v = ks.find(e.key, now_ms);
  if (v == nullptr) {
    return ks.put(e.key, Value::from_stream(std::make_unique<Stream>())).stream();
  }
  return v->type() == ValueType::kStream ? v->stream() : nullptr;
}

// Replay splits nodes by the limits configured at start-up, as Redis's reload does.
bool apply_add(Keyspace& ks, const Effect& e, int64_t now_ms, OpArgReader& a,
               const EncodingLimits& limits) {
  StreamId id;
  if (a.size() < 3 || a.size() % 2 == 0) {
    return a.fail("an id and field/value pairs expected");
  }
  if (!a.id(0, id)) {
    return false;
  }
  Stream* s = stream_or_create(ks, e, now_ms);
  if (s == nullptr) {
    return true;
  }
  if (id <= s->last_id()) {
    return a.fail("id " + a.str(0) + " is not above the stream's last id");
  }
  std::vector<std::string_view> fields(e.args.begin() + 1, e.args.end());
  s->append(id, fields, limits);
  return true;
}

bool apply_set_meta(Stream* s, OpArgReader& a) {
  StreamId last;
  int64_t added = 0;
  StreamId max_deleted;
  if (!a.exactly(3) || !a.id(0, last) || !a.integer(1, added) || !a.id(2, max_deleted)) {
    return false;
  }
  if (added < 0) {
    return a.fail("negative entries_added");
  }
  if (s != nullptr) {
    s->set_last_id(last);
    s->set_entries_added(static_cast<uint64_t>(added));
    s->set_max_deleted_id(max_deleted);
  }
  return true;
}

// kGroupCreate and kGroupSetId: [group, last_delivered_id, entries_read].
bool apply_group_id(Stream* s, OpArgReader& a, bool create) {
  StreamId id;
  int64_t entries_read = 0;
  if (!a.exactly(3) || !a.id(1, id) || !a.integer(2, entries_read)) {
    return false;
  }
  if (s == nullptr) {
    return true;
  }
  ConsumerGroup* g = s->find_group(a.str(0));
  if (g == nullptr && create) {
    s->create_group(a.str(0), id, entries_read);
  } else if (g != nullptr) {
    g->last_delivered_id = id;
    g->entries_read = entries_read;
  }
  return true;
}

bool apply_consumer_touch(Stream* s, OpArgReader& a) {
  int64_t seen = 0;
  int64_t active = 0;
  if (!a.exactly(4) || !a.integer(2, seen) || !a.integer(3, active)) {
    return false;
  }
  ConsumerGroup* g = s == nullptr ? nullptr : s->find_group(a.str(0));
  if (g != nullptr) {
    Consumer& c = g->get_or_create_consumer(a.str(1), seen);
    c.seen_time_ms = seen;
    c.active_time_ms = active;
  }
  return true;
}

bool apply_pel_set(Stream* s, OpArgReader& a) {
  int64_t time = 0;
  if (a.size() < 3 || (a.size() - 3) % 2 != 0) {
    return a.fail("group, consumer, time and id/count pairs expected");
  }
  if (!a.integer(2, time)) {
    return false;
  }
  // Everything is parsed before anything changes, so a malformed effect changes nothing.
  std::vector<std::pair<StreamId, uint64_t>> entries;
  for (size_t i = 3; i < a.size(); i += 2) {
    StreamId id;
    int64_t count = 0;
    if (!a.id(i, id) || !a.integer(i + 1, count)) {
      return false;
    }
    if (count < 0) {
      return a.fail("negative delivery count");
    }
    entries.emplace_back(id, static_cast<uint64_t>(count));
  }
  ConsumerGroup* g = s == nullptr ? nullptr : s->find_group(a.str(0));
  if (g != nullptr) {
    Consumer& c = g->get_or_create_consumer(a.str(1), time);
    for (const auto& [id, count] : entries) {
      g->set_pending(id, c, time, count);
    }
  }
  return true;
}

// kStreamDelete [id...] and kPelAck [group, id...]: ids from `first` on.
bool parse_ids(OpArgReader& a, size_t first, std::vector<StreamId>& out) {
  for (size_t i = first; i < a.size(); ++i) {
    StreamId id;
    if (!a.id(i, id)) {
      return false;
    }
    out.push_back(id);
  }
  return true;
}

}  // namespace

bool apply_stream_op(Keyspace& ks, const Effect& e, int64_t now_ms, std::string& error,
                     const EncodingLimits& limits) {
  OpArgReader a(e, error);
  auto op = static_cast<OpCode>(e.op);
  if (op == OpCode::kStreamCreate) {
    stream_or_create(ks, e, now_ms);
    return true;
  }
  if (op == OpCode::kStreamAdd) {
    return apply_add(ks, e, now_ms, a, limits);
  }
  Stream* s = existing_stream(ks, e, now_ms);
  std::vector<StreamId> ids;
  switch (op) {
    case OpCode::kStreamDelete:
      if (!parse_ids(a, 0, ids)) {
        return false;
      }
      for (StreamId id : ids) {
        if (s != nullptr) {
          s->erase(id);
        }
      }
      return true;
    case OpCode::kStreamTrimBefore: {
      StreamId id;
      if (!a.exactly(1) || !a.id(0, id)) {
        return false;
      }
      if (s != nullptr) {
        s->trim_minid(id, false, 0);
      }
      return true;
    }
    case OpCode::kStreamSetMeta:
      return apply_set_meta(s, a);
    case OpCode::kGroupCreate:
      return apply_group_id(s, a, true);
    case OpCode::kGroupSetId:
      return apply_group_id(s, a, false);
    case OpCode::kGroupDestroy:
      if (!a.exactly(1)) {
        return false;
      }
      if (s != nullptr) {
        s->destroy_group(a.str(0));
      }
      return true;
    case OpCode::kConsumerTouch:
      return apply_consumer_touch(s, a);
    case OpCode::kConsumerDelete:
      if (!a.exactly(2)) {
        return false;
      }
      if (ConsumerGroup* g = s == nullptr ? nullptr : s->find_group(a.str(0))) {
        g->delete_consumer(a.str(1));
      }
      return true;
    case OpCode::kPelSet:
      return apply_pel_set(s, a);
    case OpCode::kPelAck: {
      if (!a.at_least(1) || !parse_ids(a, 1, ids)) {
        return false;
      }
      if (ConsumerGroup* g = s == nullptr ? nullptr : s->find_group(a.str(0))) {
        for (StreamId id : ids) {
          g->ack(id);
        }
      }
      return true;
    }
    default:
      break;
  }
  error = "unknown stream op code " + std::to_string(e.op);
  return false;
}

namespace {

// Writes effects, calling `checkpoint` every kEffectsPerCheckpoint of them so a huge stream
// spreads over several records (the caller may close one and open the next in between).
class StreamEncoder {
 public:
  static constexpr size_t kEffectsPerCheckpoint = 256;
  static constexpr size_t kIdsPerPelSet = 256;

  StreamEncoder(RecordEncoder& enc, std::string_view key, const std::function<void()>& checkpoint)
      : enc_(enc), key_(key), checkpoint_(checkpoint) {}

  OpArgs& args() { return args_; }
  void emit(OpCode op) {
    enc_.add_op(key_, static_cast<uint16_t>(op), args_.views());
    args_.clear();
    if (++since_checkpoint_ >= kEffectsPerCheckpoint) {
      since_checkpoint_ = 0;
      checkpoint_();
    }
  }

 private:
  RecordEncoder& enc_;
  std::string_view key_;
  const std::function<void()>& checkpoint_;
  OpArgs args_;
  size_t since_checkpoint_ = 0;
};

// One consumer's pending entries, as kPelSet effects of runs sharing a delivery time.
void encode_pel(StreamEncoder& out, const std::string& group, const Consumer& c) {
  int64_t time = 0;
  size_t ids = 0;
  for (const auto& [id, entry] : c.pending) {
    if (ids > 0 && (entry->delivery_time_ms != time || ids >= StreamEncoder::kIdsPerPelSet)) {
      out.emit(OpCode::kPelSet);
      ids = 0;
    }
    if (ids == 0) {
      time = entry->delivery_time_ms;
      out.args().add(group).add(c.name).add_int(time);
    }
    out.args().add(id).add_int(static_cast<int64_t>(entry->delivery_count));
    ++ids;
  }
  if (ids > 0) {
    out.emit(OpCode::kPelSet);
  }
}

}  // namespace

void encode_stream(RecordEncoder& enc, std::string_view key, const Value& v,
                   const std::function<void()>& checkpoint) {
  const Stream& s = *v.stream();
  StreamEncoder out(enc, key, checkpoint);
  out.emit(OpCode::kStreamCreate);
  for (Stream::Cursor c = s.seek(StreamId::min(), false); c.valid(); c.next()) {
    out.args().add(c.id());
    for (std::string_view f : c.fields()) {
      out.args().add(f);
    }
    out.emit(OpCode::kStreamAdd);
  }
  // The counters the entries alone do not give: XSETID, deletions, trimmed history.
  out.args()
      .add(s.last_id())
      .add_int(static_cast<int64_t>(s.entries_added()))
      .add(s.max_deleted_id());
  out.emit(OpCode::kStreamSetMeta);
  for (const auto& [name, g] : s.groups()) {
    out.args().add(name).add(g->last_delivered_id).add_int(g->entries_read);
    out.emit(OpCode::kGroupCreate);
    for (const auto& [cname, c] : g->consumers) {
      out.args().add(name).add(cname).add_int(c.seen_time_ms).add_int(c.active_time_ms);
      out.emit(OpCode::kConsumerTouch);
      encode_pel(out, name, c);
    }
  }
}

namespace {

// The family's ops are not typed structs yet: each registry entry goes through apply_stream_op.
bool apply_stream_entry(Keyspace& ks, const Effect& e, const ReplayContext& ctx,
                        std::string& error) {
  return apply_stream_op(ks, e, ctx.now_ms, error, ctx.limits);
}

}  // namespace

const EffectFamily& stream_effects() {
  static constexpr EffectOp kOps[] = {
      {static_cast<uint16_t>(OpCode::kStreamCreate), "stream.create", &apply_stream_entry},
      {static_cast<uint16_t>(OpCode::kStreamAdd), "stream.add", &apply_stream_entry},
      {static_cast<uint16_t>(OpCode::kStreamDelete), "stream.delete", &apply_stream_entry},
      {static_cast<uint16_t>(OpCode::kStreamTrimBefore), "stream.trim_before", &apply_stream_entry},
      {static_cast<uint16_t>(OpCode::kStreamSetMeta), "stream.set_meta", &apply_stream_entry},
      {static_cast<uint16_t>(OpCode::kGroupCreate), "stream.group_create", &apply_stream_entry},
      {static_cast<uint16_t>(OpCode::kGroupSetId), "stream.group_set_id", &apply_stream_entry},
      {static_cast<uint16_t>(OpCode::kGroupDestroy), "stream.group_destroy", &apply_stream_entry},
      {static_cast<uint16_t>(OpCode::kConsumerTouch), "stream.consumer_touch", &apply_stream_entry},
      {static_cast<uint16_t>(OpCode::kConsumerDelete), "stream.consumer_delete",
       &apply_stream_entry},
      {static_cast<uint16_t>(OpCode::kPelSet), "stream.pending_set", &apply_stream_entry},
      {static_cast<uint16_t>(OpCode::kPelAck), "stream.pending_ack", &apply_stream_entry},
  };
  static const EffectFamily kFamily{"stream", ValueType::kStream, kStreamOpFirst, kStreamOpLast,
                                    kOps,     &encode_stream};
  return kFamily;
}

}  // namespace hotkv
