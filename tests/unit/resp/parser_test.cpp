// Tests for RequestParser. The core check feeds a corpus of requests split in every possible way
// (each byte boundary, random many-chunk splits, one byte at a time) into a buffer that is moved
// to a fresh allocation on every change, as a connection's buffer may be, and requires the same
// commands as parsing in one piece. The rest pins each Redis error text and limit, and checks
// that claimed lengths never turn into allocations.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <catch2/catch.hpp>

#include "hotkv/resp/parser.hpp"

// The memory-bound tests need to see the parser's allocations, which the API cannot show. Sanitizer
// builds (which CI runs) expose allocation hooks for that; elsewhere those checks are skipped.
#if defined(__SANITIZE_ADDRESS__)
#define HOTKV_TEST_ALLOC_HOOKS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HOTKV_TEST_ALLOC_HOOKS 1
#endif
#endif
#ifdef HOTKV_TEST_ALLOC_HOOKS
// From the sanitizer runtime's allocator interface; declared here because GCC does not ship
// <sanitizer/allocator_interface.h>.
extern "C" int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void*,
                                                                             size_t),
                                                         void (*free_hook)(const volatile void*));
#endif

namespace {

using hotkv::ParserLimits;
using hotkv::ParseStatus;
using hotkv::RequestParser;

using Command = std::vector<std::string>;

std::atomic<bool> g_probe_active{false};
std::atomic<size_t> g_probe_largest{0};

#ifdef HOTKV_TEST_ALLOC_HOOKS
// Called by the sanitizer runtime for every allocation, so it must not allocate itself.
void on_malloc(const volatile void*, size_t size) {
  if (!g_probe_active.load(std::memory_order_relaxed)) {
    return;
  }
  size_t seen = g_probe_largest.load(std::memory_order_relaxed);
  while (size > seen && !g_probe_largest.compare_exchange_weak(seen, size)) {
  }
}

void on_free(const volatile void*) {}
#endif

// Records the largest single allocation made while it is alive, where the build allows.
class AllocationProbe {
 public:
#ifdef HOTKV_TEST_ALLOC_HOOKS
  static constexpr bool kSupported = true;
#else
  static constexpr bool kSupported = false;
#endif

  AllocationProbe() {
#ifdef HOTKV_TEST_ALLOC_HOOKS
    static const bool installed = __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);
    REQUIRE(installed);
#endif
    g_probe_largest = 0;
    g_probe_active = true;
  }
  ~AllocationProbe() { g_probe_active = false; }
  AllocationProbe(const AllocationProbe&) = delete;
  AllocationProbe& operator=(const AllocationProbe&) = delete;

  size_t largest() const { return g_probe_largest.load(); }
};

// Encodes a command the way clients send it.
std::string multibulk(const Command& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const std::string& a : args) {
    out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  }
  return out;
}

// What a whole feed produced: the commands in order, then either the error that stopped it or
// the number of bytes of an unfinished command left in the buffer.
struct Outcome {
  std::vector<Command> commands;
  std::string error;
  size_t leftover = 0;
};

// Plays the connection: a heap buffer of exactly the bytes held, replaced by a new allocation
// (and the old one scribbled over and freed) whenever bytes are appended or dropped. A parser
// that kept a pointer, or read past the end, trips AddressSanitizer or returns wrong bytes.
class Connection {
 public:
  explicit Connection(ParserLimits limits = {}) : parser_(limits) {}

  // Appends `bytes` and parses as far as possible. Returns false once a protocol error was hit.
  bool receive(std::string_view bytes) {
    replace(0, bytes);
    for (;;) {
      size_t consumed = 12345;
      const ParseStatus st = parser_.parse(std::string_view(buf_.get(), len_), consumed, args_);
      if (st == ParseStatus::kComplete) {
        REQUIRE(consumed > 0);
        REQUIRE(consumed <= len_);
        outcome_.commands.emplace_back(args_.begin(), args_.end());
        replace(consumed, {});
        continue;
      }
      if (st == ParseStatus::kNeedMore) {
        REQUIRE(args_.empty());
        REQUIRE(consumed <= len_);
        if (consumed == 0) {
          return true;
        }
        replace(consumed, {});
        continue;
      }
      REQUIRE(consumed == 0);
      REQUIRE_FALSE(parser_.error().empty());
      outcome_.error = parser_.error();
      return false;
    }
  }

