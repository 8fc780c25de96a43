// Framing of a full sync's RDB image (see sync_payload.hpp).
#include "hotkv/net/sync_payload.hpp"

#include <algorithm>

#include "hotkv/util/numbers.hpp"

namespace hotkv {

size_t SyncPayloadReader::feed(std::string_view in) {
  size_t used = 0;
  while (used < in.size() && (state_ == State::kHeader || state_ == State::kBody)) {
    std::string_view rest = in.substr(used);
    used += state_ == State::kHeader ? feed_header(rest) : feed_body(rest);
  }
  return used;
}

void SyncPayloadReader::fail(std::string why) {
  state_ = State::kFailed;
  error_ = std::move(why);
}

size_t SyncPayloadReader::feed_header(std::string_view in) {
  size_t nl = in.find('\n');
  if (nl == std::string_view::npos) {
    line_.append(in);
    if (line_.size() > kMaxHeaderLine) {
      fail("no payload header from the master in " + std::to_string(line_.size()) +
           " bytes (is this host:port a Redis master?)");
    }
    return in.size();
  }
  line_.append(in.substr(0, nl));
  std::string line;
  line.swap(line_);
  if (!line.empty() && line.back() == '\r') {
    line.pop_back();
  }
  if (line.empty()) {
    ++keepalives_;  // the master is still preparing the image
    return nl + 1;
  }
  if (line[0] == '-') {
    fail("the master gave up the sync: " + line.substr(1));
    return nl + 1;
  }
  if (line[0] != '$') {
    fail("the master sent '" + line.substr(0, 64) +
         "' where the payload header was expected (is this host:port a Redis master?)");
    return nl + 1;
  }
  constexpr std::string_view kEof = "$EOF:";
  if (line.size() >= kEof.size() + kMarkLen && line.compare(0, kEof.size(), kEof) == 0) {
    mark_ = line.substr(kEof.size(), kMarkLen);
    state_ = State::kBody;
    return nl + 1;
  }
  auto len = parse_int64(std::string_view(line).substr(1));
  if (!len || *len < 0) {
    fail("the master announced an invalid payload length '" + line.substr(1, 64) + "'");
    return nl + 1;
  }
  expected_ = static_cast<uint64_t>(*len);
  body_.reserve(static_cast<size_t>(std::min<uint64_t>(expected_, 64 * 1024 * 1024)));
  state_ = expected_ == 0 ? State::kDone : State::kBody;
  return nl + 1;
}

size_t SyncPayloadReader::feed_body(std::string_view in) {
  if (mark_.empty()) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(in.size(), expected_ - body_.size()));
    body_.append(in.substr(0, n));
    if (body_.size() == expected_) {
      state_ = State::kDone;
    }
    return n;
  }
  // The mark may straddle reads: search from where a mark ending in the new bytes could
  // start. Nothing the master sends after it belongs to the payload (a diskless master waits
  // for the replica's first ACK before it streams commands), but should bytes follow in the
  // same read they are left to the caller rather than swallowed.
  size_t from = body_.size() >= kMarkLen - 1 ? body_.size() - (kMarkLen - 1) : 0;
  body_.append(in);
  size_t at = body_.find(mark_, from);
  if (at == std::string::npos) {
    return in.size();
  }
  size_t beyond = body_.size() - (at + kMarkLen);  // bytes of `in` after the mark
  body_.resize(at);
  state_ = State::kDone;
  return in.size() - beyond;
}

}  // namespace hotkv
