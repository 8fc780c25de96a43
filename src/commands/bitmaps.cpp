// Bitmaps and bit fields over string values: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP,
// BITFIELD, BITFIELD_RO, plus LCS (longest common subsequence of two strings). The bits live in
// the ordinary string value, so GET/SET/APPEND/GETRANGE see the same bytes. Writes log the
// key's final value (as SETRANGE does) and fire Redis's events: "setbit" for SETBIT and
// BITFIELD, "set" (or "del") for BITOP's destination. BITOP and LCS may read keys on several
// shards: the dispatcher then runs them with every involved shard parked and ctx.db(key) finds
// each key's keyspace.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/families.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/types/bitmap.hpp"
#include "hotkv/util/notify.hpp"
#include "hotkv/util/numbers.hpp"

namespace hotkv {
namespace {

int64_t max_bulk_len(CommandContext& ctx) {
  return ctx.engine.config().proto_max_bulk_len.load(std::memory_order_relaxed);
}

// A bit offset: a non-negative integer whose byte lies below proto-max-bulk-len. With
// `field_bits` > 0, "#N" means N * field_bits (BITFIELD's typed offsets).
bool bit_offset_or_reply(CommandContext& ctx, std::string_view arg, unsigned field_bits,
                         uint64_t& out) {
  bool hash = field_bits > 0 && !arg.empty() && arg[0] == '#';
  auto n = parse_int64(hash ? arg.substr(1) : arg);
  if (!n || *n < 0 || (hash && *n > INT64_MAX / static_cast<int64_t>(field_bits))) {
    ctx.error(err::kBitOffset);
    return false;
  }
  int64_t off = hash ? *n * static_cast<int64_t>(field_bits) : *n;
  if ((off >> 3) >= max_bulk_len(ctx)) {
    ctx.error(err::kBitOffset);
    return false;
  }
  out = static_cast<uint64_t>(off);
  return true;
}

// The string under `key` made long enough to address bit `max_bit` (created as zero bytes if
// missing), or nullptr after replying WRONGTYPE. `grew` says whether it was created or padded.
std::string* string_for_bits_or_reply(CommandContext& ctx, std::string_view key, uint64_t max_bit,
                                      bool& grew) {
  Keyspace& db = ctx.db(key);
  Value* v = db.find(key, ctx.now_ms);
  if (!string_or_reply(ctx, v)) {
    return nullptr;
  }
  size_t need = static_cast<size_t>(max_bit >> 3) + 1;
  grew = false;
  if (v == nullptr) {
    v = &db.put(key, Value::from_string(""));
    grew = true;
  }
  std::string& raw = v->mutable_raw();
  if (raw.size() < need) {
    raw.resize(need, '\0');
    grew = true;
  }
  return &raw;
}

// Redis's BYTE|BIT unit keyword.
bool bit_unit_or_reply(CommandContext& ctx, std::string_view arg, bool& is_bit) {
  if (strcasecmp_view(arg, "BIT")) {
    is_bit = true;
  } else if (strcasecmp_view(arg, "BYTE")) {
    is_bit = false;
  } else {
    ctx.error(err::kSyntax);
    return false;
  }
  return true;
}

// Turns start/end (negative: from the end) into a clamped index range over `total` units;
// false when the range is empty.
bool clamp_range(int64_t total, int64_t& start, int64_t& end) {
  if (start < 0) {
    start += total;
  }
  if (end < 0) {
    end += total;
  }
  start = std::max<int64_t>(start, 0);
  end = std::max<int64_t>(end, 0);
  end = std::min<int64_t>(end, total - 1);
  return start <= end;
}

}  // namespace

// SETBIT key offset 0|1: replies the bit's previous value.
void cmd_setbit(CommandContext& ctx) {
  std::string_view key = ctx.arg(1);
  uint64_t offset = 0;
  if (!bit_offset_or_reply(ctx, ctx.arg(2), 0, offset)) {
    return;
  }
  auto on = parse_int64(ctx.arg(3));
  if (!on || (*on & ~int64_t{1}) != 0) {
    ctx.error(err::kBitValue);
    return;
  }
  bool grew = false;
  std::string* raw = string_for_bits_or_reply(ctx, key, offset, grew);
  if (raw == nullptr) {
    return;
  }
  bool old = bitmap::get_bit(*raw, offset);
  if (grew || old != (*on == 1)) {
    bitmap::set_field({raw->data(), raw->size()}, offset, 1, static_cast<uint64_t>(*on));
    ctx.log_put(key);
    ctx.notify(kNotifyString, "setbit", key);
  }
  ctx.reply.integer(old ? 1 : 0);
}

// GETBIT key offset
void cmd_getbit(CommandContext& ctx) {
  uint64_t offset = 0;
  if (!bit_offset_or_reply(ctx, ctx.arg(2), 0, offset)) {
    return;
  }
  Value* v = ctx.db(ctx.arg(1)).find_read(ctx.arg(1), ctx.now_ms);
  if (!string_or_reply(ctx, v)) {
    return;
  }
  bool bit = v != nullptr && bitmap::get_bit(v->str(ctx.scratch), offset);
  ctx.reply.integer(bit ? 1 : 0);
}

// BITCOUNT key [start end [BYTE|BIT]]. As Redis 7.0, a missing key answers 0 and a wrong type
// fails before the range is parsed, and two negative indexes in the wrong order answer 0
// before the unit is looked at.
void cmd_bitcount(CommandContext& ctx) {
  Value* v = ctx.db(ctx.arg(1)).find_read(ctx.arg(1), ctx.now_ms);
  if (!string_or_reply(ctx, v)) {
    return;
  }
  if (v == nullptr) {
    ctx.reply.integer(0);
    return;
  }
  std::string_view s = v->str(ctx.scratch);
  if (ctx.argc() == 2) {
    ctx.reply.integer(static_cast<int64_t>(bitmap::popcount(s)));
    return;
  }
  if (ctx.argc() != 4 && ctx.argc() != 5) {
    ctx.error(err::kSyntax);
    return;
  }
  int64_t start = 0;
  int64_t end = 0;
  if (!ctx.int_arg_or_reply(2, start) || !ctx.int_arg_or_reply(3, end)) {
    return;
  }
  if (start < 0 && end < 0 && start > end) {
    ctx.reply.integer(0);
    return;
  }
  bool is_bit = false;
  if (ctx.argc() == 5 && !bit_unit_or_reply(ctx, ctx.arg(4), is_bit)) {
    return;
  }
  auto len = static_cast<int64_t>(s.size());
  if (!clamp_range(is_bit ? len * 8 : len, start, end)) {
    ctx.reply.integer(0);
    return;
  }
  auto first = static_cast<uint64_t>(is_bit ? start : start * 8);
  auto last = static_cast<uint64_t>(is_bit ? end : end * 8 + 7);
  ctx.reply.integer(static_cast<int64_t>(bitmap::count_range(s, first, last)));
}

// BITPOS key bit [start [end [BYTE|BIT]]]. A missing key is an endless run of zeros. Looking
// for a clear bit without an explicit end finds the first bit past the string when the range
// holds none; with an explicit end it answers -1, as Redis does.
void cmd_bitpos(CommandContext& ctx) {
  int64_t bit = 0;
  if (!ctx.int_arg_or_reply(2, bit)) {
    return;
  }
  if (bit != 0 && bit != 1) {
    ctx.error(err::kBitArgument);
    return;
  }
  Value* v = ctx.db(ctx.arg(1)).find_read(ctx.arg(1), ctx.now_ms);
  if (!string_or_reply(ctx, v)) {
    return;
  }
  if (v == nullptr) {
    ctx.reply.integer(bit == 1 ? -1 : 0);
    return;
  }
  if (ctx.argc() > 6) {
    ctx.error(err::kSyntax);
    return;
  }
  std::string_view s = v->str(ctx.scratch);
  auto len = static_cast<int64_t>(s.size());
  int64_t start = 0;
  int64_t end = -1;
  bool end_given = ctx.argc() >= 5;
  bool is_bit = false;
  if (ctx.argc() >= 4) {
    if (!ctx.int_arg_or_reply(3, start)) {
      return;
    }
    if (ctx.argc() == 6 && !bit_unit_or_reply(ctx, ctx.arg(5), is_bit)) {
      return;
    }
    if (end_given && !ctx.int_arg_or_reply(4, end)) {
      return;
    }
  }
  if (!clamp_range(is_bit ? len * 8 : len, start, end)) {
    ctx.reply.integer(-1);
    return;
  }
  auto first = static_cast<uint64_t>(is_bit ? start : start * 8);
  auto last = static_cast<uint64_t>(is_bit ? end : end * 8 + 7);
  int64_t pos = bitmap::find_bit(s, bit == 1, first, last);
  if (pos < 0 && bit == 0 && !end_given) {
    pos = static_cast<int64_t>(last + 1);
  }
  ctx.reply.integer(pos);
}

// BITOP AND|OR|XOR|NOT destkey key [key ...]: the destination is replaced (its TTL goes too)
// or, when every source is empty, deleted. Replies the result's length.
void cmd_bitop(CommandContext& ctx) {
  std::string_view name = ctx.arg(1);
  bitmap::BitOp op;
  if (strcasecmp_view(name, "AND")) {
    op = bitmap::BitOp::kAnd;
  } else if (strcasecmp_view(name, "OR")) {
    op = bitmap::BitOp::kOr;
  } else if (strcasecmp_view(name, "XOR")) {
    op = bitmap::BitOp::kXor;
  } else if (strcasecmp_view(name, "NOT")) {
    op = bitmap::BitOp::kNot;
  } else {
    ctx.error(err::kSyntax);
    return;
  }
  if (op == bitmap::BitOp::kNot && ctx.argc() != 4) {
    ctx.error(err::kBitopNot);
    return;
  }
  size_t n = ctx.argc() - 3;
  // One scratch per source: integer-encoded sources format into their own buffer.
  std::vector<std::string> scratch(n);
  std::vector<std::string_view> sources(n);
  for (size_t i = 0; i < n; ++i) {
    std::string_view key = ctx.arg(3 + i);
    Value* v = ctx.db(key).find_read(key, ctx.now_ms);
    if (!string_or_reply(ctx, v)) {
      return;
    }
    if (v != nullptr) {
      sources[i] = v->str(scratch[i]);
    }
  }
  std::string result = bitmap::bit_op(op, sources);
  bool empty = result.empty();
  auto len = static_cast<int64_t>(result.size());
  ctx.store_or_delete(ctx.arg(2), Value::from_string(result), empty, len, kNotifyString, "set");
}

namespace {

struct FieldOp {
  enum Kind { kGet, kSet, kIncrBy } kind;
  bool is_signed;
  unsigned bits;
  uint64_t offset;
  int64_t arg;
  bitmap::Overflow overflow;
};

// Parses BITFIELD's subcommands from argv[2] on. Every one is validated before any runs.
bool parse_field_ops_or_reply(CommandContext& ctx, std::vector<FieldOp>& ops, bool& writes) {
  bitmap::Overflow overflow = bitmap::Overflow::kWrap;
  writes = false;
  for (size_t i = 2; i < ctx.argc(); ++i) {
    std::string_view sub = ctx.arg(i);
    size_t more = ctx.argc() - i - 1;
    FieldOp op{};
    if (strcasecmp_view(sub, "GET") && more >= 2) {
      op.kind = FieldOp::kGet;
    } else if (strcasecmp_view(sub, "SET") && more >= 3) {
      op.kind = FieldOp::kSet;
    } else if (strcasecmp_view(sub, "INCRBY") && more >= 3) {
      op.kind = FieldOp::kIncrBy;
    } else if (strcasecmp_view(sub, "OVERFLOW") && more >= 1) {
      std::string_view how = ctx.arg(++i);
      if (strcasecmp_view(how, "WRAP")) {
        overflow = bitmap::Overflow::kWrap;
      } else if (strcasecmp_view(how, "SAT")) {
        overflow = bitmap::Overflow::kSat;
      } else if (strcasecmp_view(how, "FAIL")) {
        overflow = bitmap::Overflow::kFail;
      } else {
        ctx.error(err::kBitfieldOverflow);
        return false;
      }
      continue;
    } else {
      ctx.error(err::kSyntax);
      return false;
    }
    // The type: i1..i64 or u1..u63 (a u64 could not be replied as a RESP integer).
    std::string_view type = ctx.arg(i + 1);
    auto width = type.empty() ? std::nullopt : parse_int64(type.substr(1));
    op.is_signed = !type.empty() && type[0] == 'i';
    if (type.empty() || (type[0] != 'i' && type[0] != 'u') || !width || *width < 1 ||
        *width > (op.is_signed ? 64 : 63)) {
      ctx.error(err::kBitfieldType);
      return false;
    }
    op.bits = static_cast<unsigned>(*width);
    if (!bit_offset_or_reply(ctx, ctx.arg(i + 2), op.bits, op.offset)) {
      return false;
    }
    if (op.kind != FieldOp::kGet) {
      writes = true;
      if (!ctx.int_arg_or_reply(i + 3, op.arg)) {
        return false;
      }
    }
    op.overflow = overflow;
    ops.push_back(op);
    i += op.kind == FieldOp::kGet ? 2 : 3;
  }
  return true;
}

// Runs one SET or INCRBY on `raw` (long enough already): replies the old value (SET) or the
// new one (INCRBY), or null when OVERFLOW FAIL refuses it (then false: nothing written).
bool run_field_write(CommandContext& ctx, std::string& raw, const FieldOp& op, bool& changed) {
  std::span<char> bytes(raw.data(), raw.size());
  if (op.is_signed) {
    int64_t old = bitmap::get_signed(raw, op.offset, op.bits);
    auto next = op.kind == FieldOp::kIncrBy ? bitmap::add_signed(old, op.arg, op.bits, op.overflow)
                                            : bitmap::add_signed(op.arg, 0, op.bits, op.overflow);
    if (!next) {
      ctx.reply.null();
      return false;
    }
    bitmap::set_field(bytes, op.offset, op.bits, static_cast<uint64_t>(*next));
    ctx.reply.integer(op.kind == FieldOp::kIncrBy ? *next : old);
    changed = *next != old;
    return true;
  }
  uint64_t old = bitmap::get_unsigned(raw, op.offset, op.bits);
  // SET's value goes in as an unsigned 64-bit number, so a negative one is above the range.
  auto next = op.kind == FieldOp::kIncrBy
                  ? bitmap::add_unsigned(old, op.arg, op.bits, op.overflow)
                  : bitmap::add_unsigned(static_cast<uint64_t>(op.arg), 0, op.bits, op.overflow);
  if (!next) {
    ctx.reply.null();
    return false;
  }
  bitmap::set_field(bytes, op.offset, op.bits, *next);
  ctx.reply.integer(static_cast<int64_t>(op.kind == FieldOp::kIncrBy ? *next : old));
  changed = *next != old;
  return true;
}

void reply_field_get(CommandContext& ctx, std::string_view bytes, const FieldOp& op) {
  if (op.is_signed) {
    ctx.reply.integer(bitmap::get_signed(bytes, op.offset, op.bits));
  } else {
    ctx.reply.integer(static_cast<int64_t>(bitmap::get_unsigned(bytes, op.offset, op.bits)));
  }
}

// BITFIELD and BITFIELD_RO: parse everything, then (for writes) make the string long enough
// for the farthest field written, then run the subcommands in order.
void bitfield_generic(CommandContext& ctx, bool read_only) {
  std::string_view key = ctx.arg(1);
  std::vector<FieldOp> ops;
  bool writes = false;
  if (!parse_field_ops_or_reply(ctx, ops, writes)) {
    return;
  }
  if (!writes) {
    Value* v = ctx.db(key).find_read(key, ctx.now_ms);
    if (!string_or_reply(ctx, v)) {
      return;
    }
    std::string_view s = v == nullptr ? std::string_view() : v->str(ctx.scratch);
    ctx.reply.array(ops.size());
    for (const FieldOp& op : ops) {
      reply_field_get(ctx, s, op);
    }
    return;
  }
  if (read_only) {
    ctx.error(err::kBitfieldReadOnly);
    return;
  }
  uint64_t max_bit = 0;
  for (const FieldOp& op : ops) {
    if (op.kind != FieldOp::kGet) {
      max_bit = std::max(max_bit, op.offset + op.bits - 1);
    }
  }
  bool grew = false;
  std::string* raw = string_for_bits_or_reply(ctx, key, max_bit, grew);
  if (raw == nullptr) {
    return;
  }
  // As Redis: the key counts as modified when a write ran (was not refused by OVERFLOW FAIL)
  // and either changed its field or found the string created or padded.
  bool modified = false;
  ctx.reply.array(ops.size());
  for (const FieldOp& op : ops) {
    if (op.kind == FieldOp::kGet) {
      reply_field_get(ctx, *raw, op);
      continue;
    }
    bool changed = false;
    if (run_field_write(ctx, *raw, op, changed) && (changed || grew)) {
      modified = true;
    }
  }
  // The padded string is logged even when every write was refused: it exists now.
  if (modified || grew) {
    ctx.log_put(key);
  }
  if (modified) {
    ctx.notify(kNotifyString, "setbit", key);
  }
}

}  // namespace

void cmd_bitfield(CommandContext& ctx) { bitfield_generic(ctx, false); }
void cmd_bitfield_ro(CommandContext& ctx) { bitfield_generic(ctx, true); }

namespace {

// One run of consecutive matched bytes: a[a_first..a_last] == b[b_first..b_last].
struct LcsMatch {
  uint32_t a_first, a_last, b_first, b_last;
};

}  // namespace

// LCS key1 key2 [LEN] [IDX] [MINMATCHLEN n] [WITHMATCHLEN]: the classic dynamic programme over
// (len1+1) x (len2+1) lengths, bounded by proto-max-bulk-len of transient memory as in Redis.
// IDX lists the matched runs from the ends of the strings backwards, as Redis does.
void cmd_lcs(CommandContext& ctx) {
  std::string_view ka = ctx.arg(1);
  std::string_view kb = ctx.arg(2);
  Value* va = ctx.db(ka).find_read(ka, ctx.now_ms);
  Value* vb = ctx.db(kb).find_read(kb, ctx.now_ms);
  if ((va != nullptr && va->type() != ValueType::kString) ||
      (vb != nullptr && vb->type() != ValueType::kString)) {
    ctx.error(err::kLcsWrongType);
    return;
  }
  bool want_len = false;
  bool want_idx = false;
  bool with_len = false;
  int64_t min_len = 0;
  for (size_t i = 3; i < ctx.argc(); ++i) {
    std::string_view opt = ctx.arg(i);
    if (strcasecmp_view(opt, "IDX")) {
      want_idx = true;
    } else if (strcasecmp_view(opt, "LEN")) {
      want_len = true;
    } else if (strcasecmp_view(opt, "WITHMATCHLEN")) {
      with_len = true;
    } else if (strcasecmp_view(opt, "MINMATCHLEN") && i + 1 < ctx.argc()) {
      if (!ctx.int_arg_or_reply(++i, min_len)) {
        return;
      }
      min_len = std::max<int64_t>(min_len, 0);
    } else {
      ctx.error(err::kSyntax);
      return;
    }
  }
  if (want_len && want_idx) {
    ctx.error(err::kLcsLenAndIdx);
    return;
  }
  std::string sa_buf;
  std::string sb_buf;
  std::string_view a = va == nullptr ? std::string_view() : va->str(sa_buf);
  std::string_view b = vb == nullptr ? std::string_view() : vb->str(sb_buf);
  if (a.size() >= UINT32_MAX - 1 || b.size() >= UINT32_MAX - 1) {
    ctx.error(err::kLcsTooLong);
    return;
  }
  const size_t cols = b.size() + 1;
  const uint64_t cells = static_cast<uint64_t>(a.size() + 1) * cols;
  if (cells * sizeof(uint32_t) > static_cast<uint64_t>(max_bulk_len(ctx))) {
    ctx.error(err::kLcsMemory);
    return;
  }
  // table[i * cols + j]: LCS length of a[0..i) and b[0..j).
  std::vector<uint32_t> table(cells, 0);
  auto at = [&](size_t i, size_t j) -> uint32_t& { return table[i * cols + j]; };
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      at(i, j) = a[i - 1] == b[j - 1] ? at(i - 1, j - 1) + 1 : std::max(at(i - 1, j), at(i, j - 1));
    }
  }
  const uint32_t total = at(a.size(), b.size());
  if (want_len) {
    ctx.reply.integer(total);
    return;
  }
  // Walk back from the ends: a match extends the current run, a step closes it.
  std::string common(total, '\0');
  std::vector<LcsMatch> matches;
  bool in_run = false;
  LcsMatch run{};
  auto close_run = [&] {
    if (in_run && (min_len == 0 || run.a_last - run.a_first + 1 >= min_len)) {
      matches.push_back(run);
    }
    in_run = false;
  };
  size_t i = a.size();
  size_t j = b.size();
  size_t k = total;
  while (i > 0 && j > 0) {
    if (a[i - 1] == b[j - 1]) {
      common[--k] = a[i - 1];
      if (in_run) {
        run.a_first = static_cast<uint32_t>(i - 1);
        run.b_first = static_cast<uint32_t>(j - 1);
      } else {
        run = {static_cast<uint32_t>(i - 1), static_cast<uint32_t>(i - 1),
               static_cast<uint32_t>(j - 1), static_cast<uint32_t>(j - 1)};
        in_run = true;
      }
      --i;
      --j;
    } else {
      close_run();
      if (at(i - 1, j) > at(i, j - 1)) {
        --i;
      } else {
        --j;
      }
    }
  }
  close_run();
  if (!want_idx) {
    ctx.reply.bulk(common);
    return;
  }
  ctx.reply.map(2);
  ctx.reply.bulk("matches");
  ctx.reply.array(matches.size());
  for (const LcsMatch& m : matches) {
    ctx.reply.array(with_len ? 3 : 2);
    ctx.reply.array(2);
    ctx.reply.integer(m.a_first);
    ctx.reply.integer(m.a_last);
    ctx.reply.array(2);
    ctx.reply.integer(m.b_first);
    ctx.reply.integer(m.b_last);
    if (with_len) {
      ctx.reply.integer(m.a_last - m.a_first + 1);
    }
  }
  ctx.reply.bulk("len");
  ctx.reply.integer(total);
}