  Outcome finish() {
    if (outcome_.error.empty()) {
      outcome_.leftover = len_;
    }
    return outcome_;
  }

 private:
  void replace(size_t drop, std::string_view extra) {
    const size_t keep = len_ - drop;
    // Every byte is written just below, so make_unique's zero fill would only cost time.
    std::unique_ptr<char[]> next(new char[keep + extra.size()]);
    std::copy(buf_.get() + drop, buf_.get() + len_, next.get());
    std::copy(extra.begin(), extra.end(), next.get() + keep);
    std::fill(buf_.get(), buf_.get() + len_, '#');
    buf_ = std::move(next);
    len_ = keep + extra.size();
  }

  RequestParser parser_;
  std::unique_ptr<char[]> buf_ = std::make_unique<char[]>(0);
  size_t len_ = 0;
  std::vector<std::string_view> args_;
  Outcome outcome_;
};

Outcome feed(const std::vector<std::string_view>& chunks, ParserLimits limits = {}) {
  Connection conn(limits);
  for (std::string_view c : chunks) {
    if (!conn.receive(c)) {
      break;
    }
  }
  return conn.finish();
}

Outcome feed_whole(std::string_view input, ParserLimits limits = {}) {
  return feed({input}, limits);
}

void require_same(const Outcome& got, const Outcome& want) {
  REQUIRE(got.commands == want.commands);
  REQUIRE(got.error == want.error);
  REQUIRE(got.leftover == want.leftover);
}

// Splits `input` in two at every byte boundary and requires the whole-input result each time.
void check_every_split(std::string_view input, ParserLimits limits = {}) {
  const Outcome want = feed_whole(input, limits);
  for (size_t cut = 0; cut <= input.size(); ++cut) {
    INFO("split at byte " << cut);
    require_same(feed({input.substr(0, cut), input.substr(cut)}, limits), want);
  }
}

// Splits `input` into random chunks of 1..max_chunk bytes, `rounds` times.
void check_random_splits(std::string_view input, size_t max_chunk, int rounds, unsigned seed) {
  const Outcome want = feed_whole(input);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<size_t> size_dist(1, max_chunk);
  for (int round = 0; round < rounds; ++round) {
    std::vector<std::string_view> chunks;
    for (size_t at = 0; at < input.size();) {
      const size_t n = std::min(size_dist(rng), input.size() - at);
      chunks.push_back(input.substr(at, n));
      at += n;
    }
    INFO("round " << round << " with " << chunks.size() << " chunks");
    require_same(feed(chunks), want);
  }
}

std::string binary_payload() {
  // Every byte value, plus the sequences that matter to a line-based reader.
  std::string s;
  for (int b = 0; b < 256; ++b) {
    s.push_back(static_cast<char>(b));
  }
  s += "\r\n*1\r\n$3\r\n\r\n\n\r";
  return s;
}

Command many_args(size_t n) {
  Command c;
  for (size_t i = 0; i < n; ++i) {
    c.push_back("v" + std::to_string(i));
  }
  return c;
}

// A request corpus paired with the commands it must produce, covering both request forms.
struct Case {
  std::string input;
  std::vector<Command> want;
};

