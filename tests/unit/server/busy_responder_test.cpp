// The busy-script responder: idle while no script is late; while one is, it accepts new
// connections itself, answers -BUSY, forwards SCRIPT KILL, and closes its connections after.
#include "hotkv/server/busy_responder.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "hotkv/scripting/script_store.hpp"
#include "support/test_server.hpp"

namespace {

int listen_loopback(uint16_t& port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  REQUIRE(::listen(fd, 16) == 0);
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  port = ntohs(addr.sin_port);
  return fd;
}

int connect_loopback(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  return fd;
}

// Sends `cmd` and returns what arrives within two seconds ("" if the peer closed).
std::string ask(int fd, const std::string& cmd) {
  ::send(fd, cmd.data(), cmd.size(), MSG_NOSIGNAL);
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, 2000) <= 0) {
    return "(timeout)";
  }
  char buf[512];
  ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

}  // namespace

TEST_CASE("The busy responder answers only while a script is late", "[busy]") {
  hotkv::test::TestServer s;
  uint16_t port = 0;
  int lfd = listen_loopback(port);
  hotkv::BusyResponder responder(s.engine(), lfd);
  auto& store = s.engine().scripts();

  // No script is late: the responder leaves the socket alone.
  int idle = connect_loopback(port);
  pollfd p{idle, POLLIN, 0};
  CHECK(::poll(&p, 1, 200) == 0);
  ::close(idle);

  store.mark_timed_out(0);
  int c = connect_loopback(port);
  CHECK(ask(c, "PING\r\n").rfind("-BUSY Redis is busy running a script.", 0) == 0);
  CHECK(ask(c, "*2\r\n$6\r\nSCRIPT\r\n$4\r\nKILL\r\n") == "+OK\r\n");
  CHECK(store.slot(0).kill.load());
  store.clear_timed_out(0);  // the script stopped
  // The responder notices within one poll round (100 ms) and closes its connections.
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  CHECK(ask(c, "PING\r\n").empty());
  ::close(c);
  responder.stop();
  ::close(lfd);
}