void register_bitmaps(Table& t) {
  // clang-format off
  t.add({"SETBIT",      4, kWrite | kDenyOom, keys(1, 1, 1), cmd_setbit, "bitmap", "SETBIT key offset value", "Sets or clears the bit at offset of the string value. Creates the key if it doesn't exist."});
  t.add({"GETBIT",      3, kReadOnly | kFast, keys(1, 1, 1), cmd_getbit, "bitmap", "GETBIT key offset", "Returns a bit value by offset."});
  t.add({"BITCOUNT",   -2, kReadOnly, keys(1, 1, 1), cmd_bitcount, "bitmap", "BITCOUNT key [start end [BYTE|BIT]]", "Counts the number of set bits (population counting) in a string."});
  t.add({"BITPOS",     -3, kReadOnly, keys(1, 1, 1), cmd_bitpos, "bitmap", "BITPOS key bit [start [end [BYTE|BIT]]]", "Finds the first set (1) or clear (0) bit in a string."});
  t.add({"BITOP",      -4, kWrite | kDenyOom, keys(2, -1, 1), cmd_bitop, "bitmap", "BITOP AND|OR|XOR|NOT destkey key [key ...]", "Performs bitwise operations on multiple strings, and stores the result."});
  t.add({"BITFIELD",   -2, kWrite | kDenyOom, keys(1, 1, 1), cmd_bitfield, "bitmap", "BITFIELD key [GET encoding offset | [OVERFLOW WRAP|SAT|FAIL] SET encoding offset value | INCRBY encoding offset increment ...]", "Performs arbitrary bitfield integer operations on strings."});
  t.add({"BITFIELD_RO", -2, kReadOnly | kFast, keys(1, 1, 1), cmd_bitfield_ro, "bitmap", "BITFIELD_RO key [GET encoding offset ...]", "Performs arbitrary read-only bitfield integer operations on strings."});
  t.add({"LCS",        -3, kReadOnly, keys(1, 2, 1), cmd_lcs, "string", "LCS key1 key2 [LEN] [IDX] [MINMATCHLEN min-match-len] [WITHMATCHLEN]", "Finds the longest common substring."});
  // clang-format on
}

}  // namespace hotkv
