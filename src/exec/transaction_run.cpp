// EXEC (see executor.hpp): the queued commands run back to back with nothing else
// interleaved, where the transaction's plan says: on this thread when their keys are all
// here, on the one shard that owns them all (a single hop), as one part per shard when each
// command keeps to one shard (a split run, no thread parked), or with every involved shard
// parked (run_atomic). Their effects form one log record per shard, closed together, so a
// crash keeps all of the transaction or none.
#include <string>
#include <vector>

#include "hotkv/commands/acl_session.hpp"
#include "hotkv/commands/blocking.hpp"
#include "hotkv/commands/command_call.hpp"
#include "hotkv/commands/errors_scripting.hpp"
#include "hotkv/commands/errors_server.hpp"
#include "hotkv/commands/script_store.hpp"
#include "hotkv/commands/transactions.hpp"
#include "hotkv/exec/executor.hpp"
#include "hotkv/shard/durability_barrier.hpp"

namespace hotkv {

asio::awaitable<std::string> Executor::exec_transaction(const TrackingCaller& caller) {
  MultiState txn = std::move(session_.multi);
  session_.running_exec = true;
  struct ExecDone {
    ClientSession& s;
    ~ExecDone() { s.running_exec = false; }
  } exec_done{session_};
  std::shared_ptr<WatchFlag> watch = std::move(session_.watch);
  clear_transaction(session_);
  int proto = session_.resp;
  std::string out;
  if (txn.aborted) {
    ReplyWriter(out, proto).error(kExecAbort);
    count_error_reply(engine_, kExecAbort);
    co_return out;
  }

  // Which shards the queued commands touch, and whether one needs this client's session.
  TransactionPlan plan;
  plan_transaction(txn.queue, engine_, home_, watch != nullptr, plan);
  std::vector<std::string_view> views;

  // ACL rules are checked again at EXEC, here on the client's thread, as Redis does: a
  // command the user may no longer run gets -NOPERM in its place and the others still run.
  std::vector<std::string> refusals(txn.queue.size());
  for (size_t i = 0; i < txn.queue.size(); ++i) {
    views.assign(txn.queue[i].args.begin(), txn.queue[i].args.end());
    refusals[i] = acl_exec_refusal(session_, engine_, *txn.queue[i].spec, views);
  }

  Engine* engine = &engine_;
  ClientSession* session = &session_;
  uint32_t start_db = session_.db;
  auto run = [engine, session, proto, start_db, caller, &txn, &watch, &refusals](
                 size_t exec_shard, bool multi_shard) {
    ScopedTrackingCaller as(caller);
    std::string replies;
    // A SELECT queued in the transaction moves the commands after it to its database.
    uint32_t db = start_db;
    ReplyWriter w(replies, proto);
    // Checked where the commands run, with their shards idle: no write can slip in between.
    if (watch && watch->dirty.load(std::memory_order_acquire)) {
      w.null_array();
      return replies;
    }
    w.array(txn.queue.size());
    std::vector<size_t> logged;
    std::vector<std::string_view> argv;
    for (size_t qi = 0; qi < txn.queue.size(); ++qi) {
      const QueuedCommand& q = txn.queue[qi];
      if (!refusals[qi].empty()) {
        w.error(refusals[qi]);
        count_error_reply(*engine, refusals[qi]);
        continue;
      }
      argv.assign(q.args.begin(), q.args.end());
      ClientSession* s = (q.spec->flags & kConnection) != 0 ? session : nullptr;
      execute_command(*q.spec, argv, *engine, engine->shard(exec_shard), multi_shard, s, db, w,
                      nullptr, false, &logged);
      if (take_rerun_request()) {
        // Cannot happen (a transaction with a script holds every shard); should it, the
        // transaction still answers once per command.
        w.error(err::kScriptRerunFailed);
      }
      if (s != nullptr) {
        db = s->db;  // runs on the client's own thread (needs_home)
      }
    }
    close_records(*engine, logged);
    // The replies leave only once the whole transaction is written (and synced with always).
    DurabilityBarrier::pass(*engine, logged, exec_shard);
    return replies;
  };

  size_t home = home_;
  if (plan.splits) {
    // Each shard runs its commands as its part of one split run (split_run.hpp), no thread
    // parked.
    co_await exec_split(txn, refusals, plan.command_shard, caller);
    out = std::move(exec_replies_);
    exec_replies_.clear();
  } else if (plan.mode == RunMode::kLocal) {
    out = run(home, false);
  } else if (plan.mode == RunMode::kHop) {
    size_t target = plan.shard;
    Engine* engine = &engine_;
    auto task = [&run, target, engine] {
      std::string replies = run(target, false);
      // The clients it woke there are served before the reply goes back: a serving task
      // posted from this handler would wait in the thread's own queue until the handler
      // ends, and the client's next command, sent as soon as the reply arrives, could
      // overtake it.
      serve_blocked_now(*engine, engine->shard(target));
      return replies;
    };
    out = co_await engine_.call_on(home_, target, std::move(task));
  } else {
    // With the other transactions and cross-shard runs of this thread's connections in the
    // same loop turn: one rendezvous of the threads for all of them.
    std::string* result = &out;
    Engine* engine = &engine_;
    co_await run_atomic_batched(
        plan.shards, [&run, home, result] { *result = run(home, true); },
        [engine, result, proto] {
          result->clear();
          std::string abort = exec_abort_because(engine->scripts().busy_error());
          ReplyWriter(*result, proto).error(abort);
          count_error_reply(*engine, abort);
        });
  }
  // Clients the transaction woke on this thread's shard are served now, before the client's
  // next command, as Redis serves them when EXEC ends (a pipelined LPOP after EXEC must not
  // take what an RPUSH inside it gave a waiting BLPOP). A transaction run on one other shard
  // served its own above; one over several shards posted the serving of the parked shards
  // from this thread, ahead of anything this client sends them next.
  serve_blocked_now(engine_, engine_.shard(home_));
  co_return out;
}

asio::awaitable<void> Executor::exec_split(const MultiState& txn,
                                           const std::vector<std::string>& refusals,
                                           const std::vector<size_t>& command_shard,
                                           const TrackingCaller& caller) {
  std::vector<std::string_view> views;
  std::vector<bool> ran(txn.queue.size(), false);
  for (size_t i = 0; i < txn.queue.size(); ++i) {
    if (!refusals[i].empty()) {
      continue;
    }
    const QueuedCommand& q = txn.queue[i];
    views.assign(q.args.begin(), q.args.end());
    exec_split_.add_to(command_shard[i], *q.spec, views, session_.db, caller);
    ran[i] = true;
  }
  co_await run_split(exec_split_);
  ReplyWriter w(exec_replies_, session_.resp);
  w.array(txn.queue.size());
  size_t next = 0;
  for (size_t i = 0; i < txn.queue.size(); ++i) {
    if (!ran[i]) {
      w.error(refusals[i]);
      count_error_reply(engine_, refusals[i]);
      continue;
    }
    exec_split_.append_reply(next++, exec_replies_);
  }
  exec_split_.clear();
}

}  // namespace hotkv
