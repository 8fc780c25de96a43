// INV.* through the real table and shards with a manual clock: every command's replies and
// errors, the hold races (commit, release and expiry: the first wins, retries answer what
// happened), hold expiry by the timing wheel (expire_cycle runs the same hook as the shard's
// timer), retention and purge, the cross-shard cart with four shards, AUDIT, events
// (keyspace notifications and the EVENTS stream, with blocked readers woken), the generic key
// commands on inventory keys, and persistence: encode_value and the logged effects replayed
// with apply_op_effect into a fresh server, including holds that expire after a restart.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "hotkv/commands/command_call.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/exec/plan.hpp"
#include "hotkv/persist/record.hpp"
#include "hotkv/shard/blocking.hpp"
#include "hotkv/shard/op_effects.hpp"
#include "hotkv/shard/shard.hpp"
#include "hotkv/shard/slot.hpp"
#include "hotkv/types/inventory.hpp"
#include "hotkv/types/stream.hpp"
#include "hotkv/util/clock.hpp"
#include "support/replay.hpp"
#include "support/resp_value.hpp"
#include "support/test_server.hpp"

using hotkv::Effect;
using hotkv::EffectKind;
using hotkv::OpCode;
using hotkv::test::bulk;
using hotkv::test::error;
using hotkv::test::integer;
using hotkv::test::kNil;
using hotkv::test::kOk;
using hotkv::test::parse_resp;
using hotkv::test::Resp;
using hotkv::test::LogFile;
using hotkv::test::replay;
using hotkv::test::TestServer;

namespace {


bool is_error(const std::string& reply, const std::string& code) {
  return reply.rfind("-" + code + " ", 0) == 0;
}

struct Counts {
  int64_t total, available, held, sold, holds;
  bool operator==(const Counts&) const = default;
};

Counts counts(TestServer& s, const std::string& key) {
  Resp r = parse_resp(s.run({"INV.GET", key}));
  REQUIRE(r.type == '*');
  return {r["total"].num, r["available"].num, r["held"].num, r["sold"].num, r["holds"].num};
}

std::string state_of(TestServer& s, const std::string& key, const std::string& hold) {
  Resp r = parse_resp(s.run({"INV.HOLD", key, hold}));
  return r.null ? "none" : r["state"].str;
}


// Every inventory op effect in a log, as "op:key:arg,arg,...".
std::vector<std::string> inventory_ops(const std::string& log) {
  std::vector<std::string> out;
  hotkv::RecordDecoder dec(log);
  hotkv::Record r;
  while (dec.next(r) == hotkv::DecodeStatus::kOk) {
    for (const Effect& e : r.effects) {
      if (e.kind != EffectKind::kOp || e.op < hotkv::kInventoryOpFirst) {
        continue;
      }
      std::string text = std::to_string(e.op) + ":" + e.key + ":";
      for (size_t i = 0; i < e.args.size(); ++i) {
        text += (i > 0 ? "," : "") + e.args[i];
      }
      out.push_back(text);
    }
  }
  return out;
}

// Everything observable about an item and the named holds.
std::string snapshot(TestServer& s, const std::string& key, std::vector<std::string> holds) {
  std::string out = s.run3({"INV.GET", key});
  for (const auto& h : holds) {
    out += s.run3({"INV.HOLD", key, h});
  }
  out += s.run({"INV.AUDIT", key});
  out += s.run({"PTTL", key});
  return out;
}

}  // namespace

TEST_CASE("INV.CREATE makes an item and INV.GET reports its counters", "[inventory]") {
  TestServer s;
  REQUIRE(s.run({"INV.CREATE", "sneaker", "500"}) == kOk);
  CHECK(s.run({"INV.GET", "sneaker"}) ==
        "*10\r\n" + bulk("total") + integer(500) + bulk("available") + integer(500) + bulk("held") +
            integer(0) + bulk("sold") + integer(0) + bulk("holds") + integer(0));
  CHECK(s.run3({"INV.GET", "sneaker"}) ==
        "%5\r\n" + bulk("total") + integer(500) + bulk("available") + integer(500) + bulk("held") +
            integer(0) + bulk("sold") + integer(0) + bulk("holds") + integer(0));
  CHECK(s.run({"INV.GET", "missing"}) == kNil);
  CHECK(s.run({"TYPE", "sneaker"}) == "+inventory\r\n");
  CHECK(s.run({"OBJECT", "ENCODING", "sneaker"}) == bulk("inventory"));
  CHECK(s.run({"EXISTS", "sneaker"}) == integer(1));
}

TEST_CASE("INV.CREATE refuses existing keys and bad arguments", "[inventory]") {
  TestServer s;
  REQUIRE(s.run({"INV.CREATE", "item", "5"}) == kOk);
  CHECK(s.run({"INV.CREATE", "item", "5"}) == error("BUSYKEY Target key name already exists."));
  REQUIRE(s.run({"SET", "str", "x"}) == kOk);
  CHECK(s.run({"INV.CREATE", "str", "5"}) == error("BUSYKEY Target key name already exists."));
  CHECK(s.run({"INV.CREATE", "n", "-1"}) == error("ERR total must be a non-negative integer"));
  CHECK(s.run({"INV.CREATE", "n", "ten"}) == error("ERR value is not an integer or out of range"));
  CHECK(s.run({"INV.CREATE", "n", "5", "MAXPEROWNER", "0"}) ==
        error("ERR MAXPEROWNER must be a positive integer"));
  CHECK(s.run({"INV.CREATE", "n", "5", "MAXHOLD", "-3"}) ==
        error("ERR MAXHOLD must be a positive integer"));
  CHECK(s.run({"INV.CREATE", "n", "5", "MAXHOLD"}) == error("ERR syntax error"));
  CHECK(s.run({"INV.CREATE", "n", "5", "COLOR", "red"}) == error("ERR syntax error"));
  CHECK(s.run({"INV.CREATE", "{n}", "5", "EVENTS", "{n}"}) ==
        error("ERR the EVENTS stream must be another key than the item"));
  CHECK(s.run({"INV.CREATE", "{n}item", "5", "EVENTS", "{m}ev"}) ==
        error("ERR the EVENTS stream '{m}ev' must be in the same hash slot as '{n}item': give "
              "both the same {hash tag}"));
  REQUIRE(s.run({"SET", "{n}str", "x"}) == kOk);
  CHECK(s.run({"INV.CREATE", "{n}item", "5", "EVENTS", "{n}str"}) ==
        error("WRONGTYPE Operation against a key holding the wrong kind of value"));
  CHECK(s.run({"EXISTS", "n", "{n}item"}) == integer(0));
  // "ok" hashes like the tag {ok}: the same slot. Options are case-insensitive.
  CHECK(s.run({"INV.CREATE", "ok", "0", "maxperowner", "2", "maxhold", "1000", "events",
               "{ok}ev"}) == kOk);
  CHECK(counts(s, "ok") == Counts{0, 0, 0, 0, 0});
}

TEST_CASE("INV.RESERVE takes stock into a hold and replies what is left", "[inventory]") {
  TestServer s;
  REQUIRE(s.run({"INV.CREATE", "item", "10"}) == kOk);
  CHECK(s.run({"INV.RESERVE", "item", "order-1", "3", "600000"}) == integer(7));
  CHECK(s.run({"INV.RESERVE", "item", "order-2", "1", "600000", "OWNER", "customer:42"}) ==
        integer(6));
  CHECK(counts(s, "item") == Counts{10, 6, 4, 0, 2});
  Resp h = parse_resp(s.run3({"INV.HOLD", "item", "order-2"}));
  CHECK(h["state"].str == "held");
  CHECK(h["qty"].num == 1);
  CHECK(h["owner"].str == "customer:42");
  CHECK(h["created_at"].num == s.now());
  CHECK(h["expires_at"].num == s.now() + 600000);
  CHECK(h["ttl_ms"].num == 600000);
  CHECK(h["settled_at"].num == -1);
  SECTION("bad arguments are refused before anything moves") {
    CHECK(s.run({"INV.RESERVE", "item", "x", "0", "1000"}) ==
          error("ERR quantity must be a positive integer"));
    CHECK(s.run({"INV.RESERVE", "item", "x", "1", "0"}) ==
          error("ERR invalid expire time in 'inv.reserve' command"));
    CHECK(s.run({"INV.RESERVE", "item", "x", "1", "9223372036854775807"}) ==
          error("ERR invalid expire time in 'inv.reserve' command"));
    CHECK(s.run({"INV.RESERVE", "item", "x", "1", "1000", "OWNER"}) == error("ERR syntax error"));
    CHECK(s.run({"INV.RESERVE", "item", "x", "1", "1000", "OWNER", ""}) ==
          error("ERR OWNER must not be empty"));
    CHECK(s.run({"INV.RESERVE", "item", "", "1", "1000"}) ==
          error("ERR hold id must not be empty"));
    CHECK(s.run({"INV.RESERVE", "nothing", "x", "1", "1000"}) == error("ERR no such key"));
    CHECK(counts(s, "item") == Counts{10, 6, 4, 0, 2});
  }
}

