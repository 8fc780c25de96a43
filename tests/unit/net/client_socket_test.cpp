// ClientSocket::read_some: after a short read the next read waits for epoll instead of trying
// recv() first, and no byte that arrives in between is ever missed, whatever ran meanwhile.
#include "hotkv/net/client_socket.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/steady_timer.hpp>
#include <asio/read.hpp>
#include <asio/write.hpp>
#include <catch2/catch.hpp>

namespace {

using asio::ip::tcp;

// A connected loopback pair: `server` is the ClientSocket under test, `peer` the client end
// (blocking, written directly from the test).
struct Pair {
  asio::io_context io{1};
  std::optional<hotkv::ClientSocket> server;
  tcp::socket peer{io};

  Pair() {
    tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::address_v4::loopback(), 0));
    peer.connect(acceptor.local_endpoint());
    server.emplace(acceptor.accept());
    server->non_blocking(true);
  }

  void send(const std::string& bytes) { asio::write(peer, asio::buffer(bytes)); }
};

struct ReadResult {
  bool done = false;
  std::error_code ec;
  std::string data;
};

void start_read(Pair& p, ReadResult& r, char* buf, size_t size) {
  r = ReadResult{};
  p.server->read_some(asio::buffer(buf, size), [&r, buf](std::error_code ec, size_t n) {
    r.done = true;
    r.ec = ec;
    r.data.assign(buf, n);
  });
}

// Runs the loop's reactor for a while with no read pending, so that it takes (and reports to
// nobody) any epoll edge the socket has raised so far.
void spin_reactor(Pair& p) {
  asio::steady_timer t(p.io, std::chrono::milliseconds(30));
  bool fired = false;
  t.async_wait([&fired](std::error_code) { fired = true; });
  while (!fired) {
    p.io.run_one();
  }
  p.io.restart();
}

// Runs the loop until the read completes (or a bounded time passes).
void run_until_done(Pair& p, const ReadResult& r) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!r.done && std::chrono::steady_clock::now() < deadline) {
    p.io.run_for(std::chrono::milliseconds(10));
    p.io.restart();
  }
}

// Sends `bytes` and reads them back with one read, which leaves the socket drained.
void send_and_read_back(Pair& p, const std::string& bytes) {
  char buf[64];
  ReadResult r;
  p.send(bytes);
  start_read(p, r, buf, sizeof(buf));
  run_until_done(p, r);
  REQUIRE(r.done);
  REQUIRE(r.data == bytes);
}

}  // namespace

TEST_CASE("ClientSocket read_some returns what the peer sent", "[net][client_socket]") {
  Pair p;
  char buf[64];
  ReadResult r;
  p.send("PING\r\n");
  start_read(p, r, buf, sizeof(buf));
  run_until_done(p, r);
  REQUIRE(r.done);
  CHECK_FALSE(r.ec);
  CHECK(r.data == "PING\r\n");
#ifdef HOTKV_DRAINING_READ
  // The kernel reports what is left after each read: the socket has TCP_INQ on.
  int inq = 0;
  socklen_t len = sizeof(inq);
  REQUIRE(::getsockopt(p.server->native_handle(), SOL_TCP, TCP_INQ, &inq, &len) == 0);
  CHECK(inq == 1);
#endif
}

TEST_CASE("ClientSocket read after a short read waits for the next bytes", "[net][client_socket]") {
  Pair p;
  send_and_read_back(p, "a");
  char buf[64];
  ReadResult r;

  // Drained: the next read is queued, completes only when more bytes come.
  start_read(p, r, buf, sizeof(buf));
  p.io.run_for(std::chrono::milliseconds(50));
  p.io.restart();
  CHECK_FALSE(r.done);
  p.send("b");
  run_until_done(p, r);
  REQUIRE(r.done);
  CHECK(r.data == "b");
}

