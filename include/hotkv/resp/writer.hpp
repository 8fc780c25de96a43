// ReplyWriter encodes replies in RESP2 or RESP3 straight into the connection's output string.
// Commands call the typed methods and never spell protocol bytes themselves, so the RESP2
// fallbacks for RESP3-only types (maps, sets, doubles, booleans...) live in one place and match
// what Redis sends to a client that has not said HELLO 3.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace hotkv {

// Appends RESP2 or RESP3 replies to a string. Used by the thread that owns `out`; the writer
// holds a reference to it, so `out` must outlive the writer.
class ReplyWriter {
 public:
  // REQUIRES: proto is 2 or 3 (anything other than 3 is treated as 2).
  ReplyWriter(std::string& out, int proto);

  int proto() const;
  std::string& buffer();

  // +s\r\n. REQUIRES: s holds no '\r' or '\n' (status texts are constants).
  void simple(std::string_view s);
  // -s\r\n, where s is the full text such as "ERR wrong number of arguments". Any '\r' or '\n'
  // in s becomes a space, as Redis does, so a reply can never be split in two.
  void error(std::string_view s);
  // :v\r\n
  void integer(int64_t v);
  // $len\r\ns\r\n
  void bulk(std::string_view s);
  // An integer sent as a bulk string, for replies typed as strings that hold a number (CONFIG
  // GET values, HRANDFIELD counts...).
  void bulk_int(int64_t v);
  // RESP2 $-1, RESP3 _
  void null();
  // RESP2 *-1, RESP3 _
  void null_array();
  // *n; the caller then writes n elements.
  void array(size_t n);
  // RESP3 %n, RESP2 *2n; the caller then writes n key/value pairs.
  void map(size_t n);
  // RESP3 ~n, RESP2 *n
  void set(size_t n);
  // RESP3 >n, RESP2 *n
  void push(size_t n);
  // RESP3 ,<text>; RESP2 a bulk of the same text. The text is format_double(v).
  void dbl(double v);
  // RESP3 #t / #f; RESP2 :1 / :0
  void boolean(bool v);
  // RESP3 =len\r\nfmt:s\r\n; RESP2 a plain bulk of s. REQUIRES: fmt is exactly 3 bytes.
  void verbatim(std::string_view s, std::string_view fmt = "txt");
  // +OK\r\n
  void ok();

 private:
  // Appends `type`, the decimal n and "\r\n". Int is int64_t or size_t.
  template <typename Int>
  void header(char type, Int n);

  std::string& out_;
  int proto_;
};

// The text Redis 7 sends for a double: "%.17g" (so 10 is "10" and 0.1 is
// "0.10000000000000001"), with "inf", "-inf", "nan" and "-0" spelled out the same on every libc.
std::string format_double(double v);

}  // namespace hotkv