std::vector<Case> corpus() {
  std::vector<Case> cases;
  cases.push_back({multibulk({"SET", "key", "value"}), {{"SET", "key", "value"}}});
  cases.push_back({multibulk({"", "x", ""}), {{"", "x", ""}}});
  cases.push_back(
      {multibulk({"SET", binary_payload(), "\r\n"}), {{"SET", binary_payload(), "\r\n"}}});
  cases.push_back({multibulk(many_args(1100)), {many_args(1100)}});
  cases.push_back({"SET \"a b\" 'c d'\r\n", {{"SET", "a b", "c d"}}});
  cases.push_back({"  GET\tkey  \n", {{"GET", "key"}}});
  cases.push_back({"ECHO \"\\x41\\x4a\\x4z\\n\\r\\t\\b\\a\\\\\\\"\\q\" 'it\\'s \\n' mid\"dle\"\r\n",
                   {{"ECHO", "AJx4z\n\r\t\b\a\\\"q", "it's \\n", "middle"}}});
  cases.push_back({"ECHO \"\" '' x\r\n", {{"ECHO", "", "", "x"}}});
  cases.push_back({"\r\n\n   \t \r\n*0\r\n*-1\r\n*-7\r\nPING\r\n", {{"PING"}}});
  cases.push_back({"\x0bPING\x0c  \r\n", {{"PING\x0c"}}});
  cases.push_back({multibulk({"MGET", "a"}) + "PING\r\n" + multibulk({"GET", "b"}) +
                       multibulk({"DEL", "c", "d"}),
                   {{"MGET", "a"}, {"PING"}, {"GET", "b"}, {"DEL", "c", "d"}}});
  return cases;
}

std::string corpus_concatenated() {
  std::string all;
  for (const Case& c : corpus()) {
    all += c.input;
  }
  return all;
}

}  // namespace

TEST_CASE("Every corpus request parses in one piece to the expected arguments", "[resp]") {
  for (const Case& c : corpus()) {
    INFO("input: " << c.input.substr(0, 80));
    const Outcome got = feed_whole(c.input);
    REQUIRE(got.error.empty());
    REQUIRE(got.leftover == 0);
    REQUIRE(got.commands == c.want);
  }
}

TEST_CASE("A request split at any byte boundary gives the same commands", "[resp]") {
  for (const Case& c : corpus()) {
    INFO("input: " << c.input.substr(0, 80));
    check_every_split(c.input);
  }
  SECTION("including a pipeline with a partial command at the end") {
    std::string pipeline;
    for (const Case& c : corpus()) {
      if (c.input.size() < 1000) {
        pipeline += c.input;
      }
    }
    pipeline += "*2\r\n$3\r\nGET\r\n$5\r\nab";
    const Outcome whole = feed_whole(pipeline);
    REQUIRE(whole.leftover == std::strlen("*2\r\n$3\r\nGET\r\n$5\r\nab"));
    check_every_split(pipeline);
  }
}

TEST_CASE("A pipeline split into many random chunks gives the same commands", "[resp]") {
  const std::string all = corpus_concatenated();
  std::vector<Command> want;
  for (const Case& c : corpus()) {
    want.insert(want.end(), c.want.begin(), c.want.end());
  }
  REQUIRE(feed_whole(all).commands == want);
  SECTION("small chunks") { check_random_splits(all, 8, 20, 1); }
  SECTION("medium chunks") { check_random_splits(all, 300, 100, 2); }
  SECTION("one byte at a time") { check_random_splits(all, 1, 1, 3); }
}

