// RESP reply encoding. Every method appends its bytes directly to the output string, formatting
// numbers with std::to_chars into a small stack buffer, so a reply costs no temporary strings.
#include "hotkv/resp/writer.hpp"

#include <cassert>
#include <charconv>
#include <cmath>

namespace hotkv {

namespace {

constexpr std::string_view kCrlf = "\r\n";

// Room for a type byte, the longest 64-bit decimal (20 digits and a sign) and "\r\n".
constexpr size_t kHeaderBuf = 32;

// Longest "%.17g" text: a sign, 17 digits, a point and "e-308".
constexpr size_t kDoubleBuf = 32;

// Writes the Redis text for v into buf and returns its length. Mirrors Redis's d2string, which
// spells the special values itself because libcs disagree on them ("-nan", "NAN", "-0"...).
size_t write_double(char* buf, double v) {
  std::string_view special;
  if (std::isnan(v)) {
    special = "nan";
  } else if (std::isinf(v)) {
    special = v > 0 ? "inf" : "-inf";
  } else if (v == 0) {
    special = std::signbit(v) ? "-0" : "0";
  }
  if (!special.empty()) {
    special.copy(buf, special.size());
    return special.size();
  }
  // to_chars with a precision is specified to print exactly what printf("%.17g") prints.
  const auto res = std::to_chars(buf, buf + kDoubleBuf, v, std::chars_format::general, 17);
  return static_cast<size_t>(res.ptr - buf);
}

}  // namespace

ReplyWriter::ReplyWriter(std::string& out, int proto) : out_(out), proto_(proto == 3 ? 3 : 2) {}

int ReplyWriter::proto() const { return proto_; }

std::string& ReplyWriter::buffer() { return out_; }

template <typename Int>
void ReplyWriter::header(char type, Int n) {
  char buf[kHeaderBuf];
  buf[0] = type;
  char* end = std::to_chars(buf + 1, buf + kHeaderBuf - 2, n).ptr;
  end[0] = '\r';
  end[1] = '\n';
  out_.append(buf, static_cast<size_t>(end + 2 - buf));
}

void ReplyWriter::simple(std::string_view s) {
  out_.push_back('+');
  out_.append(s);
  out_.append(kCrlf);
}

void ReplyWriter::error(std::string_view s) {
  const size_t start = out_.size() + 1;
  out_.push_back('-');
  out_.append(s);
  for (size_t i = start; i < out_.size(); ++i) {
    if (out_[i] == '\r' || out_[i] == '\n') {
      out_[i] = ' ';
    }
  }
  out_.append(kCrlf);
}

void ReplyWriter::integer(int64_t v) { header(':', v); }

void ReplyWriter::bulk(std::string_view s) {
  header('$', s.size());
  out_.append(s);
  out_.append(kCrlf);
}

void ReplyWriter::bulk_int(int64_t v) {
  char digits[kHeaderBuf];
  const char* end = std::to_chars(digits, digits + kHeaderBuf, v).ptr;
  bulk(std::string_view(digits, static_cast<size_t>(end - digits)));
}

void ReplyWriter::null() {
  if (proto_ == 3) {
    out_.append("_\r\n");
  } else {
    out_.append("$-1\r\n");
  }
}

void ReplyWriter::null_array() {
  if (proto_ == 3) {
    out_.append("_\r\n");
  } else {
    out_.append("*-1\r\n");
  }
}

void ReplyWriter::array(size_t n) { header('*', n); }

void ReplyWriter::map(size_t n) {
  if (proto_ == 3) {
    header('%', n);
  } else {
    header('*', n * 2);
  }
}

void ReplyWriter::set(size_t n) { header(proto_ == 3 ? '~' : '*', n); }

void ReplyWriter::push(size_t n) { header(proto_ == 3 ? '>' : '*', n); }

void ReplyWriter::dbl(double v) {
  char text[kDoubleBuf];
  const size_t len = write_double(text, v);
  if (proto_ == 3) {
    out_.push_back(',');
    out_.append(text, len);
    out_.append(kCrlf);
  } else {
    bulk(std::string_view(text, len));
  }
}

void ReplyWriter::boolean(bool v) {
  if (proto_ == 3) {
    out_.append(v ? "#t\r\n" : "#f\r\n");
  } else {
    out_.append(v ? ":1\r\n" : ":0\r\n");
  }
}

void ReplyWriter::verbatim(std::string_view s, std::string_view fmt) {
  if (proto_ != 3) {
    bulk(s);
    return;
  }
  assert(fmt.size() == 3);
  // The length covers "fmt:" too; computed from fmt so the frame stays valid even if the
  // REQUIRES above is broken in a release build.
  header('=', fmt.size() + 1 + s.size());
  out_.append(fmt);
  out_.push_back(':');
  out_.append(s);
  out_.append(kCrlf);
}

void ReplyWriter::ok() { out_.append("+OK\r\n"); }

std::string format_double(double v) {
  char text[kDoubleBuf];
  const size_t len = write_double(text, v);
  return std::string(text, len);
}

}  // namespace hotkv
