// List effects in the append-only log (op codes in op_effects.hpp): apply_list_op replays one,
// encode_list writes the effects that rebuild a whole list (the rewrite's snapshot, COPY and
// RENAME). Every list command is deterministic given the list it finds, so its effect is the
// operation itself with indexes already normalised (LSET, LTRIM) and counts already clamped
// (LPOP/RPOP with a count): replay never needs the clock or a random draw, and each effect
// maps one to one onto a Redis command when the log is streamed to a replica.
#include <memory>
#include <string>

#include "hotkv/shard/op_args.hpp"
#include "hotkv/shard/effect_registry.hpp"
#include "hotkv/shard/op_effects.hpp"
#include "hotkv/types/list.hpp"

namespace hotkv {
namespace {

// The list under key, or nullptr if the key is missing or holds another type.
List* existing_list(Keyspace& ks, const Effect& e, int64_t now_ms) {
  Value* v = ks.find(e.key, now_ms);
  return v != nullptr && v->type() == ValueType::kList ? v->list() : nullptr;
}

// A list never stays empty under a key.
void drop_if_empty(Keyspace& ks, const Effect& e, const List& l) {
  if (l.empty()) {
    ks.erase(e.key);
  }
}

bool apply_push(Keyspace& ks, const Effect& e, int64_t now_ms, OpArgReader& a, bool front) {
  if (!a.at_least(1)) {
    return false;
  }
  Value* v = ks.find(e.key, now_ms);
  if (v == nullptr) {
    v = &ks.put(e.key, Value::from_list(std::make_unique<List>()));
  } else if (v->type() != ValueType::kList) {
    return true;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (front) {
      v->list()->push_front(a.str(i));
    } else {
      v->list()->push_back(a.str(i));
    }
  }
  return true;
}

bool apply_pop(Keyspace& ks, const Effect& e, int64_t now_ms, OpArgReader& a, bool front) {
  int64_t count = 0;
  if (!a.exactly(1) || !a.integer(0, count)) {
    return false;
  }
  List* l = existing_list(ks, e, now_ms);
  if (l == nullptr) {
    return true;
  }
  std::string out;
  for (int64_t i = 0; i < count && !l->empty(); ++i) {
    if (front) {
      l->pop_front(out);
    } else {
      l->pop_back(out);
    }
  }
  drop_if_empty(ks, e, *l);
  return true;
}

bool apply_set(Keyspace& ks, const Effect& e, int64_t now_ms, OpArgReader& a) {
  int64_t index = 0;
  if (!a.exactly(2) || !a.integer(0, index)) {
    return false;
  }
  List* l = existing_list(ks, e, now_ms);
  if (l != nullptr && index >= 0 && static_cast<size_t>(index) < l->size()) {
    l->set(static_cast<size_t>(index), a.str(1));
  }
  return true;
}

bool apply_insert(Keyspace& ks, const Effect& e, int64_t now_ms, OpArgReader& a) {
  if (!a.exactly(3)) {
    return false;
  }
  bool after = a.str(0) == "AFTER";
  if (!after && a.str(0) != "BEFORE") {
    return a.fail("bad LINSERT position '" + a.str(0) + "'");
  }
  if (List* l = existing_list(ks, e, now_ms)) {
    list_insert_at_pivot(*l, after, a.str(1), a.str(2));
  }
  return true;
}

bool apply_rem(Keyspace& ks, const Effect& e, int64_t now_ms, OpArgReader& a) {
  int64_t count = 0;
  if (!a.exactly(2) || !a.integer(0, count)) {
    return false;
  }
  if (List* l = existing_list(ks, e, now_ms)) {
    l->remove(a.str(1), count);
    drop_if_empty(ks, e, *l);
  }
  return true;
}

bool apply_trim(Keyspace& ks, const Effect& e, int64_t now_ms, OpArgReader& a) {
  int64_t start = 0;
  int64_t stop = 0;
  if (!a.exactly(2) || !a.integer(0, start) || !a.integer(1, stop)) {
    return false;
  }
  List* l = existing_list(ks, e, now_ms);
  if (l == nullptr) {
    return true;
  }
  if (start < 0 || stop < start || static_cast<size_t>(start) >= l->size()) {
    ks.erase(e.key);  // the logged range kept nothing
    return true;
  }
  size_t last = std::min(static_cast<size_t>(stop), l->size() - 1);
  l->trim(static_cast<size_t>(start), last);
  return true;
}

}  // namespace

bool apply_list_op(Keyspace& ks, const Effect& e, int64_t now_ms, std::string& error) {
  OpArgReader a(e, error);
  switch (static_cast<OpCode>(e.op)) {
    case OpCode::kListPushFront:
      return apply_push(ks, e, now_ms, a, true);
    case OpCode::kListPushBack:
      return apply_push(ks, e, now_ms, a, false);
    case OpCode::kListPopFront:
      return apply_pop(ks, e, now_ms, a, true);
    case OpCode::kListPopBack:
      return apply_pop(ks, e, now_ms, a, false);
    case OpCode::kListSet:
      return apply_set(ks, e, now_ms, a);
    case OpCode::kListInsert:
      return apply_insert(ks, e, now_ms, a);
    case OpCode::kListRem:
      return apply_rem(ks, e, now_ms, a);
    case OpCode::kListTrim:
      return apply_trim(ks, e, now_ms, a);
    default:
      break;
  }
  return a.fail("unknown list op code " + std::to_string(e.op));
}

void encode_list(RecordEncoder& enc, std::string_view key, const Value& v,
                 const std::function<void()>& checkpoint) {
  // 128 elements per effect and a checkpoint every 8 effects, as for sorted sets: a list of a
  // million elements spreads over about a thousand records of bounded size.
  constexpr size_t kElementsPerEffect = 128;
  constexpr size_t kEffectsPerCheckpoint = 8;
  const List& l = *v.list();
  OpArgs args;
  size_t effects = 0;
  l.for_each(0, [&](size_t i, std::string_view element) {
    args.add(element);
    bool last = i + 1 == l.size();
    if (args.size() >= kElementsPerEffect || last) {
      enc.add_op(key, static_cast<uint16_t>(OpCode::kListPushBack), args.views());
      args.clear();
      if (++effects % kEffectsPerCheckpoint == 0 && !last) {
        checkpoint();
      }
    }
    return true;
  });
}

namespace {

// The family's ops are not typed structs yet: each registry entry goes through apply_list_op.
bool apply_list_entry(Keyspace& ks, const Effect& e, const ReplayContext& ctx,
                       std::string& error) {
  return apply_list_op(ks, e, ctx.now_ms, error);
}

}  // namespace

const EffectFamily& list_effects() {
  static constexpr EffectOp kOps[] = {
      {static_cast<uint16_t>(OpCode::kListPushFront), "list.push_front", &apply_list_entry},
      {static_cast<uint16_t>(OpCode::kListPushBack), "list.push_back", &apply_list_entry},
      {static_cast<uint16_t>(OpCode::kListPopFront), "list.pop_front", &apply_list_entry},
      {static_cast<uint16_t>(OpCode::kListPopBack), "list.pop_back", &apply_list_entry},
      {static_cast<uint16_t>(OpCode::kListSet), "list.set", &apply_list_entry},
      {static_cast<uint16_t>(OpCode::kListInsert), "list.insert", &apply_list_entry},
      {static_cast<uint16_t>(OpCode::kListRem), "list.rem", &apply_list_entry},
      {static_cast<uint16_t>(OpCode::kListTrim), "list.trim", &apply_list_entry},
  };
  static const EffectFamily kFamily{"list", ValueType::kList, kListOpFirst, kListOpLast, kOps, &encode_list};
  return kFamily;
}

}  // namespace hotkv
