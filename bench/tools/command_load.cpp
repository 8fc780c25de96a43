// Command load generator for scripts/bench.sh (the sold-out reserve cases), for any
// Redis-protocol server: redis-benchmark exits at the first error reply, and a sold-out
// INV.RESERVE answers -SOLDOUT, so those cases run this driver against both servers instead.
// It does what `redis-benchmark -c C -P P -n N -r R CMD ARGS...` does for a custom command:
// C connections each send P commands, wait for their P replies, and send the next P, until N
// replies arrived; every `__rand_int__` in an argument becomes a 12-digit random number below R
// (the same length, so the encoded command is built once and patched in place); with
// --ids unique it becomes a counter instead, so no two commands share an id (random ids repeat:
// with -r 10^9, 200,000 requests draw about 20 pairs, and a repeated INV.RESERVE hold id answers
// -HOLDEXISTS, which would stop redis-benchmark as well). --dbnum N selects a database first, as
// redis-benchmark's --dbnum does. Error replies are counted, not fatal. One thread,
// non-blocking sockets and epoll, no allocation per request.
//
// A request may be several commands: arguments are split into commands at each ";", and with
// --multi the commands are wrapped in MULTI ... EXEC (the 2-key transaction case). A request is
// complete when all of its replies arrived; requests_per_sec counts requests.
//
// Prints one line of `name value` pairs on stdout (requests, errors, seconds from the first
// send to the last reply, requests_per_sec); errors go to stderr. Exit status 1 if the run did
// not complete within --time-limit, 2 on a usage, connection or protocol error.
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
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::string_view kRandInt = "__rand_int__";  // 12 bytes, as the 12 digits replacing it
constexpr size_t kReadBuffer = 64 * 1024;
constexpr int kMaxEvents = 256;

struct Options {
  std::string host = "127.0.0.1";
  int port = 6379;
  int clients = 50;
  int pipeline = 1;
  int64_t requests = 100000;
  uint64_t keyspace = 1000000;
  bool unique_ids = false;
  bool multi = false;
  int dbnum = 0;
  double time_limit_s = 300;
  std::vector<std::string> command;
};

struct Conn {
  int fd = -1;
  std::string out;  // the batch being written
  size_t written = 0;
  std::vector<char> in = std::vector<char>(kReadBuffer);
  size_t len = 0;
  int outstanding = 0;  // replies still expected for the batch
};

[[noreturn]] void usage_exit(const char* msg) {
  std::fprintf(stderr,
               "command_load: %s\nusage: hotkv_command_bench --port P [--host H] [--clients C] "
               "[--pipeline P] [--requests N] [--keyspace R] [--ids random|unique] [--dbnum N] [--multi] "
               "[--time-limit S] -- CMD [ARG...]\n",
               msg);
  std::exit(2);
}

Options parse_options(int argc, char** argv) {
  Options o;
  int i = 1;
  for (; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (i + 1 >= argc) {
      usage_exit("missing value");
    }
    const char* v = argv[++i];
    if (a == "--host") {
      o.host = v;
    } else if (a == "--port") {
      o.port = std::atoi(v);
    } else if (a == "--clients") {
      o.clients = std::atoi(v);
    } else if (a == "--pipeline") {
      o.pipeline = std::atoi(v);
    } else if (a == "--requests") {
      o.requests = std::atoll(v);
    } else if (a == "--keyspace") {
      o.keyspace = std::strtoull(v, nullptr, 10);
    } else if (a == "--ids") {
      if (std::string_view(v) != "random" && std::string_view(v) != "unique") {
        usage_exit("--ids takes random or unique");
      }
      o.unique_ids = std::string_view(v) == "unique";
    } else if (a == "--dbnum") {
      o.dbnum = std::atoi(v);
    } else if (a == "--time-limit") {
      o.time_limit_s = std::atof(v);
    } else if (a == "--multi") {
      o.multi = true;
      --i;  // a flag: no value to skip
    } else {
      usage_exit("unknown option");
    }
  }
  for (; i < argc; ++i) {
    o.command.emplace_back(argv[i]);
  }
  if (o.port <= 0 || o.clients <= 0 || o.clients > 100000 || o.pipeline <= 0 ||
      o.pipeline > 10000 || o.requests <= 0 || o.keyspace == 0 || o.keyspace > 1000000000000ULL ||
      o.time_limit_s <= 0 || o.command.empty()) {
    usage_exit("bad option value or no command");
  }
  return o;
}

