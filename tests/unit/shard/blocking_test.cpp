// Unit tests for the per-shard registry of blocked clients: arrival order per key, ready-key
// signalling, pruning of finished clients, and exactly-once completion.
#include "hotkv/shard/blocking.hpp"

#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

using hotkv::BlockedClient;
using hotkv::BlockingRegistry;
using hotkv::WakeKind;
using hotkv::WakeResult;

namespace {

std::shared_ptr<BlockedClient> client(std::vector<std::string> keys, std::vector<WakeKind>& log) {
  auto c = std::make_shared<BlockedClient>();
  c->keys = std::move(keys);
  c->on_wake = [&log](WakeResult r) { log.push_back(r.kind); };
  return c;
}

}  // namespace

TEST_CASE("Waiters on a key are kept in arrival order", "[blocking]") {
  std::vector<WakeKind> log;
  BlockingRegistry reg;
  auto a = client({"s"}, log);
  auto b = client({"s", "t"}, log);
  reg.add(a);
  reg.add(b);
  REQUIRE(reg.blocked_count() == 2);
  auto* list = reg.waiters(0, "s");
  REQUIRE(list != nullptr);
  REQUIRE(list->size() == 2);
  REQUIRE(list->front() == a);
  REQUIRE(reg.waiters(0, "t")->size() == 1);
  REQUIRE(reg.waiters(0, "u") == nullptr);
}

TEST_CASE("Only keys somebody waits on become ready and each only once", "[blocking]") {
  std::vector<WakeKind> log;
  BlockingRegistry reg;
  reg.add(client({"s"}, log));
  REQUIRE_FALSE(reg.signal(0, "other"));
  REQUIRE(reg.signal(0, "s"));
  REQUIRE(reg.signal(0, "s"));
  auto ready = reg.take_ready();
  REQUIRE(ready.size() == 1);
  REQUIRE(ready[0].db == 0);
  REQUIRE(ready[0].key == "s");
  REQUIRE(reg.take_ready().empty());
  REQUIRE(reg.signal_all());
  REQUIRE(reg.take_ready().size() == 1);
}

TEST_CASE("A client completes exactly once and is pruned afterwards", "[blocking]") {
  std::vector<WakeKind> log;
  BlockingRegistry reg;
  auto a = client({"s", "t"}, log);
  reg.add(a);
  REQUIRE(a->finish(WakeResult{WakeKind::kReply, "x"}));
  REQUIRE_FALSE(a->finish(WakeResult{WakeKind::kTimeout, {}}));
  REQUIRE(log == std::vector<WakeKind>{WakeKind::kReply});
  REQUIRE(reg.blocked_count() == 0);
  reg.prune(0, "s");
  REQUIRE(reg.waiters(0, "s") == nullptr);
  REQUIRE(reg.waiters(0, "t") != nullptr);
  reg.remove(*a);
  REQUIRE(reg.empty());
}

TEST_CASE("Removing a client leaves the others waiting", "[blocking]") {
  std::vector<WakeKind> log;
  BlockingRegistry reg;
  auto a = client({"s"}, log);
  auto b = client({"s"}, log);
  reg.add(a);
  reg.add(b);
  reg.remove(*a);
  REQUIRE(reg.waiters(0, "s")->size() == 1);
  REQUIRE(reg.waiters(0, "s")->front() == b);
  REQUIRE(reg.all().size() == 1);
}

TEST_CASE("A key is waited on in its client's database only", "[blocking]") {
  std::vector<WakeKind> log;
  BlockingRegistry reg;
  auto in0 = client({"q"}, log);
  auto in3 = client({"q"}, log);
  in3->db = 3;
  reg.add(in0);
  reg.add(in3);
  REQUIRE(reg.waiters(0, "q")->size() == 1);
  REQUIRE(reg.waiters(3, "q")->front() == in3);
  REQUIRE(reg.waiters(1, "q") == nullptr);
  REQUIRE_FALSE(reg.signal(1, "q"));
  REQUIRE(reg.signal(3, "q"));
  auto ready = reg.take_ready();
  REQUIRE(ready.size() == 1);
  REQUIRE(ready[0].db == 3);
  REQUIRE(reg.signal_db(0));
  REQUIRE(reg.take_ready()[0].db == 0);
  reg.remove(*in3);
  REQUIRE(reg.waiters(3, "q") == nullptr);
  REQUIRE_FALSE(reg.empty());
  reg.remove(*in0);
  REQUIRE(reg.empty());
}
