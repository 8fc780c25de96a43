// Effects as Redis commands: every effect kind and op gives the exact argv a Redis server
// needs; an operation's commands get SELECT only on a change of database and MULTI/EXEC when
// there are several; a cross-shard operation's whole-database effects are sent once; and the
// merge of shard logs hands over a cross-shard operation once, after everything before it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "hotkv/persist/record.hpp"
#include "hotkv/shard/effect_commands.hpp"
#include "hotkv/shard/effect_registry.hpp"
#include "hotkv/shard/op_effects.hpp"

using hotkv::CommandArgv;
using hotkv::CommandSink;
using hotkv::CommandStreamState;
using hotkv::Effect;
using hotkv::EffectKind;
using hotkv::OpCode;
using hotkv::Record;

namespace {

Effect op(std::string key, OpCode code, std::vector<std::string> args, uint32_t db = 0) {
  Effect e;
  e.kind = EffectKind::kOp;
  e.key = std::move(key);
  e.op = static_cast<uint16_t>(code);
  e.args = std::move(args);
  e.db = db;
  return e;
}

Effect put(std::string key, std::string value, int64_t at_ms = -1, uint32_t db = 0) {
  Effect e;
  e.kind = EffectKind::kPut;
  e.key = std::move(key);
  e.str = std::move(value);
  e.at_ms = at_ms;
  e.db = db;
  return e;
}

Effect plain(EffectKind kind, std::string key, uint32_t db = 0) {
  Effect e;
  e.kind = kind;
  e.key = std::move(key);
  e.db = db;
  return e;
}

Effect swapdb(uint32_t a, uint32_t b) {
  Effect e;
  e.kind = EffectKind::kSwapDb;
  e.db = a;
  e.db2 = b;
  return e;
}

// The commands of one effect (no SELECT, no MULTI).
std::vector<CommandArgv> cmds(const Effect& e) {
  CommandSink sink;
  std::string error;
  REQUIRE(hotkv::effect_to_commands(e, sink, error));
  return sink.commands();
}

Record record(std::vector<Effect> effects, uint64_t txn = 0, uint32_t parts = 1) {
  Record r;
  r.txn_id = txn;
  r.parts = parts;
  r.effects = std::move(effects);
  return r;
}

std::vector<CommandArgv> translate(std::vector<const Record*> parts, CommandStreamState& st) {
  std::vector<CommandArgv> out;
  std::string error;
  REQUIRE(hotkv::operation_to_commands(parts, st, out, error));
  return out;
}

using V = std::vector<CommandArgv>;

}  // namespace

TEST_CASE("every registered op has a translation", "[effect_commands]") {
  for (const hotkv::EffectFamily* f : hotkv::effect_families()) {
    for (const hotkv::EffectOp& o : f->ops) {
      INFO(o.name);
      CHECK(o.to_commands != nullptr);
    }
  }
}

TEST_CASE("plain effects become SET, DEL, PEXPIREAT and PERSIST", "[effect_commands]") {
  CHECK(cmds(put("k", "v")) == V{{"SET", "k", "v"}});
  CHECK(cmds(put("k", "v", 1700000000123)) == V{{"SET", "k", "v", "PXAT", "1700000000123"}});
  Effect i = put("n", "");
  i.is_int = true;
  i.integer = -42;
  CHECK(cmds(i) == V{{"SET", "n", "-42"}});
  CHECK(cmds(plain(EffectKind::kDel, "k")) == V{{"DEL", "k"}});
  Effect ex = plain(EffectKind::kExpire, "k");
  ex.at_ms = 1700000000999;
  CHECK(cmds(ex) == V{{"PEXPIREAT", "k", "1700000000999"}});
  ex.at_ms = -1;
  CHECK(cmds(ex) == V{{"PERSIST", "k"}});
  CHECK(cmds(plain(EffectKind::kFlush, "", 3)) == V{{"FLUSHDB"}});
  CHECK(cmds(swapdb(1, 2)) == V{{"SWAPDB", "1", "2"}});
}

