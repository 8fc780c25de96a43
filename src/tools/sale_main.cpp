// hotkv-sale: a flash-sale simulator for any Redis-protocol server (HotKV or redis-server).
//
// N shoppers (default 10,000), each on its own connection, try to buy S units (default 500) of
// one item in the same second. A share of them are bots that ignore the rate limit's retry time
// and hammer; a share of the humans abandon their hold (release it, or just leave it to
// expire); the others pay after a random delay. Three styles of server-side logic:
//
//   plain   the seed's commands: GCRA.LIMIT per customer, DECR stock (INCR back and "sold out"
//           when it went negative), SET hold NX EX; paying is DEL hold (1 = the hold was still
//           ours) then XADD orders; releasing is DEL hold then INCR stock. Expired holds come
//           back through a sweeper that listens to `expired` keyspace events and INCRs stock.
//   lua     as plain, but the reserve is one EVALSHA of a check-and-decrement script (for
//           redis-server, which has no native inventory).
//   native  HotKV's inventory: INV.RESERVE ... OWNER, INV.COMMIT, INV.RELEASE (expiry is the
//           server's own), XADD orders on payment; at the end INV.AUDIT and INV.GET.
//
// One thread, one asio event loop, one coroutine per shopper. The sale is bounded by
// --duration-s and --max-requests. A progress line goes to stderr once a second; the summary
// goes to stdout. Exit status: 0 healthy, 1 oversold or a failed audit/invariant, 2 a usage,
// set-up or connection error.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>
#include <CLI/CLI.hpp>
#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>

#include "sale_report.hpp"

namespace {

using asio::awaitable;
using asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using Ms = std::chrono::milliseconds;

// GCC 12 and asio coroutines: a co_await inside an `if` condition resumed the frame with a bad
// resume index (SIGILL), and an initializer list inside a co_await expression does not compile.
// So results of co_await always go through a variable, and commands are encoded (RespConn::cmd)
// in a statement of their own.
constexpr auto kTuple = asio::experimental::as_tuple(asio::use_awaitable);
constexpr int kMaxReplyDepth = 8;
constexpr int64_t kMaxReplyElems = 1 << 20;
constexpr size_t kMinReadBuffer = 512;

// Our own check-and-decrement script (the seed's design: read the stock, refuse a second hold
// under the same key, take one unit, write the hold with its TTL). scripts/bench.sh runs the
// same four calls for its `reserve` cases.
//   KEYS[1] stock counter, KEYS[2] hold key; ARGV[1] hold TTL in seconds, ARGV[2] holder.
//   Returns the units left after taking one, -1 if sold out, -2 if the hold already exists.
constexpr std::string_view kReserveLua = R"lua(
local left = tonumber(redis.call('GET', KEYS[1]))
if left == nil or left < 1 then
  return -1
end
if redis.call('EXISTS', KEYS[2]) == 1 then
  return -2
end
redis.call('SET', KEYS[2], ARGV[2] or '1', 'EX', ARGV[1])
return redis.call('DECR', KEYS[1])
)lua";

enum class Style { kPlain, kLua, kNative };

struct Options {
  std::string host = "127.0.0.1";
  uint16_t port = 6379;
  std::string style_name = "native";
  Style style = Style::kNative;
  int shoppers = 10000;
  int64_t units = 500;
  double bot_share = 0.05;
  double abandon_share = 0.2;
  double release_share = 0.5;
  int64_t pay_min_ms = 500;
  int64_t pay_max_ms = 5000;
  int64_t bot_pay_min_ms = 20;
  int64_t bot_pay_max_ms = 200;
  int64_t hold_ttl_ms = 10000;
  int64_t arrival_ms = 1000;
  int human_retries = 5;
  int64_t retry_min_ms = 1000;
  int64_t retry_max_ms = 3000;
  int64_t bot_interval_ms = 10;
  int bot_want = 3;
  bool no_ratelimit = false;
  int64_t rate_period_ms = 10000;
  int64_t rate_count = 2;
  int64_t rate_burst = -1;  // -1: no BURST (the server's default, count - 1)
  int64_t max_per_owner = 2;
  std::string sweeper = "notify";
  double duration_s = 60;
  int64_t max_requests = 20'000'000;
  int connect_parallel = 256;
  int64_t linger_ms = 2000;
  std::string item = "sneaker-x";
  uint64_t seed = 1;
  bool cleanup = false;
  std::string report;  // --report FILE.html
};

// ---------------------------------------------------------------------------------------------
// RESP2 replies (RESP3 null, boolean, double, map and push are read too, in case a server
// answers them).

struct Reply {
  char type = 0;  // '+', '-', ':', '$', '*'; 0 for a null
  int64_t integer = 0;
  std::string str;
  std::vector<Reply> elems;

  bool is_null() const { return type == 0; }
  bool is_error() const { return type == '-'; }
  bool is_int() const { return type == ':'; }
  bool is_array() const { return type == '*'; }
  bool error_is(std::string_view code) const {
    return is_error() && str.size() >= code.size() && str.compare(0, code.size(), code) == 0 &&
           (str.size() == code.size() || str[code.size()] == ' ');
  }
  std::string text() const {
    switch (type) {
      case 0:
        return "(nil)";
      case ':':
        return std::to_string(integer);
      case '*':
        return fmt::format("array of {}", elems.size());
      default:
        return str;
    }
  }
};

// This process's user + system CPU time in seconds.
double process_cpu_s() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

bool parse_int(std::string_view s, int64_t& out) {
  if (s.empty()) {
    return false;
  }
  bool neg = s[0] == '-';
  size_t i = neg ? 1 : 0;
  if (i == s.size()) {
    return false;
  }
  int64_t v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9' || v > (INT64_MAX - 9) / 10) {
      return false;
    }
    v = v * 10 + (s[i] - '0');
  }
  out = neg ? -v : v;
  return true;
}

// Parses one reply at [p, end) into out. Returns the bytes it takes, 0 if it is not complete
// yet, -1 if the bytes are not RESP.
ptrdiff_t parse_reply(const char* p, const char* end, Reply& out, int depth) {
  if (p >= end) {
    return 0;
  }
  if (depth > kMaxReplyDepth) {
    return -1;
  }
  const void* found = std::memchr(p, '\r', static_cast<size_t>(end - p));
  if (found == nullptr) {
    return 0;
  }
  const char* cr = static_cast<const char*>(found);
  if (cr + 1 >= end) {
    return 0;
  }
  if (cr[1] != '\n') {
    return -1;
  }
  std::string_view line(p + 1, static_cast<size_t>(cr - p - 1));
  const char* next = cr + 2;
  out.type = *p;
  out.integer = 0;
  out.str.clear();
  out.elems.clear();
  int64_t n = 0;
  switch (*p) {
    case '+':
    case '-':
    case ',':
      out.type = *p == ',' ? '+' : *p;
      out.str.assign(line);
      return next - p;
    case ':':
      return parse_int(line, out.integer) ? next - p : -1;
    case '#':
      out.type = ':';
      out.integer = line == "t" ? 1 : 0;
      return next - p;
    case '_':
      out.type = 0;
      return next - p;
    case '$':
      if (!parse_int(line, n) || n < -1) {
        return -1;
      }
      if (n == -1) {
        out.type = 0;
        return next - p;
      }
      if (end - next < n + 2) {
        return 0;
      }
      out.str.assign(next, static_cast<size_t>(n));
      return next + n + 2 - p;
    case '*':
    case '%':
    case '>': {
      if (!parse_int(line, n) || n < -1 || n > kMaxReplyElems) {
        return -1;
      }
      if (n == -1) {
        out.type = 0;
        return next - p;
      }
      if (*p == '%') {
        n *= 2;  // a map as RESP2's flat array
      }
      out.type = '*';
      out.elems.resize(static_cast<size_t>(n));
      for (auto& e : out.elems) {
        ptrdiff_t used = parse_reply(next, end, e, depth + 1);
        if (used <= 0) {
          return used;
        }
        next += used;
      }
      return next - p;
    }
    default:
      return -1;
  }
}

