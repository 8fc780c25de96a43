// Microbenchmarks for the keyspace building blocks every command touches: Dict insert and
// lookup at 1M keys (with absl::flat_hash_map as a reference point, since Dict gives up some
// speed for its SCAN guarantee), the timing wheel scheduling and expiring 1M keys, and the
// key -> slot hash that routes each request.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <absl/container/flat_hash_map.h>
#include <benchmark/benchmark.h>

#include "hotkv/shard/slot.hpp"
#include "hotkv/ttl/timing_wheel.hpp"
#include "hotkv/types/dict.hpp"

namespace {

constexpr int kKeyCount = 1'000'000;

// "key:0" .. "key:999999", like redis-benchmark's key space; built once and shared.
const std::vector<std::string>& keys() {
  static const std::vector<std::string> all = [] {
    std::vector<std::string> v;
    v.reserve(kKeyCount);
    for (int i = 0; i < kKeyCount; ++i) {
      v.push_back("key:" + std::to_string(i));
    }
    return v;
  }();
  return all;
}

void BM_DictInsert(benchmark::State& state) {
  const auto& all = keys();
  for (auto _ : state) {
    hotkv::Dict<int64_t> dict;
    for (const auto& key : all) {
      dict.insert_or_assign(key, 1);
    }
    benchmark::DoNotOptimize(dict.size());
  }
  state.SetItemsProcessed(state.iterations() * kKeyCount);
}
BENCHMARK(BM_DictInsert)->Unit(benchmark::kMillisecond);

void BM_DictFind(benchmark::State& state) {
  const auto& all = keys();
  hotkv::Dict<int64_t> dict;
  for (const auto& key : all) {
    dict.insert_or_assign(key, 1);
  }
  for (auto _ : state) {
    int64_t sum = 0;
    for (const auto& key : all) {
      sum += *dict.find(key);
    }
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * kKeyCount);
}
BENCHMARK(BM_DictFind)->Unit(benchmark::kMillisecond);

void BM_FlatHashMapInsertReference(benchmark::State& state) {
  const auto& all = keys();
  for (auto _ : state) {
    absl::flat_hash_map<std::string, int64_t> map;
    for (const auto& key : all) {
      map.insert_or_assign(key, 1);
    }
    benchmark::DoNotOptimize(map.size());
  }
  state.SetItemsProcessed(state.iterations() * kKeyCount);
}
BENCHMARK(BM_FlatHashMapInsertReference)->Unit(benchmark::kMillisecond);

void BM_FlatHashMapFindReference(benchmark::State& state) {
  const auto& all = keys();
  absl::flat_hash_map<std::string, int64_t> map;
  for (const auto& key : all) {
    map.insert_or_assign(key, 1);
  }
  for (auto _ : state) {
    int64_t sum = 0;
    for (const auto& key : all) {
      sum += map.find(key)->second;
    }
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * kKeyCount);
}
BENCHMARK(BM_FlatHashMapFindReference)->Unit(benchmark::kMillisecond);

// 1M keys expiring over one minute, drained in event-loop-sized batches of 10,000.
void BM_TimingWheelScheduleAdvance(benchmark::State& state) {
  const auto& all = keys();
  constexpr int64_t kStart = 1'700'000'000'000;
  constexpr int64_t kSpreadMs = 60'000;
  auto on_expire = [](std::string_view key, int64_t) { benchmark::DoNotOptimize(key.data()); };
  for (auto _ : state) {
    hotkv::TimingWheel wheel(kStart);
    for (int i = 0; i < kKeyCount; ++i) {
      wheel.schedule(all[static_cast<size_t>(i)], kStart + 1 + i % kSpreadMs);
    }
    size_t fired = 0;
    for (int64_t now = kStart; now <= kStart + kSpreadMs; now += 100) {
      while (size_t n = wheel.advance(now, 10'000, on_expire)) {
        fired += n;
      }
    }
    benchmark::DoNotOptimize(fired);
  }
  state.SetItemsProcessed(state.iterations() * kKeyCount);
}
BENCHMARK(BM_TimingWheelScheduleAdvance)->Unit(benchmark::kMillisecond);

void BM_KeySlot(benchmark::State& state) {
  const auto& all = keys();
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(hotkv::key_slot(all[i]));
    i = (i + 1) & 1023;  // stay in cache: this measures the hash, not memory
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_KeySlot);

void BM_KeySlotHashTag(benchmark::State& state) {
  const std::string key = "{item:1001}:stock:reservations";
  for (auto _ : state) {
    benchmark::DoNotOptimize(hotkv::key_slot(key));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_KeySlotHashTag);

}  // namespace
