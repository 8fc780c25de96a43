// Stream DUMP payloads: a HotKV stream (several nodes, deleted entries, groups with pending
// entries and consumers) restores to an equal stream; payloads captured from redis-server
// 7.0 (STREAM_LISTPACKS_2) and Redis 5 (STREAM_LISTPACKS) restore to what those servers held;
// inconsistent payloads are refused.
#include "hotkv/shard/stream_dump.hpp"

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hotkv/persist/rdb_format.hpp"
#include "hotkv/shard/value_dump.hpp"
#include "hotkv/types/stream.hpp"
#include "hotkv/util/config.hpp"

#include "support/hex.hpp"

using namespace hotkv;

using hotkv::test::unhex;

namespace {

void add(Stream& s, StreamId id, std::vector<std::string_view> fv) { s.append(id, fv); }

struct Entry {
  StreamId id;
  std::vector<std::string> fv;
  bool operator==(const Entry&) const = default;
};

std::vector<Entry> entries(const Stream& s) {
  std::vector<Entry> out;
  s.range(StreamId::min(), StreamId::max(), false, 0,
          [&](StreamId id, std::span<const std::string_view> fv) {
            out.push_back({id, {fv.begin(), fv.end()}});
            return true;
          });
  return out;
}

const Stream& restored_stream(const std::string& payload, std::optional<Value>& holder) {
  Config c;
  RestoreError why = RestoreError::kNone;
  holder = restore_value(payload, c, why);
  REQUIRE(holder.has_value());
  REQUIRE(holder->type() == ValueType::kStream);
  return *holder->stream();
}

bool refused(std::string body) {
  rdb_seal_payload(body);
  Config c;
  RestoreError why = RestoreError::kNone;
  return !restore_value(body, c, why).has_value() && why == RestoreError::kBadFormat;
}

}  // namespace

TEST_CASE("a stream with nodes, tombstones, groups and consumers restores equal", "[dump]") {
  Stream s;
  EncodingLimits small;
  small.stream_node_max_entries = 3;
  for (uint64_t i = 1; i <= 10; ++i) {
    const std::string v = std::to_string(i * 1000);
    if (i % 4 == 0) {
      add(s, {i, 7}, {"other", v, "x", "-5"});  // fields unlike the node's first entry
    } else {
      add(s, {i, 0}, {"f", v, "g", "text value " + v});
    }
  }
  REQUIRE(s.erase({5, 0}));
  REQUIRE(s.erase({1, 0}));
  s.set_last_id({20, 3});
  ConsumerGroup* g = s.create_group("readers", {6, 0}, 4);
  Consumer& alice = g->get_or_create_consumer("alice", 1000);
  Consumer& bob = g->get_or_create_consumer("bob", 2000);
  g->get_or_create_consumer("idle", 3000);
  g->set_pending({2, 0}, alice, 1500, 1);
  g->set_pending({3, 0}, bob, 2500, 4);
  g->set_pending({5, 0}, bob, 2600, 2);  // deleted since, still pending
  s.create_group("unknown-read", {9, 0}, ConsumerGroup::kEntriesReadUnknown);

  std::optional<std::string> payload = dump_value(Value::from_stream(s.clone()), small);
  REQUIRE(payload.has_value());
  CHECK(static_cast<uint8_t>((*payload)[0]) == 19);
  std::optional<Value> holder;
  const Stream& r = restored_stream(*payload, holder);
  CHECK(entries(r) == entries(s));
  CHECK(r.length() == 8);
  CHECK(r.last_id() == StreamId{20, 3});
  CHECK(r.max_deleted_id() == StreamId{5, 0});
  CHECK(r.entries_added() == 10);
  REQUIRE(r.groups().size() == 2);
  const ConsumerGroup& rg = *r.groups().at("readers");
  CHECK(rg.last_delivered_id == StreamId{6, 0});
  CHECK(rg.entries_read == 4);
  REQUIRE(rg.pel.size() == 3);
  CHECK(rg.pel.at({3, 0}).consumer->name == "bob");
  CHECK(rg.pel.at({3, 0}).delivery_time_ms == 2500);
  CHECK(rg.pel.at({3, 0}).delivery_count == 4);
  REQUIRE(rg.consumers.size() == 3);
  CHECK(rg.consumers.at("alice").pending.size() == 1);
  CHECK(rg.consumers.at("bob").pending.size() == 2);
  CHECK(rg.consumers.at("idle").seen_time_ms == 3000);
  CHECK(r.groups().at("unknown-read")->entries_read == ConsumerGroup::kEntriesReadUnknown);
}