TEST_CASE("INV.RESERVE answers sold out owner limit and existing hold distinctly", "[inventory]") {
  TestServer s;
  REQUIRE(s.run({"INV.CREATE", "item", "3", "MAXPEROWNER", "2"}) == kOk);
  CHECK(s.run({"INV.RESERVE", "item", "a", "2", "1000", "OWNER", "alice"}) == integer(1));
  CHECK(s.run({"INV.RESERVE", "item", "b", "1", "1000", "OWNER", "alice"}) ==
        error("OWNERLIMIT owner 'alice' holds 2 of 'item' and asked for 1 more; the limit is 2"));
  CHECK(s.run({"INV.RESERVE", "item", "c", "2", "1000", "OWNER", "bob"}) ==
        error("SOLDOUT not enough stock for 'item': 1 available, 2 requested"));
  CHECK(s.run({"INV.RESERVE", "item", "a", "1", "1000", "OWNER", "bob"}) ==
        error("HOLDEXISTS hold 'a' of 'item' already exists (held)"));
  CHECK(s.run({"INV.RESERVE", "item", "c", "1", "1000", "OWNER", "bob"}) == integer(0));
  CHECK(s.run({"INV.RESERVE", "item", "d", "1", "1000"}) ==
        error("SOLDOUT not enough stock for 'item': 0 available, 1 requested"));
  CHECK(counts(s, "item") == Counts{3, 0, 3, 0, 2});
}

