// A connection's input, command by command (connection.hpp, process_input): each complete
// request passes parse → checks → EXEC or the pipeline → run now → finish, and any stage may
// end its passage (queued, refused, answered) or the connection's.
#include "hotkv/net/connection.hpp"

#include "hotkv/commands/blocking.hpp"
#include "hotkv/commands/client_tracking.hpp"
#include "hotkv/commands/command_call.hpp"
#include "hotkv/commands/errors_server.hpp"
#include "hotkv/commands/inventory_soldout.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/commands/transactions.hpp"
#include "hotkv/exec/command_checks.hpp"
#include "hotkv/util/clock.hpp"

namespace hotkv {

asio::awaitable<bool> Connection::process_input() {
  Next next = Next::kNextCommand;
  while (next != Next::kWaitInput) {
    CommandPass pass;
    next = parse_command(pass);
    if (next == Next::kAwait) {
      co_await close_for_bad_input(pass);
      co_return false;
    }
    if (next == Next::kGoOn) {
      std::string rejected;  // the checks write their error aside: windowed replies go first
      pass.spec = check_here(rejected);
      if (pass.spec != nullptr &&
          engine_.config().maxmemory.load(std::memory_order_relaxed) != 0 &&
          !co_await memory_allows(*pass.spec)) {
        refuse_for_memory(*pass.spec, rejected);
        pass.spec = nullptr;
      }
      if (pass.spec == nullptr) {
        co_await refuse_command(std::move(rejected), pass);
        continue;
      }
      next = admit_command(pass);
    }
    if (next == Next::kAwait) {
      next = co_await wait_out_pause(pass);
    }
    if (next == Next::kGoOn && session_.multi.active && (pass.spec->flags & kExec) != 0) {
      next = co_await run_exec(pass);
    }
    if (next == Next::kGoOn) {
      next = route_here(pass);
      if (next == Next::kAwait) {
        next = co_await pipeline_command(pass);
        if (next == Next::kGoOn) {
          next = co_await run_command_now(pass);
        }
      } else if (next == Next::kGoOn) {
        next = run_local(pass);
        if (next == Next::kAwait) {
          next = co_await after_local_run(pass);
        }
      }
    }
    if (next == Next::kGoOn) {
      next = finish_command(pass);
      if (next == Next::kNextCommand && out_.size() >= kFlushThreshold) {
        const bool written = co_await write_output();
        next = written ? next : Next::kClose;
      }
    }
    if (next == Next::kClose) {
      co_return false;
    }
  }
  co_await flush_window();
  co_return !shutting_down_;
}

Connection::Next Connection::parse_command(CommandPass& pass) {
  args_.clear();
  const ParseStatus st = parser_.parse(in_.data(), pass.consumed, args_);
  if (st == ParseStatus::kNeedMore) {
    if (pass.consumed > 0) {
      // Only empty commands were skipped; more complete commands may follow.
      in_.consume(pass.consumed);
      return Next::kNextCommand;
    }
    pass.over_limit = static_cast<int64_t>(in_.size()) >
                      engine_.config().client_query_buffer_limit.load(std::memory_order_relaxed);
    return pass.over_limit ? Next::kAwait : Next::kWaitInput;
  }
  if (st == ParseStatus::kError) {
    return Next::kAwait;
  }
  if (args_.empty()) {
    in_.consume(pass.consumed);
    return Next::kNextCommand;
  }
  pass.suppress = session_.reply_mode == ReplyMode::kOff || session_.skip_this_reply;
  pass.was_skip = session_.skip_this_reply;
  return Next::kGoOn;
}

asio::awaitable<void> Connection::close_for_bad_input(const CommandPass& pass) {
  co_await flush_window();
  if (pass.over_limit) {
    protocol_log().warn("closing client {}: query buffer over client-query-buffer-limit",
                        session_.info->addr);
    co_return;
  }
  protocol_log().warn("protocol error from client {}: {}", session_.info->addr, parser_.error());
  ReplyWriter(out_, session_.resp).error("ERR " + parser_.error());
  count_error_reply(engine_, "ERR");
}

const CommandSpec* Connection::check_here(std::string& rejected) {
  ReplyWriter check_writer(rejected, session_.resp);
  return check_command(engine_.table(), args_, session_, engine_, shard_, plan_, check_writer);
}

void Connection::refuse_for_memory(const CommandSpec& spec, std::string& rejected) {
  // Refused like the checks (the error is counted with them); the command's rejected_calls
  // here.
  KeyspaceStats::bump(
      engine_.shard(shard_).command_stat(engine_.table().stat_slot(spec, args_)).rejected);
  ReplyWriter(rejected, session_.resp).error(err::kOom);
}

Connection::Next Connection::admit_command(CommandPass& pass) {
  const CommandSpec& spec = *pass.spec;
  // A container's subcommand is remembered by its statistics slot ("client|list").
  session_.info->last_command.store(
      static_cast<int64_t>(spec.subcommands.empty() ? spec.id
                                                    : engine_.table().stat_slot(spec, args_)),
      std::memory_order_relaxed);
  if (session_.multi.active && queue_in_multi(spec)) {
    in_.consume(pass.consumed);
    return Next::kNextCommand;
  }
  if (engine_.client_pause().until_ms.load(std::memory_order_relaxed) != 0 &&
      paused_for(spec)) {
    return Next::kAwait;
  }
  announce_command(pass);
  return Next::kGoOn;
}

asio::awaitable<Connection::Next> Connection::wait_out_pause(CommandPass& pass) {
  co_await flush_window();
  co_await wait_while_paused(*pass.spec);
  if (closing_) {
    co_return Next::kClose;
  }
  announce_command(pass);
  co_return Next::kGoOn;
}

void Connection::announce_command(CommandPass& pass) {
  const CommandSpec& spec = *pass.spec;
  // MONITOR shows a command as it starts, except connection commands (SELECT shows its new
  // database) and EXEC (after the commands it ran), as Redis orders them. Administrative
  // commands (CONFIG, CLIENT, ...) are never shown.
  const bool monitored = engine_.monitors().active() && (spec.flags & kAdmin) == 0;
  pass.monitor_after = monitored && (spec.flags & (kConnection | kExec)) != 0;
  if (monitored && !pass.monitor_after) {
    feed_monitors(args_, session_.db);
  }
  session_.replies_silenced = pass.suppress;
}

asio::awaitable<void> Connection::refuse_command(std::string rejected, const CommandPass& pass) {
  co_await flush_window();
  const CommandSpec* refused = engine_.table().find(args_[0]);
  if (session_.multi.active && refused != nullptr && (refused->flags & kExec) != 0) {
    // EXEC itself refused (a busy script): the transaction ends here, as on Redis, with the
    // reason in the EXECABORT.
    clear_transaction(session_);
    std::string reason = rejected.substr(1, rejected.size() - 3);  // '-' ... "\r\n"
    rejected.clear();
    ReplyWriter(rejected, session_.resp).error(exec_abort_because(reason));
  }
  // Counted even when CLIENT REPLY hides it, as Redis counts rejected calls.
  count_error_reply(engine_, rejected);
  if (!pass.suppress) {
    out_ += rejected;
  }
  // A command refused while queueing (unknown, arity, auth) dooms the transaction.
  session_.multi.aborted = session_.multi.active;
  session_.skip_this_reply = false;
  in_.consume(pass.consumed);
}

asio::awaitable<Connection::Next> Connection::run_exec(CommandPass& pass) {
  const CommandSpec& spec = *pass.spec;
  co_await flush_window();
  // MONITOR shows the queued commands, then EXEC.
  if (pass.monitor_after && !session_.multi.aborted) {
    std::vector<std::string_view> queued;
    for (const QueuedCommand& q : session_.multi.queue) {
      if ((q.spec->flags & kAdmin) == 0) {
        queued.assign(q.args.begin(), q.args.end());
        feed_monitors(queued, session_.db);
      }
    }
  }
  const size_t mark = out_.size();
  caller_ = take_tracking_caller(session_, spec);
  const int64_t start = mono_us();
  std::string result = co_await executor_.exec_transaction(caller_);
  // EXEC is a call of its own in commandstats, failed when it aborts (its error reply was
  // counted by code where it was written, so only the call's failure is added here).
  count_command(spec, args_, engine_, engine_.shard(shard_), mono_us() - start, {});
  if (!result.empty() && result[0] == '-') {
    KeyspaceStats::bump(
        engine_.shard(shard_).command_stat(engine_.table().stat_slot(spec, args_)).failed);
  }
  out_ += result;
  session_.tracking_caching = false;  // CLIENT CACHING lasted for the transaction
  if (pass.monitor_after) {
    feed_monitors(args_, session_.db);
  }
  in_.consume(pass.consumed);
  if (pass.suppress || pass.was_skip) {
    out_.resize(mark);
    session_.skip_this_reply = false;
  }
  send_pushes_while_silenced();
  co_return Next::kNextCommand;
}

Connection::Next Connection::route_here(CommandPass& pass) {
  const Plan& plan = plan_;
  caller_ = take_tracking_caller(session_, *pass.spec);
  if (plan.mode != RunMode::kLocal || plan.blocking || !executor_.idle()) {
    return Next::kAwait;
  }
  // Here, with nothing of this client pending elsewhere: what pipeline_command would decide
  // without a wait.
  if (plan.keyed && !pass.suppress) {
    note_route(shard_);
  }
  pass.mark = out_.size();
  return Next::kGoOn;
}

asio::awaitable<Connection::Next> Connection::pipeline_command(CommandPass& pass) {
  const CommandSpec& spec = *pass.spec;
  const Plan& plan = plan_;
  // A reserve its item's shard would refuse as SOLDOUT is refused here when the item's beacon
  // proves it (inventory_soldout.hpp); only with nothing of this client's pending elsewhere,
  // so that replies keep their order.
  const size_t answer_mark = out_.size();
  if (plan.mode == RunMode::kHop && executor_.idle() &&
      session_.db == 0) {  // beacons are for items of database 0
    ReplyWriter w(out_, session_.resp);
    pass.answered = answer_soldout_here(spec, args_, engine_, engine_.shard(shard_), w);
  }
  if (!pass.answered && !pass.suppress && !plan.blocking) {
    if (plan.keyed && plan.mode != RunMode::kAtomic) {
      note_route(plan.shard);
    }
    Executor::Take take = executor_.take(plan, args_, caller_);
    if (take == Executor::Take::kFlushFirst) {
      co_await flush_window();
      take = executor_.take(plan, args_, caller_);
    }
    if (take == Executor::Take::kTaken) {
      in_.consume(pass.consumed);
      if (executor_.full() || out_.size() >= kFlushThreshold) {
        co_await flush_window();
      }
      co_return Next::kNextCommand;
    }
  }
  // Everything else runs after the commands before it: the window goes first.
  if (!executor_.idle()) {
    co_await flush_window();
  }
  pass.mark = pass.answered ? answer_mark : out_.size();
  co_return Next::kGoOn;
}

asio::awaitable<Connection::Next> Connection::run_command_now(CommandPass& pass) {
  const CommandSpec& spec = *pass.spec;
  const Plan& plan = plan_;
  if (pass.answered) {
    note_route(shard_);  // served here: no reason to move to the item's thread
  } else if (plan.blocking) {
    // A job worker looping on BRPOP of one queue follows the queue like any other client
    // follows its keys: served where the list lives, each pop and each wake stays on one
    // thread instead of two hops and a cross-thread wake per entry.
    if (plan.mode != RunMode::kAtomic) {
      note_route(plan.shard);
    }
    // The replies of the commands before it in the pipeline leave first, as Redis sends them
    // before a client blocks: a client that pipelines LPUSH and BLPOP reads its LPUSH's
    // reply while its BLPOP waits. (Nothing to write, and no cost, for a worker whose BRPOP
    // comes alone.)
    if (!out_.empty()) {
      const bool written = co_await write_output();
      if (!written) {
        co_return Next::kClose;
      }
      pass.mark = out_.size();
    }
    const std::string reply = co_await run_blocking(spec);
    out_ += reply;
    if (closing_) {
      co_return Next::kClose;
    }
  } else if (plan.mode == RunMode::kLocal) {
    // co_await only as a whole statement's initializer here: GCC 12 miscompiles it inside
    // ?: or a co_return (SIGILL on resuming); see also `out_ += reply` above.
    const Next next = run_local(pass);
    if (next != Next::kAwait) {
      co_return next;
    }
    const Next after = co_await after_local_run(pass);
    co_return after;
  } else if (plan.mode == RunMode::kHop) {
    // A reply that is suppressed still runs where its keys live, alone.
    executor_.add_to_window(plan.shard, spec, args_, plan.db, caller_);
    co_await flush_window();
  } else {
    // A reply that is suppressed still runs with its shards parked, alone.
    executor_.add_to_atomic_run(spec, args_, plan.db, caller_, plan.shards);
    co_await flush_window();
  }
  co_return Next::kGoOn;
}

Connection::Next Connection::run_local(CommandPass& pass) {
  const CommandSpec& spec = *pass.spec;
  ReplyWriter w(out_, session_.resp);
  {
    ScopedTrackingCaller as(caller_);
    execute_command(spec, args_, engine_, engine_.shard(shard_), false, &session_, session_.db, w);
  }
  if (take_rerun_request()) {
    pass.rerun = true;
    return Next::kAwait;
  }
  serve_blocked_now(engine_, engine_.shard(shard_));  // before the pipeline's next command
  if (session_.monitoring && !monitor_registered_) {
    register_monitor();
  }
  return session_.pending_wait ? Next::kAwait : Next::kGoOn;
}

asio::awaitable<Connection::Next> Connection::after_local_run(CommandPass& pass) {
  if (pass.rerun) {
    // A script that reached beyond this shard was undone: again, with every shard.
    executor_.add_to_atomic_run(*pass.spec, args_, plan_.db, caller_, engine_.all_shards());
    co_await flush_window();
    serve_blocked_now(engine_, engine_.shard(shard_));
  }
  if (session_.pending_wait) {
    // WAIT: the replies before it leave now; its own comes with the acknowledgements.
    const bool written = co_await write_output();
    if (!written) {
      co_return Next::kClose;
    }
    pass.mark = out_.size();
    const std::string reply = co_await wait_for_replicas();
    out_ += reply;
  }
  co_return Next::kGoOn;
}

Connection::Next Connection::finish_command(CommandPass& pass) {
  if (pass.monitor_after) {
    feed_monitors(args_, session_.db);
  }
  in_.consume(pass.consumed);
  // CLIENT REPLY ON cancels a pending SKIP (it clears skip_this_reply) and is answered, as on
  // Redis; any other command after SKIP loses its reply.
  const bool skipped = pass.was_skip && session_.skip_this_reply;
  if (pass.was_skip) {
    session_.skip_this_reply = false;
  }
  if ((pass.suppress && session_.reply_mode != ReplyMode::kOn) || skipped) {
    out_.resize(pass.mark);
  }
  send_pushes_while_silenced();
  return session_.close_after_reply ? Next::kClose : Next::kNextCommand;
}

}  // namespace hotkv