TEST_CASE("hash effects become HSET and HDEL, a conversion sends nothing", "[effect_commands]") {
  CHECK(cmds(op("h", OpCode::kHashSet, {"f", "1", "g", "2.5"})) ==
        V{{"HSET", "h", "f", "1", "g", "2.5"}});
  CHECK(cmds(op("h", OpCode::kHashDel, {"f", "g"})) == V{{"HDEL", "h", "f", "g"}});
  CHECK(cmds(op("h", OpCode::kHashConvert, {})).empty());
}

TEST_CASE("set effects become SADD and SREM, a creation sends nothing", "[effect_commands]") {
  CHECK(cmds(op("s", OpCode::kSetAdd, {"a", "1"})) == V{{"SADD", "s", "a", "1"}});
  CHECK(cmds(op("s", OpCode::kSetRem, {"a"})) == V{{"SREM", "s", "a"}});
  CHECK(cmds(op("s", OpCode::kSetCreate, {"intset"})).empty());
}

TEST_CASE("zset effects become ZADD of exact final scores and ZREM", "[effect_commands]") {
  CHECK(cmds(op("z", OpCode::kZSetAdd, {"1.5", "a", "-inf", "b", "inf", "c", "-0", "d"})) ==
        V{{"ZADD", "z", "1.5", "a", "-inf", "b", "inf", "c", "-0", "d"}});
  // A score text that is not in shortest form comes back as the %.17g of the same double.
  CHECK(cmds(op("z", OpCode::kZSetAdd, {"0.1000", "m", "1e3", "n"})) ==
        V{{"ZADD", "z", "0.10000000000000001", "m", "1000", "n"}});
  CHECK(cmds(op("z", OpCode::kZSetRem, {"a", "b"})) == V{{"ZREM", "z", "a", "b"}});
}

TEST_CASE("list effects become the list commands with normalised arguments", "[effect_commands]") {
  CHECK(cmds(op("l", OpCode::kListPushFront, {"a", "b"})) == V{{"LPUSH", "l", "a", "b"}});
  CHECK(cmds(op("l", OpCode::kListPushBack, {"a"})) == V{{"RPUSH", "l", "a"}});
  CHECK(cmds(op("l", OpCode::kListPopFront, {"2"})) == V{{"LPOP", "l", "2"}});
  CHECK(cmds(op("l", OpCode::kListPopBack, {"1"})) == V{{"RPOP", "l", "1"}});
  CHECK(cmds(op("l", OpCode::kListSet, {"3", "x"})) == V{{"LSET", "l", "3", "x"}});
  CHECK(cmds(op("l", OpCode::kListInsert, {"AFTER", "p", "x"})) ==
        V{{"LINSERT", "l", "AFTER", "p", "x"}});
  CHECK(cmds(op("l", OpCode::kListRem, {"-2", "x"})) == V{{"LREM", "l", "-2", "x"}});
  CHECK(cmds(op("l", OpCode::kListTrim, {"1", "5"})) == V{{"LTRIM", "l", "1", "5"}});
  SECTION("a trim that keeps nothing deletes the key") {
    CHECK(cmds(op("l", OpCode::kListTrim, {"4", "2"})) == V{{"DEL", "l"}});
    CHECK(cmds(op("l", OpCode::kListTrim, {"-1", "2"})) == V{{"DEL", "l"}});
  }
}

