// Microbenchmarks for the RESP hot path: parsing a pipeline like redis-benchmark -P 16 sends,
// parsing one large bulk (whole, and arriving in TCP-segment-sized reads, which shows the
// parser resumes rather than rescans), and encoding the replies most commands send.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <benchmark/benchmark.h>

#include "hotkv/resp/parser.hpp"
#include "hotkv/resp/writer.hpp"

namespace {

using hotkv::ParseStatus;
using hotkv::ReplyWriter;
using hotkv::RequestParser;

constexpr int kPipelineDepth = 16;
constexpr size_t kBigBulk = 64 * 1024;
// A typical Ethernet TCP segment payload.
constexpr size_t kSegment = 1460;

std::string pipeline_of_sets() {
  std::string out;
  for (int i = 0; i < kPipelineDepth; ++i) {
    out += "*3\r\n$3\r\nSET\r\n$10\r\nkey:000123\r\n$5\r\nvalue\r\n";
  }
  return out;
}

std::string set_with_big_value() {
  return "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$" + std::to_string(kBigBulk) + "\r\n" +
         std::string(kBigBulk, 'v') + "\r\n";
}

// Parses every command in `input` the way a connection drains its buffer.
void drain(RequestParser& parser, std::string_view input, std::vector<std::string_view>& args) {
  size_t consumed = 0;
  while (!input.empty()) {
    const ParseStatus st = parser.parse(input, consumed, args);
    if (st == ParseStatus::kError || consumed == 0) {
      break;
    }
    benchmark::DoNotOptimize(args.data());
    input.remove_prefix(consumed);
  }
}

void BM_ParsePipelineOf16Sets(benchmark::State& state) {
  const std::string input = pipeline_of_sets();
  RequestParser parser;
  std::vector<std::string_view> args;
  for (auto _ : state) {
    drain(parser, input, args);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * input.size()));
  state.SetItemsProcessed(state.iterations() * kPipelineDepth);
}
BENCHMARK(BM_ParsePipelineOf16Sets);

void BM_ParseBulk64K(benchmark::State& state) {
  const std::string input = set_with_big_value();
  RequestParser parser;
  std::vector<std::string_view> args;
  for (auto _ : state) {
    drain(parser, input, args);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * input.size()));
}
BENCHMARK(BM_ParseBulk64K);

// The same request revealed one segment at a time: each call sees a longer prefix, so the total
// work stays linear only if the parser resumes where it stopped.
void BM_ParseBulk64KInSegments(benchmark::State& state) {
  const std::string input = set_with_big_value();
  RequestParser parser;
  std::vector<std::string_view> args;
  size_t consumed = 0;
  for (auto _ : state) {
    for (size_t have = kSegment;; have += kSegment) {
      have = std::min(have, input.size());
      const ParseStatus st = parser.parse(std::string_view(input).substr(0, have), consumed, args);
      if (st != ParseStatus::kNeedMore) {
        break;
      }
    }
    benchmark::DoNotOptimize(args.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * input.size()));
}
BENCHMARK(BM_ParseBulk64KInSegments);

void BM_WriteBulkReplies(benchmark::State& state) {
  const std::string value(static_cast<size_t>(state.range(0)), 'v');
  std::string out;
  for (auto _ : state) {
    out.clear();
    ReplyWriter w(out, 2);
    for (int i = 0; i < kPipelineDepth; ++i) {
      w.bulk(value);
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * kPipelineDepth);
}
BENCHMARK(BM_WriteBulkReplies)->Arg(5)->Arg(1024);

void BM_WriteIntegerReplies(benchmark::State& state) {
  std::string out;
  int64_t v = 1234567;
  for (auto _ : state) {
    out.clear();
    ReplyWriter w(out, 2);
    for (int i = 0; i < kPipelineDepth; ++i) {
      w.integer(v + i);
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * kPipelineDepth);
}
BENCHMARK(BM_WriteIntegerReplies);

}  // namespace
