// struct for scripts, as Redis bundles it (Redisson's rate limiter, cache map and delayed
// queue use it): struct.pack(fmt, ...), struct.unpack(fmt, s [, pos]) (the values, then the
// position after them) and struct.size(fmt). Format options: '<' '>' '=' byte order (native is
// little-endian), '!'[n] alignment, ' ' ignored, 'x' a zero byte, 'b' 'B' 'h' 'H' 'l' 'L' 'j'
// 'J' 'T' the C integer sizes (lower case signed), 'i'[n] 'I'[n] n-byte integers, 'f' 'd'
// float and double, 's' a zero-terminated string, 'c'[n] n bytes ('c0': as long as the string
// packed, or as the number unpacked just before it).
#pragma once

struct lua_State;

namespace hotkv {

// Sets the global `struct` (before the sandbox makes it read-only).
void open_struct(lua_State* L);

}  // namespace hotkv
