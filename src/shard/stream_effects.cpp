// Stream effects in the append-only log (op codes in op_effects.hpp): one typed struct per op
// code, registered in stream_effects(); encode_stream writes the effects that rebuild a whole
// stream (the rewrite's snapshot, COPY and RENAME). Replay applies recorded results only (ids,
// absolute times, counts), so a replayed stream reports the same XINFO STREAM FULL as the one
// that was logged. Every op decodes all its fields before it touches the keyspace, so a
// malformed effect changes nothing.
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "hotkv/shard/effect_commands.hpp"
#include "hotkv/shard/effect_registry.hpp"
#include "hotkv/shard/op_codec.hpp"
#include "hotkv/shard/op_effects.hpp"
#include "hotkv/types/stream.hpp"

namespace hotkv {
namespace {

// A group name no client picks: creating then destroying it makes an empty stream on Redis.
constexpr std::string_view kScratchGroup = "__hotkv_create__";

// The stream under key, or nullptr if the key is missing or holds another type.
Stream* existing_stream(Keyspace& ks, std::string_view key, int64_t now_ms) {
  Value* v = ks.find(key, now_ms);
  return v != nullptr && v->type() == ValueType::kStream ? v->stream() : nullptr;
}

// The group `name` of the stream under key, or nullptr.
ConsumerGroup* existing_group(Keyspace& ks, std::string_view key, int64_t now_ms,
                              std::string_view name) {
  Stream* s = existing_stream(ks, key, now_ms);
  return s != nullptr ? s->find_group(name) : nullptr;
}

// Ids up to the end of the effect (kStreamDelete, kPelAck); none is allowed.
bool read_ids(OpReader& r, std::vector<StreamId>& out) {
  while (!r.at_end()) {
    StreamId id;
    if (!r.id(id)) {
      return false;
    }
    out.push_back(id);
  }
  return true;
}

// []: an empty stream under key, if the key is missing (XGROUP CREATE ... MKSTREAM, and the
// first effect of a rebuilt stream).
struct StreamCreateOp {
  static constexpr OpCode kCode = OpCode::kStreamCreate;

  void encode(OpWriter&) const {}
  static bool decode(OpReader&, StreamCreateOp&) { return true; }
  // Redis makes an empty stream only through XGROUP CREATE ... MKSTREAM; the scratch group goes
  // at once. On an existing key both commands change nothing.
  void to_commands(const Effect& e, CommandSink& out) const {
    out.begin("XGROUP").arg("CREATE").arg(e.key).arg(kScratchGroup).arg("$").arg("MKSTREAM");
    out.begin("XGROUP").arg("DESTROY").arg(e.key).arg(kScratchGroup);
  }
  bool apply(Keyspace& ks, std::string_view key, const ReplayContext& ctx, std::string&) const {
    if (ks.find(key, ctx.now_ms) == nullptr) {
      ks.put(key, Value::from_stream(std::make_unique<Stream>()));
    }
    return true;
  }
};

// [id, field, value, ...]: append, creating the stream if missing. Replay splits nodes by the
// limits configured at start-up, as Redis's reload does.
struct StreamAddOp {
  static constexpr OpCode kCode = OpCode::kStreamAdd;
  StreamId id;
  std::span<const std::string_view> fields;  // field, value, field, value...
  std::vector<std::string_view> decoded;     // what `fields` views after decode

