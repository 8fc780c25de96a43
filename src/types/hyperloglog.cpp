// HyperLogLog registers in Redis's byte layout: hashing, dense packing, the sparse run-length
// opcodes and their in-place rewrite, promotion to dense, and the estimator. The sparse
// rewrite follows Redis's rules step for step (which run is split how, which neighbouring
// VAL opcodes are merged afterwards) because the resulting bytes are visible through GET and
// must be the ones redis-server would hold after the same commands.
#include "hotkv/types/hyperloglog.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

namespace hotkv::hll {
namespace {

constexpr char kMagic[4] = {'H', 'Y', 'L', 'L'};
constexpr size_t kEncodingByte = 4;
constexpr size_t kCardByte = 8;
constexpr size_t kStaleByte = kCardByte + 7;
constexpr uint8_t kStaleBit = 0x80;
constexpr int kQ = 64 - kPrecision;  // hash bits left for the 0...01 run
constexpr uint32_t kValMaxValue = 32;
constexpr uint32_t kValMaxLen = 4;
constexpr uint32_t kZeroMaxLen = 64;
constexpr uint32_t kXZeroMaxLen = 16384;
constexpr double kAlphaInf = 0.721347520444481703680;  // 0.5 / ln(2)

// ---------------------------------------------------------------- sparse opcodes

bool is_zero_op(uint8_t b) { return (b & 0xc0) == 0; }
bool is_xzero_op(uint8_t b) { return (b & 0xc0) == 0x40; }
bool is_val_op(uint8_t b) { return (b & 0x80) != 0; }
uint32_t val_value(uint8_t b) { return ((b >> 2) & 0x1f) + 1; }
uint32_t val_len(uint8_t b) { return (b & 0x3) + 1; }

char val_op(uint32_t value, uint32_t len) {
  return static_cast<char>(0x80 | ((value - 1) << 2) | (len - 1));
}

// Appends the shortest opcode for a run of `len` zeros, as Redis picks it (ZERO up to 64).
void append_zero_run(std::string& out, uint32_t len) {
  if (len > kZeroMaxLen) {
    uint32_t l = len - 1;
    out.push_back(static_cast<char>(0x40 | (l >> 8)));
    out.push_back(static_cast<char>(l & 0xff));
  } else {
    out.push_back(static_cast<char>(len - 1));
  }
}

struct Op {
  uint32_t len = 0;   // registers covered
  uint8_t value = 0;  // 0 for ZERO/XZERO
  uint8_t size = 1;   // bytes
  bool zero = false;  // ZERO or XZERO
};

// Reads the opcode at `pos` (< v.size()). False when an XZERO is cut off by the end of the
// value, which only a corrupt value has.
bool read_op(std::string_view v, size_t pos, Op& op) {
  auto b = static_cast<uint8_t>(v[pos]);
  if (is_zero_op(b)) {
    op = {(b & 0x3fu) + 1, 0, 1, true};
  } else if (is_xzero_op(b)) {
    if (pos + 1 >= v.size()) {
      return false;
    }
    uint32_t len = (((b & 0x3fu) << 8) | static_cast<uint8_t>(v[pos + 1])) + 1;
    op = {len, 0, 2, true};
  } else {
    op = {val_len(b), static_cast<uint8_t>(val_value(b)), 1, false};
  }
  return true;
}

// Calls fn(first, len, value) for every non-zero run of a sparse value. False when the
// opcodes do not cover exactly kRegisters registers (fn has then seen a prefix of them).
template <class F>
bool for_each_val_run(std::string_view v, F&& fn) {
  size_t idx = 0;
  Op op;
  for (size_t pos = kHeaderSize; pos < v.size(); pos += op.size) {
    if (!read_op(v, pos, op)) {
      return false;
    }
    if (!op.zero) {
      if (idx + op.len > kRegisters) {
        return false;
      }
      fn(idx, op.len, op.value);
    }
    idx += op.len;
  }
  return idx == kRegisters;
}

uint8_t* dense_registers(std::string& v) {
  return reinterpret_cast<uint8_t*>(v.data()) + kHeaderSize;
}
const uint8_t* dense_registers(std::string_view v) {
  return reinterpret_cast<const uint8_t*>(v.data()) + kHeaderSize;
}

// After an update, neighbouring VAL opcodes of one value may be joined (up to 4 registers).
// Redis looks at five opcodes from the one before the updated one; so do we, so that the
// bytes come out the same.
void merge_adjacent_vals(std::string& v, size_t pos) {
  for (int steps = 0; steps < 5 && pos < v.size(); ++steps) {
    auto b = static_cast<uint8_t>(v[pos]);
    if (is_xzero_op(b)) {
      pos += 2;
      continue;
    }
    if (is_zero_op(b)) {
      pos += 1;
      continue;
    }
    if (pos + 1 < v.size()) {
      auto next = static_cast<uint8_t>(v[pos + 1]);
      if (is_val_op(next) && val_value(next) == val_value(b) &&
          val_len(b) + val_len(next) <= kValMaxLen) {
        v[pos + 1] = val_op(val_value(b), val_len(b) + val_len(next));
        v.erase(pos, 1);
        continue;  // the joined opcode may join its right neighbour too
      }
    }
    ++pos;
  }
}

Update promote_and_set(std::string& v, size_t index, uint8_t count) {
  if (!to_dense(v)) {
    return Update::kCorrupt;
  }
  uint8_t* regs = dense_registers(v);
  if (dense_get(regs, index) >= count) {
    return Update::kUnchanged;
  }
  dense_set(regs, index, count);
  invalidate_cache(v);
  return Update::kChanged;
}

Update sparse_set(std::string& v, size_t index, uint8_t count, size_t sparse_max_bytes) {
  if (count > kValMaxValue) {
    return promote_and_set(v, index, count);
  }
  // Find the opcode covering `index`, and the one before it (where merging starts).
  size_t pos = kHeaderSize;
  size_t prev = std::string::npos;
  size_t first = 0;
  Op op;
  bool found = false;
  while (pos < v.size()) {
    if (!read_op(v, pos, op)) {
      return Update::kCorrupt;
    }
    if (index < first + op.len) {
      found = true;
      break;
    }
    prev = pos;
    pos += op.size;
    first += op.len;
  }
  if (!found) {
    return Update::kCorrupt;
  }
  if (!op.zero && op.value >= count) {
    return Update::kUnchanged;
  }
  if (op.len == 1 && op.size == 1) {
    // A VAL or ZERO of one register: the opcode becomes VAL(count) where it stands.
    v[pos] = val_op(count, 1);
  } else {
    // Split the run into [left part] VAL(count) [right part].
    std::string seq;
    size_t last = first + op.len - 1;
    auto part = [&](size_t len) {
      if (op.zero) {
        append_zero_run(seq, static_cast<uint32_t>(len));
      } else {
        seq.push_back(val_op(op.value, static_cast<uint32_t>(len)));
      }
    };
    if (index != first) {
      part(index - first);
    }
    seq.push_back(val_op(count, 1));
    if (index != last) {
      part(last - index);
    }
    if (seq.size() > op.size && v.size() + (seq.size() - op.size) > sparse_max_bytes) {
      return promote_and_set(v, index, count);
    }
    v.replace(pos, op.size, seq);
  }
  merge_adjacent_vals(v, prev == std::string::npos ? kHeaderSize : prev);
  invalidate_cache(v);
  return Update::kChanged;
}

// Tau and sigma of Ertl's estimator; the loops stop when the sum stops changing.
double ertl_sigma(double x) {
  if (x == 1.0) {
    return std::numeric_limits<double>::infinity();
  }
  double y = 1.0;
  double z = x;
  double before;
  do {
    x *= x;
    before = z;
    z += x * y;
    y += y;
  } while (before != z);
  return z;
}

double ertl_tau(double x) {
  if (x == 0.0 || x == 1.0) {
    return 0.0;
  }
  double y = 1.0;
  double z = 1 - x;
  double before;
  do {
    x = std::sqrt(x);
    before = z;
    y *= 0.5;
    z -= std::pow(1 - x, 2) * y;
  } while (before != z);
  return z / 3;
}

// Calls fn(first, r0, r1, r2, r3) for every four dense registers, which share three bytes:
// unpacking them together avoids the shifts and branches of one dense_get per register on the
// paths that read all 16384 (PFCOUNT, PFMERGE).
template <class F>
void for_each_dense_quad(const uint8_t* r, F&& fn) {
  for (size_t first = 0; first < kRegisters; first += 4, r += 3) {
    unsigned b0 = r[0];
    unsigned b1 = r[1];
    unsigned b2 = r[2];
    fn(first, static_cast<uint8_t>(b0 & 63), static_cast<uint8_t>(((b0 >> 6) | (b1 << 2)) & 63),
       static_cast<uint8_t>(((b1 >> 4) | (b2 << 4)) & 63), static_cast<uint8_t>(b2 >> 2));
  }
}

void dense_histogram(const uint8_t* r, Histogram& hist) {
  for_each_dense_quad(r, [&](size_t, uint8_t r0, uint8_t r1, uint8_t r2, uint8_t r3) {
    ++hist[r0];
    ++hist[r1];
    ++hist[r2];
    ++hist[r3];
  });
}

}  // namespace

// ---------------------------------------------------------------- hashing

uint64_t murmur_hash64a(std::string_view data, uint64_t seed) {
  constexpr uint64_t m = 0xc6a4a7935bd1e995ULL;
  constexpr int r = 47;
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  size_t len = data.size();
  uint64_t h = seed ^ (static_cast<uint64_t>(len) * m);
  size_t words = len / 8;
  for (size_t w = 0; w < words; ++w, p += 8) {
    uint64_t k = 0;
    for (int i = 7; i >= 0; --i) {
      k = (k << 8) | p[i];
    }
    k *= m;
    k ^= k >> r;
    k *= m;
    h ^= k;
    h *= m;
  }
  size_t tail = len & 7;
  if (tail != 0) {
    for (size_t i = tail; i-- > 0;) {
      h ^= static_cast<uint64_t>(p[i]) << (8 * i);
    }
    h *= m;
  }
  h ^= h >> r;
  h *= m;
  h ^= h >> r;
  return h;
}

Pattern pattern_of(std::string_view element) {
  uint64_t hash = murmur_hash64a(element, kHashSeed);
  auto index = static_cast<uint32_t>(hash & (kRegisters - 1));
  // The run counts the zeros above the index bits plus the closing one; a sentinel bit past
  // the hash keeps it at most kQ + 1.
  uint64_t rest = (hash >> kPrecision) | (uint64_t{1} << kQ);
  auto count = static_cast<uint8_t>(std::countr_zero(rest) + 1);
  return {index, count};
}

// ---------------------------------------------------------------- header

std::string make_empty() {
  std::string v(kHeaderSize, '\0');
  std::memcpy(v.data(), kMagic, 4);
  v[kEncodingByte] = static_cast<char>(Encoding::kSparse);
  for (size_t left = kRegisters; left > 0;) {
    auto run = static_cast<uint32_t>(std::min<size_t>(left, kXZeroMaxLen));
    append_zero_run(v, run);
    left -= run;
  }
  return v;
}

bool looks_valid(std::string_view value) {
  if (value.size() < kHeaderSize || std::memcmp(value.data(), kMagic, 4) != 0) {
    return false;
  }
  auto enc = static_cast<uint8_t>(value[kEncodingByte]);
  if (enc > static_cast<uint8_t>(Encoding::kSparse)) {
    return false;
  }
  return enc != static_cast<uint8_t>(Encoding::kDense) || value.size() == kDenseSize;
}

Encoding encoding_of(std::string_view value) {
  return static_cast<Encoding>(static_cast<uint8_t>(value[kEncodingByte]));
}

bool cache_valid(std::string_view value) {
  return (static_cast<uint8_t>(value[kStaleByte]) & kStaleBit) == 0;
}

uint64_t cached_cardinality(std::string_view value) {
  uint64_t card = 0;
  for (int i = 7; i >= 0; --i) {
    card = (card << 8) | static_cast<uint8_t>(value[kCardByte + i]);
  }
  return card;
}

void set_cached_cardinality(std::string& value, uint64_t card) {
  for (size_t i = 0; i < 8; ++i) {
    value[kCardByte + i] = static_cast<char>((card >> (8 * i)) & 0xff);
  }
}

void invalidate_cache(std::string& value) {
  value[kStaleByte] = static_cast<char>(static_cast<uint8_t>(value[kStaleByte]) | kStaleBit);
}

// ---------------------------------------------------------------- registers

uint8_t dense_get(const uint8_t* registers, size_t index) {
  size_t bit = index * kRegisterBits;
  size_t byte = bit / 8;
  unsigned shift = bit % 8;
  unsigned v = registers[byte] >> shift;
  if (shift > 8 - kRegisterBits) {  // the register runs into the next byte
    v |= static_cast<unsigned>(registers[byte + 1]) << (8 - shift);
  }
  return static_cast<uint8_t>(v & kRegisterMax);
}

void dense_set(uint8_t* registers, size_t index, uint8_t v) {
  size_t bit = index * kRegisterBits;
  size_t byte = bit / 8;
  unsigned shift = bit % 8;
  unsigned val = v & kRegisterMax;
  registers[byte] =
      static_cast<uint8_t>((registers[byte] & ~(unsigned{kRegisterMax} << shift)) | (val << shift));
  if (shift > 8 - kRegisterBits) {
    unsigned spill = 8 - shift;
    registers[byte + 1] = static_cast<uint8_t>(
        (registers[byte + 1] & ~(unsigned{kRegisterMax} >> spill)) | (val >> spill));
  }
}

Update set_register(std::string& value, size_t index, uint8_t count, size_t sparse_max_bytes) {
  if (encoding_of(value) == Encoding::kSparse) {
    return sparse_set(value, index, count, sparse_max_bytes);
  }
  uint8_t* regs = dense_registers(value);
  if (dense_get(regs, index) >= count) {
    return Update::kUnchanged;
  }
  dense_set(regs, index, count);
  invalidate_cache(value);
  return Update::kChanged;
}

Update add(std::string& value, std::string_view element, size_t sparse_max_bytes) {
  Pattern p = pattern_of(element);
  return set_register(value, p.index, p.count, sparse_max_bytes);
}

bool to_dense(std::string& value) {
  if (encoding_of(value) == Encoding::kDense) {
    return true;
  }
  std::string dense(kDenseSize, '\0');
  std::memcpy(dense.data(), value.data(), kHeaderSize);
  dense[kEncodingByte] = static_cast<char>(Encoding::kDense);
  uint8_t* regs = dense_registers(dense);
  bool ok = for_each_val_run(value, [&](size_t first, uint32_t len, uint8_t v) {
    for (size_t i = first; i < first + len; ++i) {
      dense_set(regs, i, v);
    }
  });
  if (!ok) {
    return false;
  }
  value = std::move(dense);
  return true;
}

bool merge_into(std::string_view value, Registers& max) {
  if (encoding_of(value) == Encoding::kDense) {
    for_each_dense_quad(dense_registers(value),
                        [&](size_t i, uint8_t r0, uint8_t r1, uint8_t r2, uint8_t r3) {
                          max[i] = std::max(max[i], r0);
                          max[i + 1] = std::max(max[i + 1], r1);
                          max[i + 2] = std::max(max[i + 2], r2);
                          max[i + 3] = std::max(max[i + 3], r3);
                        });
    return true;
  }
  return for_each_val_run(value, [&](size_t first, uint32_t len, uint8_t v) {
    for (size_t i = first; i < first + len; ++i) {
      max[i] = std::max(max[i], v);
    }
  });
}

bool registers_of(std::string_view value, Registers& out) {
  out.fill(0);
  return merge_into(value, out);
}

// ---------------------------------------------------------------- estimate

bool histogram(std::string_view value, Histogram& hist) {
  hist.fill(0);
  if (encoding_of(value) == Encoding::kDense) {
    dense_histogram(dense_registers(value), hist);
    return true;
  }
  int nonzero = 0;
  bool ok = for_each_val_run(value, [&](size_t, uint32_t len, uint8_t v) {
    hist[v] += static_cast<int>(len);
    nonzero += static_cast<int>(len);
  });
  hist[0] = static_cast<int>(kRegisters) - nonzero;
  return ok;
}

Histogram histogram(const Registers& registers) {
  Histogram hist{};
  // Eight registers at a time: a union of small HLLs is mostly zeros.
  for (size_t i = 0; i < kRegisters; i += 8) {
    uint64_t word;
    std::memcpy(&word, registers.data() + i, 8);
    if (word == 0) {
      hist[0] += 8;
      continue;
    }
    for (size_t j = i; j < i + 8; ++j) {
      ++hist[registers[j] & 63];
    }
  }
  return hist;
}

uint64_t estimate(const Histogram& hist) {
  const double m = kRegisters;
  double z = m * ertl_tau((m - hist[kQ + 1]) / m);
  for (int j = kQ; j >= 1; --j) {
    z += hist[j];
    z *= 0.5;
  }
  z += m * ertl_sigma(hist[0] / m);
  return static_cast<uint64_t>(std::llround(kAlphaInf * m * m / z));
}

// ---------------------------------------------------------------- debugging

std::string decode_sparse(std::string_view value) {
  std::string out;
  for (size_t pos = kHeaderSize; pos < value.size();) {
    auto b = static_cast<uint8_t>(value[pos]);
    if (is_zero_op(b)) {
      out += "z:" + std::to_string((b & 0x3f) + 1) + " ";
      pos += 1;
    } else if (is_xzero_op(b)) {
      // A cut-off XZERO reads its missing byte as 0.
      unsigned low = pos + 1 < value.size() ? static_cast<uint8_t>(value[pos + 1]) : 0;
      out += "Z:" + std::to_string((((b & 0x3fu) << 8) | low) + 1) + " ";
      pos += 2;
    } else {
      out += "v:" + std::to_string(val_value(b)) + "," + std::to_string(val_len(b)) + " ";
      pos += 1;
    }
  }
  while (!out.empty() && out.back() == ' ') {
    out.pop_back();
  }
  return out;
}

std::string self_test(size_t sparse_max_bytes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  // 1. Every register keeps its value and leaves its neighbours alone.
  std::string dense(kDenseSize, '\0');
  uint8_t* regs = dense_registers(dense);
  Registers expect{};
  for (int cycle = 0; cycle < 1000; ++cycle) {
    for (size_t i = 0; i < kRegisters; ++i) {
      expect[i] = static_cast<uint8_t>(rng() & kRegisterMax);
      dense_set(regs, i, expect[i]);
    }
    for (size_t i = 0; i < kRegisters; ++i) {
      uint8_t got = dense_get(regs, i);
      if (got != expect[i]) {
        return "TESTFAILED Register " + std::to_string(i) + " should be " +
               std::to_string(expect[i]) + " but is " + std::to_string(got);
      }
    }
  }
  // 2. The estimate stays within six standard errors, and a sparse value counts exactly as a
  // dense one holding the same elements.
  std::memset(regs, 0, kDenseSize - kHeaderSize);
  std::memcpy(dense.data(), kMagic, 4);
  std::string sparse = make_empty();
  const double relerr = 1.04 / std::sqrt(static_cast<double>(kRegisters));
  uint64_t mask = rng();
  uint64_t checkpoint = 1;
  Histogram hd;
  Histogram hs;
  for (uint64_t j = 1; j <= 10000000; ++j) {
    uint64_t ele = j ^ mask;
    char bytes[8];
    for (int b = 0; b < 8; ++b) {
      bytes[b] = static_cast<char>((ele >> (8 * b)) & 0xff);
    }
    std::string_view e(bytes, 8);
    Pattern p = pattern_of(e);
    if (dense_get(regs, p.index) < p.count) {
      dense_set(regs, p.index, p.count);
    }
    (void)add(sparse, e, sparse_max_bytes);
    if (j != checkpoint) {
      continue;
    }
    if (j < sparse_max_bytes / 2 && encoding_of(sparse) != Encoding::kSparse) {
      return "TESTFAILED sparse encoding not used";
    }
    (void)histogram(dense, hd);
    (void)histogram(sparse, hs);
    uint64_t card = estimate(hd);
    if (card != estimate(hs)) {
      return "TESTFAILED dense/sparse disagree";
    }
    auto abserr = static_cast<uint64_t>(
        std::llabs(static_cast<int64_t>(checkpoint) - static_cast<int64_t>(card)));
    auto maxerr = static_cast<uint64_t>(std::ceil(relerr * 6 * static_cast<double>(checkpoint)));
    if (j == 10) {
      maxerr = 1;  // collisions among ten elements are likely enough to allow one
    }
    if (abserr > maxerr) {
      return "TESTFAILED Too big error. card:" + std::to_string(checkpoint) +
             " abserr:" + std::to_string(abserr);
    }
    checkpoint *= 10;
  }
  return "";
}

}  // namespace hotkv::hll
