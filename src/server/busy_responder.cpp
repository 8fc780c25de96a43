#include "hotkv/server/busy_responder.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "hotkv/resp/parser.hpp"
#include "hotkv/resp/writer.hpp"
#include "hotkv/scripting/script_store.hpp"
#include "hotkv/shard/engine.hpp"
#include "hotkv/util/strings.hpp"

namespace hotkv {
namespace {

constexpr const char* kBusy =
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";

struct BusyClient {
  int fd = -1;
  std::string in;
  RequestParser parser;
  bool authenticated = false;
  bool closing = false;
};

void send_all(int fd, const std::string& out) {
  size_t done = 0;
  // A few replies of a few bytes: a short, bounded wait is fine on this side thread.
  for (int tries = 0; done < out.size() && tries < 100; ++tries) {
    ssize_t n = ::send(fd, out.data() + done, out.size() - done, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      done += static_cast<size_t>(n);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
}

// One command from a client that connected while the script runs.
void answer(Engine& engine, BusyClient& c, std::vector<std::string_view>& args, std::string& out) {
  ReplyWriter w(out, 2);
  std::string name = ascii_lower(args[0]);
  const std::string password = engine.config().requirepass();
  if (name == "auth") {
    if (!password.empty() && args.size() >= 2 && args.back() == password) {
      c.authenticated = true;
      w.ok();
    } else {
      w.error("WRONGPASS invalid username-password pair or user is disabled.");
    }
    return;
  }
  if (name == "quit") {
    w.ok();
    c.closing = true;
    return;
  }
  if (!password.empty() && !c.authenticated) {
    w.error("NOAUTH Authentication required.");
    return;
  }
  if ((name == "script" || name == "function") && args.size() == 2 &&
      ascii_lower(args[1]) == "kill") {
    bool ok = false;
    std::string text = engine.scripts().request_kill(ok);
    if (ok) {
      w.ok();
    } else {
      w.error(text);
    }
    return;
  }
  if (name == "shutdown" && args.size() == 2 && ascii_lower(args[1]) == "nosave") {
    spdlog::warn("SHUTDOWN NOSAVE while a script is running: exiting now");
    std::_Exit(0);
  }
  w.error(kBusy);
}

}  // namespace

BusyResponder::BusyResponder(Engine& engine, int listen_fd)
    : engine_(engine), listen_fd_(listen_fd), thread_([this] { run(); }) {}

BusyResponder::~BusyResponder() { stop(); }

void BusyResponder::stop() {
  stop_.store(true);
  if (thread_.joinable()) {
    thread_.join();
  }
}

void BusyResponder::run() {
  std::vector<BusyClient> clients;
  std::vector<pollfd> fds;
  std::vector<std::string_view> args;
  std::string out;
  while (!stop_.load()) {
    if (!engine_.scripts().busy()) {
      for (BusyClient& c : clients) {
        ::close(c.fd);
      }
      clients.clear();
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    fds.clear();
    fds.push_back({listen_fd_, POLLIN, 0});
    for (BusyClient& c : clients) {
      fds.push_back({c.fd, POLLIN, 0});
    }
    if (::poll(fds.data(), fds.size(), 100) <= 0) {
      continue;
    }
    if ((fds[0].revents & POLLIN) != 0) {
      int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd >= 0 && clients.size() < 64) {
        clients.emplace_back();
        clients.back().fd = fd;
      } else if (fd >= 0) {
        ::close(fd);
      }
    }
    for (size_t i = 1; i < fds.size(); ++i) {
      if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) {
        continue;
      }
      BusyClient& c = clients[i - 1];
      char buf[4096];
      ssize_t n = ::recv(c.fd, buf, sizeof(buf), MSG_DONTWAIT);
      if (n <= 0 || c.in.size() > 64 * 1024) {
        c.closing = true;
        continue;
      }
      c.in.append(buf, static_cast<size_t>(n));
      out.clear();
      for (;;) {
        size_t consumed = 0;
        args.clear();
        ParseStatus st = c.parser.parse(c.in, consumed, args);
        if (st == ParseStatus::kError) {
          c.closing = true;
          break;
        }
        if (st == ParseStatus::kNeedMore) {
          c.in.erase(0, consumed);
          if (consumed == 0) {
            break;
          }
          continue;
        }
        if (!args.empty()) {
          answer(engine_, c, args, out);
        }
        c.in.erase(0, consumed);
      }
      send_all(c.fd, out);
    }
    std::erase_if(clients, [](BusyClient& c) {
      if (c.closing) {
        ::close(c.fd);
      }
      return c.closing;
    });
  }
  for (BusyClient& c : clients) {
    ::close(c.fd);
  }
}

}  // namespace hotkv
