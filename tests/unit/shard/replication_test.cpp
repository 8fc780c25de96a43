#include "hotkv/shard/replication.hpp"

#include <catch2/catch.hpp>
#include <string>

using hotkv::LinkState;
using hotkv::Replication;
using hotkv::ReplicationBacklog;
using hotkv::ReplicationRole;

namespace {

std::string read(const ReplicationBacklog& b, uint64_t from, size_t max = 1 << 20) {
  std::string out;
  b.copy_from(from, max, out);
  return out;
}

}  // namespace

TEST_CASE("The backlog keeps the newest bytes and answers by stream offset", "[replication]") {
  ReplicationBacklog b(8);
  b.append("abc");
  CHECK(b.end_offset() == 3);
  CHECK(b.histlen() == 3);
  CHECK(b.first_byte_offset() == 1);
  CHECK(read(b, 0) == "abc");
  CHECK(read(b, 1) == "bc");
  CHECK(read(b, 3).empty());
  CHECK(b.holds_from(0));
  CHECK_FALSE(b.holds_from(4));  // not yet produced

  b.append("defghij");  // 10 bytes in all: the first two are gone, the ring wrapped
  CHECK(b.end_offset() == 10);
  CHECK(b.histlen() == 8);
  CHECK(b.first_byte_offset() == 3);
  CHECK_FALSE(b.holds_from(1));
  CHECK(b.holds_from(2));
  CHECK(read(b, 2) == "cdefghij");
  CHECK(read(b, 5, 3) == "fgh");

  // A piece larger than the ring leaves only its own tail.
  b.append("0123456789AB");
  CHECK(b.end_offset() == 22);
  CHECK(read(b, 14) == "456789AB");

  // Shrinking keeps the newest history, growing keeps it all.
  b.resize(4);
  CHECK(b.end_offset() == 22);
  CHECK(b.histlen() == 4);
  CHECK(read(b, 18) == "89AB");
  b.resize(16);
  CHECK(read(b, 18) == "89AB");
  b.append("xyz");
  CHECK(read(b, 18) == "89ABxyz");

  b.reset(1000);
  CHECK(b.end_offset() == 1000);
  CHECK(b.histlen() == 0);
  CHECK(b.holds_from(1000));
  b.append("q");
  CHECK(read(b, 1000) == "q");
}

TEST_CASE("Promotion keeps the old id valid up to where it ended", "[replication]") {
  Replication r;
  auto first = r.ids();
  CHECK(first.replid.size() == 40);
  CHECK(first.replid2 == std::string(40, '0'));
  CHECK(first.second_offset == -1);

  r.become_replica("127.0.0.1", 7000);
  CHECK(r.is_replica());
  CHECK(r.link_state() == LinkState::kConnect);
  REQUIRE(r.master());
  CHECK(r.master()->second == 7000);
  r.adopt_master_stream(std::string(40, 'a'), 100);
  CHECK(r.offset() == 100);
  r.feed("0123456789");  // 10 bytes applied from the master
  CHECK(r.offset() == 110);

  r.become_master();
  auto ids = r.ids();
  CHECK(r.role() == ReplicationRole::kMaster);
  CHECK(ids.replid2 == std::string(40, 'a'));
  CHECK(ids.second_offset == 111);
  CHECK(ids.replid != ids.replid2);
  // A sibling replica that followed the old master up to 105 or 110 continues here...
  CHECK(r.can_continue(std::string(40, 'a'), 105));
  CHECK(r.can_continue(std::string(40, 'a'), 110));
  // ...but not from beyond where the old id ended, nor before the backlog, nor an unknown id.
  r.feed("more");
  CHECK_FALSE(r.can_continue(std::string(40, 'a'), 112));
  CHECK(r.can_continue(ids.replid, 112));
  CHECK_FALSE(r.can_continue(ids.replid, 99));
  CHECK_FALSE(r.can_continue(std::string(40, 'b'), 110));
}

TEST_CASE("Replicas' acknowledgements count for WAIT once online", "[replication]") {
  Replication r;
  r.add_replica({1, "127.0.0.1", 7001, "wait_bgsave", 0, 0});
  r.add_replica({2, "127.0.0.1", 7002, "online", 0, 0});
  r.update_replica(1, "online", 50, 10);
  r.update_replica(2, "", 80, 10);
  r.update_replica(2, "", 60, 11);  // acknowledgements never go back
  CHECK(r.replicas_acked(50) == 2);
  CHECK(r.replicas_acked(70) == 1);
  CHECK(r.replicas_acked(81) == 0);
  r.remove_replica(2);
  CHECK(r.replicas().size() == 1);
  CHECK(r.replicas_acked(50) == 1);
}

TEST_CASE("Online replicas silent for longer than the timeout are named for dropping",
          "[replication]") {
  Replication r;
  r.add_replica({1, "127.0.0.1", 7001, "send_bulk", 0, 0});
  r.add_replica({2, "127.0.0.1", 7002, "send_bulk", 0, 0});
  r.add_replica({3, "127.0.0.1", 7003, "send_bulk", 0, 0});
  r.update_replica(1, "online", std::nullopt, 1000);  // online, never acknowledged yet
  r.update_replica(2, "online", std::nullopt, 1000);
  r.update_replica(2, "", 10, 4000);  // acknowledged later
  // Replica 3 is still receiving its snapshot: not judged by its acknowledgements.
  CHECK(r.silent_replicas(2000, 2000).empty());
  CHECK(r.silent_replicas(3001, 2000) == std::vector<uint64_t>{1});
  CHECK(r.silent_replicas(6001, 2000) == std::vector<uint64_t>{1, 2});
}
