// The durability barrier (durability_barrier.hpp).
#include "hotkv/shard/durability_barrier.hpp"

#include "hotkv/shard/engine.hpp"

namespace hotkv {

asio::awaitable<void> DurabilityBarrier::pass_grouped(Shard& shard) {
  co_await shard.log_barrier();
  co_await shard.seal_gate().wait();
}

void DurabilityBarrier::pass_group_now(Shard& shard) { shard.flush_log_now(); }

void DurabilityBarrier::pass(Shard& shard) { shard.log().flush_if_needed(); }

void DurabilityBarrier::pass(Engine& engine, const std::vector<size_t>& shards, size_t home) {
  for (size_t i : shards) {
    pass(engine.shard(i));
  }
  engine.shard(home).release_pushes();
}

void DurabilityBarrier::pass_all(Engine& engine) {
  for (size_t i = 0; i < engine.shard_count(); ++i) {
    pass(engine.shard(i));
  }
}

}  // namespace hotkv
