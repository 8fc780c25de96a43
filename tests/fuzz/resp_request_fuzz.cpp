// Fuzz target for the RESP request parser (multibulk and inline requests, resp/parser).
//
// Input: byte 0 picks the limits (Redis's defaults or tiny ones, so the limit checks run),
// byte 1 seeds how the stream is cut into reads; the rest is the byte stream a client sends.
// Checks, besides no crash and no sanitizer report:
//  - the stream parsed in one piece and fed in random pieces (through a buffer that moves on
//    every read, as a connection's may) gives the same commands and the same error;
//  - every parsed command, written back as a multibulk request and as an inline request with
//    every argument quoted, parses to the same arguments.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "hotkv/resp/parser.hpp"

namespace {

using hotkv::ParserLimits;
using hotkv::ParseStatus;
using hotkv::RequestParser;

using Command = std::vector<std::string>;

struct Outcome {
  std::vector<Command> commands;
  std::string error;  // empty: the stream ended without a protocol error
};

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "resp_request_fuzz: %s\n", what);
  std::abort();
}

ParserLimits limits_for(uint8_t mode) {
  ParserLimits l;
  if ((mode & 1) != 0) {
    l.max_bulk_len = mode >> 4;  // 0..15 bytes
  }
  if ((mode & 2) != 0) {
    l.max_multibulk_len = (mode >> 2) & 7;  // 0..7 arguments
  }
  if ((mode & 4) != 0) {
    l.max_inline_len = 1 + (mode >> 3);  // 1..32 bytes
  }
  return l;
}

// Drives one parser over `stream`, delivered in the pieces `cuts` gives (ascending ends).
Outcome parse_stream(std::string_view stream, const ParserLimits& limits,
                     const std::vector<size_t>& cuts) {
  Outcome out;
  RequestParser parser(limits);
  std::string buffer;
  std::vector<std::string_view> args;
  size_t delivered = 0;
  for (size_t cut : cuts) {
    // A fresh allocation per read: the parser must keep offsets, never pointers.
    std::string moved;
    moved.reserve(buffer.size() + (cut - delivered) + 1);
    moved.append(buffer).append(stream.substr(delivered, cut - delivered));
    buffer.swap(moved);
    delivered = cut;
    for (;;) {
      size_t consumed = 0;
      ParseStatus st = parser.parse(buffer, consumed, args);
      if (st == ParseStatus::kError) {
        if (consumed != 0 || parser.error().empty()) {
          fail("an error consumed bytes or has no text");
        }
        out.error = parser.error();
        return out;
      }
      if (consumed > buffer.size()) {
        fail("consumed more than the buffer holds");
      }
      if (st == ParseStatus::kComplete) {
        if (args.empty()) {
          fail("a complete command without arguments");
        }
        out.commands.emplace_back(args.begin(), args.end());
      }
      buffer.erase(0, consumed);
      if (st == ParseStatus::kNeedMore && (consumed == 0 || buffer.empty())) {
        break;
      }
    }
  }
  return out;
}

std::string multibulk(const Command& c) {
  std::string s = "*" + std::to_string(c.size()) + "\r\n";
  for (const auto& a : c) {
    s += "$" + std::to_string(a.size()) + "\r\n";
    s += a;
    s += "\r\n";
  }
  return s;
}

// Every argument in double quotes, with \xHH for anything but plain printable bytes.
std::string inline_line(const Command& c) {
  static const char kHex[] = "0123456789abcdef";
  std::string s;
  for (const auto& a : c) {
    s += s.empty() ? "\"" : " \"";
    for (unsigned char ch : a) {
      if (ch >= 0x20 && ch < 0x7f && ch != '"' && ch != '\\') {
        s.push_back(static_cast<char>(ch));
      } else {
        s += "\\x";
        s.push_back(kHex[ch >> 4]);
        s.push_back(kHex[ch & 15]);
      }
    }
    s += "\"";
  }
  return s + "\r\n";
}

void check_round_trip(const Command& c, const std::string& request) {
  RequestParser parser;
  std::vector<std::string_view> args;
  size_t consumed = 0;
  if (parser.parse(request, consumed, args) != ParseStatus::kComplete) {
    fail("a re-serialised command does not parse");
  }
  if (consumed != request.size() || args.size() != c.size()) {
    fail("a re-serialised command parses to another length");
  }
  for (size_t i = 0; i < c.size(); ++i) {
    if (args[i] != c[i]) {
      fail("a re-serialised command parses to other arguments");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) {
    return 0;
  }
  const ParserLimits limits = limits_for(data[0]);
  uint32_t seed = data[1] * 2654435761u + 1;
  const std::string_view stream(reinterpret_cast<const char*>(data) + 2, size - 2);

  const Outcome whole = parse_stream(stream, limits, {stream.size()});

  std::vector<size_t> cuts;
  size_t at = 0;
  while (at < stream.size()) {
    seed = seed * 1103515245u + 12345u;
    // Mostly short reads (byte by byte at times), now and then a long one.
    size_t step = (seed >> 16) % 8 == 0 ? 1 + (seed >> 8) % 64 : 1 + (seed >> 20) % 4;
    at = std::min(stream.size(), at + step);
    cuts.push_back(at);
  }
  if (!cuts.empty()) {
    const Outcome pieces = parse_stream(stream, limits, cuts);
    if (pieces.commands != whole.commands || pieces.error != whole.error) {
      fail("the stream in pieces parses differently from the stream in one piece");
    }
  }

  for (const Command& c : whole.commands) {
    check_round_trip(c, multibulk(c));
    // The inline form: a first argument that starts with '*' would be taken for multibulk
    // (it is quoted here, so it cannot), and inline requests cut at the inline limit.
    std::string line = inline_line(c);
    if (line.size() <= ParserLimits{}.max_inline_len) {
      check_round_trip(c, line);
    }
  }
  return 0;
}
