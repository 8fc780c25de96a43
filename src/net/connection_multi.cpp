// MULTI on a connection: each command is checked (name, arity, auth) when it arrives and
// queued; EXEC hands the queue to the connection's executor (exec/transaction_run.cpp).
#include "hotkv/commands/command_call.hpp"
#include "hotkv/commands/errors_server.hpp"
#include "hotkv/commands/transactions.hpp"
#include "hotkv/net/connection.hpp"

namespace hotkv {

bool Connection::queue_in_multi(const CommandSpec& spec) {
  if (runs_inside_multi(spec)) {
    return false;
  }
  if ((spec.flags & kNoMulti) != 0) {
    // As Redis: refused, and the transaction can no longer run.
    ReplyWriter(out_, session_.resp).error(err::kNotInMulti);
    count_error_reply(engine_, err::kNotInMulti);
    session_.multi.aborted = true;
    session_.skip_this_reply = false;
    return true;
  }
  session_.multi.queue.push_back(QueuedCommand{&spec, {args_.begin(), args_.end()}});
  session_.info->multi.store(static_cast<int32_t>(session_.multi.queue.size()),
                             std::memory_order_relaxed);
  bool suppress = session_.reply_mode == ReplyMode::kOff || session_.skip_this_reply;
  if (!suppress) {
    ReplyWriter(out_, session_.resp).simple("QUEUED");
  }
  session_.skip_this_reply = false;
  return true;
}

}  // namespace hotkv
