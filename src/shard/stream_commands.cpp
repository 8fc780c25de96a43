// Stream effects as Redis commands (effect_commands.hpp), keyed by op code: the stream family's
// registry entries carry no translation of their own yet, so effect_to_commands looks here.
// Every command names what the effect fixed -- explicit entry ids, the group's last-delivered id
// and entries-read, delivery times and counts -- as Redis itself propagates stream commands to
// its replicas (XREADGROUP becomes XCLAIM ... TIME ... RETRYCOUNT ... FORCE JUSTID).
#include <string>

#include "hotkv/shard/effect_commands.hpp"
#include "hotkv/shard/op_effects.hpp"

namespace hotkv {
namespace {

bool count_is(const Effect& e, size_t n, std::string& error) {
  if (e.args.size() != n) {
    error = std::to_string(n) + " arguments expected";
    return false;
  }
  return true;
}

// A group name no client picks: creating then destroying it makes an empty stream.
constexpr std::string_view kScratchGroup = "__hotkv_create__";

// []: an empty stream, if the key is missing. Redis makes one only through XGROUP CREATE
// MKSTREAM; the scratch group goes at once. On an existing key both commands change nothing.
bool stream_create(const Effect& e, CommandSink& out, std::string& error) {
  if (!count_is(e, 0, error)) {
    return false;
  }
  out.begin("XGROUP").arg("CREATE").arg(e.key).arg(kScratchGroup).arg("$").arg("MKSTREAM");
  out.begin("XGROUP").arg("DESTROY").arg(e.key).arg(kScratchGroup);
  return true;
}

// [id, field, value, ...]: XADD with the id HotKV gave the entry.
bool stream_add(const Effect& e, CommandSink& out, std::string& error) {
  if (e.args.size() < 3 || e.args.size() % 2 == 0) {
    error = "an id and field/value pairs expected";
    return false;
  }
  out.begin("XADD").arg(e.key).args(e.args);
  return true;
}

// [id, ...]: XDEL.
bool stream_delete(const Effect& e, CommandSink& out, std::string& error) {
  if (e.args.empty()) {
    error = "ids expected";
    return false;
  }
  out.begin("XDEL").arg(e.key).args(e.args);
  return true;
}

// [id]: every entry below id goes, whichever trim it was (MAXLEN becomes the MINID it reached).
bool stream_trim_before(const Effect& e, CommandSink& out, std::string& error) {
  if (!count_is(e, 1, error)) {
    return false;
  }
  out.begin("XTRIM").arg(e.key).arg("MINID").arg("=").arg(e.args[0]);
  return true;
}

// [last_id, entries_added, max_deleted_id].
bool stream_set_meta(const Effect& e, CommandSink& out, std::string& error) {
  if (!count_is(e, 3, error)) {
    return false;
  }
  out.begin("XSETID").arg(e.key).arg(e.args[0]).arg("ENTRIESADDED").arg(e.args[1]);
  out.arg("MAXDELETEDID").arg(e.args[2]);
  return true;
}

// [group, last_delivered_id, entries_read].
bool group_create(const Effect& e, CommandSink& out, std::string& error) {
  if (!count_is(e, 3, error)) {
    return false;
  }
  out.begin("XGROUP").arg("CREATE").arg(e.key).arg(e.args[0]).arg(e.args[1]);
  out.arg("ENTRIESREAD").arg(e.args[2]);
  return true;
}

bool group_set_id(const Effect& e, CommandSink& out, std::string& error) {
  if (!count_is(e, 3, error)) {
    return false;
  }
  out.begin("XGROUP").arg("SETID").arg(e.key).arg(e.args[0]).arg(e.args[1]);
  out.arg("ENTRIESREAD").arg(e.args[2]);
  return true;
}

// [group].
bool group_destroy(const Effect& e, CommandSink& out, std::string& error) {
  if (!count_is(e, 1, error)) {
    return false;
  }
  out.begin("XGROUP").arg("DESTROY").arg(e.key).arg(e.args[0]);
  return true;
}

// [group, consumer, seen_ms, active_ms]: Redis 7.0 cannot be told a consumer's times; the
// consumer is created (a no-op if it exists) and its times are the replica's own.
bool consumer_touch(const Effect& e, CommandSink& out, std::string& error) {
  if (!count_is(e, 4, error)) {
    return false;
  }
  out.begin("XGROUP").arg("CREATECONSUMER").arg(e.key).arg(e.args[0]).arg(e.args[1]);
  return true;
}

// [group, consumer].
bool consumer_delete(const Effect& e, CommandSink& out, std::string& error) {
  if (!count_is(e, 2, error)) {
    return false;
  }
  out.begin("XGROUP").arg("DELCONSUMER").arg(e.key).arg(e.args[0]).arg(e.args[1]);
  return true;
}

// [group, consumer, delivery_ms, (id, count)...]: each pending entry as the XCLAIM Redis
// propagates for XREADGROUP and XCLAIM: owner, delivery time and count fixed, FORCE to create
// it, JUSTID so the count is not bumped again.
bool pel_set(const Effect& e, CommandSink& out, std::string& error) {
  if (e.args.size() < 5 || (e.args.size() - 3) % 2 != 0) {
    error = "group, consumer, time and id/count pairs expected";
    return false;
  }
  for (size_t i = 3; i < e.args.size(); i += 2) {
    out.begin("XCLAIM").arg(e.key).arg(e.args[0]).arg(e.args[1]).arg("0").arg(e.args[i]);
    out.arg("TIME").arg(e.args[2]).arg("RETRYCOUNT").arg(e.args[i + 1]).arg("FORCE");
    out.arg("JUSTID");
  }
  return true;
}

// [group, id...].
bool pel_ack(const Effect& e, CommandSink& out, std::string& error) {
  if (e.args.size() < 2) {
    error = "a group and ids expected";
    return false;
  }
  out.begin("XACK").arg(e.key).args(e.args);
  return true;
}

}  // namespace

bool (*stream_to_commands(uint16_t code))(const Effect&, CommandSink&, std::string&) {
  switch (static_cast<OpCode>(code)) {
    case OpCode::kStreamCreate:
      return &stream_create;
    case OpCode::kStreamAdd:
      return &stream_add;
    case OpCode::kStreamDelete:
      return &stream_delete;
    case OpCode::kStreamTrimBefore:
      return &stream_trim_before;
    case OpCode::kStreamSetMeta:
      return &stream_set_meta;
    case OpCode::kGroupCreate:
      return &group_create;
    case OpCode::kGroupSetId:
      return &group_set_id;
    case OpCode::kGroupDestroy:
      return &group_destroy;
    case OpCode::kConsumerTouch:
      return &consumer_touch;
    case OpCode::kConsumerDelete:
      return &consumer_delete;
    case OpCode::kPelSet:
      return &pel_set;
    case OpCode::kPelAck:
      return &pel_ack;
    default:
      return nullptr;
  }
}

}  // namespace hotkv
