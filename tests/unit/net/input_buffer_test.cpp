// Unit tests for a connection's input buffer: no memory before the first read, growth only
// when full of unconsumed bytes, and release only when empty (an idle connection's buffer is
// given back; a half-received request's bytes never are).
#include "hotkv/net/input_buffer.hpp"

#include <cstring>
#include <string>

#include <catch2/catch.hpp>

using hotkv::InputBuffer;

namespace {
void put(InputBuffer& in, const std::string& bytes) {
  in.prepare();
  REQUIRE(in.writable() >= bytes.size());
  std::memcpy(in.write_ptr(), bytes.data(), bytes.size());
  in.commit(bytes.size());
}
}  // namespace

TEST_CASE("an input buffer holds no memory until it is prepared for a read", "[net]") {
  InputBuffer in;
  CHECK(in.capacity() == 0);
  in.prepare();
  CHECK(in.capacity() == InputBuffer::kInitial);
  CHECK(in.writable() >= InputBuffer::kMinRead);
}

TEST_CASE("releasing an empty input buffer frees it and the next read allocates again",
          "[net]") {
  InputBuffer in;
  put(in, "PING\r\n");
  in.consume(6);
  in.release();
  CHECK(in.capacity() == 0);
  CHECK(in.size() == 0);
  put(in, "GET k\r\n");
  CHECK(in.data() == "GET k\r\n");
}

TEST_CASE("a half-received request keeps its buffer through a release", "[net]") {
  InputBuffer in;
  put(in, "*2\r\n$3\r\nGET\r\n");
  in.release();
  CHECK(in.capacity() == InputBuffer::kInitial);
  CHECK(in.data() == "*2\r\n$3\r\nGET\r\n");
}

TEST_CASE("an input buffer grows only when full of unconsumed bytes", "[net]") {
  InputBuffer in;
  std::string chunk(InputBuffer::kInitial - InputBuffer::kMinRead + 1, 'x');
  put(in, chunk);
  in.prepare();
  CHECK(in.capacity() == 2 * InputBuffer::kInitial);
  CHECK(in.data() == chunk);
}