// One client connection: encodes a command, sends it and reads one reply. Not thread-safe; one
// coroutine at a time.
class RespConn {
 public:
  explicit RespConn(tcp::socket s) : sock_(std::move(s)) {}

  // Encodes the command into the output buffer (replacing what was there).
  void cmd(std::initializer_list<std::string_view> args) {
    name_.assign(*args.begin());
    out_.clear();
    out_ += '*';
    out_ += std::to_string(args.size());
    out_ += "\r\n";
    for (std::string_view a : args) {
      out_ += '$';
      out_ += std::to_string(a.size());
      out_ += "\r\n";
      out_.append(a);
      out_ += "\r\n";
    }
  }

  // Sends the encoded command and reads its reply. False on an I/O or protocol error (error()
  // says which).
  awaitable<bool> roundtrip(Reply& r) {
    auto [ec, n] = co_await asio::async_write(sock_, asio::buffer(out_), kTuple);
    (void)n;
    if (ec) {
      error_ = "write: " + ec.message();
      co_return false;
    }
    bool ok = co_await read_reply(r);
    co_return ok;
  }

  // Reads the next reply (also a pub/sub push).
  awaitable<bool> read_reply(Reply& r) {
    for (;;) {
      if (len_ > pos_) {
        ptrdiff_t used = parse_reply(in_.data() + pos_, in_.data() + len_, r, 0);
        if (used < 0) {
          error_ = "protocol error in a reply";
          co_return false;
        }
        if (used > 0) {
          pos_ += static_cast<size_t>(used);
          if (pos_ == len_) {
            pos_ = len_ = 0;
          }
          co_return true;
        }
      }
      if (pos_ > 0) {
        std::memmove(in_.data(), in_.data() + pos_, len_ - pos_);
        len_ -= pos_;
        pos_ = 0;
      }
      if (len_ == in_.size()) {
        in_.resize(std::max(kMinReadBuffer, in_.size() * 2));
      }
      auto [ec, n] = co_await sock_.async_read_some(
          asio::buffer(in_.data() + len_, in_.size() - len_), kTuple);
      if (ec) {
        error_ =
            ec == asio::error::eof ? "the server closed the connection" : "read: " + ec.message();
        co_return false;
      }
      len_ += n;
    }
  }

  void close() {
    asio::error_code ec;
    sock_.close(ec);
  }
  const std::string& error() const { return error_; }
  const std::string& name() const { return name_; }  // of the last command encoded

 private:
  tcp::socket sock_;
  std::string name_;
  std::string out_;
  std::vector<char> in_;
  size_t pos_ = 0;
  size_t len_ = 0;
  std::string error_;
};

// ---------------------------------------------------------------------------------------------
// The sale.

enum class Reserve { kReserved, kSoldOut, kOwnerLimit, kFailed };
enum class Pay { kSold, kLate, kFailed };

struct Shopper {
  int id = 0;
  bool bot = false;
  bool abandons = false;  // a human who never pays
  bool releases = false;  // an abandoner who releases the hold (else it expires)
  int64_t arrive_ms = 0;
  int units = 0;
  std::string customer;
  std::unique_ptr<RespConn> conn;
  std::unique_ptr<asio::steady_timer> timer;
  Reply reply;
};

struct Counters {
  int64_t requests = 0;       // shopper commands sent
  int64_t attempts = 0;       // clicks on Buy
  int64_t limited = 0;        // refused by GCRA.LIMIT
  int64_t limited_bots = 0;   // ... of which bots
  int64_t soldout = 0;        // reserves answered sold out
  int64_t owner_limited = 0;  // native: -OWNERLIMIT
  int64_t reserved = 0;       // holds taken
  int64_t sold = 0;           // payments that won their hold (and went into the orders stream)
  int64_t sold_bots = 0;
  int64_t released = 0;    // abandoned holds given back by the shopper
  int64_t vanished = 0;    // abandoned holds left to expire
  int64_t late = 0;        // payments or releases that found the hold expired
  int64_t live_holds = 0;  // this tool's view: taken, not settled, deadline not reached
  int64_t swept = 0;       // units the sweeper returned (plain, lua)
  int64_t failures = 0;    // shoppers stopped by a connection error or an unexpected reply
};

class Sale {
 public:
  Sale(asio::io_context& io, Options o) : io_(io), o_(std::move(o)), rng_(o_.seed) {
    std::string tag = fmt::format(
        "{:x}", std::chrono::duration_cast<Ms>(std::chrono::system_clock::now().time_since_epoch())
                    .count());
    item_ = o_.item + "-" + tag;
    stock_key_ = "stock:" + item_;
    inv_key_ = "inv:" + item_;
    orders_key_ = "orders:" + item_;
    hold_prefix_ = "hold:" + item_ + ":";
    ttl_ms_ = std::to_string(o_.hold_ttl_ms);
    ttl_s_ = std::to_string((o_.hold_ttl_ms + 999) / 1000);
    units_str_ = std::to_string(o_.units);
  }

  int exit_code() const { return exit_code_; }

  // The whole run: set-up, connections, the sale, checks and summary. Sets exit_code().
  awaitable<void> run() {
    try {
      co_await run_checked();
    } catch (const std::exception& e) {
      fmt::print(stderr, "hotkv-sale: {}\n", e.what());
      exit_code_ = 2;
    }
    for (auto& s : shoppers_) {
      if (s.conn) {
        s.conn->close();
      }
    }
    sweeping_ = false;
    for (auto* c : {sub_.get(), incr_.get(), sampler_.get()}) {
      if (c != nullptr) {
        c->close();
      }
    }
  }

 private:
  // ---- helpers ------------------------------------------------------------------------------

  [[noreturn]] void fail(const std::string& msg) { throw std::runtime_error(msg); }

  int64_t uniform(int64_t lo, int64_t hi) {
    if (hi <= lo) {
      return lo;
    }
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }

  Clock::time_point now() const { return Clock::now(); }
  int64_t elapsed_ms(Clock::time_point since) const {
    return std::chrono::duration_cast<Ms>(now() - since).count();
  }

  bool stopped() const {
    return now() >= deadline_ || c_.requests >= o_.max_requests || c_.sold >= o_.units;
  }

