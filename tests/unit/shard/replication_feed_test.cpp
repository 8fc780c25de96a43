#include "hotkv/shard/replication_feed.hpp"

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "hotkv/shard/replication.hpp"

using hotkv::AckWaiter;
using hotkv::Effect;
using hotkv::EffectKind;
using hotkv::Record;
using hotkv::ReplicaChannel;
using hotkv::Replication;
using hotkv::ReplicationFeed;

namespace {

Record put(const std::string& key, const std::string& value, uint32_t db = 0, uint64_t txn = 0,
           uint32_t parts = 1) {
  Record r;
  r.txn_id = txn;
  r.parts = parts;
  Effect e;
  e.kind = EffectKind::kPut;
  e.key = key;
  e.str = value;
  e.db = db;
  r.effects.push_back(e);
  return r;
}

std::string bytes(const Record& r) {
  std::string out;
  hotkv::encode_record(r, out);
  return out;
}

std::string stream(Replication& repl) {
  std::string out;
  REQUIRE(repl.read_backlog(0, 1 << 20, out));
  return out;
}

std::string set_cmd(const std::string& k, const std::string& v) {
  return "*3\r\n$3\r\nSET\r\n$" + std::to_string(k.size()) + "\r\n" + k + "\r\n$" +
         std::to_string(v.size()) + "\r\n" + v + "\r\n";
}

const std::string kSelect0 = "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n";

}  // namespace

TEST_CASE("Shard records become commands, a database named once", "[replication]") {
  Replication repl;
  repl.activate_backlog();
  ReplicationFeed feed(repl, 2);
  feed.on_records(0, bytes(put("a", "1")) + bytes(put("b", "2")));
  CHECK(stream(repl) == kSelect0 + set_cmd("a", "1") + set_cmd("b", "2"));
  CHECK(feed.data_end() == repl.offset());
  // After a full sync's offset the database is named again.
  feed.restart_database_tracking();
  feed.on_records(1, bytes(put("c", "3")));
  CHECK(stream(repl) ==
        kSelect0 + set_cmd("a", "1") + set_cmd("b", "2") + kSelect0 + set_cmd("c", "3"));
}

TEST_CASE("A record cut by a partial write is completed by the next call", "[replication]") {
  Replication repl;
  repl.activate_backlog();
  ReplicationFeed feed(repl, 1);
  std::string b = bytes(put("key", "value"));
  feed.on_records(0, std::string_view(b).substr(0, 5));
  CHECK(repl.offset() == 0);
  feed.on_records(0, std::string_view(b).substr(5));
  CHECK(stream(repl) == kSelect0 + set_cmd("key", "value"));
}

TEST_CASE("A cross-shard operation waits for all its parts, its shards queue behind it",
          "[replication]") {
  Replication repl;
  repl.activate_backlog();
  ReplicationFeed feed(repl, 3);
  feed.on_records(0, bytes(put("x", "1", 0, 77, 2)));
  // Shard 0's next record must not overtake the operation; shard 2 is independent.
  feed.on_records(0, bytes(put("x", "after")));
  feed.on_records(2, bytes(put("free", "1")));
  CHECK(stream(repl) == kSelect0 + set_cmd("free", "1"));
  feed.on_records(1, bytes(put("y", "1", 0, 77, 2)));
  std::string s = stream(repl);
  size_t multi = s.find("MULTI");
  size_t exec = s.find("EXEC");
  REQUIRE(multi != std::string::npos);
  REQUIRE(exec != std::string::npos);
  CHECK(s.find(set_cmd("x", "1")) > multi);
  CHECK(s.find(set_cmd("y", "1")) < exec);
  CHECK(s.find(set_cmd("x", "after")) > exec);
}

TEST_CASE("GETACK and PING are not data: WAIT's offset stays at the last write",
          "[replication]") {
  Replication repl;
  repl.activate_backlog();
  ReplicationFeed feed(repl, 1);
  feed.on_records(0, bytes(put("a", "1")));
  uint64_t end = feed.data_end();
  feed.request_acks();
  CHECK(repl.offset() > end);
  uint64_t after = repl.offset();
  feed.request_acks();  // nothing new since: not sent again
  CHECK(repl.offset() == after);
  CHECK(feed.data_end() == end);
  // PINGs only go to attached replicas.
  feed.ping_if_due(100000, 10);
  CHECK(repl.offset() == after);
  auto ch = std::make_shared<ReplicaChannel>();
  REQUIRE(repl.attach_channel(ch, after));
  feed.ping_if_due(100000, 10);
  CHECK(repl.offset() == after + 14);
  feed.ping_if_due(105000, 10);  // not due yet
  CHECK(repl.offset() == after + 14);
}

TEST_CASE("A replica's channel gets the stream from its offset, woken once per batch",
          "[replication]") {
  Replication repl;
  repl.activate_backlog();
  repl.feed("abc");
  auto ch = std::make_shared<ReplicaChannel>();
  ch->limit = 10;
  REQUIRE(repl.attach_channel(ch, 1));
  int wakes = 0;
  repl.set_channel_wake(*ch, [&wakes] { ++wakes; });
  CHECK(wakes == 1);  // "bc" was already waiting
  repl.feed("d");
  repl.feed("e");
  CHECK(wakes == 1);
  std::string out;
  REQUIRE(repl.take_pending(*ch, out));
  CHECK(out == "bcde");
  repl.feed("f");
  CHECK(wakes == 2);
  // Over the limit, the channel is given up: the replica must resync.
  repl.feed("0123456789x");
  out.clear();
  CHECK_FALSE(repl.take_pending(*ch, out));
  repl.detach_channel(*ch);
  CHECK(repl.channels() == 0);
  // An offset the backlog no longer holds (or never had) cannot be attached.
  CHECK_FALSE(repl.attach_channel(std::make_shared<ReplicaChannel>(), 1000));
}

TEST_CASE("WAIT's waiter is woken by the acknowledgement that completes it", "[replication]") {
  Replication repl;
  hotkv::ReplicaPeer p;
  p.client_id = 1;
  p.state = "online";
  repl.add_replica(p);
  p.client_id = 2;
  repl.add_replica(p);
  auto w = std::make_shared<AckWaiter>();
  w->offset = 50;
  w->count = 2;
  int wakes = 0;
  w->wake = [&wakes] { ++wakes; };
  repl.add_waiter(w);
  repl.update_replica(1, "", 60, 1000);
  CHECK(wakes == 0);
  repl.update_replica(2, "", 49, 1000);
  CHECK(wakes == 0);
  repl.update_replica(2, "", 50, 1000);
  CHECK(wakes == 1);
  repl.update_replica(2, "", 70, 1000);
  CHECK(wakes == 1);
  repl.remove_waiter(w);
}
