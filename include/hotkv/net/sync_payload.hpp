// The RDB image a master sends a replica after +FULLRESYNC, in either of Redis's two framings:
// "$<len>\r\n" and exactly len bytes (the master sends a file it saved), or
// "$EOF:<40 random characters>\r\n", the bytes, then the same 40 characters (the master
// streams while it produces, so it cannot know the length). While the master prepares the
// image it sends bare "\n" keep-alives before the header. No sockets here: the link feeds
// whatever it read and learns how much belonged to the payload, so the bytes after it (the
// start of the command stream) stay with the caller.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace hotkv {

class SyncPayloadReader {
 public:
  enum class State { kHeader, kBody, kDone, kFailed };

  // Consumes bytes of `in` that belong to the payload (keep-alives, header, body, end mark)
  // and returns how many; the rest of `in` follows the payload. Any thread; not shared.
  size_t feed(std::string_view in);

  State state() const { return state_; }
  bool done() const { return state_ == State::kDone; }
  bool failed() const { return state_ == State::kFailed; }
  // Why the payload was refused (kFailed): a line that is not a header, or the master's error.
  const std::string& error() const { return error_; }
  // The $EOF: framing (the master streamed a diskless sync).
  bool diskless() const { return !mark_.empty(); }
  // The announced size (sized framing), or 0.
  uint64_t expected_size() const { return expected_; }
  // Bytes of the image received so far (the end mark excluded once found).
  uint64_t received() const { return body_.size(); }
  size_t keepalives() const { return keepalives_; }
  // The image, once done(); moved out by the caller.
  std::string& body() { return body_; }

  static constexpr size_t kMarkLen = 40;
  // A header line longer than this is no header (Redis reads it into a small buffer).
  static constexpr size_t kMaxHeaderLine = 1024;

 private:
  size_t feed_header(std::string_view in);
  size_t feed_body(std::string_view in);
  void fail(std::string why);

  State state_ = State::kHeader;
  std::string line_;  // a header line split across reads
  std::string mark_;
  uint64_t expected_ = 0;
  std::string body_;
  size_t keepalives_ = 0;
  std::string error_;
};

}  // namespace hotkv