  // Bots give up once no human is shopping and no hold can return a unit, for linger_ms.
  bool over_for_bots() {
    if (humans_active_ > 0 || c_.live_holds > 0) {
      quiet_since_.reset();
      return false;
    }
    if (!quiet_since_) {
      quiet_since_ = now();
    }
    return elapsed_ms(*quiet_since_) >= o_.linger_ms;
  }

  void wake_everyone() {
    for (auto& s : shoppers_) {
      s.timer->cancel();
    }
  }

  // Sleeps until `at`, but never past the sale's deadline.
  awaitable<void> sleep_until(asio::steady_timer& t, Clock::time_point at) {
    if (stopped()) {
      co_return;  // wake_everyone() may have run while this shopper was on the wire
    }
    t.expires_at(std::min(at, deadline_));
    auto [ec] = co_await t.async_wait(kTuple);
    (void)ec;
  }

  // Runs the command encoded in c (RespConn::cmd) on an admin connection; an I/O error ends
  // the run.
  awaitable<void> admin(RespConn& c, Reply& r) {
    bool ok = co_await c.roundtrip(r);
    if (!ok) {
      fail(fmt::format("{}: {}", c.name(), c.error()));
    }
  }

  // A shopper's command: counts it; false (and the shopper stops) on an I/O error.
  awaitable<bool> call(Shopper& s) {
    ++c_.requests;
    bool ok = co_await s.conn->roundtrip(s.reply);
    if (ok) {
      co_return true;
    }
    note_failure(s, s.conn->error());
    co_return false;
  }

  void note_failure(Shopper& s, const std::string& what) {
    ++c_.failures;
    if (failure_notes_ < 5) {
      ++failure_notes_;
      fmt::print(stderr, "hotkv-sale: shopper {}: {}\n", s.id, what);
    }
  }

  bool unexpected(Shopper& s, std::string_view cmd) {
    note_failure(s, fmt::format("unexpected reply to {}: {}", cmd, s.reply.text()));
    return false;
  }

  awaitable<std::unique_ptr<RespConn>> connect_one() {
    tcp::socket sock(io_);
    auto [ec] = co_await sock.async_connect(endpoint_, kTuple);
    if (ec) {
      fail(fmt::format("connect to {}:{}: {}", o_.host, o_.port, ec.message()));
    }
    sock.set_option(tcp::no_delay(true), ec);
    co_return std::make_unique<RespConn>(std::move(sock));
  }

  // ---- the shopper's steps ------------------------------------------------------------------

  // Takes one unit into a hold named `order`.
  awaitable<Reserve> reserve(Shopper& s, const std::string& order) {
    bool ok = false;
    RespConn& c = *s.conn;
    Reply& r = s.reply;
    if (o_.style == Style::kNative) {
      c.cmd({"INV.RESERVE", inv_key_, order, "1", ttl_ms_, "OWNER", s.customer});
      ok = co_await call(s);
      if (!ok) {
        co_return Reserve::kFailed;
      }
      if (r.is_int()) {
        co_return Reserve::kReserved;
      }
      if (r.error_is("SOLDOUT")) {
        co_return Reserve::kSoldOut;
      }
      if (r.error_is("OWNERLIMIT")) {
        co_return Reserve::kOwnerLimit;
      }
      unexpected(s, "INV.RESERVE");
      co_return Reserve::kFailed;
    }
    std::string hold = hold_prefix_ + order;
    if (o_.style == Style::kLua) {
      c.cmd({"EVALSHA", sha_, "2", stock_key_, hold, ttl_s_, s.customer});
      ok = co_await call(s);
      if (!ok) {
        co_return Reserve::kFailed;
      }
      if (r.is_int() && r.integer >= 0) {
        co_return Reserve::kReserved;
      }
      if (r.is_int() && r.integer == -1) {
        co_return Reserve::kSoldOut;
      }
      unexpected(s, "EVALSHA");
      co_return Reserve::kFailed;
    }
    // plain: DECR, and INCR back when it went below zero.
    c.cmd({"DECR", stock_key_});
    ok = co_await call(s);
    if (!ok) {
      co_return Reserve::kFailed;
    }
    if (!r.is_int()) {
      unexpected(s, "DECR");
      co_return Reserve::kFailed;
    }
    bool soldout = r.integer < 0;
    if (!soldout) {
      c.cmd({"SET", hold, s.customer, "NX", "EX", ttl_s_});
      ok = co_await call(s);
      if (!ok) {
        co_return Reserve::kFailed;  // the unit is lost, never oversold
      }
      if (r.type == '+') {
        co_return Reserve::kReserved;
      }
      unexpected(s, "SET NX EX");  // a hold id is never reused; give the unit back anyway
    }
    c.cmd({"INCR", stock_key_});
    ok = co_await call(s);
    if (!ok) {
      co_return Reserve::kFailed;
    }
    co_return soldout ? Reserve::kSoldOut : Reserve::kFailed;
  }

  // Pays for the hold: it must still be ours, then the order goes to the stream.
  awaitable<Pay> pay(Shopper& s, const std::string& order) {
    bool ok = false;
    RespConn& c = *s.conn;
    Reply& r = s.reply;
    if (o_.style == Style::kNative) {
      c.cmd({"INV.COMMIT", inv_key_, order});
      ok = co_await call(s);
      if (!ok) {
        co_return Pay::kFailed;
      }
      if (r.error_is("EXPIRED")) {
        co_return Pay::kLate;
      }
      if (!r.is_int() || r.integer != 1) {
        unexpected(s, "INV.COMMIT");
        co_return Pay::kFailed;
      }
    } else {
      // DEL answers 1 only while the hold is live: an expired hold is deleted (and its
      // `expired` event sent) by the DEL's own lookup, so expiry and payment never both win.
      c.cmd({"DEL", hold_prefix_ + order});
      ok = co_await call(s);
      if (!ok) {
        co_return Pay::kFailed;
      }
      if (!r.is_int()) {
        unexpected(s, "DEL");
        co_return Pay::kFailed;
      }
      if (r.integer == 0) {
        co_return Pay::kLate;
      }
    }
    c.cmd({"XADD", orders_key_, "*", "order", order, "sku", item_, "customer", s.customer});
    ok = co_await call(s);
    if (!ok) {
      co_return Pay::kFailed;
    }
    if (r.type != '$') {
      unexpected(s, "XADD");
      co_return Pay::kFailed;
    }
    co_return Pay::kSold;
  }

  // Gives an abandoned hold back. False on a failure.
  awaitable<bool> release(Shopper& s, const std::string& order) {
    bool ok = false;
    RespConn& c = *s.conn;
    Reply& r = s.reply;
    if (o_.style == Style::kNative) {
      c.cmd({"INV.RELEASE", inv_key_, order});
      ok = co_await call(s);
      if (!ok) {
        co_return false;
      }
      if (r.error_is("EXPIRED")) {
        ++c_.late;
        co_return true;
      }
      if (!r.is_int() || r.integer != 1) {
        co_return unexpected(s, "INV.RELEASE");
      }
      ++c_.released;
      co_return true;
    }
    c.cmd({"DEL", hold_prefix_ + order});
    ok = co_await call(s);
    if (!ok) {
      co_return false;
    }
    if (!r.is_int()) {
      co_return unexpected(s, "DEL");
    }
    if (r.integer == 0) {
      ++c_.late;  // expired first: the sweeper gives the unit back
      co_return true;
    }
    c.cmd({"INCR", stock_key_});
    ok = co_await call(s);
    if (!ok) {
      co_return false;
    }
    ++c_.released;
    co_return true;
  }