  void encode(OpWriter& w) const {
    w.id(id);
    for (std::string_view f : fields) {
      w.str(f);
    }
  }
  static bool decode(OpReader& r, StreamAddOp& out) {
    if (r.remaining() < 3 || r.remaining() % 2 == 0) {
      return r.fail("an id and field/value pairs expected");
    }
    if (!r.id(out.id) || !r.rest(out.decoded, 2)) {
      return false;
    }
    out.fields = out.decoded;
    return true;
  }
  // XADD with the id HotKV gave the entry.
  void to_commands(const Effect& e, CommandSink& out) const {
    out.begin("XADD").arg(e.key).args(e.args);
  }
  bool apply(Keyspace& ks, std::string_view key, const ReplayContext& ctx,
             std::string& error) const {
    Value* v = ks.find(key, ctx.now_ms);
    if (v != nullptr && v->type() != ValueType::kStream) {
      return true;
    }
    // Checked before a missing stream is created, so a refused add leaves no empty stream.
    if (id <= (v != nullptr ? v->stream()->last_id() : StreamId::min())) {
      error = "id " + id.to_string() + " is not above the stream's last id";
      return false;
    }
    if (v == nullptr) {
      v = &ks.put(key, Value::from_stream(std::make_unique<Stream>()));
    }
    v->stream()->append(id, fields, ctx.limits);
    return true;
  }
};

// [id, ...]: XDEL.
struct StreamDeleteOp {
  static constexpr OpCode kCode = OpCode::kStreamDelete;
  std::span<const StreamId> ids;
  std::vector<StreamId> decoded;

  void encode(OpWriter& w) const {
    for (StreamId id : ids) {
      w.id(id);
    }
  }
  static bool decode(OpReader& r, StreamDeleteOp& out) {
    if (!read_ids(r, out.decoded)) {
      return false;
    }
    out.ids = out.decoded;
    return true;
  }
  void to_commands(const Effect& e, CommandSink& out) const {
    out.begin("XDEL").arg(e.key).args(e.args);
  }
  bool apply(Keyspace& ks, std::string_view key, const ReplayContext& ctx, std::string&) const {
    if (Stream* s = existing_stream(ks, key, ctx.now_ms)) {
      for (StreamId id : ids) {
        s->erase(id);
      }
    }
    return true;
  }
};

// [id]: remove every entry with a smaller id (the effect of any XTRIM or XADD trim).
struct StreamTrimBeforeOp {
  static constexpr OpCode kCode = OpCode::kStreamTrimBefore;
  StreamId id;

  void encode(OpWriter& w) const { w.id(id); }
  static bool decode(OpReader& r, StreamTrimBeforeOp& out) { return r.id(out.id); }
  // Whichever trim it was: MAXLEN becomes the MINID it reached.
  void to_commands(const Effect& e, CommandSink& out) const {
    out.begin("XTRIM").arg(e.key).arg("MINID").arg("=").arg(e.args[0]);
  }
  bool apply(Keyspace& ks, std::string_view key, const ReplayContext& ctx, std::string&) const {
    if (Stream* s = existing_stream(ks, key, ctx.now_ms)) {
      s->trim_minid(id, false, 0);
    }
    return true;
  }
};

// [last_id, entries_added, max_deleted_id]: the counters entries alone do not give (XSETID,
// deletions, trimmed history).
struct StreamSetMetaOp {
  static constexpr OpCode kCode = OpCode::kStreamSetMeta;
  StreamId last_id;
  uint64_t entries_added = 0;
  StreamId max_deleted_id;

  void encode(OpWriter& w) const {
    w.id(last_id).integer(static_cast<int64_t>(entries_added)).id(max_deleted_id);
  }
  static bool decode(OpReader& r, StreamSetMetaOp& out) {
    int64_t added = 0;
    if (!r.id(out.last_id) || !r.integer(added) || !r.id(out.max_deleted_id)) {
      return false;
    }
    if (added < 0) {
      return r.fail("negative entries_added");
    }
    out.entries_added = static_cast<uint64_t>(added);
    return true;
  }
  void to_commands(const Effect& e, CommandSink& out) const {
    out.begin("XSETID").arg(e.key).arg(e.args[0]).arg("ENTRIESADDED").arg(e.args[1]);
    out.arg("MAXDELETEDID").arg(e.args[2]);
  }
  bool apply(Keyspace& ks, std::string_view key, const ReplayContext& ctx, std::string&) const {
    if (Stream* s = existing_stream(ks, key, ctx.now_ms)) {
      s->set_last_id(last_id);
      s->set_entries_added(entries_added);
      s->set_max_deleted_id(max_deleted_id);
    }
    return true;
  }
};

// kGroupCreate / kGroupSetId [group, last_delivered_id, entries_read]. Create makes the group
// if missing; both set an existing group's position.
template <OpCode Code>
struct GroupPositionOp {
  static constexpr OpCode kCode = Code;
  std::string_view group;
  StreamId last_delivered_id;
  int64_t entries_read = 0;

