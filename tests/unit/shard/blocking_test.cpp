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
  auto* list = reg.waiters("s");
  REQUIRE(list != nullptr);
  REQUIRE(list->size() == 2);
  REQUIRE(list->front() == a);
  REQUIRE(reg.waiters("t")->size() == 1);
  REQUIRE(reg.waiters("u") == nullptr);
}

TEST_CASE("Only keys somebody waits on become ready and each only once", "[blocking]") {
  std::vector<WakeKind> log;
  BlockingRegistry reg;
  reg.add(client({"s"}, log));
  REQUIRE_FALSE(reg.signal("other"));
  REQUIRE(reg.signal("s"));
  REQUIRE(reg.signal("s"));
  auto ready = reg.take_ready();
  REQUIRE(ready == std::vector<std::string>{"s"});
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
  reg.prune("s");
  REQUIRE(reg.waiters("s") == nullptr);
  REQUIRE(reg.waiters("t") != nullptr);
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
  REQUIRE(reg.waiters("s")->size() == 1);
  REQUIRE(reg.waiters("s")->front() == b);
  REQUIRE(reg.all().size() == 1);
}