  // Rate limit check; nullopt on a failure, else whether allowed and the wait if not.
  awaitable<std::optional<std::pair<bool, int64_t>>> rate_limit(Shopper& s) {
    bool ok = false;
    Reply& r = s.reply;
    if (o_.rate_burst >= 0) {
      s.conn->cmd({"GCRA.LIMIT", "buy:" + item_ + ":" + s.customer, rate_period_, rate_count_,
                   "BURST", rate_burst_});
    } else {
      s.conn->cmd({"GCRA.LIMIT", "buy:" + item_ + ":" + s.customer, rate_period_, rate_count_});
    }
    ok = co_await call(s);
    if (!ok) {
      co_return std::nullopt;
    }
    if (!r.is_array() || r.elems.size() != 4 || !r.elems[0].is_int() || !r.elems[2].is_int()) {
      unexpected(s, "GCRA.LIMIT");
      co_return std::nullopt;
    }
    co_return std::make_pair(r.elems[0].integer == 1, r.elems[2].integer);
  }

  awaitable<void> shop(Shopper& s) {
    try {
      co_await shop_steps(s);
    } catch (const std::exception& e) {
      note_failure(s, e.what());
    }
    if (!s.bot) {
      --humans_active_;
    }
    --active_;
  }

  awaitable<void> shop_steps(Shopper& s) {
    asio::steady_timer& t = *s.timer;
    co_await sleep_until(t, t0_ + Ms(s.arrive_ms));
    int soldout_seen = 0;
    int attempt = 0;
    while (!stopped()) {
      if (s.bot && (s.units >= o_.bot_want || over_for_bots())) {
        break;
      }
      ++attempt;
      ++c_.attempts;
      if (!o_.no_ratelimit) {
        auto rl = co_await rate_limit(s);
        if (!rl) {
          co_return;
        }
        if (!rl->first) {
          ++c_.limited;
          c_.limited_bots += s.bot ? 1 : 0;
          // A human waits as told; a bot ignores the retry time and comes straight back.
          int64_t wait =
              s.bot ? o_.bot_interval_ms : std::max<int64_t>(rl->second, 1) + uniform(0, 100);
          co_await sleep_until(t, now() + Ms(wait));
          continue;
        }
      }
      std::string order = fmt::format("o{}-{}", s.id, attempt);
      Clock::time_point start = now();
      Reserve got = co_await reserve(s, order);
      if (got == Reserve::kFailed) {
        co_return;
      }
      latencies_us_.push_back(static_cast<uint32_t>(
          std::chrono::duration_cast<std::chrono::microseconds>(now() - start).count()));
      if (got == Reserve::kReserved) {
        ++c_.reserved;
        ++c_.live_holds;
        Clock::time_point hold_deadline = start + Ms(o_.hold_ttl_ms);
        int64_t delay = s.bot ? uniform(o_.bot_pay_min_ms, o_.bot_pay_max_ms)
                              : uniform(o_.pay_min_ms, o_.pay_max_ms);
        co_await sleep_until(t, now() + Ms(delay));
        if (now() >= deadline_) {
          co_return;  // the sale is over with this hold open: it shows in the final state
        }
        if (s.abandons) {
          if (s.releases) {
            co_await release(s, order);  // a failure is counted; the shopper leaves anyway
            --c_.live_holds;
          } else {
            ++c_.vanished;
            co_await sleep_until(t, hold_deadline);
            --c_.live_holds;
          }
          co_return;
        }
        Pay paid = co_await pay(s, order);
        --c_.live_holds;
        if (paid == Pay::kFailed) {
          co_return;
        }
        if (paid == Pay::kLate) {
          ++c_.late;
        } else {
          ++c_.sold;
          ++s.units;
          c_.sold_bots += s.bot ? 1 : 0;
          if (c_.sold >= o_.units) {
            wake_everyone();  // sold out for good: nobody waits for a unit that cannot return
          }
        }
        if (!s.bot) {
          co_return;  // a human buys one pair
        }
        continue;  // a bot goes straight back for more
      }
      ++(got == Reserve::kSoldOut ? c_.soldout : c_.owner_limited);
      if (s.bot) {
        co_await sleep_until(t, now() + Ms(o_.bot_interval_ms));
      } else {
        if (++soldout_seen > o_.human_retries) {
          co_return;  // gives up
        }
        co_await sleep_until(t, now() + Ms(uniform(o_.retry_min_ms, o_.retry_max_ms)));
      }
    }
  }

  // ---- the sweeper (plain, lua) -------------------------------------------------------------

  // Returns the unit of every expired hold of this item: `expired` keyspace events arrive on
  // sub_, and each one INCRs the stock on incr_.
  awaitable<void> sweep() {
    bool ok = false;
    Reply msg;
    Reply r;
    try {
      for (;;) {
        ok = co_await sub_->read_reply(msg);
        if (!ok) {
          if (!sweeping_) {
            co_return;  // closed at the end of the run
          }
          fail("sweeper: " + sub_->error());
        }
        if (!msg.is_array() || msg.elems.size() != 3 || msg.elems[0].str != "message") {
          continue;
        }
        const std::string& key = msg.elems[2].str;
        if (key.compare(0, hold_prefix_.size(), hold_prefix_) != 0) {
          continue;
        }
        incr_->cmd({"INCR", stock_key_});
        co_await admin(*incr_, r);
        ++c_.swept;
      }
    } catch (const std::exception& e) {
      fmt::print(stderr, "hotkv-sale: {}\n", e.what());
      sweeper_failed_ = true;
    }
  }

  // ---- progress and the run -----------------------------------------------------------------

  awaitable<void> progress() {
    asio::steady_timer t(io_);
    int64_t last_requests = 0;
    Clock::time_point last = now();
    Clock::time_point next = last;
    while (active_ > 0) {
      next += std::chrono::seconds(1);
      while (active_ > 0 && now() < next) {
        t.expires_at(std::min(next, now() + Ms(50)));
        co_await t.async_wait(kTuple);
      }
      if (active_ == 0) {
        break;
      }
      double secs = std::chrono::duration<double>(now() - last).count();
      fmt::print(stderr,
                 "[{:5.1f}s] reserved {:6} sold {:5} in holds {:5} req/s {:8.0f}  limited {} "
                 "sold-out {} shoppers left {}\n",
                 std::chrono::duration<double>(now() - t0_).count(), c_.reserved, c_.sold,
                 c_.live_holds, static_cast<double>(c_.requests - last_requests) / secs, c_.limited,
                 c_.soldout + c_.owner_limited, active_);
      last_requests = c_.requests;
      last = now();
    }
  }