  void encode(OpWriter& w) const { w.str(group).id(last_delivered_id).integer(entries_read); }
  static bool decode(OpReader& r, GroupPositionOp& out) {
    return r.str(out.group) && r.id(out.last_delivered_id) && r.integer(out.entries_read);
  }
  void to_commands(const Effect& e, CommandSink& out) const {
    out.begin("XGROUP").arg(Code == OpCode::kGroupCreate ? "CREATE" : "SETID").arg(e.key);
    out.arg(e.args[0]).arg(e.args[1]).arg("ENTRIESREAD").arg(e.args[2]);
  }
  bool apply(Keyspace& ks, std::string_view key, const ReplayContext& ctx, std::string&) const {
    Stream* s = existing_stream(ks, key, ctx.now_ms);
    if (s == nullptr) {
      return true;
    }
    if (ConsumerGroup* g = s->find_group(group)) {
      g->last_delivered_id = last_delivered_id;
      g->entries_read = entries_read;
    } else if (Code == OpCode::kGroupCreate) {
      s->create_group(group, last_delivered_id, entries_read);
    }
    return true;
  }
};

// [group]: XGROUP DESTROY.
struct GroupDestroyOp {
  static constexpr OpCode kCode = OpCode::kGroupDestroy;
  std::string_view group;

  void encode(OpWriter& w) const { w.str(group); }
  static bool decode(OpReader& r, GroupDestroyOp& out) { return r.str(out.group); }
  void to_commands(const Effect& e, CommandSink& out) const {
    out.begin("XGROUP").arg("DESTROY").arg(e.key).arg(e.args[0]);
  }
  bool apply(Keyspace& ks, std::string_view key, const ReplayContext& ctx, std::string&) const {
    if (Stream* s = existing_stream(ks, key, ctx.now_ms)) {
      s->destroy_group(group);
    }
    return true;
  }
};

// [group, consumer, seen_ms, active_ms]: creates the consumer if missing and sets its times
// (XGROUP CREATECONSUMER, and every read or claim attempt).
struct ConsumerTouchOp {
  static constexpr OpCode kCode = OpCode::kConsumerTouch;
  std::string_view group;
  std::string_view consumer;
  int64_t seen_ms = 0;
  int64_t active_ms = -1;

  void encode(OpWriter& w) const {
    w.str(group).str(consumer).integer(seen_ms).integer(active_ms);
  }
  static bool decode(OpReader& r, ConsumerTouchOp& out) {
    return r.str(out.group) && r.str(out.consumer) && r.integer(out.seen_ms) &&
           r.integer(out.active_ms);
  }
  // Redis 7.0 cannot be told a consumer's times: it is created (a no-op if it exists) and its
  // times are the replica's own.
  void to_commands(const Effect& e, CommandSink& out) const {
    out.begin("XGROUP").arg("CREATECONSUMER").arg(e.key).arg(e.args[0]).arg(e.args[1]);
  }
  bool apply(Keyspace& ks, std::string_view key, const ReplayContext& ctx, std::string&) const {
    if (ConsumerGroup* g = existing_group(ks, key, ctx.now_ms, group)) {
      Consumer& c = g->get_or_create_consumer(consumer, seen_ms);
      c.seen_time_ms = seen_ms;
      c.active_time_ms = active_ms;
    }
    return true;
  }
};

// [group, consumer]: XGROUP DELCONSUMER (its pending entries go with it).
struct ConsumerDeleteOp {
  static constexpr OpCode kCode = OpCode::kConsumerDelete;
  std::string_view group;
  std::string_view consumer;

