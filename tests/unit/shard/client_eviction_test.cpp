// Client eviction (ClientRegistry::evict_over): who goes, in which order, and when a pass runs.
#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include "hotkv/shard/client_registry.hpp"

namespace hotkv {
namespace {

constexpr uint64_t kMB = 1024 * 1024;

// Counts the closes a client was asked.
struct KillCounter final : ClientControl {
  explicit KillCounter(int& to) : kills(to) {}
  void kill() override { ++kills; }
  void unblock(bool) override {}
  void push(std::shared_ptr<const TrackingMessage>) override {}
  int& kills;
};

// A registered client holding `bytes` of query buffer; `kills` counts the closes it was asked.
std::shared_ptr<ClientInfo> add_client(ClientRegistry& reg, uint64_t bytes, int& kills) {
  auto info = std::make_shared<ClientInfo>();
  info->id = reg.next_id();
  info->query_buffer.store(bytes);
  info->control = std::make_shared<KillCounter>(kills);
  reg.add(info);
  return info;
}

}  // namespace

TEST_CASE("client eviction disconnects the clients holding the most until the rest fit",
          "[client_eviction]") {
  ClientRegistry reg;
  int small_kills = 0, big_kills = 0, bigger_kills = 0;
  auto small = add_client(reg, 1 * kMB, small_kills);
  auto big = add_client(reg, 4 * kMB, big_kills);
  auto bigger = add_client(reg, 6 * kMB, bigger_kills);
  // 11 MB and three fixed parts against a 4 MB limit: the 6 MB client is not enough alone.
  CHECK(reg.evict_over(4 * kMB, 1000) == 2);
  CHECK(bigger_kills == 1);
  CHECK(big_kills == 1);
  CHECK(small_kills == 0);
  CHECK(bigger->evicted.load());
  CHECK(reg.evicted_clients() == 2);
  // Clients already asked to close are not counted or asked again.
  CHECK(reg.evict_over(4 * kMB, 2000) == 0);
  CHECK(bigger_kills == 1);
}

TEST_CASE("client eviction spares CLIENT NO-EVICT clients and replication links",
          "[client_eviction]") {
  ClientRegistry reg;
  int protected_kills = 0, link_kills = 0, plain_kills = 0;
  auto protected_client = add_client(reg, 8 * kMB, protected_kills);
  reg.set_no_evict(*protected_client, true);
  auto link = add_client(reg, 8 * kMB, link_kills);
  link->link.store(ClientInfo::kReplicaLink);
  auto plain = add_client(reg, 1 * kMB, plain_kills);
  // The protected ones still count: only the plain client can go, and it goes.
  CHECK(reg.evict_over(4 * kMB, 1000) == 1);
  CHECK(plain_kills == 1);
  CHECK(protected_kills == 0);
  CHECK(link_kills == 0);
}

TEST_CASE("client eviction runs one pass per 10 ms unless the asker is over the limit alone",
          "[client_eviction]") {
  ClientRegistry reg;
  int first_kills = 0, second_kills = 0;
  add_client(reg, 8 * kMB, first_kills);
  CHECK(reg.evict_over(4 * kMB, 1000) == 1);
  auto second = add_client(reg, 8 * kMB, second_kills);
  // 5 ms later an ordinary request for a pass is the same pass: nothing happens.
  CHECK(reg.evict_over(4 * kMB, 1005) == 0);
  CHECK(second_kills == 0);
  // An urgent one (a client holding more than the limit by itself) runs at once.
  CHECK(reg.evict_over(4 * kMB, 1006, true) == 1);
  CHECK(second_kills == 1);
  // No limit, no pass.
  int third_kills = 0;
  add_client(reg, 64 * kMB, third_kills);
  CHECK(reg.evict_over(0, 5000, true) == 0);
  CHECK(third_kills == 0);
}

}  // namespace hotkv