TEST_CASE("Each malformed request gets Redis's protocol error text", "[resp]") {
  struct Bad {
    std::string input;
    std::string error;
  };
  const std::string kMbulk = "Protocol error: invalid multibulk length";
  const std::string kBulk = "Protocol error: invalid bulk length";
  const std::string kQuotes = "Protocol error: unbalanced quotes in request";
  const std::vector<Bad> bad = {
      {"*abc\r\n", kMbulk},
      {"*\r\n", kMbulk},
      {"*01\r\n", kMbulk},
      {"*+1\r\n", kMbulk},
      {"* 1\r\n", kMbulk},
      {"*1 \r\n", kMbulk},
      {"*1073741825\r\n", kMbulk},
      {"*99999999999999999999\r\n", kMbulk},
      {"*1\r\n$-1\r\n", kBulk},
      {"*1\r\n$-0\r\n", kBulk},
      {"*1\r\n$abc\r\n", kBulk},
      {"*1\r\n$\r\n", kBulk},
      {"*1\r\n$03\r\nabc\r\n", kBulk},
      {"*1\r\n$536870913\r\n", kBulk},
      {"*1\r\n$9223372036854775808\r\n", kBulk},
      {"*2\r\n$1\r\na\r\nX1\r\n", "Protocol error: expected '$', got 'X'"},
      {"*1\r\n:1\r\n", "Protocol error: expected '$', got ':'"},
      {"*1\r\n\r\n", "Protocol error: expected '$', got ' '"},
      {"*1\r\n\n\r\n", "Protocol error: expected '$', got ' '"},
      {"SET \"abc\r\n", kQuotes},
      {"GET 'abc\n", kQuotes},
      {"GET \"a\"b\r\n", kQuotes},
      {"GET 'a'b\n", kQuotes},
      {"GET \"abc\\\"\n", kQuotes},
      {"GET \"a\\\n", kQuotes},
  };
  for (const Bad& b : bad) {
    INFO("input: " << b.input);
    const Outcome whole = feed_whole(b.input);
    REQUIRE(whole.commands.empty());
    REQUIRE(whole.error == b.error);
    check_every_split(b.input);
  }
}

TEST_CASE("Commands before a protocol error are still returned", "[resp]") {
  const std::string input = multibulk({"PING"}) + "GET 'x\r\n" + multibulk({"PING"});
  const Outcome got = feed_whole(input);
  REQUIRE(got.commands == std::vector<Command>{{"PING"}});
  REQUIRE(got.error == "Protocol error: unbalanced quotes in request");
  check_every_split(input);
}

TEST_CASE("Over-long length lines and inline requests are refused", "[resp]") {
  const std::string digits(64 * 1024 + 1, '1');
  SECTION("a multibulk count line with no CR past 64 KB") {
    const Outcome got = feed_whole("*" + digits);
    REQUIRE(got.error == "Protocol error: too big mbulk count string");
    check_random_splits("*" + digits, 4096, 5, 4);
  }
  SECTION("a multibulk count line of exactly 64 KB waits for more, one byte more is refused") {
    std::string input = "*" + digits.substr(2);
    REQUIRE(input.size() == 64 * 1024);
    RequestParser parser;
    size_t consumed = 0;
    std::vector<std::string_view> args;
    REQUIRE(parser.parse(input, consumed, args) == ParseStatus::kNeedMore);
    REQUIRE(consumed == 0);
    input += "1";
    REQUIRE(parser.parse(input, consumed, args) == ParseStatus::kError);
    REQUIRE(parser.error() == "Protocol error: too big mbulk count string");
  }
  SECTION("a bulk length line with no CR past 64 KB") {
    const Outcome got = feed_whole("*1\r\n$" + digits);
    REQUIRE(got.error == "Protocol error: too big bulk count string");
    check_random_splits("*1\r\n$" + digits, 4096, 5, 5);
  }
  SECTION("an inline request with no newline past 64 KB") {
    const std::string line(64 * 1024 + 1, 'a');
    const Outcome got = feed_whole(line);
    REQUIRE(got.error == "Protocol error: too big inline request");
    check_random_splits(line, 4096, 5, 6);
  }
  SECTION("an inline request of exactly 64 KB before its newline is accepted") {
    const std::string arg(64 * 1024, 'a');
    const Outcome got = feed({arg, "\n"});
    REQUIRE(got.error.empty());
    REQUIRE(got.commands == std::vector<Command>{{arg}});
    REQUIRE(feed_whole(arg + "\n").commands == got.commands);
  }
  SECTION("the inline limit is configurable") {
    ParserLimits limits;
    limits.max_inline_len = 8;
    REQUIRE(feed_whole("ECHO abc\n", limits).commands == std::vector<Command>{{"ECHO", "abc"}});
    REQUIRE(feed_whole("ECHO abcd\n", limits).error == "Protocol error: too big inline request");
    check_every_split("ECHO abcd\n", limits);
  }
}