  // --report: one sample every kSampleMs while the sale runs, and one once it is over.
  awaitable<void> sample_sale() {
    asio::steady_timer t(io_);
    Clock::time_point next = t0_;
    while (active_ > 0) {
      next += Ms(kSampleMs);
      while (active_ > 0 && now() < next) {
        t.expires_at(std::min(next, now() + Ms(20)));
        co_await t.async_wait(kTuple);
      }
      co_await take_sample();
    }
    sampling_ = false;
  }

  awaitable<void> take_sample() {
    hotkv::sale::Sample s;
    s.t_s = std::chrono::duration<double>(now() - t0_).count();
    Reply r;
    bool native = o_.style == Style::kNative;
    if (native) {
      sampler_->cmd({"INV.GET", inv_key_});
    } else {
      sampler_->cmd({"GET", stock_key_});
    }
    bool ok = co_await sampler_->roundtrip(r);
    const hotkv::sale::Sample* prev = samples_.empty() ? nullptr : &samples_.back();
    s.available = prev != nullptr ? prev->available : o_.units;
    s.held = native ? (prev != nullptr ? prev->held : 0) : c_.live_holds;
    if (ok && native && r.is_array()) {
      for (size_t i = 0; i + 1 < r.elems.size(); i += 2) {
        if (r.elems[i].str == "available") {
          s.available = r.elems[i + 1].integer;
        } else if (r.elems[i].str == "held") {
          s.held = r.elems[i + 1].integer;
        }
      }
    } else if (ok && !native) {
      // The seed's counter dips below zero while a sold-out DECR is given back.
      s.available = std::max<int64_t>(0, std::atoll(r.str.c_str()));
    }
    s.sold = c_.sold;
    s.reserves = c_.reserved - sampled_.reserved;
    s.soldout = c_.soldout + c_.owner_limited - sampled_.soldout - sampled_.owner_limited;
    s.limited_bots = c_.limited_bots - sampled_.limited_bots;
    s.limited_humans = (c_.limited - c_.limited_bots) - (sampled_.limited - sampled_.limited_bots);
    std::vector<uint32_t> lat(latencies_us_.begin() + static_cast<ptrdiff_t>(sampled_latencies_),
                              latencies_us_.end());
    s.p50_ms = percentile_ms(lat, 0.50);
    s.p99_ms = percentile_ms(lat, 0.99);
    sampled_latencies_ = latencies_us_.size();
    sampled_ = c_;
    samples_.push_back(s);
  }

  void assign_roles() {
    int n = o_.shoppers;
    int bots = static_cast<int>(static_cast<double>(n) * o_.bot_share + 0.5);
    int humans = n - bots;
    int abandon = static_cast<int>(static_cast<double>(humans) * o_.abandon_share + 0.5);
    int releasers = static_cast<int>(static_cast<double>(abandon) * o_.release_share + 0.5);
    std::vector<int> order(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      order[static_cast<size_t>(i)] = i;
    }
    std::shuffle(order.begin(), order.end(), rng_);
    shoppers_.resize(static_cast<size_t>(n));
    for (int k = 0; k < n; ++k) {
      Shopper& s = shoppers_[static_cast<size_t>(order[static_cast<size_t>(k)])];
      s.id = order[static_cast<size_t>(k)];
      s.bot = k < bots;
      s.abandons = k >= bots && k < bots + abandon;
      s.releases = s.abandons && k < bots + releasers;
      s.customer = fmt::format("customer:{}", s.id);
      s.arrive_ms = uniform(0, o_.arrival_ms);
    }
  }

  // Raises maxclients when the server would refuse some of the shoppers.
  awaitable<void> check_maxclients(RespConn& a, Reply& r) {
    int64_t need = o_.shoppers + 16;
    a.cmd({"CONFIG", "GET", "maxclients"});
    co_await admin(a, r);
    int64_t have = 0;
    if (r.is_array() && r.elems.size() == 2 && parse_int(r.elems[1].str, have) && have < need) {
      std::string want = std::to_string(o_.shoppers + 64);
      a.cmd({"CONFIG", "SET", "maxclients", want});
      co_await admin(a, r);
      if (r.is_error()) {
        fail(
            fmt::format("the server's maxclients is {} and CONFIG SET maxclients {} failed: {} "
                        "(start it with --maxclients {})",
                        have, want, r.str, want));
      }
      fmt::print(stderr, "hotkv-sale: raised the server's maxclients from {} to {}\n", have, want);
    }
  }

  awaitable<void> set_up(RespConn& a, Reply& r) {
    co_await check_maxclients(a, r);
    if (!o_.no_ratelimit) {
      a.cmd({"GCRA.LIMIT", "buy:" + item_ + ":probe", rate_period_, rate_count_, "COST", "0"});
      co_await admin(a, r);
      if (r.is_error()) {
        fail("GCRA.LIMIT failed (" + r.str +
             "): redis-server has no GCRA.LIMIT, use --no-ratelimit");
      }
    }
    if (o_.style == Style::kNative) {
      if (o_.max_per_owner > 0) {
        a.cmd(
            {"INV.CREATE", inv_key_, units_str_, "MAXPEROWNER", std::to_string(o_.max_per_owner)});
        co_await admin(a, r);
      } else {
        a.cmd({"INV.CREATE", inv_key_, units_str_});
        co_await admin(a, r);
      }
      if (r.is_error()) {
        fail("INV.CREATE failed (" + r.str + "): --style native needs HotKV's inventory commands");
      }
      co_return;
    }
    a.cmd({"SET", stock_key_, units_str_});
    co_await admin(a, r);
    if (o_.style == Style::kLua) {
      a.cmd({"SCRIPT", "LOAD", kReserveLua});
      co_await admin(a, r);
      if (r.type != '$') {
        fail("SCRIPT LOAD failed: " + r.text() + " (--style lua needs a server with Lua)");
      }
      sha_ = r.str;
    }
    if (o_.sweeper == "notify") {
      a.cmd({"CONFIG", "GET", "notify-keyspace-events"});
      co_await admin(a, r);
      if (!r.is_array() || r.elems.size() != 2) {
        fail("CONFIG GET notify-keyspace-events: " + r.text());
      }
      old_notify_ = r.elems[1].str;
      std::string flags = old_notify_;
      if (flags.find('E') == std::string::npos) {
        flags += 'E';
      }
      if (flags.find('x') == std::string::npos && flags.find('A') == std::string::npos) {
        flags += 'x';
      }
      a.cmd({"CONFIG", "SET", "notify-keyspace-events", flags});
      co_await admin(a, r);
      if (r.is_error()) {
        fail("CONFIG SET notify-keyspace-events: " + r.str);
      }
      notify_changed_ = true;
      sub_ = co_await connect_one();
      incr_ = co_await connect_one();
      sub_->cmd({"SUBSCRIBE", "__keyevent@0__:expired"});
      co_await admin(*sub_, r);
      if (!r.is_array() || r.elems.size() != 3 || r.elems[0].str != "subscribe") {
        fail("SUBSCRIBE __keyevent@0__:expired: " + r.text());
      }
      sweeping_ = true;
      asio::co_spawn(io_, sweep(), asio::detached);
    }
  }