TEST_CASE("MAXPEROWNER counts what an owner bought, through purges and rebuilds",
          "[inventory]") {
  TestServer s;
  REQUIRE(s.run({"INV.CREATE", "item", "10", "MAXPEROWNER", "1"}) == kOk);
  REQUIRE(s.run({"INV.RESERVE", "item", "h1", "1", "1000", "OWNER", "alice"}) == integer(9));
  REQUIRE(s.run({"INV.COMMIT", "item", "h1"}) == integer(1));
  // One pair per customer: the pair alice paid for still counts against her.
  std::string refused =
      error("OWNERLIMIT owner 'alice' holds 0 and bought 1 of 'item' and asked for 1 more; the "
            "limit is 1");
  CHECK(s.run({"INV.RESERVE", "item", "h2", "1", "1000", "OWNER", "alice"}) == refused);
  // Units given back do not count: a release and an expiry leave the owner free again.
  REQUIRE(s.run({"INV.RESERVE", "item", "h3", "1", "1000", "OWNER", "bob"}) == integer(8));
  REQUIRE(s.run({"INV.RELEASE", "item", "h3"}) == integer(1));
  REQUIRE(s.run({"INV.RESERVE", "item", "h4", "1", "500", "OWNER", "bob"}) == integer(8));
  s.advance(600);
  REQUIRE(s.expire_cycle() == 1);
  CHECK(s.run({"INV.RESERVE", "item", "h5", "1", "1000", "OWNER", "bob"}) == integer(8));
  // The committed record is purged after its retention; the count stays.
  s.advance(700'000);
  s.expire_cycle();
  REQUIRE(s.run({"INV.HOLD", "item", "h1"}).find("committed") == std::string::npos);
  CHECK(s.run({"INV.RESERVE", "item", "h6", "1", "1000", "OWNER", "alice"}) == refused);
  CHECK(s.run({"INV.AUDIT", "item"}) == "*0\r\n");
  // A rebuilt item (the rewrite, COPY, RENAME) keeps it too.
  std::string buf = hotkv::test::encode_key(s, "item", nullptr);
  TestServer b;
  b.advance(s.now() - b.now());
  replay(buf, b);
  CHECK(b.run({"INV.RESERVE", "item", "h7", "1", "1000", "OWNER", "alice"}) == refused);
  CHECK(b.run({"INV.RESERVE", "item", "h7", "1", "1000", "OWNER", "carol"}) == integer(8));
  REQUIRE(s.run({"COPY", "item", "copy"}) == integer(1));
  CHECK(s.run({"INV.RESERVE", "copy", "h8", "1", "1000", "OWNER", "alice"}) ==
        error("OWNERLIMIT owner 'alice' holds 0 and bought 1 of 'copy' and asked for 1 more; "
              "the limit is 1"));
}

TEST_CASE("A retried INV.RESERVE never takes a second unit", "[inventory]") {
  TestServer s;
  REQUIRE(s.run({"INV.CREATE", "item", "5"}) == kOk);
  REQUIRE(s.run({"CONFIG", "SET", "inventory-hold-retention-ms", "60000"}) == kOk);
  REQUIRE(s.run({"INV.RESERVE", "item", "h", "1", "1000"}) == integer(4));
  CHECK(s.run({"INV.RESERVE", "item", "h", "1", "1000"}) ==
        error("HOLDEXISTS hold 'h' of 'item' already exists (held)"));
  SECTION("after the commit the retry hears it was committed") {
    REQUIRE(s.run({"INV.COMMIT", "item", "h"}) == integer(1));
    CHECK(s.run({"INV.RESERVE", "item", "h", "1", "1000"}) ==
          error("HOLDEXISTS hold 'h' of 'item' already exists (committed)"));
    CHECK(counts(s, "item") == Counts{5, 4, 0, 1, 0});
  }
  SECTION("a due hold is reported expired even before the wheel ran") {
    s.advance(1000);
    CHECK(s.run({"INV.RESERVE", "item", "h", "1", "1000"}) ==
          error("HOLDEXISTS hold 'h' of 'item' already exists (expired)"));
    REQUIRE(s.expire_cycle() == 1);
    CHECK(counts(s, "item") == Counts{5, 5, 0, 0, 0});
    SECTION("once the retention passed the id can be reserved again") {
      s.advance(60000);
      s.expire_cycle();
      CHECK(s.run({"INV.RESERVE", "item", "h", "2", "1000"}) == integer(3));
      CHECK(state_of(s, "item", "h") == "held");
    }
  }
}

TEST_CASE("INV.COMMIT and INV.RELEASE are idempotent and name the winner", "[inventory]") {
  TestServer s;
  REQUIRE(s.run({"INV.CREATE", "item", "10"}) == kOk);
  REQUIRE(s.run({"INV.RESERVE", "item", "paid", "2", "10000"}) == integer(8));
  REQUIRE(s.run({"INV.RESERVE", "item", "gone", "3", "10000"}) == integer(5));
  CHECK(s.run({"INV.COMMIT", "item", "paid"}) == integer(1));
  CHECK(s.run({"INV.COMMIT", "item", "paid"}) == integer(0));
  CHECK(s.run({"INV.RELEASE", "item", "paid"}) ==
        error("COMMITTED hold 'paid' was already committed"));
  CHECK(s.run({"INV.EXTEND", "item", "paid", "1000"}) ==
        error("COMMITTED hold 'paid' was already committed"));
  CHECK(s.run({"INV.RELEASE", "item", "gone"}) == integer(1));
  CHECK(s.run({"INV.RELEASE", "item", "gone"}) == integer(0));
  CHECK(s.run({"INV.COMMIT", "item", "gone"}) ==
        error("RELEASED hold 'gone' was already released"));
  CHECK(s.run({"INV.COMMIT", "item", "nope"}) == error("NOHOLD no hold 'nope' for 'item'"));
  CHECK(s.run({"INV.RELEASE", "nothing", "x"}) == error("ERR no such key"));
  CHECK(counts(s, "item") == Counts{10, 8, 0, 2, 0});
  CHECK(s.run({"INV.AUDIT", "item"}) == "*0\r\n");
}

TEST_CASE("A commit at the deadline loses to expiry even before the wheel runs", "[inventory]") {
  TestServer s;
  REQUIRE(s.run({"INV.CREATE", "item", "1"}) == kOk);
  REQUIRE(s.run({"INV.RESERVE", "item", "h", "1", "5000"}) == integer(0));
  SECTION("one millisecond before the deadline the commit wins") {
    s.advance(4999);
    CHECK(s.run({"INV.COMMIT", "item", "h"}) == integer(1));
    s.advance(1);
    CHECK(s.expire_cycle() == 1);  // the entry fires and finds a committed hold
    CHECK(counts(s, "item") == Counts{1, 0, 0, 1, 0});
  }
  SECTION("at the deadline expiry wins and the stock returns once") {
    s.advance(5000);
    CHECK(s.run({"INV.COMMIT", "item", "h"}) == error("EXPIRED hold 'h' expired before this call"));
    CHECK(counts(s, "item") == Counts{1, 1, 0, 0, 0});
    CHECK(s.run({"INV.RELEASE", "item", "h"}) ==
          error("EXPIRED hold 'h' expired before this call"));
    s.expire_cycle();
    CHECK(counts(s, "item") == Counts{1, 1, 0, 0, 0});
    CHECK(s.run({"INV.AUDIT"}) == "*0\r\n");
  }
  SECTION("the wheel expires it first and the late commit hears so") {
    s.advance(5000);
    CHECK(s.expire_cycle() == 1);
    CHECK(counts(s, "item") == Counts{1, 1, 0, 0, 0});
    CHECK(s.run({"INV.COMMIT", "item", "h"}) == error("EXPIRED hold 'h' expired before this call"));
    CHECK(counts(s, "item") == Counts{1, 1, 0, 0, 0});
  }
}

TEST_CASE("The timing wheel expires holds at their deadline exactly once", "[inventory]") {
  TestServer s;
  REQUIRE(s.run({"INV.CREATE", "item", "100"}) == kOk);
  for (int i = 0; i < 50; ++i) {
    REQUIRE(s.run({"INV.RESERVE", "item", "h" + std::to_string(i), "1",
                   std::to_string(1000 + i * 10)}) == integer(99 - i));
  }
  s.advance(999);
  CHECK(s.expire_cycle() == 0);
  CHECK(counts(s, "item") == Counts{100, 50, 50, 0, 50});
  s.advance(1);
  CHECK(s.expire_cycle() == 1);
  CHECK(counts(s, "item") == Counts{100, 51, 49, 0, 49});
  s.advance(245);
  CHECK(s.expire_cycle() == 24);
  CHECK(counts(s, "item") == Counts{100, 75, 25, 0, 25});
  s.advance(10000);
  CHECK(s.expire_cycle() == 25);
  CHECK(s.expire_cycle() == 0);
  CHECK(counts(s, "item") == Counts{100, 100, 0, 0, 0});
  CHECK(state_of(s, "item", "h7") == "expired");
  Resp h = parse_resp(s.run({"INV.HOLD", "item", "h7"}));
  CHECK(h["settled_at"].num == h["expires_at"].num);
  CHECK(h["ttl_ms"].num == -1);
  CHECK(s.run({"INV.AUDIT"}) == "*0\r\n");
}

TEST_CASE("Expiry work is bounded per round and the rest follows", "[inventory]") {
  // The wheels start at the real time: a manual clock ahead of it keeps their backlog exact.
  TestServer s(1, hotkv::unix_ms() + 100'000'000);
  REQUIRE(s.run({"INV.CREATE", "item", "5000"}) == kOk);
  for (int i = 0; i < 5000; ++i) {
    REQUIRE(s.run({"INV.RESERVE", "item", std::to_string(i), "1", "1000"}) == integer(4999 - i));
  }
  s.advance(1000);
  REQUIRE(s.engine().shard(0).expire_holds(s.now(), hotkv::Shard::kExpiryBatch) ==
          hotkv::Shard::kExpiryBatch);
  CHECK(counts(s, "item").available == 2000);
  CHECK(s.engine().shard(0).keyspace(0).hold_backlog(s.now()) == 3000);
  CHECK(s.expire_cycle() == 3000);
  CHECK(counts(s, "item") == Counts{5000, 5000, 0, 0, 0});
}

TEST_CASE("No hold expires while the data set is loading", "[inventory]") {
  TestServer s;
  REQUIRE(s.run({"INV.CREATE", "item", "1"}) == kOk);
  REQUIRE(s.run({"INV.RESERVE", "item", "h", "1", "100"}) == integer(0));
  s.advance(100);
  s.engine().set_loading(true);
  CHECK_FALSE(s.engine().shard(0).expire_holds(s.now(), 100).has_value());
  CHECK(s.expire_cycle() == 0);
  s.engine().set_loading(false);
  CHECK(counts(s, "item").available == 0);
  CHECK(s.expire_cycle() == 1);
  CHECK(counts(s, "item").available == 1);
}

TEST_CASE("Settled holds stay answerable for the retention period then are purged", "[inventory]") {
  TestServer s;
  CHECK(s.run({"CONFIG", "GET", "inventory-hold-retention-ms"}) ==
        "*2\r\n" + bulk("inventory-hold-retention-ms") + bulk("600000"));
  REQUIRE(s.run({"CONFIG", "SET", "inventory-hold-retention-ms", "30000"}) == kOk);
  CHECK(s.run({"CONFIG", "SET", "inventory-hold-retention-ms", "-1"}).rfind("-ERR", 0) == 0);
  REQUIRE(s.run({"INV.CREATE", "item", "2"}) == kOk);
  REQUIRE(s.run({"INV.RESERVE", "item", "late", "1", "1000"}) == integer(1));
  REQUIRE(s.run({"INV.RESERVE", "item", "paid", "1", "1000"}) == integer(0));
  REQUIRE(s.run({"INV.COMMIT", "item", "paid"}) == integer(1));
  s.advance(1000);
  REQUIRE(s.expire_cycle() == 2);  // "late" expires; the entry of committed "paid" is stale
  // The payment webhook arrives late: it hears "expired", not "no such hold".
  s.advance(28999);
  CHECK(s.run({"INV.COMMIT", "item", "late"}) ==
        error("EXPIRED hold 'late' expired before this call"));
  CHECK(s.run({"INV.COMMIT", "item", "paid"}) == integer(0));
  CHECK(s.expire_cycle() == 0);
  s.advance(1);  // "paid" was committed 30 s ago: its record is purged
  CHECK(s.expire_cycle() == 1);
  CHECK(s.run({"INV.COMMIT", "item", "paid"}) == error("NOHOLD no hold 'paid' for 'item'"));
  CHECK(s.engine().shard(0).keyspace(0).find("item", s.now())->inventory()->hold_records() == 1);
  s.advance(1000);
  CHECK(s.run({"INV.COMMIT", "item", "late"}) == error("NOHOLD no hold 'late' for 'item'"));
  CHECK(s.run({"INV.HOLD", "item", "late"}) == kNil);
  CHECK(s.expire_cycle() == 1);
  CHECK(s.engine().shard(0).keyspace(0).find("item", s.now())->inventory()->hold_records() == 0);
  CHECK(counts(s, "item") == Counts{2, 1, 0, 1, 0});
}

TEST_CASE("INV.EXTEND moves the deadline within MAXHOLD from the hold's creation", "[inventory]") {
  TestServer s;
  REQUIRE(s.run({"INV.CREATE", "item", "5", "MAXHOLD", "10000"}) == kOk);
  REQUIRE(s.run({"INV.RESERVE", "item", "h", "1", "20000"}) == integer(4));
  CHECK(parse_resp(s.run({"INV.HOLD", "item", "h"}))["ttl_ms"].num == 10000);
  s.advance(3000);
  CHECK(s.run({"INV.EXTEND", "item", "h", "2000"}) == integer(2000));
  CHECK(s.run({"INV.EXTEND", "item", "h", "50000"}) == integer(7000));
  s.advance(2000);
  CHECK(s.expire_cycle() == 1);  // the entry for the shortened deadline is stale
  CHECK(state_of(s, "item", "h") == "held");
  s.advance(5000);
  CHECK(s.run({"INV.EXTEND", "item", "h", "1000"}) ==
        error("EXPIRED hold 'h' expired before this call"));
  CHECK(counts(s, "item") == Counts{5, 5, 0, 0, 0});
  CHECK(s.run({"INV.EXTEND", "item", "h", "0"}) ==
        error("ERR invalid expire time in 'inv.extend' command"));
  CHECK(s.run({"INV.EXTEND", "item", "x", "10"}) == error("NOHOLD no hold 'x' for 'item'"));
  SECTION("without MAXHOLD a hold can be extended as far as asked") {
    REQUIRE(s.run({"INV.CREATE", "free", "1"}) == kOk);
    REQUIRE(s.run({"INV.RESERVE", "free", "h", "1", "1000"}) == integer(0));
    CHECK(s.run({"INV.EXTEND", "free", "h", "3600000"}) == integer(3600000));
  }
}

TEST_CASE("INV.HOLD reports a hold as a map in both protocols", "[inventory]") {
  TestServer s;
  REQUIRE(s.run({"INV.CREATE", "item", "5"}) == kOk);
  REQUIRE(s.run({"INV.RESERVE", "item", "h", "2", "1000"}) == integer(3));
  std::string t0 = std::to_string(s.now());
  std::string t1 = std::to_string(s.now() + 1000);
  CHECK(s.run({"INV.HOLD", "item", "h"}) ==
        "*14\r\n" + bulk("state") + bulk("held") + bulk("qty") + integer(2) + bulk("owner") +
            "$-1\r\n" + bulk("created_at") + ":" + t0 + "\r\n" + bulk("expires_at") + ":" + t1 +
            "\r\n" + bulk("ttl_ms") + integer(1000) + bulk("settled_at") + integer(-1));
  s.advance(1000);
  CHECK(s.run3({"INV.HOLD", "item", "h"}) ==
        "%7\r\n" + bulk("state") + bulk("expired") + bulk("qty") + integer(2) + bulk("owner") +
            "_\r\n" + bulk("created_at") + ":" + t0 + "\r\n" + bulk("expires_at") + ":" + t1 +
            "\r\n" + bulk("ttl_ms") + integer(-1) + bulk("settled_at") + ":" + t1 + "\r\n");
  CHECK(s.run({"INV.HOLD", "item", "other"}) == kNil);
  CHECK(s.run({"INV.HOLD", "missing", "h"}) == kNil);
}

TEST_CASE("INV.HOLDS scans the live holds with a cursor", "[inventory]") {
  TestServer s;
  REQUIRE(s.run({"INV.CREATE", "item", "100"}) == kOk);
  for (int i = 0; i < 25; ++i) {
    REQUIRE(s.run({"INV.RESERVE", "item", "h" + std::to_string(i), "1", "10000"}) != "");
  }
  REQUIRE(s.run({"INV.COMMIT", "item", "h3"}) == integer(1));
  REQUIRE(s.run({"INV.RELEASE", "item", "h4"}) == integer(1));
  std::vector<std::string> seen;
  std::string cursor = "0";
  int calls = 0;
  do {
    Resp r = parse_resp(s.run({"INV.HOLDS", "item", cursor, "COUNT", "7"}));
    REQUIRE(r.size() == 2);
    cursor = r.at(0).str;
    for (const auto& id : r.at(1).items) {
      seen.push_back(id.str);
    }
    ++calls;
  } while (cursor != "0" && calls < 100);
  std::sort(seen.begin(), seen.end());
  seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
  CHECK(seen.size() == 23);
  CHECK(std::find(seen.begin(), seen.end(), "h3") == seen.end());
  CHECK(calls >= 2);
  Resp all = parse_resp(s.run({"INV.HOLDS", "item", "COUNT", "1000"}));
  CHECK(all.at(0).str == "0");
  CHECK(all.at(1).size() == 23);
  CHECK(s.run({"INV.HOLDS", "missing"}) == "*2\r\n" + bulk("0") + "*0\r\n");
  CHECK(s.run({"INV.HOLDS", "item", "x"}) == error("ERR invalid cursor"));
  CHECK(s.run({"INV.HOLDS", "item", "0", "COUNT", "0"}) == error("ERR syntax error"));
  CHECK(s.run({"INV.HOLDS", "item", "0", "LIMIT", "3"}) == error("ERR syntax error"));
}

TEST_CASE("INV.RESTOCK changes the total but never below held plus sold", "[inventory]") {
  TestServer s;
  REQUIRE(s.run({"INV.CREATE", "item", "10"}) == kOk);
  REQUIRE(s.run({"INV.RESERVE", "item", "a", "4", "10000"}) == integer(6));
  REQUIRE(s.run({"INV.RESERVE", "item", "b", "2", "10000"}) == integer(4));
  REQUIRE(s.run({"INV.COMMIT", "item", "b"}) == integer(1));
  CHECK(s.run({"INV.RESTOCK", "item", "5"}) == integer(15));
  CHECK(counts(s, "item") == Counts{15, 9, 4, 2, 1});
  CHECK(s.run({"INV.RESTOCK", "item", "-9"}) == integer(6));
  CHECK(counts(s, "item") == Counts{6, 0, 4, 2, 1});
  CHECK(s.run({"INV.RESTOCK", "item", "-1"}) ==
        error("ERR restock would leave total 5 below held + sold (6)"));
  CHECK(s.run({"INV.RESTOCK", "item", "0"}) == integer(6));
  CHECK(s.run({"INV.RESTOCK", "item", "9223372036854775807"}) ==
        error("ERR increment or decrement would overflow"));
  CHECK(s.run({"INV.RESTOCK", "item", "x"}) ==
        error("ERR value is not an integer or out of range"));
  CHECK(s.run({"INV.RESTOCK", "missing", "1"}) == error("ERR no such key"));
  CHECK(counts(s, "item") == Counts{6, 0, 4, 2, 1});
}

TEST_CASE("INV.MRESERVE reserves a cart on four shards all or nothing", "[inventory]") {
  TestServer s(4);
  // Keys on four different shards.
  std::vector<std::string> keys;
  for (int i = 0; keys.size() < 4 && i < 1000; ++i) {
    std::string k = "sku:" + std::to_string(i);
    size_t shard = s.engine().shard_of(k);
    bool taken = false;
    for (const auto& other : keys) {
      taken = taken || s.engine().shard_of(other) == shard;
    }
    if (!taken) {
      keys.push_back(k);
    }
  }
  REQUIRE(keys.size() == 4);
  for (const auto& k : keys) {
    REQUIRE(s.run({"INV.CREATE", k, "3"}) == kOk);
  }
  REQUIRE(s.run({"INV.RESERVE", keys[3], "other", "2", "1000"}) == integer(1));
  SECTION("one item short means nothing is reserved") {
    CHECK(s.run({"INV.MRESERVE", "cart-1", "60000", keys[0], "1", keys[1], "2", keys[2], "3",
                 keys[3], "2"}) ==
          error("SOLDOUT not enough stock for '" + keys[3] + "': 1 available, 2 requested"));
    for (size_t i = 0; i < 3; ++i) {
      CHECK(counts(s, keys[i]) == Counts{3, 3, 0, 0, 0});
      CHECK(state_of(s, keys[i], "cart-1") == "none");
    }
    CHECK(s.run({"INV.MRESERVE", "other", "60000", keys[0], "1", keys[3], "1"}) ==
          error("HOLDEXISTS hold 'other' of '" + keys[3] + "' already exists (held)"));
    CHECK(counts(s, keys[0]) == Counts{3, 3, 0, 0, 0});
  }
  SECTION("a cart that fits is reserved on every shard") {
    CHECK(s.run({"INV.MRESERVE", "cart-1", "60000", keys[0], "1", keys[1], "2", keys[2], "3",
                 keys[3], "1"}) == "*4\r\n" + integer(2) + integer(1) + integer(0) + integer(0));
    CHECK(counts(s, keys[2]) == Counts{3, 0, 3, 0, 1});
    // Each line is a hold of its own: committed, released or expired item by item.
    CHECK(s.run({"INV.COMMIT", keys[0], "cart-1"}) == integer(1));
    CHECK(s.run({"INV.RELEASE", keys[1], "cart-1"}) == integer(1));
    s.advance(60000);
    CHECK(s.expire_cycle() >= 2);
    CHECK(counts(s, keys[0]) == Counts{3, 2, 0, 1, 0});
    CHECK(counts(s, keys[1]) == Counts{3, 3, 0, 0, 0});
    CHECK(counts(s, keys[2]) == Counts{3, 3, 0, 0, 0});
    CHECK(counts(s, keys[3]) == Counts{3, 3, 0, 0, 0});
    CHECK(s.run({"INV.AUDIT"}) == "*0\r\n");
  }
  SECTION("arguments are checked before any item is touched") {
    CHECK(s.run({"INV.MRESERVE", "c", "1000", keys[0], "1", keys[1]}) ==
          error("ERR wrong number of arguments for 'inv.mreserve' command"));
    CHECK(s.run({"INV.MRESERVE", "c", "1000", keys[0], "1", keys[0], "1"}) ==
          error("ERR item '" + keys[0] + "' appears twice in the cart"));
    CHECK(s.run({"INV.MRESERVE", "c", "1000", keys[0], "1", "nothing", "1"}) ==
          error("ERR no such key"));
    CHECK(s.run({"INV.MRESERVE", "c", "1000", keys[0], "0"}) ==
          error("ERR quantity must be a positive integer"));
    CHECK(s.run({"INV.MRESERVE", "c", "-5", keys[0], "1"}) ==
          error("ERR invalid expire time in 'inv.mreserve' command"));
    CHECK(counts(s, keys[0]) == Counts{3, 3, 0, 0, 0});
  }
}

TEST_CASE("INV.MRESERVE is routed atomically when its keys span shards", "[inventory]") {
  TestServer s(4);
  const hotkv::CommandSpec* spec = s.engine().table().find("INV.MRESERVE");
  REQUIRE(spec != nullptr);
  std::string other = "b";
  for (int i = 0; s.engine().shard_of(other) == s.engine().shard_of("a") && i < 100; ++i) {
    other = "b" + std::to_string(i);
  }
  REQUIRE(s.engine().shard_of(other) != s.engine().shard_of("a"));
  std::vector<std::string_view> argv{"INV.MRESERVE", "h", "1000", "a", "1", other, "1"};
  std::vector<size_t> idx;
  REQUIRE(hotkv::Table::key_indexes(*spec, argv, idx));
  CHECK(idx == std::vector<size_t>{3, 5});
  hotkv::Plan plan;
  hotkv::plan_command(*spec, argv, s.engine(), 0, 0, plan);
  CHECK(plan.mode == hotkv::RunMode::kAtomic);
  CHECK(plan.shards.size() == 2);
}

TEST_CASE("INV.MRESERVE OWNER applies each item's MAXPEROWNER to the whole cart", "[inventory]") {
  TestServer s(4);
  REQUIRE(s.run({"INV.CREATE", "shoe", "10", "MAXPEROWNER", "1"}) == kOk);
  REQUIRE(s.run({"INV.CREATE", "sock", "10", "MAXPEROWNER", "3"}) == kOk);
  REQUIRE(s.run({"INV.CREATE", "OWNER", "10"}) == kOk);  // an item may be called OWNER
  const hotkv::CommandSpec* spec = s.engine().table().find("INV.MRESERVE");
  REQUIRE(spec != nullptr);
  std::vector<size_t> idx;
  std::vector<std::string_view> with_owner{"INV.MRESERVE", "h", "1000", "owner", "ann",
                                           "shoe",         "1", "sock", "2"};
  REQUIRE(hotkv::Table::key_indexes(*spec, with_owner, idx));
  CHECK(idx == std::vector<size_t>{5, 7});

  CHECK(s.run({"INV.MRESERVE", "c1", "60000", "OWNER", "ann", "shoe", "1", "sock", "2"}) ==
        "*2\r\n" + integer(9) + integer(8));
  // A second cart would give ann a second shoe: refused, and the socks stay where they are.
  CHECK(s.run({"INV.MRESERVE", "c2", "60000", "OWNER", "ann", "sock", "1", "shoe", "1"}) ==
        error("OWNERLIMIT owner 'ann' holds 1 of 'shoe' and asked for 1 more; the limit is 1"));
  CHECK(counts(s, "sock") == Counts{10, 8, 2, 0, 1});
  // Once paid, the shoe still counts against ann; another owner is not limited by her.
  CHECK(s.run({"INV.COMMIT", "shoe", "c1"}) == integer(1));
  CHECK(s.run({"INV.MRESERVE", "c3", "60000", "OWNER", "ann", "shoe", "1"}) ==
        error("OWNERLIMIT owner 'ann' holds 0 and bought 1 of 'shoe' and asked for 1 more; the "
              "limit is 1"));
  CHECK(s.run({"INV.MRESERVE", "c3", "60000", "OWNER", "bob", "shoe", "1"}) ==
        "*1\r\n" + integer(8));

  // "OWNER" with no cart line after its value is the item of that name.
  CHECK(s.run({"INV.MRESERVE", "c4", "60000", "OWNER", "2"}) == "*1\r\n" + integer(8));
  CHECK(s.run({"INV.MRESERVE", "c5", "60000", "sock", "1", "OWNER", "1"}) ==
        "*2\r\n" + integer(7) + integer(7));
  CHECK(s.run({"INV.MRESERVE", "c6", "60000", "OWNER", "", "sock", "1"}) ==
        error("ERR OWNER must not be empty"));
  CHECK(s.run({"INV.MRESERVE", "c6", "60000", "OWNER", "ann", "sock"}) ==
        error("ERR wrong number of arguments for 'inv.mreserve' command"));
  CHECK(s.run({"INV.AUDIT"}) == "*0\r\n");
}

TEST_CASE("INV.AUDIT is empty for healthy items and names every violation", "[inventory]") {
  TestServer s(4);
  REQUIRE(s.run({"INV.CREATE", "a", "10", "MAXPEROWNER", "2"}) == kOk);
  REQUIRE(s.run({"INV.CREATE", "b", "10"}) == kOk);
  REQUIRE(s.run({"INV.RESERVE", "a", "h1", "2", "1000", "OWNER", "eve"}) == integer(8));
  REQUIRE(s.run({"INV.RESERVE", "b", "h1", "2", "1000"}) == integer(8));
  CHECK(s.run({"INV.AUDIT"}) == "*0\r\n");
  CHECK(s.run({"INV.AUDIT", "a"}) == "*0\r\n");
  CHECK(s.run({"INV.AUDIT", "missing"}) == error("ERR no such key"));
  REQUIRE(s.run({"SET", "str", "1"}) == kOk);
  CHECK(s.run({"INV.AUDIT", "str"}) ==
        error("WRONGTYPE Operation against a key holding the wrong kind of value"));
  CHECK(s.run({"INV.AUDIT", "a", "b"}) == error("ERR syntax error"));
  // A log replayed by hand can carry a hold the owner limit would have refused: audit says so.
  Effect e;
  e.kind = EffectKind::kOp;
  e.key = "a";
  e.op = static_cast<uint16_t>(OpCode::kInvReserve);
  e.args = {"h2", "1", "eve", std::to_string(s.now()), std::to_string(s.now() + 1000)};
  std::string err;
  REQUIRE(hotkv::apply_op_effect(s.engine().shard(s.engine().shard_of("a")).keyspace(0), e, s.now(),
                                 err));
  std::string expected = "*1\r\n" + bulk("'a': owner 'eve' holds 3, above MAXPEROWNER 2");
  CHECK(s.run({"INV.AUDIT"}) == expected);
  CHECK(s.run({"INV.AUDIT", "a"}) == expected);
  CHECK(s.run({"INV.AUDIT", "b"}) == "*0\r\n");
}

TEST_CASE("Inventory keys answer WRONGTYPE to other types and the reverse", "[inventory]") {
  TestServer s;
  const std::string wrong =
      error("WRONGTYPE Operation against a key holding the wrong kind of value");
  REQUIRE(s.run({"INV.CREATE", "item", "5"}) == kOk);
  REQUIRE(s.run({"SET", "str", "5"}) == kOk);
  REQUIRE(s.run({"XADD", "stream", "*", "f", "v"}) != "");
  CHECK(s.run({"GET", "item"}) == wrong);
  CHECK(s.run({"INCR", "item"}) == wrong);
  CHECK(s.run({"APPEND", "item", "x"}) == wrong);
  CHECK(s.run({"XADD", "item", "*", "f", "v"}) == wrong);
  for (const char* key : {"str", "stream"}) {
    CHECK(s.run({"INV.GET", key}) == wrong);
    CHECK(s.run({"INV.RESERVE", key, "h", "1", "1000"}) == wrong);
    CHECK(s.run({"INV.COMMIT", key, "h"}) == wrong);
    CHECK(s.run({"INV.RELEASE", key, "h"}) == wrong);
    CHECK(s.run({"INV.EXTEND", key, "h", "10"}) == wrong);
    CHECK(s.run({"INV.HOLD", key, "h"}) == wrong);
    CHECK(s.run({"INV.HOLDS", key}) == wrong);
    CHECK(s.run({"INV.RESTOCK", key, "1"}) == wrong);
    CHECK(s.run({"INV.MRESERVE", "h", "1000", "item", "1", key, "1"}) == wrong);
  }
  CHECK(counts(s, "item") == Counts{5, 5, 0, 0, 0});
  // SET replaces any type, as in Redis.
  CHECK(s.run({"SET", "item", "x"}) == kOk);
  CHECK(s.run({"TYPE", "item"}) == "+string\r\n");
}

TEST_CASE("COPY RENAME and DEL work on inventory keys and their holds", "[inventory]") {
  TestServer s;
  REQUIRE(s.run({"INV.CREATE", "item", "5"}) == kOk);
  REQUIRE(s.run({"INV.RESERVE", "item", "h", "2", "1000"}) == integer(3));
  SECTION("COPY makes an independent item whose holds expire too") {
    CHECK(s.run({"COPY", "item", "copy"}) == integer(1));
    CHECK(s.run({"INV.COMMIT", "copy", "h"}) == integer(1));
    CHECK(counts(s, "copy") == Counts{5, 3, 0, 2, 0});
    CHECK(counts(s, "item") == Counts{5, 3, 2, 0, 1});
    s.advance(1000);
    s.expire_cycle();
    CHECK(counts(s, "item") == Counts{5, 5, 0, 0, 0});
    CHECK(counts(s, "copy") == Counts{5, 3, 0, 2, 0});
  }
  SECTION("RENAME moves the item and the wheel follows it") {
    CHECK(s.run({"RENAME", "item", "moved"}) == kOk);
    CHECK(s.run({"INV.GET", "item"}) == kNil);
    s.advance(1000);
    s.expire_cycle();
    CHECK(counts(s, "moved") == Counts{5, 5, 0, 0, 0});
    CHECK(state_of(s, "moved", "h") == "expired");
  }
  SECTION("DEL removes it and a new item under the name ignores the old entries") {
    CHECK(s.run({"DEL", "item"}) == integer(1));
    REQUIRE(s.run({"INV.CREATE", "item", "5"}) == kOk);
    REQUIRE(s.run({"INV.RESERVE", "item", "h", "1", "5000"}) == integer(4));
    s.advance(1000);
    s.expire_cycle();
    CHECK(state_of(s, "item", "h") == "held");
    CHECK(counts(s, "item") == Counts{5, 4, 1, 0, 1});
  }
  SECTION("FLUSHALL drops items and their wheel entries") {
    CHECK(s.run({"FLUSHALL"}) == kOk);
    CHECK(s.engine().shard(0).keyspace(0).hold_entries() == 0);
    CHECK(s.run({"DBSIZE"}) == integer(0));
  }
}

TEST_CASE("Transitions publish keyspace notifications of class d", "[inventory]") {
  TestServer s;
  REQUIRE(s.run3({"CONFIG", "SET", "notify-keyspace-events", "Kd"}) == kOk);
  s.run3({"PSUBSCRIBE", "__keyspace@0__:*"});
  REQUIRE(s.pushes().empty());
  REQUIRE(s.run3({"INV.CREATE", "item", "2"}) == kOk);
  REQUIRE(s.run3({"INV.RESERVE", "item", "a", "1", "1000"}) == integer(1));
  REQUIRE(s.run3({"INV.RESERVE", "item", "b", "1", "2000"}) == integer(0));
  REQUIRE(s.run3({"INV.COMMIT", "item", "a"}) == integer(1));
  REQUIRE(s.run3({"INV.EXTEND", "item", "b", "1000"}) == integer(1000));
  s.advance(1000);
  REQUIRE(s.expire_cycle() >= 1);
  REQUIRE(s.run3({"INV.RESTOCK", "item", "3"}) == integer(5));
  std::vector<std::string> seen;
  for (const auto& m : s.pushes()) {
    CHECK(m.channel == "__keyspace@0__:item");
    seen.push_back(m.payload);
  }
  CHECK(seen == std::vector<std::string>{"inv.created", "inv.held", "inv.held", "inv.soldout",
                                         "inv.committed", "inv.extended", "inv.expired",
                                         "inv.backinstock", "inv.restock"});
}

TEST_CASE("An EVENTS stream receives every transition and wakes blocked readers", "[inventory]") {
  TestServer s;
  REQUIRE(s.run({"INV.CREATE", "{shoe}stock", "1", "OWNERS", "x"}) == error("ERR syntax error"));
  REQUIRE(s.run({"INV.CREATE", "{shoe}stock", "1", "EVENTS", "{shoe}events"}) == kOk);
  REQUIRE(s.run({"INV.RESERVE", "{shoe}stock", "o1", "1", "1000", "OWNER", "c42"}) == integer(0));
  REQUIRE(s.run({"INV.RELEASE", "{shoe}stock", "o1"}) == integer(1));
  REQUIRE(s.run({"INV.RESERVE", "{shoe}stock", "o2", "1", "1000"}) == integer(0));

  // A reader blocked on the stream ($ resolved to its last id) is woken by the expiry.
  Resp before = parse_resp(s.run({"XREVRANGE", "{shoe}events", "+", "-", "COUNT", "1"}));
  std::string last = before.at(0).at(0).str;
  auto reader = std::make_shared<hotkv::BlockedClient>();
  reader->spec = s.engine().table().find("XREAD");
  reader->argv = {"XREAD", "STREAMS", "{shoe}events", last};
  reader->keys = {"{shoe}events"};
  std::vector<std::string> woken;
  reader->on_wake = [&](hotkv::WakeResult r) { woken.push_back(r.reply); };
  s.engine().shard(0).blocking().add(reader);
  s.engine().stats().blocked_registered.fetch_add(1);
  s.advance(1000);
  REQUIRE(s.expire_cycle() == 2);  // "o2" expires; the entry of released "o1" is stale
  s.pushes();
  REQUIRE(woken.size() == 1);
  Resp got = parse_resp(woken[0]);
  CHECK(got.at(0).at(1).at(0).at(1)["event"].str == "inv.expired");

  Resp all = parse_resp(s.run({"XRANGE", "{shoe}events", "-", "+"}));
  std::vector<std::string> events;
  for (const auto& entry : all.items) {
    events.push_back(entry.at(1)["event"].str);
  }
  CHECK(events == std::vector<std::string>{"inv.created", "inv.held", "inv.soldout", "inv.released",
                                           "inv.backinstock", "inv.held", "inv.soldout",
                                           "inv.expired", "inv.backinstock"});
  const Resp& held = all.at(1).at(1);
  CHECK(held["item"].str == "{shoe}stock");
  CHECK(held["hold"].str == "o1");
  CHECK(held["qty"].str == "1");
  CHECK(held["owner"].str == "c42");
  CHECK(held["expires_at"].str == std::to_string(s.now()));  // reserved 1000 ms ago
  CHECK(held["available"].str == "0");
  const Resp& expired = all.at(7).at(1);
  REQUIRE(expired["event"].str == "inv.expired");
  for (size_t i = 0; i < expired.size(); i += 2) {
    CHECK(expired.at(i).str != "expires_at");  // only events that set a deadline carry it
  }
  CHECK(all.at(0).at(1)["total"].str == "1");
}

TEST_CASE("encode_value then replay rebuilds an identical item", "[inventory]") {
  TestServer a;
  REQUIRE(a.run({"INV.CREATE", "item", "500", "MAXPEROWNER", "3", "MAXHOLD", "60000", "EVENTS",
                 "{x}"}) == error("ERR the EVENTS stream '{x}' must be in the same hash slot as "
                                  "'item': give both the same {hash tag}"));
  REQUIRE(a.run({"INV.CREATE", "item", "500", "MAXPEROWNER", "3", "MAXHOLD", "60000"}) == kOk);
  std::vector<std::string> holds;
  for (int i = 0; i < 600; ++i) {
    std::string id = "h" + std::to_string(i);
    holds.push_back(id);
    std::string r = a.run({"INV.RESERVE", "item", id, "1", std::to_string(1000 + i), "OWNER",
                           "o" + std::to_string(i % 250)});
    REQUIRE((r[0] == ':' || is_error(r, "SOLDOUT")));
  }
  REQUIRE(a.run({"INV.COMMIT", "item", "h1"}) == integer(1));
  REQUIRE(a.run({"INV.RELEASE", "item", "h2"}) == integer(1));
  REQUIRE(a.run({"PEXPIRE", "item", "3600000"}) == integer(1));
  size_t cuts = 0;
  std::string buf = hotkv::test::encode_key(a, "item", &cuts);
  CHECK(cuts >= 1);
  TestServer b;
  replay(buf, b);
  CHECK(snapshot(b, "item", holds) == snapshot(a, "item", holds));
  // Both go on the same way, expiry included.
  a.advance(1200);
  b.advance(1200);
  a.expire_cycle();
  b.expire_cycle();
  CHECK(snapshot(b, "item", holds) == snapshot(a, "item", holds));
}

TEST_CASE("The effects inventory commands log replay to the same state", "[inventory]") {
  TestServer a;
  LogFile file(a);
  REQUIRE(a.run({"INV.CREATE", "{i}", "10", "MAXPEROWNER", "4", "EVENTS", "{i}ev"}) == kOk);
  REQUIRE(a.run({"INV.RESERVE", "{i}", "a", "2", "5000", "OWNER", "u1"}) == integer(8));
  REQUIRE(a.run({"INV.RESERVE", "{i}", "b", "3", "5000"}) == integer(5));
  REQUIRE(a.run({"INV.RESERVE", "{i}", "c", "1", "1000"}) == integer(4));
  REQUIRE(a.run({"INV.COMMIT", "{i}", "a"}) == integer(1));
  REQUIRE(a.run({"INV.EXTEND", "{i}", "b", "9000"}) == integer(9000));
  REQUIRE(a.run({"INV.RESTOCK", "{i}", "-2"}) == integer(8));
  a.advance(1000);
  REQUIRE(a.expire_cycle() == 1);  // "c" expires on the wheel, and that is logged too
  REQUIRE(a.run({"INV.MRESERVE", "d", "3000", "{i}", "1"}) == "*1\r\n" + integer(2));
  REQUIRE(a.run({"COPY", "{i}", "{i}copy"}) == integer(1));
  REQUIRE(a.run({"INV.CREATE", "gone", "1"}) == kOk);
  REQUIRE(a.run({"DEL", "gone"}) == integer(1));
  std::string log = file.contents();
  std::vector<std::string> ops = inventory_ops(log);
  std::string t = std::to_string(a.now() - 1000);
  CHECK(std::find(ops.begin(), ops.end(),
                  "66:{i}:c,expired," + std::to_string(a.now()) + "," +
                      std::to_string(a.now() + 600000)) != ops.end());
  CHECK(ops.front() == "64:{i}:10,0,0,4,0,{i}ev");
  CHECK(ops.at(1) == "65:{i}:a,2,u1," + t + "," + std::to_string(a.now() + 4000));

  TestServer b;
  b.advance(a.now() - b.now());
  replay(log, b);
  std::vector<std::string> holds{"a", "b", "c", "d"};
  CHECK(snapshot(b, "{i}", holds) == snapshot(a, "{i}", holds));
  CHECK(snapshot(b, "{i}copy", holds) == snapshot(a, "{i}copy", holds));
  CHECK(b.run({"XRANGE", "{i}ev", "-", "+"}) == a.run({"XRANGE", "{i}ev", "-", "+"}));
  CHECK(b.run({"EXISTS", "gone"}) == integer(0));
}

TEST_CASE("INFO inventory counts hold traffic, not replayed effects, until RESETSTAT",
          "[inventory]") {
  TestServer a(2);
  LogFile file(a);
  auto info = [](TestServer& s) {
    std::string text = s.run({"INFO", "inventory"});
    std::map<std::string, int64_t> out;
    std::istringstream lines(text.substr(text.find('\n') + 1));
    for (std::string line; std::getline(lines, line);) {
      size_t colon = line.find(':');
      if (line.rfind("inv_", 0) == 0 && colon != std::string::npos) {
        out[line.substr(0, colon)] = std::stoll(line.substr(colon + 1));
      }
    }
    return out;
  };
  REQUIRE(a.run({"INV.CREATE", "x", "3", "MAXPEROWNER", "2"}) == kOk);
  REQUIRE(a.run({"INV.CREATE", "y", "5"}) == kOk);
  REQUIRE(a.run({"INV.RESERVE", "x", "h1", "2", "1000", "OWNER", "o"}) == integer(1));
  REQUIRE(is_error(a.run({"INV.RESERVE", "x", "h2", "1", "1000", "OWNER", "o"}), "OWNERLIMIT"));
  REQUIRE(is_error(a.run({"INV.RESERVE", "x", "h1", "1", "1000"}), "HOLDEXISTS"));
  REQUIRE(is_error(a.run({"INV.RESERVE", "x", "h3", "2", "1000"}), "SOLDOUT"));
  REQUIRE(a.run({"INV.MRESERVE", "c", "5000", "x", "1", "y", "4"}) ==
          "*2\r\n" + integer(0) + integer(1));
  REQUIRE(a.run({"INV.COMMIT", "y", "c"}) == integer(1));
  REQUIRE(a.run({"INV.RELEASE", "x", "c"}) == integer(1));
  a.advance(1000);
  REQUIRE(a.expire_cycle() >= 1);  // h1 expires
  std::map<std::string, int64_t> want{
      {"inv_holds_reserved", 3},      {"inv_units_reserved", 7},
      {"inv_holds_committed", 1},     {"inv_units_sold", 4},
      {"inv_holds_released", 1},      {"inv_holds_expired", 1},
      {"inv_rejected_soldout", 1},    {"inv_rejected_ownerlimit", 1},
      {"inv_rejected_holdexists", 1}, {"inv_soldout_answered_here", 0}};
  CHECK(info(a) == want);

  TestServer b(2);
  b.advance(a.now() - b.now());
  replay(file.contents(), b);
  for (const auto& [name, n] : info(b)) {
    CHECK(n == 0);  // loading a log is not traffic
  }
  REQUIRE(a.run({"CONFIG", "RESETSTAT"}) == kOk);
  for (const auto& [name, n] : info(a)) {
    CHECK(n == 0);
  }
  CHECK(info(a).size() == want.size());
}

TEST_CASE("MAXEVENTS keeps the EVENTS stream near its size, in the log and after a rebuild",
          "[inventory]") {
  TestServer a;
  CHECK(a.run({"INV.CREATE", "{e}", "5", "MAXEVENTS", "10"}) ==
        error("ERR MAXEVENTS needs an EVENTS stream"));
  CHECK(a.run({"INV.CREATE", "{e}", "5", "EVENTS", "{e}ev", "MAXEVENTS", "0"}) ==
        error("ERR MAXEVENTS must be a positive integer"));
  CHECK(a.run({"EXISTS", "{e}", "{e}ev"}) == integer(0));
  LogFile file(a);
  REQUIRE(a.run({"INV.CREATE", "{e}", "1000", "EVENTS", "{e}ev", "maxevents", "150"}) == kOk);
  constexpr int kReserves = 500;
  for (int i = 0; i < kReserves; ++i) {
    REQUIRE(a.run({"INV.RESERVE", "{e}", "h" + std::to_string(i), "1", "60000"}) ==
            integer(999 - i));
    // Whole nodes only (as XADD MAXLEN ~): never fewer than MAXEVENTS, never a node more.
    if (i >= 150) {
      std::string len = a.run({"XLEN", "{e}ev"});
      int64_t n = std::stoll(len.substr(1));
      REQUIRE(n >= 150);
      REQUIRE(n < 150 + static_cast<int64_t>(hotkv::Stream::kNodeEntries));
    }
  }
  std::string log = file.contents();
  std::vector<std::string> ops = inventory_ops(log);
  CHECK(ops.front() == "64:{e}:1000,0,0,0,0,{e}ev,150");
  TestServer b;
  b.advance(a.now() - b.now());
  replay(log, b);
  CHECK(b.run({"XRANGE", "{e}ev", "-", "+"}) == a.run({"XRANGE", "{e}ev", "-", "+"}));
  CHECK(b.run({"XINFO", "STREAM", "{e}ev"}) == a.run({"XINFO", "STREAM", "{e}ev"}));

  // A rebuilt item (rewrite, COPY) keeps the limit: the copy's own stream is trimmed too.
  std::string rebuilt = hotkv::test::encode_key(a, "{e}");
  CHECK(inventory_ops(rebuilt).front() == "64:{e}:1000,0,0,0,0,{e}ev,150");
  TestServer c;
  c.advance(a.now() - c.now());
  replay(rebuilt, c);
  for (int i = 0; i < 300; ++i) {
    REQUIRE(c.run({"INV.RESERVE", "{e}", "x" + std::to_string(i), "1", "60000"}) ==
            integer(499 - i));
  }
  int64_t n = std::stoll(c.run({"XLEN", "{e}ev"}).substr(1));
  CHECK(n >= 150);
  CHECK(n < 250);
}

TEST_CASE("Holds whose deadline passed while the server was down expire after loading once",
          "[inventory]") {
  TestServer a;
  LogFile file(a);
  REQUIRE(a.run({"INV.CREATE", "item", "3"}) == kOk);
  REQUIRE(a.run({"INV.RESERVE", "item", "short", "1", "1000"}) == integer(2));
  REQUIRE(a.run({"INV.RESERVE", "item", "long", "1", "3600000"}) == integer(1));
  REQUIRE(a.run({"INV.RESERVE", "item", "paid", "1", "1000"}) == integer(0));
  REQUIRE(a.run({"INV.COMMIT", "item", "paid"}) == integer(1));
  std::string log = file.contents();

  // The server comes back after "short" expired and its retention ended too.
  TestServer b(1, a.now() + 700000);
  LogFile restarted(b);
  b.engine().set_loading(true);
  replay(log, b);
  CHECK(b.expire_cycle() == 0);  // nothing is expired while loading
  b.engine().set_loading(false);
  CHECK(counts(b, "item") == Counts{3, 0, 2, 1, 2});
  CHECK(b.expire_cycle() >= 1);
  CHECK(counts(b, "item") == Counts{3, 1, 1, 1, 1});
  CHECK(state_of(b, "item", "short") == "none");  // expired long ago, and its retention too
  CHECK(state_of(b, "item", "long") == "held");
  CHECK(b.run({"INV.COMMIT", "item", "short"}) == error("NOHOLD no hold 'short' for 'item'"));
  CHECK(b.expire_cycle() == 0);
  CHECK(counts(b, "item") == Counts{3, 1, 1, 1, 1});
  // The expiry was logged with the hold's deadline as its time.
  std::vector<std::string> ops = inventory_ops(restarted.contents());
  REQUIRE(ops.size() == 1);
  CHECK(ops[0] == "66:item:short,expired," + std::to_string(a.now() + 1000) + "," +
                      std::to_string(a.now() + 601000));
  // Replaying both logs gives the same state again, with nothing left to expire.
  TestServer c(1, b.now());
  replay(log, c);
  replay(restarted.contents(), c);
  CHECK(counts(c, "item") == Counts{3, 1, 1, 1, 1});
  c.expire_cycle();
  CHECK(counts(c, "item") == Counts{3, 1, 1, 1, 1});
  CHECK(c.run({"INV.HOLD", "item", "short"}) == kNil);
}

TEST_CASE("apply_inventory_op rejects malformed effects and skips missing keys", "[inventory]") {
  TestServer s;
  auto op = [&](OpCode code, std::vector<std::string> args, std::string key = "item") {
    return hotkv::test::apply_op(s, static_cast<uint16_t>(code), std::move(args), std::move(key));
  };
  std::string t = std::to_string(s.now());
  // Effects on a missing key change nothing.
  CHECK(op(OpCode::kInvReserve, {"h", "1", "", t, t}));
  CHECK(op(OpCode::kInvSettle, {"h", "expired", t, t}));
  CHECK(s.run({"EXISTS", "item"}) == integer(0));
  CHECK(op(OpCode::kInvCreate, {"5", "0", "0", "0", "0", ""}));
  CHECK_FALSE(op(OpCode::kInvCreate, {"5", "6", "0", "0", "0", ""}, "other"));
  CHECK_FALSE(op(OpCode::kInvCreate, {"5"}, "other"));
  CHECK_FALSE(op(OpCode::kInvReserve, {"h", "6", "", t, t}));
  CHECK_FALSE(op(OpCode::kInvReserve, {"h", "0", "", t, t}));
  CHECK_FALSE(op(OpCode::kInvReserve, {"h", "x", "", t, t}));
  CHECK(op(OpCode::kInvReserve, {"h", "2", "", t, t}));
  CHECK_FALSE(op(OpCode::kInvReserve, {"h", "1", "", t, t}));
  CHECK_FALSE(op(OpCode::kInvSettle, {"h", "held", t, t}));
  CHECK_FALSE(op(OpCode::kInvSettle, {"h", "lost", t, t}));
  CHECK_FALSE(op(OpCode::kInvSettle, {"x", "expired", t, t}));
  CHECK_FALSE(op(OpCode::kInvSetTotal, {"1"}));
  CHECK_FALSE(op(OpCode::kInvExtend, {"x", t}));
  CHECK(op(OpCode::kInvSettle, {"h", "committed", t, t}));
  CHECK_FALSE(op(OpCode::kInvSettle, {"h", "released", t, t}));
  CHECK(op(OpCode::kInvSetTotal, {"2"}));
  CHECK_FALSE(op(static_cast<OpCode>(100), {}));
  CHECK(counts(s, "item") == Counts{2, 0, 0, 2, 0});
}

TEST_CASE("Every inventory command is in the inventory group with the right flags", "[inventory]") {
  const hotkv::Table& t = hotkv::command_table();
  for (const char* name :
       {"INV.CREATE", "INV.GET", "INV.RESTOCK", "INV.RESERVE", "INV.MRESERVE", "INV.COMMIT",
        "INV.RELEASE", "INV.EXTEND", "INV.HOLD", "INV.HOLDS", "INV.AUDIT"}) {
    const hotkv::CommandSpec* spec = t.find(name);
    REQUIRE(spec != nullptr);
    CHECK(spec->group == "inventory");
    CHECK(((spec->flags & hotkv::kWrite) != 0) != ((spec->flags & hotkv::kReadOnly) != 0));
  }
  CHECK((t.find("INV.AUDIT")->flags & hotkv::kAllShards) != 0);
  std::vector<size_t> idx;
  std::vector<std::string_view> create{"INV.CREATE", "{k}", "5", "EVENTS", "{k}ev"};
  REQUIRE(hotkv::Table::key_indexes(*t.find("INV.CREATE"), create, idx));
  CHECK(idx == std::vector<size_t>{1, 4});
}
