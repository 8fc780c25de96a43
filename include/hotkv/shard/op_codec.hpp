// Typed aggregate effects: each op code has a struct in its family's file holding its fields,
// with `encode(OpWriter&) const` and `static bool decode(OpReader&, T&)` side by side (as
// LevelDB keeps a WriteBatch's writer and reader together), and `apply(Keyspace&, key,
// ReplayContext, error)`. OpWriter streams the fields straight into the open record (no
// argument list, no allocation); OpReader reads them back from a decoded effect, the first
// failure becoming the error text. apply_typed<T> is what the registry (effect_registry.hpp)
// calls for such an op: decode, check that nothing is left over, apply. Each struct also has
// `to_commands(const Effect&, CommandSink&) const`: the Redis commands giving a Redis server
// the same state (effect_commands.hpp), which commands_typed<T> calls after the same decode.
//
// On disk the fields are the op's arguments (u32 length | bytes each), integers as decimal
// text and stream ids as "ms-seq": the same bytes the logs before typed effects held, so one
// decoder reads both.
#pragma once

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "hotkv/persist/record.hpp"
#include "hotkv/shard/effect_commands.hpp"
#include "hotkv/shard/effect_registry.hpp"
#include "hotkv/shard/op_effects.hpp"
#include "hotkv/types/stream.hpp"
#include "hotkv/util/numbers.hpp"

namespace hotkv {

// Single-threaded; one op at a time per encoder. The effect is complete when the writer is
// destroyed (or done() is called).
class OpWriter {
 public:
  OpWriter(RecordEncoder& enc, std::string_view key, OpCode op)
      : enc_(enc), count_at_(enc.begin_op(key, static_cast<uint16_t>(op))) {}
  OpWriter(const OpWriter&) = delete;
  OpWriter& operator=(const OpWriter&) = delete;
  ~OpWriter() { done(); }

  OpWriter& str(std::string_view s) {
    enc_.add_op_arg(s);
    ++args_;
    return *this;
  }
  OpWriter& integer(int64_t v) {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    return str({buf, static_cast<size_t>(r.ptr - buf)});
  }
  // %.17g round-trips every double; glibc spells the infinities "inf"/"-inf" and keeps "-0",
  // all of which parse_double reads back.
  OpWriter& score(double v) {
    char buf[32];
    int n = std::snprintf(buf, sizeof buf, "%.17g", v);
    return str({buf, static_cast<size_t>(n)});
  }
  // "ms-seq", as StreamId::append_to spells it.
  OpWriter& id(StreamId v) {
    char buf[41];
    char* p = std::to_chars(buf, buf + 20, v.ms).ptr;
    *p++ = '-';
    p = std::to_chars(p, buf + sizeof buf, v.seq).ptr;
    return str({buf, static_cast<size_t>(p - buf)});
  }
  void done() {
    if (!done_) {
      enc_.end_op(count_at_, args_);
      done_ = true;
    }
  }

 private:
  RecordEncoder& enc_;
  size_t count_at_;
  uint32_t args_ = 0;
  bool done_ = false;
};

// Reads an effect's arguments in order. Single-threaded; `e` and `error` outlive the reader.
// Views it hands out point into `e`.
class OpReader {
 public:
  OpReader(const Effect& e, std::string& error) : args_(e.args), error_(error) {}
  size_t remaining() const { return args_.size() - next_; }
  bool at_end() const { return next_ == args_.size(); }
  bool str(std::string_view& out) {
    if (at_end()) {
      return fail("too few arguments");
    }
    out = args_[next_++];
    return true;
  }
  bool integer(int64_t& out) {
    std::string_view s;
    if (!str(s)) {
      return false;
    }
    auto v = parse_int64(s);
    if (!v) {
      return fail("bad integer '" + std::string(s) + "'");
    }
    out = *v;
    return true;
  }
  bool score(double& out) {
    std::string_view s;
    if (!str(s)) {
      return false;
    }
    auto v = parse_double(s);
    if (!v) {
      return fail("bad score '" + std::string(s) + "'");
    }
    out = *v;
    return true;
  }
  // A full "ms-seq" id (a bare "ms" reads as ms-0, as the logs have always accepted).
  bool id(StreamId& out) {
    std::string_view s;
    if (!str(s)) {
      return false;
    }
    return parse_stream_id(s, 0, false, out) || fail("bad stream id '" + std::string(s) + "'");
  }
  // Every argument not read yet (views into the effect), at least `min` of them.
  bool rest(std::vector<std::string_view>& out, size_t min) {
    if (remaining() < min) {
      return fail("too few arguments");
    }
    out.assign(args_.begin() + static_cast<std::ptrdiff_t>(next_), args_.end());
    next_ = args_.size();
    return true;
  }
  // Fails unless every argument was read.
  bool finish() { return at_end() || fail("too many arguments"); }
  bool fail(std::string text) {
    error_ = std::move(text);
    return false;
  }

 private:
  const std::vector<std::string>& args_;
  size_t next_ = 0;
  std::string& error_;
};

// Appends typed op T as one effect on `key`.
template <class T>
void encode_op(RecordEncoder& enc, std::string_view key, const T& op) {
  OpWriter w(enc, key, T::kCode);
  op.encode(w);
}

// The registry's apply for a typed op T (see effect_registry.hpp for the contract).
template <class T>
bool apply_typed(Keyspace& ks, const Effect& e, const ReplayContext& ctx, std::string& error) {
  OpReader r(e, error);
  T op;
  if (!T::decode(r, op) || !r.finish()) {
    return false;
  }
  return op.apply(ks, e.key, ctx, error);
}

// The registry's to_commands for a typed op T: decode (so malformed arguments are refused as
// replay would), then T::to_commands(effect, sink) appends the Redis commands.
template <class T>
bool commands_typed(const Effect& e, CommandSink& out, std::string& error) {
  OpReader r(e, error);
  T op;
  if (!T::decode(r, op) || !r.finish()) {
    return false;
  }
  op.to_commands(e, out);
  return true;
}

// A registry entry for typed op T.
template <class T>
constexpr EffectOp typed_op(std::string_view name) {
  return EffectOp{static_cast<uint16_t>(T::kCode), name, &apply_typed<T>, &commands_typed<T>};
}

}  // namespace hotkv