  void encode(OpWriter& w) const { w.str(group).str(consumer); }
  static bool decode(OpReader& r, ConsumerDeleteOp& out) {
    return r.str(out.group) && r.str(out.consumer);
  }
  void to_commands(const Effect& e, CommandSink& out) const {
    out.begin("XGROUP").arg("DELCONSUMER").arg(e.key).arg(e.args[0]).arg(e.args[1]);
  }
  bool apply(Keyspace& ks, std::string_view key, const ReplayContext& ctx, std::string&) const {
    if (ConsumerGroup* g = existing_group(ks, key, ctx.now_ms, group)) {
      g->delete_consumer(consumer);
    }
    return true;
  }
};

// [group, consumer, delivery_ms, id, count, id, count, ...]: the ids become pending with the
// consumer (created if missing) at that delivery time, each with its delivery count.
struct PelSetOp {
  static constexpr OpCode kCode = OpCode::kPelSet;
  using Entry = std::pair<StreamId, uint64_t>;  // id, delivery count
  std::string_view group;
  std::string_view consumer;
  int64_t delivery_ms = 0;
  std::span<const Entry> entries;
  std::vector<Entry> decoded;

  void encode(OpWriter& w) const {
    w.str(group).str(consumer).integer(delivery_ms);
    for (const auto& [id, count] : entries) {
      w.id(id).integer(static_cast<int64_t>(count));
    }
  }
  static bool decode(OpReader& r, PelSetOp& out) {
    if (r.remaining() < 3 || (r.remaining() - 3) % 2 != 0) {
      return r.fail("group, consumer, time and id/count pairs expected");
    }
    if (!r.str(out.group) || !r.str(out.consumer) || !r.integer(out.delivery_ms)) {
      return false;
    }
    while (!r.at_end()) {
      StreamId id;
      int64_t count = 0;
      if (!r.id(id) || !r.integer(count)) {
        return false;
      }
      if (count < 0) {
        return r.fail("negative delivery count");
      }
      out.decoded.emplace_back(id, static_cast<uint64_t>(count));
    }
    out.entries = out.decoded;
    return true;
  }
  // Each pending entry as the XCLAIM Redis propagates for XREADGROUP and XCLAIM: owner,
  // delivery time and count fixed, FORCE to create it, JUSTID so the count is not bumped again.
  void to_commands(const Effect& e, CommandSink& out) const {
    for (size_t i = 3; i < e.args.size(); i += 2) {
      out.begin("XCLAIM").arg(e.key).arg(e.args[0]).arg(e.args[1]).arg("0").arg(e.args[i]);
      out.arg("TIME").arg(e.args[2]).arg("RETRYCOUNT").arg(e.args[i + 1]).arg("FORCE");
      out.arg("JUSTID");
    }
  }
  bool apply(Keyspace& ks, std::string_view key, const ReplayContext& ctx, std::string&) const {
    if (ConsumerGroup* g = existing_group(ks, key, ctx.now_ms, group)) {
      Consumer& c = g->get_or_create_consumer(consumer, delivery_ms);
      for (const auto& [id, count] : entries) {
        g->set_pending(id, c, delivery_ms, count);
      }
    }
    return true;
  }
};

// [group, id, ...]: XACK.
struct PelAckOp {
  static constexpr OpCode kCode = OpCode::kPelAck;
  std::string_view group;
  std::span<const StreamId> ids;
  std::vector<StreamId> decoded;

  void encode(OpWriter& w) const {
    w.str(group);
    for (StreamId id : ids) {
      w.id(id);
    }
  }
  static bool decode(OpReader& r, PelAckOp& out) {
    if (!r.str(out.group) || !read_ids(r, out.decoded)) {
      return false;
    }
    out.ids = out.decoded;
    return true;
  }
  void to_commands(const Effect& e, CommandSink& out) const {
    out.begin("XACK").arg(e.key).args(e.args);
  }
  bool apply(Keyspace& ks, std::string_view key, const ReplayContext& ctx, std::string&) const {
    if (ConsumerGroup* g = existing_group(ks, key, ctx.now_ms, group)) {
      for (StreamId id : ids) {
        g->ack(id);
      }
    }
    return true;
  }
};

// Writes effects, calling `checkpoint` every kEffectsPerCheckpoint of them so a huge stream
// spreads over several records (the caller may close one and open the next in between).
class StreamEncoder {
 public:
  static constexpr size_t kEffectsPerCheckpoint = 256;
  static constexpr size_t kIdsPerPelSet = 256;