// Bytes of the complete RESP frame at [p, end), 0 if incomplete, -1 if not RESP. Sets *error
// when the top-level frame is an error reply.
ptrdiff_t scan_frame(const char* p, const char* end, bool* error, int depth) {
  if (p >= end) {
    return 0;
  }
  const char* cr = static_cast<const char*>(std::memchr(p, '\r', static_cast<size_t>(end - p)));
  if (cr == nullptr || cr + 1 >= end) {
    return 0;
  }
  const char* next = cr + 2;
  char type = *p;
  if (depth == 0) {
    *error = type == '-';
  }
  if (type == '+' || type == '-' || type == ':' || type == '_' || type == '#' || type == ',') {
    return next - p;
  }
  if (type != '$' && type != '*' && type != '%' && type != '>') {
    return -1;
  }
  char* stop = nullptr;
  long long n = std::strtoll(p + 1, &stop, 10);
  if (stop != cr || depth > 8) {
    return -1;
  }
  if (n < 0) {
    return next - p;  // a null
  }
  if (type == '$') {
    return end - next < n + 2 ? 0 : next + n + 2 - p;
  }
  if (type == '%') {
    n *= 2;
  }
  for (long long k = 0; k < n; ++k) {
    bool ignored = false;
    ptrdiff_t used = scan_frame(next, end, &ignored, depth + 1);
    if (used <= 0) {
      return used;
    }
    next += used;
  }
  return next - p;
}