TEST_CASE("inventory effects become the internal HOTKV.EFFECT command", "[effect_commands]") {
  CHECK(cmds(op("item", OpCode::kInvCreate, {"10", "0", "0", "0", "0", ""})) ==
        V{{"HOTKV.EFFECT", "item", "64", "10", "0", "0", "0", "0", ""}});
  CHECK(cmds(op("item", OpCode::kInvReserve, {"h1", "2", "alice", "100", "200"})) ==
        V{{"HOTKV.EFFECT", "item", "65", "h1", "2", "alice", "100", "200"}});
  CHECK(cmds(op("item", OpCode::kInvSettle, {"h1", "committed", "150", "300"})) ==
        V{{"HOTKV.EFFECT", "item", "66", "h1", "committed", "150", "300"}});
  CHECK(cmds(op("item", OpCode::kInvExtend, {"h1", "400"})) ==
        V{{"HOTKV.EFFECT", "item", "67", "h1", "400"}});
  CHECK(cmds(op("item", OpCode::kInvSetTotal, {"20"})) == V{{"HOTKV.EFFECT", "item", "68", "20"}});
  CHECK(cmds(op("item", OpCode::kInvRestoreHold,
                {"h2", "1", "", "100", "200", "released", "150", "300"}))
            .at(0)
            .at(2) == "69");
  CHECK(cmds(op("item", OpCode::kInvOwnerBought, {"alice", "3"})) ==
        V{{"HOTKV.EFFECT", "item", "70", "alice", "3"}});
}

TEST_CASE("stream effects become the commands Redis propagates for streams", "[effect_commands]") {
  CHECK(cmds(op("st", OpCode::kStreamCreate, {})) ==
        V{{"XGROUP", "CREATE", "st", "__hotkv_create__", "$", "MKSTREAM"},
          {"XGROUP", "DESTROY", "st", "__hotkv_create__"}});
  CHECK(cmds(op("st", OpCode::kStreamAdd, {"5-1", "f", "v"})) ==
        V{{"XADD", "st", "5-1", "f", "v"}});
  CHECK(cmds(op("st", OpCode::kStreamDelete, {"5-1", "6-0"})) == V{{"XDEL", "st", "5-1", "6-0"}});
  CHECK(cmds(op("st", OpCode::kStreamTrimBefore, {"6-0"})) ==
        V{{"XTRIM", "st", "MINID", "=", "6-0"}});
  CHECK(cmds(op("st", OpCode::kStreamSetMeta, {"9-0", "3", "5-1"})) ==
        V{{"XSETID", "st", "9-0", "ENTRIESADDED", "3", "MAXDELETEDID", "5-1"}});
  CHECK(cmds(op("st", OpCode::kGroupCreate, {"g", "0-0", "0"})) ==
        V{{"XGROUP", "CREATE", "st", "g", "0-0", "ENTRIESREAD", "0"}});
  CHECK(cmds(op("st", OpCode::kGroupSetId, {"g", "5-1", "1"})) ==
        V{{"XGROUP", "SETID", "st", "g", "5-1", "ENTRIESREAD", "1"}});
  CHECK(cmds(op("st", OpCode::kGroupDestroy, {"g"})) == V{{"XGROUP", "DESTROY", "st", "g"}});
  CHECK(cmds(op("st", OpCode::kConsumerTouch, {"g", "c", "100", "100"})) ==
        V{{"XGROUP", "CREATECONSUMER", "st", "g", "c"}});
  CHECK(cmds(op("st", OpCode::kConsumerDelete, {"g", "c"})) ==
        V{{"XGROUP", "DELCONSUMER", "st", "g", "c"}});
  CHECK(
      cmds(op("st", OpCode::kPelSet, {"g", "c", "100", "5-1", "1", "6-0", "3"})) ==
      V{{"XCLAIM", "st", "g", "c", "0", "5-1", "TIME", "100", "RETRYCOUNT", "1", "FORCE", "JUSTID"},
        {"XCLAIM", "st", "g", "c", "0", "6-0", "TIME", "100", "RETRYCOUNT", "3", "FORCE",
         "JUSTID"}});
  CHECK(cmds(op("st", OpCode::kPelAck, {"g", "5-1"})) == V{{"XACK", "st", "g", "5-1"}});
}

