// What client-side caching sends a connection, before it is put in the connection's protocol:
// the connection encodes it on its own thread, with the protocol and subscriptions it has at
// that moment (HELLO may have switched it since the key changed).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hotkv {

// ClientInfo::tracking bits, set by CLIENT TRACKING (Redis's CLIENT_TRACKING_* flags).
enum TrackingFlag : uint32_t {
  kTrackingOn = 1u << 0,
  kTrackingBcast = 1u << 1,
  kTrackingOptin = 1u << 2,
  kTrackingOptout = 1u << 3,
  kTrackingNoloop = 1u << 4,
  kTrackingBrokenRedirect = 1u << 5,  // the REDIRECT target has gone away
};

struct TrackingMessage {
  enum class Kind {
    kInvalidate,   // these keys changed
    kFlush,        // every key may have changed (FLUSHALL/FLUSHDB): a null key list
    kRedirBroken,  // the REDIRECT target `redirect` is gone (RESP3 clients only)
  };
  Kind kind = Kind::kInvalidate;
  std::vector<std::string> keys;
  uint64_t redirect = 0;
  // Sent to a REDIRECT target rather than the tracking client: a RESP2 target gets it as a
  // pub/sub message on __redis__:invalidate, if it is subscribed.
  bool redirected = false;
  // The client whose command caused it (0: none, e.g. active expiry). That client's own
  // connection puts it after the reply of the command being executed, as Redis does.
  uint64_t cause = 0;
};

}  // namespace hotkv