int connect_to(const Options& o) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(o.port));
  if (fd < 0 || inet_pton(AF_INET, o.host.c_str(), &addr.sin_addr) != 1 ||
      connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    std::fprintf(stderr, "command_load: connect to %s:%d: %s\n", o.host.c_str(), o.port,
                 std::strerror(errno));
    std::exit(2);
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (o.dbnum != 0) {
    // Still blocking here: SELECT and its +OK, before the load starts.
    std::string db = std::to_string(o.dbnum);
    std::string select =
        "*2\r\n$6\r\nSELECT\r\n$" + std::to_string(db.size()) + "\r\n" + db + "\r\n";
    char reply[64];
    ssize_t got = 0;
    if (send(fd, select.data(), select.size(), MSG_NOSIGNAL) !=
            static_cast<ssize_t>(select.size()) ||
        (got = recv(fd, reply, sizeof reply, 0)) < 5 || std::memcmp(reply, "+OK\r\n", 5) != 0) {
      std::fprintf(stderr, "command_load: SELECT %d failed\n", o.dbnum);
      std::exit(2);
    }
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  return fd;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse_options(argc, argv);

  // The encoded command, and where its __rand_int__ placeholders are.
  std::vector<std::vector<std::string>> commands(1);
  for (const auto& a : o.command) {
    if (a == ";") {
      commands.emplace_back();
    } else {
      commands.back().push_back(a);
    }
  }
  if (o.multi) {
    commands.insert(commands.begin(), std::vector<std::string>{"MULTI"});
    commands.push_back({"EXEC"});
  }
  std::string cmd;
  std::vector<size_t> holes;
  for (const auto& command : commands) {
    cmd.append("*").append(std::to_string(command.size())).append("\r\n");
    for (const auto& a : command) {
      cmd.append("$").append(std::to_string(a.size())).append("\r\n");
      for (size_t at = a.find(kRandInt); at != std::string::npos;
           at = a.find(kRandInt, at + 1)) {
        holes.push_back(cmd.size() + at);
      }
      cmd.append(a).append("\r\n");
    }
  }
  // Replies per request.
  const auto per_request = static_cast<int64_t>(commands.size());
  std::mt19937_64 rng(12345);

  int ep = epoll_create1(0);
  std::vector<Conn> conns(static_cast<size_t>(o.clients));
  for (size_t i = 0; i < conns.size(); ++i) {
    conns[i].fd = connect_to(o);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = i;
    epoll_ctl(ep, EPOLL_CTL_ADD, conns[i].fd, &ev);
  }

  int64_t issued = 0;
  uint64_t next_id = 0;
  int64_t completed = 0;
  int64_t errors = 0;
  // Writes as much of c's batch as the socket takes; false on an error.
  auto flush = [&](Conn& c, size_t index) {
    while (c.written < c.out.size()) {
      ssize_t n = send(c.fd, c.out.data() + c.written, c.out.size() - c.written, MSG_NOSIGNAL);
      if (n < 0 && errno == EAGAIN) {
        epoll_event ev{};
        ev.events = EPOLLIN | EPOLLOUT;
        ev.data.u64 = index;
        epoll_ctl(ep, EPOLL_CTL_MOD, c.fd, &ev);
        return true;
      }
      if (n <= 0) {
        return false;
      }
      c.written += static_cast<size_t>(n);
    }
    return true;
  };
  // Starts c's next batch of up to --pipeline commands.
  auto start_batch = [&](Conn& c, size_t index) {
    int k = static_cast<int>(std::min<int64_t>(o.pipeline, o.requests - issued));
    if (k <= 0) {
      return true;
    }
    c.out.clear();
    for (int j = 0; j < k; ++j) {
      size_t base = c.out.size();
      c.out += cmd;
      for (size_t h : holes) {
        uint64_t v = o.unique_ids ? next_id++ : rng() % o.keyspace;
        char* d = c.out.data() + base + h;
        for (size_t k = kRandInt.size(); k-- > 0;) {
          d[k] = static_cast<char>('0' + v % 10);
          v /= 10;
        }
      }
    }
    c.written = 0;
    c.outstanding = k * per_request;
    issued += k;
    return flush(c, index);
  };

  Clock::time_point start = Clock::now();
  Clock::time_point limit =
      start + std::chrono::microseconds(static_cast<int64_t>(o.time_limit_s * 1e6));
  for (size_t i = 0; i < conns.size(); ++i) {
    if (!start_batch(conns[i], i)) {
      std::fprintf(stderr, "command_load: send: %s\n", std::strerror(errno));
      return 2;
    }
  }
  epoll_event events[kMaxEvents];
  while (completed < o.requests * per_request) {
    if (Clock::now() >= limit) {
      std::fprintf(stderr, "command_load: time limit reached after %lld of %lld replies\n",
                   static_cast<long long>(completed), static_cast<long long>(o.requests));
      return 1;
    }
    int ready = epoll_wait(ep, events, kMaxEvents, 100);
    for (int e = 0; e < ready; ++e) {
      size_t index = events[e].data.u64;
      Conn& c = conns[index];
      if ((events[e].events & EPOLLOUT) != 0) {
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.u64 = index;
        epoll_ctl(ep, EPOLL_CTL_MOD, c.fd, &ev);
        if (!flush(c, index)) {
          std::fprintf(stderr, "command_load: send: %s\n", std::strerror(errno));
          return 2;
        }
      }
      if ((events[e].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) == 0) {
        continue;
      }
      ssize_t n = recv(c.fd, c.in.data() + c.len, c.in.size() - c.len, 0);
      if (n <= 0) {
        if (n < 0 && errno == EAGAIN) {
          continue;
        }
        std::fprintf(stderr, "command_load: the server closed a connection\n");
        return 2;
      }
      c.len += static_cast<size_t>(n);
      size_t pos = 0;
      for (;;) {
        bool error = false;
        ptrdiff_t used = scan_frame(c.in.data() + pos, c.in.data() + c.len, &error, 0);
        if (used < 0) {
          std::fprintf(stderr, "command_load: protocol error in a reply\n");
          return 2;
        }
        if (used == 0) {
          break;
        }
        pos += static_cast<size_t>(used);
        ++completed;
        errors += error ? 1 : 0;
        --c.outstanding;
      }
      std::memmove(c.in.data(), c.in.data() + pos, c.len - pos);
      c.len -= pos;
      if (c.len == c.in.size()) {
        c.in.resize(c.in.size() * 2);
      }
      if (c.outstanding == 0 && !start_batch(c, index)) {
        std::fprintf(stderr, "command_load: send: %s\n", std::strerror(errno));
        return 2;
      }
    }
  }
  double secs = std::chrono::duration<double>(Clock::now() - start).count();
  int64_t requests = completed / per_request;
  std::printf("requests %lld errors %lld seconds %.3f requests_per_sec %.0f\n",
              static_cast<long long>(requests), static_cast<long long>(errors), secs,
              static_cast<double>(requests) / secs);
  for (auto& c : conns) {
    close(c.fd);
  }
  close(ep);
  return 0;
}