TEST_CASE("an empty stream keeps its last id and groups", "[dump]") {
  Stream s;
  add(s, {1, 0}, {"a", "b"});
  REQUIRE(s.erase({1, 0}));
  s.create_group("g", {1, 0}, 1);
  std::optional<Value> holder;
  const Stream& r = restored_stream(*dump_value(Value::from_stream(s.clone())), holder);
  CHECK(r.length() == 0);
  CHECK(r.last_id() == StreamId{1, 0});
  CHECK(r.entries_added() == 1);
  CHECK(r.groups().size() == 1);
}

TEST_CASE("a redis-server 7.0 stream DUMP restores what it held", "[dump]") {
  // XADD s 1-0 f v1 ... 5-0 f v5; XADD s 6-0 other 12; XDEL s 2-0; XGROUP CREATE s g 0;
  // XREADGROUP GROUP g alice COUNT 2 STREAMS s >; XGROUP CREATECONSUMER s g bob
  const std::string payload = unhex(
      "13011000000000000000010000000000000000c3405540610761000000250005014000078166020001020100"
      "200106827631030401032015400b0032200b00022001400b0033600b0003600b0034600b0004600b0035200b"
      "0200010520030d0101856f74686572060c010601ff0506000100020006010167030081ffffffffffffffff02"
      "000000000000000100000000000000003c42913ba201000001000000000000000300000000000000003c4291"
      "3ba2010000010205616c6963653c42913ba20100000200000000000000010000000000000000000000000000"
      "0003000000000000000003626f624342913ba2010000000a00b8c7d34857a623bc");
  std::optional<Value> holder;
  const Stream& r = restored_stream(payload, holder);
  const std::vector<Entry> want = {{{1, 0}, {"f", "v1"}},
                                   {{3, 0}, {"f", "v3"}},
                                   {{4, 0}, {"f", "v4"}},
                                   {{5, 0}, {"f", "v5"}},
                                   {{6, 0}, {"other", "12"}}};
  CHECK(entries(r) == want);
  CHECK(r.last_id() == StreamId{6, 0});
  CHECK(r.max_deleted_id() == StreamId{2, 0});
  CHECK(r.entries_added() == 6);
  const ConsumerGroup& g = *r.groups().at("g");
  CHECK(g.last_delivered_id == StreamId{3, 0});
  CHECK(g.entries_read == ConsumerGroup::kEntriesReadUnknown);
  REQUIRE(g.pel.size() == 2);
  CHECK(g.pel.at({1, 0}).consumer->name == "alice");
  CHECK(g.pel.at({1, 0}).delivery_time_ms == 1796295705148);
  CHECK(g.consumers.at("bob").seen_time_ms == 1796295705155);
  CHECK(g.consumers.at("bob").pending.empty());
}

TEST_CASE("a Redis 5 stream DUMP (STREAM_LISTPACKS) gets 7.0's derived counters", "[dump]") {
  // The payload of the Redis suite's legacy-persistence test: XADD x 1-0..6-0 data a..f;
  // XDEL x 3-0; groups g1 and g2 at 0; XREADGROUP GROUP g1 c11 COUNT 4; XTRIM x MAXLEN = 2.
  const std::string payload = unhex(
      "0f011000000000000000010000000000000000c3404a40571657000000230002010401010184646174610500"
      "0103010020010381610204200a0001400a0062600a0002400a0063600a4022018164200a4039200a0065600a"
      "0005400a0066200a00ff02060002026731050004000000000000000100000000000000003ef783437a010000"
      "01000000000000000200000000000000003ef783437a01000001000000000000000400000000000000003ef7"
      "83437a01000001000000000000000500000000000000003ef783437a0100000101036331313ef783437a0100"
      "0004000000000000000100000000000000000000000000000002000000000000000000000000000000040000"
      "000000000000000000000000000500000000000000000267320000000009003d52ef6867521dfa");
  std::optional<Value> holder;
  const Stream& r = restored_stream(payload, holder);
  const std::vector<Entry> want = {{{5, 0}, {"data", "e"}}, {{6, 0}, {"data", "f"}}};
  CHECK(entries(r) == want);
  CHECK(r.max_deleted_id() == StreamId{0, 0});
  CHECK(r.entries_added() == 2);
  const ConsumerGroup& g1 = *r.groups().at("g1");
  CHECK(g1.entries_read == 1);
  CHECK(r.lag(g1) == 1);
  CHECK(g1.pel.size() == 4);
  CHECK(g1.consumers.at("c11").pending.size() == 4);
  const ConsumerGroup& g2 = *r.groups().at("g2");
  CHECK(g2.entries_read == 0);
  CHECK(r.lag(g2) == 2);
}

