// List effects in the append-only log (op codes in op_effects.hpp): one typed struct per op
// code, registered in list_effects(); encode_list writes the effects that rebuild a whole list
// (the rewrite's snapshot, COPY and RENAME). Every list command is deterministic given the list it
// finds, so its effect is the operation itself with indexes already normalised (LSET, LTRIM) and
// counts already clamped (LPOP/RPOP with a count): replay never needs the clock or a random draw,
// and each effect maps one to one onto a Redis command when the log is streamed to a replica.
#include <algorithm>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "hotkv/shard/effect_registry.hpp"
#include "hotkv/shard/op_args.hpp"
#include "hotkv/shard/op_codec.hpp"
#include "hotkv/shard/op_effects.hpp"
#include "hotkv/types/list.hpp"

namespace hotkv {
namespace {

// The list under key, or nullptr if the key is missing or holds another type.
List* existing_list(Keyspace& ks, std::string_view key, int64_t now_ms) {
  Value* v = ks.find(key, now_ms);
  return v != nullptr && v->type() == ValueType::kList ? v->list() : nullptr;
}

// A list never stays empty under a key.
void drop_if_empty(Keyspace& ks, std::string_view key, const List& l) {
  if (l.empty()) {
    ks.erase(key);
  }
}

// kListPushFront / kListPushBack [element, ...]: LPUSH / RPUSH order, creating the list.
template <OpCode Code>
struct ListPushOp {
  static constexpr OpCode kCode = Code;
  std::span<const std::string_view> elements;
  std::vector<std::string_view> decoded;

  void encode(OpWriter& w) const {
    for (std::string_view el : elements) {
      w.str(el);
    }
  }
  static bool decode(OpReader& r, ListPushOp& out) {
    if (!r.rest(out.decoded, 1)) {
      return false;
    }
    out.elements = out.decoded;
    return true;
  }
  void to_commands(const Effect& e, CommandSink& out) const {
    out.begin(Code == OpCode::kListPushFront ? "LPUSH" : "RPUSH").arg(e.key).args(elements);
  }
  bool apply(Keyspace& ks, std::string_view key, const ReplayContext& ctx, std::string&) const {
    Value* v = ks.find(key, ctx.now_ms);
    if (v == nullptr) {
      v = &ks.put(key, Value::from_list(std::make_unique<List>(ctx.limits.list_fill,
                                                                ctx.limits.list_compress_depth)));
    } else if (v->type() != ValueType::kList) {
      return true;
    }
    for (std::string_view el : elements) {
      if (Code == OpCode::kListPushFront) {
        v->list()->push_front(el);
      } else {
        v->list()->push_back(el);
      }
    }
    return true;
  }
};

// kListPopFront / kListPopBack [count]: remove count elements from that end.
template <OpCode Code>
struct ListPopOp {
  static constexpr OpCode kCode = Code;
  int64_t count = 0;

  void encode(OpWriter& w) const { w.integer(count); }
  static bool decode(OpReader& r, ListPopOp& out) { return r.integer(out.count); }
  void to_commands(const Effect& e, CommandSink& out) const {
    out.begin(Code == OpCode::kListPopFront ? "LPOP" : "RPOP").arg(e.key).arg(count);
  }
  bool apply(Keyspace& ks, std::string_view key, const ReplayContext& ctx, std::string&) const {
    List* l = existing_list(ks, key, ctx.now_ms);
    if (l == nullptr) {
      return true;
    }
    std::string out;
    for (int64_t i = 0; i < count && !l->empty(); ++i) {
      if (Code == OpCode::kListPopFront) {
        l->pop_front(out);
      } else {
        l->pop_back(out);
      }
    }
    drop_if_empty(ks, key, *l);
    return true;
  }
};

// [index, element]: LSET, the index counted from the head.
struct ListSetOp {
  static constexpr OpCode kCode = OpCode::kListSet;
  int64_t index = 0;
  std::string_view element;

  void encode(OpWriter& w) const { w.integer(index).str(element); }
  static bool decode(OpReader& r, ListSetOp& out) {
    return r.integer(out.index) && r.str(out.element);
  }
  void to_commands(const Effect& e, CommandSink& out) const {
    out.begin("LSET").arg(e.key).arg(index).arg(element);
  }
  bool apply(Keyspace& ks, std::string_view key, const ReplayContext& ctx, std::string&) const {
    List* l = existing_list(ks, key, ctx.now_ms);
    if (l != nullptr && index >= 0 && static_cast<size_t>(index) < l->size()) {
      l->set(static_cast<size_t>(index), element);
    }
    return true;
  }
};

// [BEFORE|AFTER, pivot, element]: LINSERT at the first pivot.
struct ListInsertOp {
  static constexpr OpCode kCode = OpCode::kListInsert;
  bool after = false;
  std::string_view pivot;
  std::string_view element;