  awaitable<void> connect_shoppers() {
    size_t next = 0;
    int workers = std::max(1, std::min(o_.connect_parallel, o_.shoppers));
    int running = workers;
    std::string first_error;
    for (int w = 0; w < workers; ++w) {
      asio::co_spawn(
          io_,
          [&]() -> awaitable<void> {
            try {
              while (next < shoppers_.size() && first_error.empty()) {
                Shopper& s = shoppers_[next++];
                s.conn = co_await connect_one();
                s.timer = std::make_unique<asio::steady_timer>(io_);
                // A server at maxclients accepts and then closes: check that it serves us.
                s.conn->cmd({"PING"});
                bool ok = co_await s.conn->roundtrip(s.reply);
                if (!ok || s.reply.str != "PONG") {
                  fail(fmt::format("shopper {}: no PONG ({}{})", s.id, s.conn->error(),
                                   s.reply.text()));
                }
              }
            } catch (const std::exception& e) {
              if (first_error.empty()) {
                first_error = e.what();
              }
            }
            --running;
          },
          asio::detached);
    }
    asio::steady_timer t(io_);
    while (running > 0) {
      t.expires_after(Ms(5));
      co_await t.async_wait(kTuple);
    }
    if (!first_error.empty()) {
      size_t ok = static_cast<size_t>(std::count_if(
          shoppers_.begin(), shoppers_.end(), [](const Shopper& s) { return s.conn != nullptr; }));
      fail(fmt::format("{} (connected {} of {} shoppers)", first_error, ok, shoppers_.size()));
    }
  }

  awaitable<void> run_checked() {
    tcp::resolver resolver(io_);
    asio::error_code ec;
    auto results = resolver.resolve(o_.host, std::to_string(o_.port), ec);
    if (ec || results.empty()) {
      fail(fmt::format("cannot resolve {}: {}", o_.host, ec.message()));
    }
    endpoint_ = *results.begin();
    rate_period_ = std::to_string(o_.rate_period_ms);
    rate_count_ = std::to_string(o_.rate_count);
    rate_burst_ = std::to_string(o_.rate_burst);

    std::unique_ptr<RespConn> a = co_await connect_one();
    Reply r;
    a->cmd({"INFO", "server"});
    co_await admin(*a, r);
    static constexpr std::string_view kVersionFields[] = {"hotkv_version:", "redis_version:"};
    for (std::string_view field : kVersionFields) {
      size_t at = r.str.find(field);
      if (at != std::string::npos) {
        server_banner_ = r.str.substr(at, r.str.find('\r', at) - at);
        break;
      }
    }
    co_await set_up(*a, r);
    assign_roles();
    if (!o_.report.empty()) {
      sampler_ = co_await connect_one();
    }

    Clock::time_point connect_start = now();
    co_await connect_shoppers();
    connect_s_ = std::chrono::duration<double>(now() - connect_start).count();
    fmt::print(stderr, "hotkv-sale: {} shoppers connected in {:.2f} s; the drop opens\n",
               o_.shoppers, connect_s_);

    cpu0_ = process_cpu_s();
    t0_ = now();
    deadline_ = t0_ + Ms(static_cast<int64_t>(o_.duration_s * 1000));
    active_ = static_cast<int64_t>(shoppers_.size());
    humans_active_ =
        std::count_if(shoppers_.begin(), shoppers_.end(), [](const Shopper& s) { return !s.bot; });
    for (auto& s : shoppers_) {
      asio::co_spawn(io_, shop(s), asio::detached);
    }
    if (sampler_) {
      sampling_ = true;
      asio::co_spawn(io_, sample_sale(), asio::detached);
    }
    co_await progress();
    {
      asio::steady_timer wait(io_);
      while (sampling_) {  // the last sample, taken once every shopper is done
        wait.expires_after(Ms(5));
        co_await wait.async_wait(kTuple);
      }
    }
    sale_s_ = std::chrono::duration<double>(now() - t0_).count();
    sale_cpu_s_ = process_cpu_s() - cpu0_;

    if (sweeping_) {
      // Expired events already sent are still on their way: give the sweeper a moment.
      asio::steady_timer t(io_);
      int64_t swept = -1;
      for (int i = 0; i < 20 && swept != c_.swept; ++i) {
        swept = c_.swept;
        t.expires_after(Ms(250));
        co_await t.async_wait(kTuple);
      }
      sweeping_ = false;
      sub_->close();
    }
    co_await report(*a, r);
    if (notify_changed_) {
      a->cmd({"CONFIG", "SET", "notify-keyspace-events", old_notify_});
      co_await admin(*a, r);
    }
    if (o_.cleanup) {
      a->cmd({"DEL", inv_key_, stock_key_, orders_key_});
      co_await admin(*a, r);
    }
  }