TEST_CASE("Bulk and multibulk limits are inclusive", "[resp]") {
  ParserLimits limits;
  limits.max_bulk_len = 10;
  limits.max_multibulk_len = 3;
  SECTION("a bulk of exactly max_bulk_len is accepted") {
    const Outcome got = feed_whole(multibulk({"0123456789"}), limits);
    REQUIRE(got.commands == std::vector<Command>{{"0123456789"}});
  }
  SECTION("one byte more is an invalid bulk length") {
    const Outcome got = feed_whole(multibulk({"0123456789x"}), limits);
    REQUIRE(got.error == "Protocol error: invalid bulk length");
    REQUIRE(got.commands.empty());
  }
  SECTION("a count of exactly max_multibulk_len is accepted") {
    REQUIRE(feed_whole(multibulk({"a", "b", "c"}), limits).commands.size() == 1);
  }
  SECTION("one more is an invalid multibulk length") {
    REQUIRE(feed_whole(multibulk({"a", "b", "c", "d"}), limits).error ==
            "Protocol error: invalid multibulk length");
  }
  SECTION("the default limits match Redis") {
    REQUIRE(feed_whole("*1\r\n$536870912\r\n").leftover == std::strlen("*1\r\n$536870912\r\n"));
    REQUIRE(feed_whole("*1\r\n$536870913\r\n").error == "Protocol error: invalid bulk length");
    REQUIRE(feed_whole("*1073741824\r\n").leftover == std::strlen("*1073741824\r\n"));
  }
  SECTION("set_limits applies to a request already under way") {
    RequestParser parser(limits);
    size_t consumed = 0;
    std::vector<std::string_view> args;
    REQUIRE(parser.parse("*2\r\n$3\r\nabc\r\n", consumed, args) == ParseStatus::kNeedMore);
    ParserLimits tighter = limits;
    tighter.max_bulk_len = 2;
    parser.set_limits(tighter);
    REQUIRE(parser.parse("*2\r\n$3\r\nabc\r\n$3\r\n", consumed, args) == ParseStatus::kError);
    REQUIRE(parser.error() == "Protocol error: invalid bulk length");
  }
}

TEST_CASE("Claimed lengths are never turned into allocations", "[resp]") {
  RequestParser parser;
  std::vector<std::string_view> args;
  size_t consumed = 0;
  // Warm up so that steady-state buffers exist before probing.
  REQUIRE(parser.parse(multibulk({"PING"}), consumed, args) == ParseStatus::kComplete);

  SECTION("a 1 MB bulk with 10 bytes sent") {
    std::string buffer = "*1\r\n$1048576\r\n0123456789";
    ParseStatus st = ParseStatus::kError;
    size_t largest = 0;
    {
      AllocationProbe probe;
      st = parser.parse(buffer, consumed, args);
      largest = probe.largest();
    }
    REQUIRE(st == ParseStatus::kNeedMore);
    REQUIRE(consumed == 0);
    if (AllocationProbe::kSupported) {
      REQUIRE(largest < 4096);
    }
    REQUIRE(args.capacity() < 1024);
    buffer += std::string(1048576 - 10, 'z') + "\r\n";
    REQUIRE(parser.parse(buffer, consumed, args) == ParseStatus::kComplete);
    REQUIRE(consumed == buffer.size());
    REQUIRE(args.size() == 1);
    REQUIRE(args[0].size() == 1048576);
    REQUIRE(args[0].substr(0, 10) == "0123456789");
  }
  SECTION("a count of 2^30 reserves no more than 1024 slots") {
    const std::string buffer = "*1073741824\r\n$3\r\nfoo\r\n$1000000\r\n";
    ParseStatus st = ParseStatus::kError;
    size_t largest = 0;
    {
      AllocationProbe probe;
      st = parser.parse(buffer, consumed, args);
      largest = probe.largest();
    }
    REQUIRE(st == ParseStatus::kNeedMore);
    if (AllocationProbe::kSupported) {
      // One slot per argument is two size_t (offset and length).
      REQUIRE(largest <= 1024 * 2 * sizeof(size_t));
    }
  }
}