  void encode(OpWriter& w) const { w.str(after ? "AFTER" : "BEFORE").str(pivot).str(element); }
  static bool decode(OpReader& r, ListInsertOp& out) {
    std::string_view where;
    if (!r.str(where) || !r.str(out.pivot) || !r.str(out.element)) {
      return false;
    }
    out.after = where == "AFTER";
    return out.after || where == "BEFORE" ||
           r.fail("bad LINSERT position '" + std::string(where) + "'");
  }
  void to_commands(const Effect& e, CommandSink& out) const {
    out.begin("LINSERT").arg(e.key).arg(after ? "AFTER" : "BEFORE").arg(pivot).arg(element);
  }
  bool apply(Keyspace& ks, std::string_view key, const ReplayContext& ctx, std::string&) const {
    if (List* l = existing_list(ks, key, ctx.now_ms)) {
      list_insert_at_pivot(*l, after, pivot, element);
    }
    return true;
  }
};

// [count, element]: LREM.
struct ListRemOp {
  static constexpr OpCode kCode = OpCode::kListRem;
  int64_t count = 0;
  std::string_view element;

  void encode(OpWriter& w) const { w.integer(count).str(element); }
  static bool decode(OpReader& r, ListRemOp& out) {
    return r.integer(out.count) && r.str(out.element);
  }
  void to_commands(const Effect& e, CommandSink& out) const {
    out.begin("LREM").arg(e.key).arg(count).arg(element);
  }
  bool apply(Keyspace& ks, std::string_view key, const ReplayContext& ctx, std::string&) const {
    if (List* l = existing_list(ks, key, ctx.now_ms)) {
      l->remove(element, count);
      drop_if_empty(ks, key, *l);
    }
    return true;
  }
};

// [start, stop]: LTRIM with the range normalised (0-based from the head).
struct ListTrimOp {
  static constexpr OpCode kCode = OpCode::kListTrim;
  int64_t start = 0;
  int64_t stop = 0;

  void encode(OpWriter& w) const { w.integer(start).integer(stop); }
  static bool decode(OpReader& r, ListTrimOp& out) {
    return r.integer(out.start) && r.integer(out.stop);
  }
  // A range that keeps nothing deletes the key, as apply does; a negative start would count
  // from the tail on Redis, so it is never sent as a range.
  void to_commands(const Effect& e, CommandSink& out) const {
    if (start < 0 || stop < start) {
      out.begin("DEL").arg(e.key);
    } else {
      out.begin("LTRIM").arg(e.key).arg(start).arg(stop);
    }
  }
  bool apply(Keyspace& ks, std::string_view key, const ReplayContext& ctx, std::string&) const {
    List* l = existing_list(ks, key, ctx.now_ms);
    if (l == nullptr) {
      return true;
    }
    if (start < 0 || stop < start || static_cast<size_t>(start) >= l->size()) {
      ks.erase(key);  // the logged range kept nothing
      return true;
    }
    size_t last = std::min(static_cast<size_t>(stop), l->size() - 1);
    l->trim(static_cast<size_t>(start), last);
    return true;
  }
};

}  // namespace

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
      encode_op(enc, key, ListPushOp<OpCode::kListPushBack>{args.views(), {}});
      args.clear();
      if (++effects % kEffectsPerCheckpoint == 0 && !last) {
        checkpoint();
      }
    }
    return true;
  });
}

const EffectFamily& list_effects() {
  static constexpr EffectOp kOps[] = {
      typed_op<ListPushOp<OpCode::kListPushFront>>("list.push_front"),
      typed_op<ListPushOp<OpCode::kListPushBack>>("list.push_back"),
      typed_op<ListPopOp<OpCode::kListPopFront>>("list.pop_front"),
      typed_op<ListPopOp<OpCode::kListPopBack>>("list.pop_back"),
      typed_op<ListSetOp>("list.set"),
      typed_op<ListInsertOp>("list.insert"),
      typed_op<ListRemOp>("list.rem"),
      typed_op<ListTrimOp>("list.trim"),
  };
  static const EffectFamily kFamily{"list", ValueType::kList, kListOpFirst, kListOpLast, kOps,
                                    &encode_list};
  return kFamily;
}

}  // namespace hotkv