  static double percentile_ms(std::vector<uint32_t>& v, double q) {
    if (v.empty()) {
      return 0;
    }
    size_t k = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())));
    std::nth_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(k), v.end());
    return v[k] / 1000.0;
  }

  // Reads the server's final state, prints the summary and sets the exit code.
  awaitable<void> report(RespConn& a, Reply& r) {
    a.cmd({"XLEN", orders_key_});
    co_await admin(a, r);
    int64_t orders = r.integer;
    int64_t sold_server = orders;
    int64_t available = 0;
    int64_t in_holds = 0;
    int64_t holds = 0;
    int64_t lost = 0;
    std::vector<std::string> problems;
    std::string audit_line;
    if (o_.style == Style::kNative) {
      a.cmd({"INV.GET", inv_key_});
      co_await admin(a, r);
      int64_t f[5] = {-1, -1, -1, -1, -1};  // total available held sold holds
      static constexpr std::string_view kNames[5] = {"total", "available", "held", "sold", "holds"};
      for (size_t i = 0; r.is_array() && i + 1 < r.elems.size(); i += 2) {
        for (size_t k = 0; k < 5; ++k) {
          if (r.elems[i].str == kNames[k]) {
            f[k] = r.elems[i + 1].integer;
          }
        }
      }
      available = f[1];
      in_holds = f[2];
      sold_server = f[3];
      holds = f[4];
      if (f[0] != o_.units || f[1] + f[2] + f[3] != f[0]) {
        problems.push_back(
            fmt::format("INV.GET counters do not add up: total {} available {} "
                        "held {} sold {}",
                        f[0], f[1], f[2], f[3]));
      }
      if (f[3] != orders || f[3] != c_.sold) {
        problems.push_back(
            fmt::format("sold {} by INV.GET, {} orders in the stream, {} payments "
                        "seen by the shoppers",
                        f[3], orders, c_.sold));
      }
      a.cmd({"INV.AUDIT", inv_key_});
      co_await admin(a, r);
      if (!r.is_array()) {
        problems.push_back("INV.AUDIT: " + r.text());
      }
      for (const auto& v : r.elems) {
        problems.push_back("INV.AUDIT: " + v.str);
      }
      audit_line =
          fmt::format("INV.AUDIT {}; INV.GET total {} available {} held {} sold {} holds {}",
                      r.elems.empty() ? "empty" : "NOT EMPTY", f[0], f[1], f[2], f[3], f[4]);
    } else {
      a.cmd({"GET", stock_key_});
      co_await admin(a, r);
      if (!parse_int(r.str, available)) {
        problems.push_back("GET stock: " + r.text());
      }
      a.cmd({"KEYS", hold_prefix_ + "*"});
      co_await admin(a, r);
      holds = static_cast<int64_t>(r.elems.size());
      in_holds = holds;
      lost = o_.units - available - in_holds - orders;
      if (available < 0) {
        problems.push_back(fmt::format("the stock counter ended at {}", available));
      }
      if (lost < 0) {
        problems.push_back(
            fmt::format("{} units more than exist: stock {} + holds {} + sold {} "
                        "> {}",
                        -lost, available, in_holds, orders, o_.units));
      }
      if (orders != c_.sold) {
        problems.push_back(fmt::format("{} orders in the stream, {} payments seen by the shoppers",
                                       orders, c_.sold));
      }
      audit_line = fmt::format("stock {} + holds {} + sold {} + lost {} = {}", available, in_holds,
                               orders, lost, o_.units);
    }
    int64_t sold = std::max({sold_server, orders, c_.sold});
    int64_t oversold = std::max<int64_t>(0, sold - o_.units);
    if (oversold > 0) {
      problems.push_back(fmt::format("OVERSOLD by {}", oversold));
    }
    if (sweeper_failed_) {
      problems.push_back("the sweeper stopped");
    }
    int bots_with = 0;
    int humans_with = 0;
    int bots = 0;
    int abandoners = 0;
    int releasers = 0;
    for (const auto& s : shoppers_) {
      bots += s.bot ? 1 : 0;
      abandoners += s.abandons ? 1 : 0;
      releasers += s.releases ? 1 : 0;
      if (s.units > 0) {
        ++(s.bot ? bots_with : humans_with);
      }
    }
    std::vector<uint32_t> lat = latencies_us_;
    double p50 = percentile_ms(lat, 0.50);
    double p99 = percentile_ms(lat, 0.99);
    double p999 = percentile_ms(lat, 0.999);
    const char* style = o_.style == Style::kNative ? "native (INV.RESERVE/COMMIT/RELEASE)"
                        : o_.style == Style::kLua  ? "lua (EVALSHA check-and-decrement, DEL/XADD)"
                                                   : "plain (DECR/INCR, SET NX EX, DEL/XADD)";
    std::string rl =
        o_.no_ratelimit
            ? std::string("off")
            : fmt::format("GCRA.LIMIT {} ms / {} burst {}", o_.rate_period_ms, o_.rate_count,
                          o_.rate_burst >= 0
                              ? std::to_string(o_.rate_burst)
                              : std::to_string(o_.rate_count - 1) + " (the default, count - 1)");

    fmt::print("hotkv-sale summary\n");
    fmt::print("  server            {}:{} ({})\n", o_.host, o_.port, server_banner_);
    fmt::print("  style             {}, rate limit {}, sweeper {}\n", style, rl,
               o_.style == Style::kNative ? "n/a (server expiry)" : o_.sweeper);
    fmt::print("  item              {} ({} units, hold TTL {} ms)\n",
               o_.style == Style::kNative ? inv_key_ : stock_key_, o_.units, o_.hold_ttl_ms);
    fmt::print(
        "  shoppers          {} ({} bots; {} humans never pay: {} release the hold, {} "
        "let it expire)\n",
        o_.shoppers, bots, abandoners, releasers, abandoners - releasers);
    fmt::print("  sale              {:.2f} s (connect {:.2f} s){}\n", sale_s_, connect_s_,
               now() >= deadline_ ? ", stopped at --duration-s" : "");
    fmt::print("  units sold        {} of {} (orders stream {})\n", sold_server, o_.units, orders);
    fmt::print("  oversold          {}\n", oversold);
    fmt::print("  in holds at end   {} units ({} holds)\n", in_holds, holds);
    fmt::print("  available at end  {}\n", available);
    if (o_.style != Style::kNative) {
      fmt::print("  lost units        {} (expired holds never returned)\n", lost);
      fmt::print("  sweeper returned  {}\n", c_.swept);
    }
    fmt::print("  bots with a unit  {} of {} ({} units)\n", bots_with, bots, c_.sold_bots);
    fmt::print("  humans with unit  {}\n", humans_with);
    fmt::print("  reserve latency   p50 {:.3f} ms, p99 {:.3f} ms, p99.9 {:.3f} ms ({} reserves)\n",
               p50, p99, p999, latencies_us_.size());
    fmt::print("  requests          {} in {:.2f} s = {:.0f} req/s\n", c_.requests, sale_s_,
               static_cast<double>(c_.requests) / std::max(sale_s_, 1e-9));
    fmt::print("  client CPU        {:.2f} s during the sale ({:.0f}% of one core)\n", sale_cpu_s_,
               100 * sale_cpu_s_ / std::max(sale_s_, 1e-9));
    fmt::print("  attempts          {} (rate limited {}, sold out {}, owner limit {})\n",
               c_.attempts, c_.limited, c_.soldout, c_.owner_limited);
    fmt::print(
        "  holds             {} taken, {} paid, {} released, {} left to expire, {} "
        "found expired at payment/release\n",
        c_.reserved, c_.sold, c_.released, c_.vanished, c_.late);
    fmt::print("  check             {}\n", audit_line);
    if (c_.failures > 0) {
      fmt::print("  failures          {} shoppers stopped by an error\n", c_.failures);
    }
    for (const auto& p : problems) {
      fmt::print("  PROBLEM           {}\n", p);
    }
    bool fatal = oversold > 0 || !problems.empty();
    if (!o_.report.empty()) {
      hotkv::sale::ReportMeta meta;
      meta.title = fmt::format("hotkv-sale: {} units, {} shoppers, {} on {}", o_.units, o_.shoppers,
                               o_.style_name, server_banner_);
      meta.facts = {
          {"server", fmt::format("{}:{} ({})", o_.host, o_.port, server_banner_)},
          {"style", style},
          {"rate limit", rl},
          {"sale", fmt::format("{:.2f} s", sale_s_)},
          {"units sold", fmt::format("{} of {}", sold_server, o_.units)},
          {"oversold", std::to_string(oversold)},
          {"holds taken", std::to_string(c_.reserved)},
          {"holds paid", std::to_string(c_.sold)},
          {"sold-out answers", std::to_string(c_.soldout + c_.owner_limited)},
          {"refused by the rate limit",
           fmt::format("{} ({} of them bots)", c_.limited, c_.limited_bots)},
          {"reserve latency", fmt::format("p50 {:.3f} ms, p99 {:.3f} ms", p50, p99)},
          {"requests", fmt::format("{} ({:.0f} req/s)", c_.requests,
                                   static_cast<double>(c_.requests) / std::max(sale_s_, 1e-9))},
          {"check", audit_line},
      };
      std::string err = hotkv::sale::write_report(o_.report, meta, samples_);
      if (err.empty()) {
        fmt::print("  report            {} ({} samples)\n", o_.report, samples_.size());
      } else {
        problems.push_back(err);
        fmt::print("  PROBLEM           {}\n", err);
        fatal = true;
      }
    }
    fmt::print("  result            {}\n", fatal ? "FAIL" : "OK");
    exit_code_ = fatal ? 1 : (c_.failures > 0 ? 2 : 0);
  }

  asio::io_context& io_;
  Options o_;
  std::mt19937_64 rng_;
  tcp::endpoint endpoint_;
  std::string item_, stock_key_, inv_key_, orders_key_, hold_prefix_;
  std::string ttl_ms_, ttl_s_, units_str_, rate_period_, rate_count_, rate_burst_;
  std::string sha_;
  std::string server_banner_;
  std::string old_notify_;
  bool notify_changed_ = false;
  std::unique_ptr<RespConn> sub_;
  std::unique_ptr<RespConn> incr_;
  bool sweeping_ = false;
  bool sweeper_failed_ = false;
  std::vector<Shopper> shoppers_;
  Counters c_;
  std::vector<uint32_t> latencies_us_;
  // --report: the series, the connection that polls the stock, and the counters at the last
  // sample (each sample holds the interval's differences).
  std::vector<hotkv::sale::Sample> samples_;
  std::unique_ptr<RespConn> sampler_;
  Counters sampled_;
  size_t sampled_latencies_ = 0;
  bool sampling_ = false;
  static constexpr int64_t kSampleMs = 100;
  int64_t active_ = 0;
  int64_t humans_active_ = 0;
  std::optional<Clock::time_point> quiet_since_;
  Clock::time_point t0_;
  Clock::time_point deadline_ = Clock::time_point::max();
  double connect_s_ = 0;
  double sale_s_ = 0;
  double cpu0_ = 0;
  double sale_cpu_s_ = 0;
  int failure_notes_ = 0;
  int exit_code_ = 0;
};