TEST_CASE("a malformed or unknown op is refused with an error", "[effect_commands]") {
  CommandSink sink;
  std::string error;
  CHECK_FALSE(hotkv::effect_to_commands(op("h", OpCode::kHashSet, {"f"}), sink, error));
  CHECK(error.find("hash.set") != std::string::npos);
  CHECK_FALSE(hotkv::effect_to_commands(op("z", OpCode::kZSetAdd, {"x", "m"}), sink, error));
  CHECK_FALSE(hotkv::effect_to_commands(op("st", OpCode::kStreamSetMeta, {"1-0"}), sink, error));
  Effect unknown = op("k", OpCode::kHashSet, {});
  unknown.op = 250;
  CHECK_FALSE(hotkv::effect_to_commands(unknown, sink, error));
  CHECK(sink.commands().empty());
}

TEST_CASE("SELECT is sent only when the database changes, across operations", "[effect_commands]") {
  CommandStreamState st;
  Record a = record({put("a", "1")});
  Record b = record({put("b", "2")});
  Record c = record({put("c", "3", -1, 2)});
  CHECK(translate({&a}, st) == V{{"SELECT", "0"}, {"SET", "a", "1"}});
  CHECK(translate({&b}, st) == V{{"SET", "b", "2"}});
  CHECK(translate({&c}, st) == V{{"SELECT", "2"}, {"SET", "c", "3"}});
  CHECK(st.db == 2);
  SECTION("SWAPDB needs no database") {
    Record s = record({swapdb(0, 1)});
    CHECK(translate({&s}, st) == V{{"SWAPDB", "0", "1"}});
    CHECK(st.db == 2);
  }
  SECTION("an encoding-only op sends nothing at all") {
    Record n = record({op("h", OpCode::kHashConvert, {})});
    CHECK(translate({&n}, st).empty());
  }
}

TEST_CASE("an operation with several commands is wrapped in MULTI/EXEC", "[effect_commands]") {
  CommandStreamState st;
  st.db = 0;
  SECTION("one record of several effects") {
    Record r = record({put("a", "1"), plain(EffectKind::kDel, "b")});
    CHECK(translate({&r}, st) == V{{"MULTI"}, {"SET", "a", "1"}, {"DEL", "b"}, {"EXEC"}});
  }
  SECTION("the first database is selected before MULTI, later ones inside and again after") {
    Record r = record({put("a", "1", -1, 3), put("b", "2", -1, 4)});
    CHECK(translate({&r}, st) == V{{"SELECT", "3"},
                                   {"MULTI"},
                                   {"SET", "a", "1"},
                                   {"SELECT", "4"},
                                   {"SET", "b", "2"},
                                   {"EXEC"},
                                   {"SELECT", "4"}});
    CHECK(st.db == 4);
  }
  SECTION("one effect giving two commands") {
    Record r = record({op("st", OpCode::kStreamCreate, {})});
    V out = translate({&r}, st);
    CHECK(out.front() == CommandArgv{"MULTI"});
    CHECK(out.back() == CommandArgv{"EXEC"});
  }
  SECTION("the parts of a cross-shard transaction are one transaction") {
    Record p1 = record({plain(EffectKind::kDel, "src")}, 7, 2);
    Record p2 = record({put("dst", "v")}, 7, 2);
    CHECK(translate({&p1, &p2}, st) == V{{"MULTI"}, {"DEL", "src"}, {"SET", "dst", "v"}, {"EXEC"}});
  }
  SECTION("a failed translation leaves the output and the state alone") {
    Record r = record({put("a", "1", -1, 5), op("h", OpCode::kHashSet, {"f"})});
    std::vector<CommandArgv> out;
    std::string error;
    const Record* parts[] = {&r};
    CHECK_FALSE(hotkv::operation_to_commands(parts, st, out, error));
    CHECK(out.empty());
    CHECK(st.db == 0);
  }
}

