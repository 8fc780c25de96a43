// Pub/sub fan-out receiver for scripts/bench.sh (case `publish`), for any Redis-protocol server:
// opens SUBSCRIBERS connections that SUBSCRIBE to one channel, prints `ready` on stdout once
// every subscription is confirmed, then counts the messages delivered to them while someone
// else publishes (bench.sh runs redis-benchmark PUBLISH). One thread, non-blocking sockets and
// epoll, and a RESP2 scanner that only counts frames (no allocation per message), so the
// receiver costs as little client CPU as possible next to the load generator.
//
// It stops when every subscriber got --messages messages, when nothing arrived for
// --idle-timeout seconds after the first message, or at --time-limit. Prints one line of
// `name value` pairs on stdout (delivered, expected, seconds from first to last message,
// delivered_per_sec, disconnected, min_per_subscriber, max_gap_ms: the longest pause between
// two arrivals); errors go to stderr. Exit status 1 when fewer messages than expected arrived
// or a subscriber was disconnected, 2 on a usage, connection or protocol error.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "bench_options.hpp"

namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kBufferSize = 256 * 1024;  // per subscriber; a frame here is ~45 bytes
constexpr int kMaxEvents = 128;

struct Options {
  std::string host = "127.0.0.1";
  int port = 6379;
  int subscribers = 100;
  std::string channel = "bench:ch";
  int64_t messages = 0;  // expected per subscriber; 0: until idle or the time limit
  double time_limit_s = 120;
  double idle_timeout_s = 5;
};

struct Subscriber {
  int fd = -1;
  std::vector<char> buf = std::vector<char>(kBufferSize);
  size_t len = 0;
  bool subscribed = false;
  int64_t messages = 0;
};

enum class Frame { kIncomplete, kMessage, kSubscribe, kError };

[[noreturn]] void usage_exit(const char* msg) {
  std::fprintf(stderr,
               "pubsub_fanout: %s\nusage: hotkv_pubsub_bench --port P [--host H] "
               "[--subscribers N] [--channel CH] [--messages PER_SUBSCRIBER] "
               "[--time-limit S] [--idle-timeout S]\n",
               msg);
  std::exit(2);
}

Options parse_options(int argc, char** argv) {
  Options o;
  bench::parse_options(argc, argv,
                       {{"--host", &o.host},
                        {"--port", &o.port},
                        {"--subscribers", &o.subscribers},
                        {"--channel", &o.channel},
                        {"--messages", &o.messages},
                        {"--time-limit", &o.time_limit_s},
                        {"--idle-timeout", &o.idle_timeout_s}},
                       usage_exit);
  if (o.port <= 0 || o.subscribers <= 0 || o.subscribers > 10000 || o.messages < 0 ||
      o.time_limit_s <= 0 || o.idle_timeout_s <= 0) {
    usage_exit("bad option value");
  }
  return o;
}

// Parses the decimal integer of a RESP header line [p, cr).
bool parse_int(const char* p, const char* cr, int64_t* out) {
  bool neg = p < cr && *p == '-';
  p += neg ? 1 : 0;
  if (p == cr) {
    return false;
  }
  int64_t v = 0;
  for (; p < cr; ++p) {
    if (*p < '0' || *p > '9') {
      return false;
    }
    v = v * 10 + (*p - '0');
  }
  *out = neg ? -v : v;
  return true;
}

// One top-level RESP2 frame at [p, end): a pub/sub push is an array of bulk strings and
// integers. Sets *next past the frame when it is complete.
Frame scan_frame(const char* p, const char* end, const char** next) {
  auto header = [&](char type, int64_t* value) -> int {  // 1 ok, 0 incomplete, -1 error
    if (p >= end) {
      return 0;
    }
    if (*p != type) {
      return -1;
    }
    const char* cr = static_cast<const char*>(std::memchr(p, '\r', static_cast<size_t>(end - p)));
    if (cr == nullptr || cr + 1 >= end) {
      return 0;
    }
    if (!parse_int(p + 1, cr, value)) {
      return -1;
    }
    p = cr + 2;
    return 1;
  };
  int64_t n = 0;
  int h = header('*', &n);
  if (h <= 0) {
    return h == 0 ? Frame::kIncomplete : Frame::kError;
  }
  if (n < 1 || n > 8) {
    return Frame::kError;
  }
  Frame kind = Frame::kError;
  for (int64_t i = 0; i < n; ++i) {
    if (p < end && *p == ':') {
      int64_t ignored = 0;
      h = header(':', &ignored);
    } else {
      int64_t blen = 0;
      h = header('$', &blen);
      if (h == 1) {
        if (blen < 0 || blen > static_cast<int64_t>(kBufferSize)) {
          return Frame::kError;
        }
        if (end - p < blen + 2) {
          return Frame::kIncomplete;
        }
        std::string_view s(p, static_cast<size_t>(blen));
        if (i == 0) {
          kind = s == "message"     ? Frame::kMessage
                 : s == "subscribe" ? Frame::kSubscribe
                                    : Frame::kError;
        }
        p += blen + 2;
      }
    }
    if (h <= 0) {
      return h == 0 ? Frame::kIncomplete : Frame::kError;
    }
  }
  *next = p;
  return kind;
}

