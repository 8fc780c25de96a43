// Client-side caching messages on a connection (see deliver_tracking in connection.hpp). The
// message is encoded here, on the connection's thread, so it follows the protocol the client
// has switched to since (HELLO), as Redis encodes at the moment it sends.
#include "hotkv/net/connection.hpp"
#include "hotkv/resp/writer.hpp"

namespace hotkv {

void Connection::deliver_tracking(const TrackingMessage& m) {
  if (closing_) {
    return;
  }
  using Kind = TrackingMessage::Kind;
  std::string frame;
  ReplyWriter w(frame, session_.resp);
  if (m.kind == Kind::kRedirBroken) {
    if (session_.resp < 3) {
      return;  // RESP2 has no way to say it
    }
    w.push(2);
    w.bulk("tracking-redir-broken");
    w.integer(static_cast<int64_t>(m.redirect));
  } else {
    if (session_.resp >= 3) {
      w.push(2);
      w.bulk("invalidate");
    } else if (m.redirected && session_.subscriptions() > 0) {
      // A RESP2 redirect target hears it as a message of __redis__:invalidate.
      w.array(3);
      w.bulk("message");
      w.bulk("__redis__:invalidate");
    } else {
      return;  // a RESP2 client tracking for itself cannot be told
    }
    if (m.kind == Kind::kFlush) {
      w.null();
    } else {
      w.array(m.keys.size());
      for (const std::string& k : m.keys) {
        w.bulk(k);
      }
    }
  }
  // Held while the input executes: this client's own invalidations (they follow its replies),
  // and any while its replies are suppressed (CLIENT REPLY OFF|SKIP), because the suppressed
  // reply is cut from out_ after the command, which would cut a message appended meanwhile.
  bool suppressed = session_.reply_mode != ReplyMode::kOn || session_.skip_this_reply;
  if (executing_ && (m.cause == id() || suppressed)) {
    held_ += frame;
    return;
  }
  (coro_sending_ ? deferred_ : out_) += frame;
  flush();
}

}  // namespace hotkv