TEST_CASE("Empty commands are consumed and skipped", "[resp]") {
  RequestParser parser;
  std::vector<std::string_view> args;
  size_t consumed = 0;
  SECTION("*0 and negative counts alone") {
    const std::string input = "*0\r\n*-1\r\n*-5\r\n";
    REQUIRE(parser.parse(input, consumed, args) == ParseStatus::kNeedMore);
    REQUIRE(consumed == input.size());
    REQUIRE(args.empty());
  }
  SECTION("blank lines before a command count in its consumed bytes") {
    const std::string input = "\r\n\n*0\r\n" + multibulk({"PING"}) + "\r\n";
    REQUIRE(parser.parse(input, consumed, args) == ParseStatus::kComplete);
    REQUIRE(consumed == input.size() - 2);
    REQUIRE(args == std::vector<std::string_view>{"PING"});
  }
  SECTION("progress on a partial command is kept relative to the bytes that remain") {
    const std::string partial = "\r\n*1\r\n$3\r\nfo";
    REQUIRE(parser.parse(partial, consumed, args) == ParseStatus::kNeedMore);
    REQUIRE(consumed == 2);
    std::string rest = partial.substr(consumed);
    REQUIRE(parser.parse(rest, consumed, args) == ParseStatus::kNeedMore);
    REQUIRE(consumed == 0);
    rest += "o\r\n";
    REQUIRE(parser.parse(rest, consumed, args) == ParseStatus::kComplete);
    REQUIRE(consumed == rest.size());
    REQUIRE(args == std::vector<std::string_view>{"foo"});
  }
}

TEST_CASE("Line endings are found the way Redis finds them", "[resp]") {
  SECTION("the two bytes after a bulk are skipped unchecked") {
    const std::string input = "*1\r\n$3\r\nfooXY" + multibulk({"a"});
    REQUIRE(feed_whole(input).commands == std::vector<Command>{{"foo"}, {"a"}});
    check_every_split(input);
  }
  SECTION("a length line ends at CR and the next byte is skipped unchecked") {
    const std::string input = "*1\rX$3\r?foo\r\n";
    REQUIRE(feed_whole(input).commands == std::vector<Command>{{"foo"}});
    check_every_split(input);
  }
  SECTION("an inline line may end in a bare LF and keeps a lone inner CR as a separator") {
    REQUIRE(feed_whole("GET a\rb\n").commands == std::vector<Command>{{"GET", "a", "b"}});
  }
  SECTION("an embedded NUL ends an inline line's arguments, as in sdssplitargs") {
    const std::string input("GET a\0b c\r\n", 11);
    REQUIRE(feed_whole(input).commands == std::vector<Command>{{"GET", "a"}});
  }
  SECTION("a request whose first byte is not '*' is inline even if it looks like RESP") {
    REQUIRE(feed_whole("$3\r\nfoo\r\n").commands == std::vector<Command>{{"$3"}, {"foo"}});
  }
}

TEST_CASE("Multibulk arguments are views into the caller's buffer", "[resp]") {
  RequestParser parser;
  std::vector<std::string_view> args;
  size_t consumed = 0;
  const std::string input = multibulk({"SET", "k", "v"});
  REQUIRE(parser.parse(input, consumed, args) == ParseStatus::kComplete);
  REQUIRE(args.size() == 3);
  for (std::string_view a : args) {
    REQUIRE(a.data() >= input.data());
    REQUIRE(a.data() + a.size() <= input.data() + input.size());
  }
}