TEST_CASE("a cross-shard flush or swapdb is sent once, in its place among the parts' effects",
          "[effect_commands]") {
  CommandStreamState st;
  st.db = 0;
  SECTION("FLUSHALL: one FLUSHDB per database, not per shard") {
    Record p1 = record({plain(EffectKind::kFlush, "", 0), plain(EffectKind::kFlush, "", 2)}, 9, 3);
    Record p2 = record({plain(EffectKind::kFlush, "", 0), plain(EffectKind::kFlush, "", 2)}, 9, 3);
    Record p3 = record({plain(EffectKind::kFlush, "", 0), plain(EffectKind::kFlush, "", 2)}, 9, 3);
    CHECK(translate({&p1, &p2, &p3}, st) ==
          V{{"MULTI"}, {"FLUSHDB"}, {"SELECT", "2"}, {"FLUSHDB"}, {"EXEC"}, {"SELECT", "2"}});
  }
  SECTION("FLUSHDB alone") {
    Record p1 = record({plain(EffectKind::kFlush, "", 0)}, 9, 2);
    Record p2 = record({plain(EffectKind::kFlush, "", 0)}, 9, 2);
    CHECK(translate({&p1, &p2}, st) == V{{"FLUSHDB"}});
  }
  SECTION("SWAPDB") {
    Record p1 = record({swapdb(0, 1)}, 9, 2);
    Record p2 = record({swapdb(0, 1)}, 9, 2);
    CHECK(translate({&p1, &p2}, st) == V{{"SWAPDB", "0", "1"}});
  }
  SECTION("a transaction writing before and after a flush keeps that order") {
    Record p1 = record({put("a", "1"), plain(EffectKind::kFlush, "", 0), put("c", "3")}, 9, 2);
    Record p2 = record({put("b", "2"), plain(EffectKind::kFlush, "", 0)}, 9, 2);
    CHECK(translate({&p1, &p2}, st) == V{{"MULTI"},
                                         {"SET", "a", "1"},
                                         {"SET", "b", "2"},
                                         {"FLUSHDB"},
                                         {"SET", "c", "3"},
                                         {"EXEC"}});
  }
}

TEST_CASE("RESP encoding is what a client sends", "[effect_commands]") {
  std::string out;
  hotkv::append_resp_command({"SET", "k", ""}, out);
  CHECK(out == "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n");
  CommandStreamState st;
  Record r = record({put("a", "1")});
  const Record* parts[] = {&r};
  std::string error;
  out.clear();
  REQUIRE(hotkv::operation_to_resp(parts, st, out, error));
  CHECK(out == "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n1\r\n");
}

TEST_CASE("merging shard logs hands a cross-shard operation over once, in order",
          "[effect_commands]") {
  std::vector<std::vector<Record>> shards(2);
  shards[0].push_back(record({put("a0", "1")}));
  shards[0].push_back(record({plain(EffectKind::kFlush, "", 0)}, 5, 2));
  shards[0].push_back(record({put("a1", "1")}));
  shards[1].push_back(record({put("b0", "1")}));
  shards[1].push_back(record({put("b1", "1")}));
  shards[1].push_back(record({plain(EffectKind::kFlush, "", 0)}, 5, 2));
  shards[1].push_back(record({put("b2", "1")}));
  std::vector<std::string> order;
  size_t left = hotkv::merge_shard_logs(shards, [&](std::span<const Record* const> op) {
    order.push_back(op.size() == 1 ? op[0]->effects[0].key : "flush x" + std::to_string(op.size()));
  });
  CHECK(left == 0);
  // Everything logged before the flush on either shard comes first, everything after later.
  REQUIRE(order.size() == 6);
  auto at = [&](const std::string& k) {
    return std::find(order.begin(), order.end(), k) - order.begin();
  };
  CHECK(at("flush x2") == 3);
  CHECK(at("a0") < 3);
  CHECK(at("b0") < at("b1"));
  CHECK(at("b1") < 3);
  CHECK(at("a1") > 3);
  CHECK(at("b2") > 3);

  SECTION("an incomplete cross-shard operation stops its shards there") {
    shards[1].pop_back();
    shards[1].pop_back();
    order.clear();
    left = hotkv::merge_shard_logs(
        shards, [&](std::span<const Record* const> op) { order.push_back(op[0]->effects[0].key); });
    CHECK(left == 2);
    CHECK(order == std::vector<std::string>{"a0", "b0", "b1"});
  }
}
