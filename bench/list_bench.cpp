// Microbenchmarks for lists (types/list.hpp): the queue hot path on a list of one or two nodes
// (which must cost the same whatever list-compress-depth is, since such a list has no interior),
// pushes onto a long list whose interior is compressed as it grows, and reads from compressed
// nodes (LINDEX in the middle, a full walk as LRANGE does).
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include <benchmark/benchmark.h>

#include "hotkv/types/list.hpp"

namespace {

std::string element(size_t i) {
  char v[64];
  std::snprintf(v, sizeof v, "event:user:%08zu:action:checkout:ok", i);
  return v;
}

// LPUSH then RPOP on a list that stays at `range(0)` elements (one 8 KB node up to ~200).
void BM_ListQueueSmall(benchmark::State& state) {
  hotkv::List l(hotkv::List::kDefaultFill, state.range(1));
  const std::string v = element(1);
  for (int64_t i = 0; i < state.range(0); ++i) {
    l.push_back(v);
  }
  std::string out;
  for (auto _ : state) {
    l.push_front(v);
    l.pop_back(out);
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_ListQueueSmall)->Args({1, 0})->Args({1, 1})->Args({300, 0})->Args({300, 1});

// RPUSH of 1,000,000 elements onto one list, per element.
void BM_ListPushLong(benchmark::State& state) {
  for (auto _ : state) {
    hotkv::List l(hotkv::List::kDefaultFill, state.range(0));
    for (size_t i = 0; i < 1'000'000; ++i) {
      l.push_back(element(i));
    }
    benchmark::DoNotOptimize(l.size());
  }
  state.SetItemsProcessed(state.iterations() * 1'000'000);
}
BENCHMARK(BM_ListPushLong)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

const hotkv::List& long_list(int64_t depth) {
  static std::unique_ptr<hotkv::List> lists[2];
  auto& l = lists[depth != 0 ? 1 : 0];
  if (!l) {
    l = std::make_unique<hotkv::List>(hotkv::List::kDefaultFill, depth);
    for (size_t i = 0; i < 1'000'000; ++i) {
      l->push_back(element(i));
    }
  }
  return *l;
}

// LINDEX at a random place of a 1M-element list.
void BM_ListIndexLong(benchmark::State& state) {
  const hotkv::List& l = long_list(state.range(0));
  uint64_t x = 88172645463325252ull;
  for (auto _ : state) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    benchmark::DoNotOptimize(l.at(x % l.size()).data());
  }
}
BENCHMARK(BM_ListIndexLong)->Arg(0)->Arg(1);

// A walk over all 1M elements (LRANGE 0 -1, DUMP, SORT), per element.
void BM_ListWalkLong(benchmark::State& state) {
  const hotkv::List& l = long_list(state.range(0));
  for (auto _ : state) {
    size_t bytes = 0;
    l.for_each(0, [&](size_t, std::string_view v) {
      bytes += v.size();
      return true;
    });
    benchmark::DoNotOptimize(bytes);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(l.size()));
}
BENCHMARK(BM_ListWalkLong)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
