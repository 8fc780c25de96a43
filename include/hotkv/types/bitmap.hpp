// Bit-level operations on the bytes of a string value, for SETBIT, GETBIT, BITCOUNT, BITPOS,
// BITOP and BITFIELD. Bit 0 is the most significant bit of byte 0, as in Redis, so a bitmap
// and the string holding it read the same way. Bits past the end of the bytes read as 0.
// Pure functions over bytes: any thread, no allocation unless a result string is returned.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace hotkv::bitmap {

// Set bits in `bytes` (with the POPCNT instruction when the CPU has it).
uint64_t popcount(std::string_view bytes);
// The same without POPCNT (what CPUs without it run; tested on its own).
uint64_t popcount_portable(std::string_view bytes);

// Set bits among bit positions [first, last]. REQUIRES first <= last < 8 * bytes.size().
uint64_t count_range(std::string_view bytes, uint64_t first, uint64_t last);

// The first position in [first, last] whose bit equals `bit`, or -1 if there is none.
// REQUIRES first <= last < 8 * bytes.size().
int64_t find_bit(std::string_view bytes, bool bit, uint64_t first, uint64_t last);

// The bit at `offset` (0 past the end).
bool get_bit(std::string_view bytes, uint64_t offset);

// The `bits`-wide field at bit `offset`, most significant bit first, zero-padded past the
// end. REQUIRES 1 <= bits <= 64.
uint64_t get_unsigned(std::string_view bytes, uint64_t offset, unsigned bits);
// The same field read as two's complement (sign-extended from its top bit).
int64_t get_signed(std::string_view bytes, uint64_t offset, unsigned bits);

// Writes the low `bits` bits of `value` at bit `offset`.
// REQUIRES 1 <= bits <= 64, offset + bits <= 8 * size of `bytes`.
void set_field(std::span<char> bytes, uint64_t offset, unsigned bits, uint64_t value);

enum class Overflow { kWrap, kSat, kFail };

// value + incr for an unsigned field of `bits` (1..63) bits. `value` may be out of the field's
// range (BITFIELD SET passes its argument as an unsigned 64-bit number, incr 0), exactly as
// Redis treats it: above the range saturates at the maximum. Returns nullopt when it overflows
// under kFail.
std::optional<uint64_t> add_unsigned(uint64_t value, int64_t incr, unsigned bits, Overflow ow);
// value + incr for a signed field of `bits` (1..64) bits; nullopt when it overflows under kFail.
std::optional<int64_t> add_signed(int64_t value, int64_t incr, unsigned bits, Overflow ow);

enum class BitOp { kAnd, kOr, kXor, kNot };

// BITOP over `sources` (missing keys are empty strings): the result is as long as the longest
// source, shorter sources read as zero bytes. kNot takes exactly one source.
std::string bit_op(BitOp op, std::span<const std::string_view> sources);

}  // namespace hotkv::bitmap
