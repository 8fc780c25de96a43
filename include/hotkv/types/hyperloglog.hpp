// HyperLogLog in Redis's own byte layout, so that a value copied with GET/SET between HotKV
// and redis-server counts the same on both sides (docs/hyperloglog.md):
//
//   "HYLL" | encoding (0 dense, 1 sparse) | 3 unused bytes | cached cardinality (8 bytes LE)
//   followed by the registers: 16384 of them, 6 bits each.
//
// Dense: the registers packed LSB first, 12288 bytes. Sparse: run-length opcodes ZERO
// (00xxxxxx: 1..64 zeros), XZERO (01xxxxxx yyyyyyyy: 1..16384 zeros) and VAL (1vvvvvxx: 1..4
// registers of value 1..32). The top bit of the cached cardinality's last byte says the cache
// is stale. Elements hash with MurmurHash64A (seed 0xadc83b19); the estimate is Otmar Ertl's
// improved estimator as Redis 7 computes it, so counts agree exactly for the same registers.
//
// Updates to a sparse value rewrite it exactly as Redis does (the same split of runs, the
// same merge of neighbouring VAL opcodes, promotion to dense past `sparse_max_bytes` or for a
// register above 32), so the same adds give the same bytes. These functions know nothing of
// RESP and keep no state; a value is a plain std::string. Any thread, no locking.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace hotkv::hll {

inline constexpr int kPrecision = 14;
inline constexpr size_t kRegisters = size_t{1} << kPrecision;  // 16384
inline constexpr int kRegisterBits = 6;
inline constexpr uint8_t kRegisterMax = (1 << kRegisterBits) - 1;
inline constexpr size_t kHeaderSize = 16;
inline constexpr size_t kDenseSize = kHeaderSize + (kRegisters * kRegisterBits + 7) / 8;
inline constexpr uint64_t kHashSeed = 0xadc83b19ULL;
// hll-sparse-max-bytes's default.
inline constexpr size_t kDefaultSparseMaxBytes = 3000;

enum class Encoding : uint8_t { kDense = 0, kSparse = 1 };

// What an update did. kCorrupt: the value's sparse opcodes do not describe 16384 registers
// (Redis's "INVALIDOBJ Corrupted HLL object detected"); the value may be left half-updated.
enum class Update { kUnchanged, kChanged, kCorrupt };

// One register per byte, for merges (PFMERGE, PFCOUNT of several keys).
using Registers = std::array<uint8_t, kRegisters>;

// MurmurHash64A over the bytes, reading 8-byte words little-endian whatever the host.
uint64_t murmur_hash64a(std::string_view data, uint64_t seed);

// The register an element lands in and the length of the 0...01 run its hash starts with
// (1..51): the value the register takes if it is larger.
struct Pattern {
  uint32_t index;
  uint8_t count;
};
Pattern pattern_of(std::string_view element);

// A fresh empty value: sparse, one XZERO covering every register, cached cardinality 0.
std::string make_empty();

// Redis's shape check on a string value: the magic, a known encoding, and exactly kDenseSize
// bytes when dense. A sparse value passing it may still be corrupt (Update::kCorrupt).
bool looks_valid(std::string_view value);
// REQUIRES looks_valid(value).
Encoding encoding_of(std::string_view value);

// The cached cardinality, when the stale bit is clear.
bool cache_valid(std::string_view value);
uint64_t cached_cardinality(std::string_view value);
void set_cached_cardinality(std::string& value, uint64_t card);
void invalidate_cache(std::string& value);

// Dense register access on the 12288 register bytes (after the header).
uint8_t dense_get(const uint8_t* registers, size_t index);
void dense_set(uint8_t* registers, size_t index, uint8_t v);

// Raises register `index` to `count` if it is lower (REQUIRES index < kRegisters, count <=
// kRegisterMax). A sparse value is rewritten in place and promoted to dense when `count` is
// above 32 or when growing it would pass sparse_max_bytes (header included). The cached
// cardinality is marked stale when a sparse value changes; the caller invalidates it after
// dense changes (PFADD does once per command, as Redis).
// REQUIRES looks_valid(value).
Update set_register(std::string& value, size_t index, uint8_t count, size_t sparse_max_bytes);
// set_register for the element's pattern.
Update add(std::string& value, std::string_view element, size_t sparse_max_bytes);

// Rewrites a sparse value as dense (the header, cached cardinality included, is kept). False
// if the sparse opcodes are corrupt; the value is then untouched. A dense value is left as is.
// REQUIRES looks_valid(value).
bool to_dense(std::string& value);

// max[i] = max(max[i], register i) over the value's registers. False if corrupt.
// REQUIRES looks_valid(value).
bool merge_into(std::string_view value, Registers& max);

// Histogram of register values (hist[v] = how many registers hold v).
using Histogram = std::array<int, 64>;
// False if the value is a corrupt sparse one. REQUIRES looks_valid(value).
bool histogram(std::string_view value, Histogram& hist);
Histogram histogram(const Registers& registers);
// Ertl's improved estimator ("New cardinality estimation algorithms for HyperLogLog
// sketches", arXiv:1702.01284) in the order of operations Redis 7 uses.
uint64_t estimate(const Histogram& hist);

// The registers one by one (PFDEBUG GETREG). False if corrupt. REQUIRES looks_valid(value).
bool registers_of(std::string_view value, Registers& out);
// The sparse opcodes as PFDEBUG DECODE prints them: "Z:1000 v:2,1 z:19 ...".
// REQUIRES a sparse value.
std::string decode_sparse(std::string_view value);

// PFSELFTEST: register packing and estimation error, dense and sparse side by side. Returns
// "" on success or the failure text (which starts with "TESTFAILED").
std::string self_test(size_t sparse_max_bytes, uint64_t seed);

}  // namespace hotkv::hll