TEST_CASE("Inline arguments stay valid after the caller drops the bytes", "[resp]") {
  RequestParser parser;
  std::vector<std::string_view> args;
  size_t consumed = 0;
  auto input = std::make_unique<std::string>("SET \"a\\x42\" plain\r\n");
  REQUIRE(parser.parse(*input, consumed, args) == ParseStatus::kComplete);
  input.reset();
  REQUIRE(args == std::vector<std::string_view>{"SET", "aB", "plain"});
}

TEST_CASE("A protocol error sticks until reset", "[resp]") {
  RequestParser parser;
  std::vector<std::string_view> args;
  size_t consumed = 0;
  REQUIRE(parser.parse("*x\r\n", consumed, args) == ParseStatus::kError);
  REQUIRE(parser.error() == "Protocol error: invalid multibulk length");
  const std::string ping = multibulk({"PING"});
  REQUIRE(parser.parse(ping, consumed, args) == ParseStatus::kError);
  REQUIRE(consumed == 0);
  parser.reset();
  REQUIRE(parser.error().empty());
  REQUIRE(parser.parse(ping, consumed, args) == ParseStatus::kComplete);
  REQUIRE(args == std::vector<std::string_view>{"PING"});
}

TEST_CASE("reset drops a half-parsed command", "[resp]") {
  RequestParser parser;
  std::vector<std::string_view> args;
  size_t consumed = 0;
  REQUIRE(parser.parse("*2\r\n$3\r\nGET\r\n", consumed, args) == ParseStatus::kNeedMore);
  parser.reset();
  REQUIRE(parser.parse("PING\r\n", consumed, args) == ParseStatus::kComplete);
  REQUIRE(args == std::vector<std::string_view>{"PING"});
}

TEST_CASE("A request of 200000 arguments arriving in small reads parses once", "[resp]") {
  const Command want = many_args(200000);
  const std::string input = multibulk(want);
  RequestParser parser;
  std::vector<std::string_view> args;
  size_t consumed = 0;
  std::string buffer;
  size_t calls = 0;
  ParseStatus st = ParseStatus::kNeedMore;
  for (size_t at = 0; at < input.size(); at += 1460) {
    buffer.append(input, at, 1460);
    st = parser.parse(buffer, consumed, args);
    ++calls;
    if (st != ParseStatus::kNeedMore) {
      break;
    }
  }
  REQUIRE(st == ParseStatus::kComplete);
  REQUIRE(calls == (input.size() + 1459) / 1460);
  REQUIRE(consumed == input.size());
  REQUIRE(Command(args.begin(), args.end()) == want);
}

TEST_CASE("Random protocol-like noise parses the same however it is split", "[resp]") {
  // Inputs built from the bytes the parser reacts to, so that most of them hit some odd path:
  // bad lengths, stray CRs, quotes in odd places, commands cut short.
  const std::string nul(1, '\0');
  const std::vector<std::string> pieces = {
      "*",    "$",      "0",      "1",      "2",      "3",      "-", "\r",  "\n",
      "\r\n", "*1\r\n", "*2\r\n", "$1\r\n", "$0\r\n", "$3\r\n", "a", "ab",  " ",
      "\t",   "\"",     "'",      "\\",     "\\x4",   "\\x41",  nul, "PING"};
  std::mt19937 rng(11);
  std::uniform_int_distribution<size_t> pick(0, pieces.size() - 1);
  std::uniform_int_distribution<int> count(1, 16);
  for (int round = 0; round < 400; ++round) {
    std::string input;
    for (int n = count(rng); n > 0; --n) {
      input += pieces[pick(rng)];
    }
    INFO("input: " << input);
    check_every_split(input);
  }
}