TEST_CASE("inconsistent stream payloads are bad data", "[dump]") {
  Stream s;
  add(s, {1, 0}, {"a", "b"});
  add(s, {2, 0}, {"a", "c"});
  ConsumerGroup* g = s.create_group("g", {2, 0}, 2);
  g->set_pending({1, 0}, g->get_or_create_consumer("c", 10), 10, 1);
  std::string good = *dump_value(Value::from_stream(s.clone()));
  std::string body = good.substr(0, good.size() - 10);
  CHECK_FALSE(refused(body));  // the unchanged body restores

  // Cut anywhere: every prefix is refused.
  for (size_t n = 1; n < body.size(); ++n) {
    INFO("prefix of " << n << " bytes");
    CHECK(refused(body.substr(0, n)));
  }
  // The node key is 16 bytes; one of 15 is refused.
  std::string short_key = body;
  REQUIRE(static_cast<uint8_t>(short_key[2]) == 16);
  short_key[2] = 15;
  short_key.erase(3, 1);
  CHECK(refused(short_key));

  // A length that disagrees with the entries.
  const std::string after_type = body.substr(1);
  RdbReader probe(after_type);
  std::string key;
  std::string lp;
  uint64_t nodes = 0;
  REQUIRE(probe.read_length(nodes));
  REQUIRE(probe.read_string(key));
  REQUIRE(probe.read_string(lp));
  const size_t length_at = 1 + 1 + (1 + key.size()) + (1 + lp.size());
  REQUIRE(static_cast<uint8_t>(body[length_at]) == 2);
  std::string wrong_length = body;
  wrong_length[length_at] = 3;
  CHECK(refused(wrong_length));
}

TEST_CASE("stream nodes are cut as XADD cuts them", "[dump]") {
  Stream s;
  for (uint64_t i = 1; i <= 250; ++i) {
    add(s, {i, 0}, {"field", std::string(20, 'v')});
  }
  // The node count is the first length after the type byte.
  auto nodes = [&](size_t max_entries, size_t max_bytes) -> uint64_t {
    EncodingLimits limits;
    limits.stream_node_max_entries = max_entries;
    limits.stream_node_max_bytes = max_bytes;
    std::string payload = *dump_value(Value::from_stream(s.clone()), limits);
    std::optional<Value> holder;
    CHECK(entries(restored_stream(payload, holder)) == entries(s));
    const std::string body = payload.substr(1);
    RdbReader in(body);
    uint64_t n = 0;
    REQUIRE(in.read_length(n));
    return n;
  };
  CHECK(nodes(100, 0) == 3);
  CHECK(nodes(0, 0) == 1);  // 0: no bound on either
  CHECK(nodes(1, 0) == 250);
  // About 60 bytes an entry: 25 entries to a node of 1500 bytes.
  const uint64_t by_bytes = nodes(0, 1500);
  CHECK(by_bytes >= 9);
  CHECK(by_bytes <= 13);
}

TEST_CASE("stream payloads with any byte changed never crash the reader", "[dump]") {
  Stream s;
  add(s, {1, 0}, {"a", "1"});
  add(s, {2, 5}, {"a", "2", "b", "text"});
  add(s, {3, 0}, {"a", "-70000"});
  REQUIRE(s.erase({2, 5}));
  ConsumerGroup* g = s.create_group("g", {3, 0}, 3);
  g->set_pending({1, 0}, g->get_or_create_consumer("c", 10), 10, 1);
  g->set_pending({2, 5}, g->get_or_create_consumer("d", 20), 20, 2);
  g->get_or_create_consumer("e", 30);
  const std::string good = *dump_value(Value::from_stream(s.clone()));
  const std::string body = good.substr(0, good.size() - 10);
  Config c;
  RestoreError why = RestoreError::kNone;
  size_t restored = 0;
  for (size_t at = 0; at < body.size(); ++at) {
    for (int delta : {1, -1, 0x40, 0x80}) {
      std::string bad = body;
      bad[at] = static_cast<char>(static_cast<uint8_t>(bad[at]) + delta);
      rdb_seal_payload(bad);
      // Refused or restored (some bytes are free: a value's text), never an abort.
      restored += restore_value(bad, c, why).has_value() ? 1 : 0;
    }
  }
  CHECK(restored < 4 * body.size());
}
