// cmsgpack for scripts, as Redis has it (job queues such as BullMQ pack every job with it):
// cmsgpack.pack(v, ...) concatenates the MessagePack encodings of its arguments (numbers with
// an integer value as the smallest integer format, others as float32 when exact, else
// float64; tables with keys exactly 1..n as arrays, others as maps; nesting beyond 16 levels
// and values MessagePack cannot hold as nil); cmsgpack.unpack(s) returns every object in s,
// cmsgpack.unpack_one(s, offset) and cmsgpack.unpack_limit(s, limit, offset) return the
// offset after what they decoded (-1 at the end) and then the objects. Malformed input fails
// with "Bad data format in input.".
#pragma once

struct lua_State;

namespace hotkv {

// Sets the global `cmsgpack` (before the sandbox makes it read-only).
void open_cmsgpack(lua_State* L);

}  // namespace hotkv
