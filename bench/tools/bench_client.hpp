// What the hiredis-based benchmark drivers in bench/tools/ share: owned contexts and replies,
// a connect that never hangs on a dead server, one command from separate arguments, and the
// server's CPU ticks read from /proc so a driver can time only the part it measures.
#pragma once

#include <hiredis/hiredis.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace bench {

struct ContextFree {
  void operator()(redisContext* c) const { redisFree(c); }
};
using Context = std::unique_ptr<redisContext, ContextFree>;

struct ReplyFree {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using Reply = std::unique_ptr<redisReply, ReplyFree>;

// Connects or exits with status 2, naming `tool`. Every reply must arrive within 10 s, so a
// dead server fails the driver instead of hanging it.
inline Context connect_or_exit(const char* tool, const std::string& host, int port) {
  timeval tv{10, 0};
  Context c(redisConnectWithTimeout(host.c_str(), port, tv));
  if (!c || c->err != 0) {
    std::fprintf(stderr, "%s: connect %s:%d: %s\n", tool, host.c_str(), port,
                 c ? c->errstr : "out of memory");
    std::exit(2);
  }
  redisSetTimeout(c.get(), tv);
  return c;
}

// Sends one command given as separate arguments and returns the reply (nullptr on I/O error).
inline Reply command(redisContext* c, const std::vector<std::string_view>& args) {
  std::vector<const char*> argv;
  std::vector<size_t> lens;
  argv.reserve(args.size());
  lens.reserve(args.size());
  for (std::string_view a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  return Reply(static_cast<redisReply*>(
      redisCommandArgv(c, static_cast<int>(argv.size()), argv.data(), lens.data())));
}

inline bool is_error(const Reply& r) { return !r || r->type == REDIS_REPLY_ERROR; }

inline const char* error_text(redisContext* c, const Reply& r) { return r ? r->str : c->errstr; }

// utime + stime of every thread of PID, in clock ticks (fields 14 and 15 of /proc/PID/stat,
// counted after the parenthesised command name, which may contain spaces). 0 for pid <= 0.
inline int64_t server_cpu_ticks(const char* tool, long pid) {
  if (pid <= 0) {
    return 0;
  }
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(in, line);
  size_t close = line.rfind(')');
  if (close == std::string::npos) {
    std::fprintf(stderr, "%s: cannot read /proc/%ld/stat\n", tool, pid);
    std::exit(2);
  }
  std::istringstream fields(line.substr(close + 2));
  std::string skip;
  for (int i = 3; i < 14; ++i) {  // state (field 3) .. cmajflt (field 13)
    fields >> skip;
  }
  int64_t utime = 0;
  int64_t stime = 0;
  fields >> utime >> stime;
  return utime + stime;
}

}  // namespace bench