  StreamEncoder(RecordEncoder& enc, std::string_view key, const std::function<void()>& checkpoint)
      : enc_(enc), key_(key), checkpoint_(checkpoint) {}

  template <class T>
  void emit(const T& op) {
    encode_op(enc_, key_, op);
    if (++since_checkpoint_ >= kEffectsPerCheckpoint) {
      since_checkpoint_ = 0;
      checkpoint_();
    }
  }

 private:
  RecordEncoder& enc_;
  std::string_view key_;
  const std::function<void()>& checkpoint_;
  size_t since_checkpoint_ = 0;
};

// One consumer's pending entries, as kPelSet effects of runs sharing a delivery time.
void encode_pel(StreamEncoder& out, std::string_view group, const Consumer& c,
                std::vector<PelSetOp::Entry>& run) {
  int64_t time = 0;
  auto flush = [&] {
    out.emit(PelSetOp{group, c.name, time, run, {}});
    run.clear();
  };
  run.clear();
  for (const auto& [id, entry] : c.pending) {
    if (!run.empty() &&
        (entry->delivery_time_ms != time || run.size() >= StreamEncoder::kIdsPerPelSet)) {
      flush();
    }
    if (run.empty()) {
      time = entry->delivery_time_ms;
    }
    run.emplace_back(id, entry->delivery_count);
  }
  if (!run.empty()) {
    flush();
  }
}

}  // namespace

void encode_stream(RecordEncoder& enc, std::string_view key, const Value& v,
                   const std::function<void()>& checkpoint) {
  const Stream& s = *v.stream();
  StreamEncoder out(enc, key, checkpoint);
  out.emit(StreamCreateOp{});
  for (Stream::Cursor c = s.seek(StreamId::min(), false); c.valid(); c.next()) {
    out.emit(StreamAddOp{c.id(), c.fields(), {}});
  }
  // The counters the entries alone do not give: XSETID, deletions, trimmed history.
  out.emit(StreamSetMetaOp{s.last_id(), s.entries_added(), s.max_deleted_id()});
  std::vector<PelSetOp::Entry> run;
  for (const auto& [name, g] : s.groups()) {
    out.emit(GroupPositionOp<OpCode::kGroupCreate>{name, g->last_delivered_id, g->entries_read});
    for (const auto& [cname, c] : g->consumers) {
      out.emit(ConsumerTouchOp{name, cname, c.seen_time_ms, c.active_time_ms});
      encode_pel(out, name, c, run);
    }
  }
}

const EffectFamily& stream_effects() {
  static constexpr EffectOp kOps[] = {
      typed_op<StreamCreateOp>("stream.create"),
      typed_op<StreamAddOp>("stream.add"),
      typed_op<StreamDeleteOp>("stream.delete"),
      typed_op<StreamTrimBeforeOp>("stream.trim_before"),
      typed_op<StreamSetMetaOp>("stream.set_meta"),
      typed_op<GroupPositionOp<OpCode::kGroupCreate>>("stream.group_create"),
      typed_op<GroupPositionOp<OpCode::kGroupSetId>>("stream.group_set_id"),
      typed_op<GroupDestroyOp>("stream.group_destroy"),
      typed_op<ConsumerTouchOp>("stream.consumer_touch"),
      typed_op<ConsumerDeleteOp>("stream.consumer_delete"),
      typed_op<PelSetOp>("stream.pending_set"),
      typed_op<PelAckOp>("stream.pending_ack"),
  };
  static const EffectFamily kFamily{"stream", ValueType::kStream, kStreamOpFirst, kStreamOpLast,
                                    kOps,     &encode_stream};
  return kFamily;
}

}  // namespace hotkv