int connect_or_exit(const Options& o) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(o.port));
  if (fd < 0 || inet_pton(AF_INET, o.host.c_str(), &addr.sin_addr) != 1 ||
      connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    std::fprintf(stderr, "pubsub_fanout: connect %s:%d: %s\n", o.host.c_str(), o.port,
                 std::strerror(errno));
    std::exit(2);
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  std::string cmd =
      "*2\r\n$9\r\nSUBSCRIBE\r\n$" + std::to_string(o.channel.size()) + "\r\n" + o.channel + "\r\n";
  if (send(fd, cmd.data(), cmd.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(cmd.size())) {
    std::fprintf(stderr, "pubsub_fanout: send SUBSCRIBE: %s\n", std::strerror(errno));
    std::exit(2);
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  return fd;
}

struct Totals {
  int64_t messages = 0;
  int subscribed = 0;
  int disconnected = 0;
};

// Reads what is there for one subscriber and counts its complete frames. Returns false on a
// protocol error.
bool drain(Subscriber& s, int epfd, Totals& t) {
  ssize_t got = read(s.fd, s.buf.data() + s.len, s.buf.size() - s.len);
  if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) {
    epoll_ctl(epfd, EPOLL_CTL_DEL, s.fd, nullptr);
    close(s.fd);
    s.fd = -1;
    ++t.disconnected;
    return true;
  }
  if (got < 0) {
    return true;
  }
  s.len += static_cast<size_t>(got);
  const char* p = s.buf.data();
  const char* end = p + s.len;
  while (p < end) {
    const char* next = nullptr;
    Frame f = scan_frame(p, end, &next);
    if (f == Frame::kIncomplete) {
      break;
    }
    if (f == Frame::kError) {
      std::fprintf(stderr, "pubsub_fanout: unexpected frame: %.*s\n",
                   static_cast<int>(std::min<ptrdiff_t>(end - p, 80)), p);
      return false;
    }
    if (f == Frame::kMessage) {
      ++s.messages;
      ++t.messages;
    } else if (!s.subscribed) {
      s.subscribed = true;
      ++t.subscribed;
    }
    p = next;
  }
  s.len = static_cast<size_t>(end - p);
  if (s.len == s.buf.size()) {
    std::fprintf(stderr, "pubsub_fanout: frame larger than the buffer\n");
    return false;
  }
  std::memmove(s.buf.data(), p, s.len);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse_options(argc, argv);
  const auto started = Clock::now();
  const auto deadline = started + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(o.time_limit_s));
  const auto idle =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.idle_timeout_s));

  int epfd = epoll_create1(0);
  std::vector<Subscriber> subs(static_cast<size_t>(o.subscribers));
  for (size_t i = 0; i < subs.size(); ++i) {
    subs[i].fd = connect_or_exit(o);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = i;
    epoll_ctl(epfd, EPOLL_CTL_ADD, subs[i].fd, &ev);
  }

  const int64_t expected = o.messages * o.subscribers;
  Totals t;
  bool ready = false;
  Clock::time_point first{};
  Clock::time_point last{};
  Clock::duration max_gap{};  // longest wait between two arrivals: a stalled server shows here
  epoll_event events[kMaxEvents];
  while (Clock::now() < deadline) {
    if (ready && o.messages > 0 && t.messages >= expected) {
      break;
    }
    if (t.disconnected == o.subscribers) {
      break;
    }
    int n = epoll_wait(epfd, events, kMaxEvents, 50);
    if (n < 0 && errno != EINTR) {
      std::fprintf(stderr, "pubsub_fanout: epoll_wait: %s\n", std::strerror(errno));
      return 2;
    }
    // Idle only when the sockets are empty too: a receiver that was itself descheduled for a
    // while must still read what arrived meanwhile.
    if (n <= 0 && t.messages > 0 && Clock::now() - last > idle) {
      break;
    }
    const int64_t before = t.messages;
    for (int i = 0; i < n; ++i) {
      if (!drain(subs[events[i].data.u64], epfd, t)) {
        return 2;
      }
    }
    if (t.messages != before) {
      const auto now = Clock::now();
      if (before == 0) {
        first = now;
      } else {
        max_gap = std::max(max_gap, now - last);
      }
      last = now;
    }
    if (!ready && t.subscribed == o.subscribers) {
      ready = true;
      std::printf("ready subscribers %d\n", o.subscribers);
      std::fflush(stdout);
    }
  }
  if (!ready) {
    std::fprintf(stderr, "pubsub_fanout: only %d of %d subscriptions confirmed\n", t.subscribed,
                 o.subscribers);
    return 2;
  }

  const double seconds = std::chrono::duration<double>(last - first).count();
  int64_t min_per_sub = INT64_MAX;
  for (const Subscriber& s : subs) {
    min_per_sub = std::min(min_per_sub, s.messages);
  }
  std::printf(
      "delivered %lld expected %lld seconds %.6f delivered_per_sec %.0f disconnected %d "
      "min_per_subscriber %lld max_gap_ms %.1f\n",
      static_cast<long long>(t.messages), static_cast<long long>(expected), seconds,
      seconds > 0 ? static_cast<double>(t.messages) / seconds : 0.0, t.disconnected,
      static_cast<long long>(min_per_sub),
      std::chrono::duration<double, std::milli>(max_gap).count());
  for (Subscriber& s : subs) {
    if (s.fd >= 0) {
      close(s.fd);
    }
  }
  close(epfd);
  bool complete = o.messages == 0 || t.messages == expected;
  return complete && t.disconnected == 0 ? 0 : 1;
}
