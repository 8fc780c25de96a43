// Microbenchmarks for the sorted set (types/zset.hpp) at 1M members: insert, score update
// (ZINCRBY's path), rank, the node at a rank, and erase, with std::set of (score, member) as a
// reference for the ordered part alone (it has no rank: std::distance would be O(n)).
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>

#include "hotkv/types/zset.hpp"

namespace {

constexpr int kMembers = 1'000'000;

struct Data {
  std::vector<std::string> members;
  std::vector<double> scores;
};

const Data& data() {
  static const Data d = [] {
    Data out;
    std::mt19937_64 rng(42);
    std::uniform_real_distribution<double> dist(0, 1e6);
    for (int i = 0; i < kMembers; ++i) {
      out.members.push_back("hold:" + std::to_string(i));
      out.scores.push_back(dist(rng));
    }
    return out;
  }();
  return d;
}

const hotkv::ZSet& full_set() {
  static const hotkv::ZSet* z = [] {
    auto* out = new hotkv::ZSet();
    const Data& d = data();
    for (int i = 0; i < kMembers; ++i) {
      out->set(d.members[i], d.scores[i]);
    }
    return out;
  }();
  return *z;
}

void BM_ZSetInsert(benchmark::State& state) {
  const Data& d = data();
  for (auto _ : state) {
    hotkv::ZSet z;
    for (int i = 0; i < kMembers; ++i) {
      z.set(d.members[i], d.scores[i]);
    }
    benchmark::DoNotOptimize(z.size());
  }
  state.SetItemsProcessed(state.iterations() * kMembers);
}
BENCHMARK(BM_ZSetInsert)->Unit(benchmark::kMillisecond);

void BM_StdSetInsert(benchmark::State& state) {
  const Data& d = data();
  for (auto _ : state) {
    std::set<std::pair<double, std::string>> s;
    for (int i = 0; i < kMembers; ++i) {
      s.emplace(d.scores[i], d.members[i]);
    }
    benchmark::DoNotOptimize(s.size());
  }
  state.SetItemsProcessed(state.iterations() * kMembers);
}
BENCHMARK(BM_StdSetInsert)->Unit(benchmark::kMillisecond);

void BM_ZSetRank(benchmark::State& state) {
  const hotkv::ZSet& z = full_set();
  const Data& d = data();
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(z.rank(d.members[i]));
    i = (i + 7919) % kMembers;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ZSetRank);

void BM_ZSetAtRank(benchmark::State& state) {
  const hotkv::ZSet& z = full_set();
  size_t r = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(z.at_rank(r));
    r = (r + 7919) % kMembers;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ZSetAtRank);

void BM_ZSetRangeByScore100(benchmark::State& state) {
  const hotkv::ZSet& z = full_set();
  double lo = 0;
  for (auto _ : state) {
    hotkv::ScoreRange r;
    r.min = lo;
    r.max = 1e9;
    int n = 0;
    for (const hotkv::ZSet::Node* x = z.first_in(r); x != nullptr && n < 100; x = x->next()) {
      ++n;
    }
    benchmark::DoNotOptimize(n);
    lo = lo > 9e5 ? 0 : lo + 997;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ZSetRangeByScore100);

// Update then erase: a fresh set per iteration, measured together with the build.
void BM_ZSetUpdateAndErase(benchmark::State& state) {
  const Data& d = data();
  constexpr int kN = 200'000;
  for (auto _ : state) {
    state.PauseTiming();
    hotkv::ZSet z;
    for (int i = 0; i < kN; ++i) {
      z.set(d.members[i], d.scores[i]);
    }
    state.ResumeTiming();
    for (int i = 0; i < kN; ++i) {
      z.set(d.members[i], d.scores[(i + 1) % kN]);
    }
    for (int i = 0; i < kN; ++i) {
      z.erase(d.members[i]);
    }
    benchmark::DoNotOptimize(z.size());
  }
  state.SetItemsProcessed(state.iterations() * kN * 2);
}
BENCHMARK(BM_ZSetUpdateAndErase)->Unit(benchmark::kMillisecond);

}  // namespace