TEST_CASE("ClientSocket does not miss bytes that arrived while no read was pending",
          "[net][client_socket]") {
  Pair p;
  send_and_read_back(p, "first");
  char buf[64];
  ReadResult r;

  // Bytes arrive after the short read, and the loop runs epoll (and sees their edge) before
  // the next read is started: the read must still find them.
  p.send("second");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  spin_reactor(p);
  start_read(p, r, buf, sizeof(buf));
  run_until_done(p, r);
  REQUIRE(r.done);
  CHECK_FALSE(r.ec);
  CHECK(r.data == "second");
}

TEST_CASE("ClientSocket sees the end of stream that came with the last request",
          "[net][client_socket]") {
  // The peer's FIN is taken by the same recv() that returns its last bytes (the kernel reads
  // through it), and it raises no further epoll edge: the next read must still end at once.
  Pair p;
  char buf[64];
  ReadResult r;
  p.send("QUIT\r\n");
  p.peer.shutdown(tcp::socket::shutdown_send);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  // The loop takes the socket's edge before the first read is started, as when the
  // connection is busy with an earlier request: no edge is left for the reads below.
  spin_reactor(p);
  start_read(p, r, buf, sizeof(buf));
  run_until_done(p, r);
  REQUIRE(r.data == "QUIT\r\n");
  start_read(p, r, buf, sizeof(buf));
  run_until_done(p, r);
  REQUIRE(r.done);
  CHECK(r.ec == asio::error::eof);
}

TEST_CASE("ClientSocket reads a message larger than the buffer in full reads",
          "[net][client_socket]") {
  Pair p;
  std::string big(100000, 'x');
  for (size_t i = 0; i < big.size(); ++i) {
    big[i] = static_cast<char>('a' + i % 26);
  }
  std::thread writer([&p, &big] { p.send(big); });
  std::string got;
  char buf[4096];
  ReadResult r;
  while (got.size() < big.size()) {
    start_read(p, r, buf, sizeof(buf));
    run_until_done(p, r);
    REQUIRE(r.done);
    REQUIRE_FALSE(r.ec);
    got += r.data;
  }
  writer.join();
  CHECK(got == big);
}

TEST_CASE("ClientSocket read reports end of stream and a closed socket",
          "[net][client_socket]") {
  SECTION("peer closes") {
    Pair p;
    char buf[64];
    ReadResult r;
    p.peer.close();
    start_read(p, r, buf, sizeof(buf));
    run_until_done(p, r);
    REQUIRE(r.done);
    CHECK(r.ec == asio::error::eof);
  }
  SECTION("own close ends a pending read") {
    Pair p;
    char buf[64];
    ReadResult r;
    start_read(p, r, buf, sizeof(buf));
    p.io.run_for(std::chrono::milliseconds(20));
    p.io.restart();
    REQUIRE_FALSE(r.done);
    p.server->close();
    run_until_done(p, r);
    REQUIRE(r.done);
    CHECK(r.ec == asio::error::operation_aborted);
  }
}

TEST_CASE("ClientSocket send_now writes what the socket takes and then reports would_block",
          "[net][client_socket]") {
  Pair p;
  std::error_code ec;
  CHECK(p.server->send_now(asio::buffer(std::string("+PONG\r\n")), ec) == 7);
  CHECK_FALSE(ec);
  char got[7];
  asio::read(p.peer, asio::buffer(got));
  CHECK(std::string(got, 7) == "+PONG\r\n");

  // The peer reads nothing more: the socket's buffers fill and a send then takes nothing.
  std::string chunk(1 << 16, 'x');
  size_t total = 0;
  for (int i = 0; i < 10000 && !ec; ++i) {
    total += p.server->send_now(asio::buffer(chunk), ec);
  }
  CHECK(ec == asio::error::would_block);
  CHECK(total > 0);

  p.server->close();
  p.server->send_now(asio::buffer(chunk), ec);
  CHECK(ec);
  CHECK(ec != asio::error::would_block);
}