// Every shopper needs a descriptor: raise the soft limit as far as the hard one allows.
bool raise_fd_limit(int64_t need) {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) {
    return false;
  }
  if (static_cast<int64_t>(lim.rlim_cur) >= need) {
    return true;
  }
  rlim_t want = static_cast<rlim_t>(need);
  if (lim.rlim_max != RLIM_INFINITY && lim.rlim_max < want) {
    fmt::print(stderr, "hotkv-sale: {} descriptors needed but the hard limit is {} (ulimit -Hn)\n",
               need, lim.rlim_max);
    return false;
  }
  lim.rlim_cur = want;
  return setrlimit(RLIMIT_NOFILE, &lim) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Flash-sale simulator: many shoppers, few units, bots and abandoned carts, "
      "against any Redis-protocol server"};
  Options o;
  app.add_option("--host", o.host, "server address");
  app.add_option("--port", o.port, "server port");
  app.add_option("--style", o.style_name, "plain (DECR/SET NX EX), lua (EVALSHA) or native (INV.*)")
      ->check(CLI::IsMember({"plain", "lua", "native"}));
  app.add_option("--shoppers", o.shoppers, "shoppers, one connection each")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--units", o.units, "units on sale")->check(CLI::Range(int64_t{0}, INT64_MAX / 4));
  app.add_option("--bots", o.bot_share, "share of shoppers that are bots")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--abandon", o.abandon_share, "share of humans who never pay")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--release", o.release_share,
                 "share of abandoners who release the hold (the others let it expire)")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--pay-min-ms", o.pay_min_ms, "shortest payment delay of a human");
  app.add_option("--pay-max-ms", o.pay_max_ms, "longest payment delay of a human");
  app.add_option("--hold-ttl-ms", o.hold_ttl_ms, "hold lifetime (plain/lua round it up to seconds)")
      ->check(CLI::Range(int64_t{1}, int64_t{86400000}));
  app.add_option("--arrival-ms", o.arrival_ms, "shoppers arrive spread over this window");
  app.add_option("--human-retries", o.human_retries, "sold-out answers a human retries after");
  app.add_option("--retry-min-ms", o.retry_min_ms, "shortest wait of a human before retrying");
  app.add_option("--retry-max-ms", o.retry_max_ms, "longest wait of a human before retrying");
  app.add_option("--bot-interval-ms", o.bot_interval_ms, "a bot's wait between refused tries");
  app.add_option("--bot-want", o.bot_want, "units a bot tries to buy")
      ->check(CLI::Range(1, 1000000));
  app.add_flag("--no-ratelimit", o.no_ratelimit, "no GCRA.LIMIT (redis-server lacks it)");
  app.add_option("--rate-period-ms", o.rate_period_ms, "GCRA.LIMIT period per customer");
  app.add_option("--rate-count", o.rate_count, "GCRA.LIMIT tries per period");
  app.add_option("--rate-burst", o.rate_burst,
                 "GCRA.LIMIT BURST (default: none given, the server's count - 1)");
  app.add_option("--max-per-owner", o.max_per_owner, "native: MAXPEROWNER of the item (0: none)");
  app.add_option("--sweeper", o.sweeper,
                 "plain/lua: notify (return expired holds' units on `expired` events) or none")
      ->check(CLI::IsMember({"notify", "none"}));
  app.add_option("--duration-s", o.duration_s, "the sale lasts at most this long")
      ->check(CLI::Range(0.1, 86400.0));
  app.add_option("--max-requests", o.max_requests, "the sale stops after this many requests");
  app.add_option("--connect-parallel", o.connect_parallel, "connections opened at once");
  app.add_option("--linger-ms", o.linger_ms, "bots give up after this long with nothing to get");
  app.add_option("--item", o.item, "item name (a unique suffix is added per run)");
  app.add_option("--seed", o.seed, "random seed");
  app.add_flag("--cleanup", o.cleanup, "delete the item's stock/inventory and orders keys after");
  app.add_option("--report", o.report,
                 "write the sale over time (stock, reserves, sold-out answers, latency, bots "
                 "refused) as a self-contained HTML page");
  CLI11_PARSE(app, argc, argv);
  o.style = o.style_name == "plain" ? Style::kPlain
            : o.style_name == "lua" ? Style::kLua
                                    : Style::kNative;
  if (o.pay_max_ms < o.pay_min_ms || o.retry_max_ms < o.retry_min_ms || o.pay_min_ms < 0 ||
      o.retry_min_ms < 0 || o.arrival_ms < 0 || o.bot_interval_ms < 0 || o.rate_period_ms <= 0 ||
      o.rate_count <= 0 || o.rate_burst < -1 || o.max_per_owner < 0 || o.human_retries < 0) {
    fmt::print(stderr, "hotkv-sale: bad option values (a min above its max, or a negative)\n");
    return 2;
  }
  if (!raise_fd_limit(o.shoppers + 64)) {
    fmt::print(stderr, "hotkv-sale: could not raise RLIMIT_NOFILE to {}\n", o.shoppers + 64);
    return 2;
  }
  asio::io_context io(1);
  Sale sale(io, o);
  asio::co_spawn(io, sale.run(), asio::detached);
  io.run();
  return sale.exit_code();
}
