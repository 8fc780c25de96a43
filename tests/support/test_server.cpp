// TestServer (see test_server.hpp). No Catch2 here: the command fuzzer links it too.
#include "support/test_server.hpp"

#include <stdexcept>
#include <algorithm>
#include <string_view>

#include "hotkv/commands/command_call.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/exec/command_checks.hpp"
#include "hotkv/scripting/lua_vm.hpp"

namespace hotkv::test {

TestServer::TestServer(size_t shards, int64_t start_ms) : now_ms_(start_ms) {
  std::vector<asio::io_context*> ptrs;
  for (size_t i = 0; i < shards; ++i) {
    contexts_.push_back(std::make_unique<asio::io_context>(1));
    ptrs.push_back(contexts_.back().get());
  }
  engine_ = make_engine(config_, command_table(), ptrs, lua_vm_factory());
  engine_->use_manual_clock(&now_ms_);
  session_.info = std::make_shared<ClientInfo>();
  session_.info->id = engine_->clients().next_id();
  session_.authenticated = true;
  // Pub/sub deliveries for this session are collected for pushes().
  auto sub = std::make_shared<PubSubClient>();
  sub->id = session_.info->id;
  sub->io = contexts_[0].get();
  sub->sink = this;
  session_.pubsub = std::move(sub);
}

std::vector<PubSubMessage> TestServer::pushes() {
  for (auto& io : contexts_) {
    io->restart();
    io->poll();
  }
  std::vector<PubSubMessage> out;
  out.swap(pushes_);
  return out;
}

std::string TestServer::run(const std::vector<std::string>& argv) { return run_as(session_, argv); }

ClientSession TestServer::new_session() {
  ClientSession session;
  session.info = std::make_shared<ClientInfo>();
  session.info->id = engine_->clients().next_id();
  session.authenticated = true;
  auto sub = std::make_shared<PubSubClient>();
  sub->id = session.info->id;
  sub->io = contexts_[0].get();
  sub->sink = this;
  session.pubsub = std::move(sub);
  return session;
}

std::string TestServer::run_as(ClientSession& session, const std::vector<std::string>& argv) {
  std::vector<std::string_view> views(argv.begin(), argv.end());
  std::string out;
  ReplyWriter w(out, session.resp);
  Plan plan;
  const CommandSpec* spec =
      check_command(engine_->table(), views, session, *engine_, 0, plan, w);
  if (spec == nullptr) {
    return out;
  }
  run_planned(views, session, plan, w);
  if (take_rerun_request()) {
    // A script undone for reaching beyond its shards runs again with every shard, as the
    // server's connections run it.
    plan.mode = RunMode::kAtomic;
    plan.shards = engine_->all_shards();
    run_planned(views, session, plan, w);
  }
  return out;
}

void TestServer::run_planned(std::span<const std::string_view> views, ClientSession& session,
                             const Plan& plan, ReplyWriter& w) {
  const CommandSpec& spec = *plan.spec;
  switch (plan.mode) {
    case RunMode::kLocal:
      execute_command(spec, views, *engine_, engine_->shard(0), false, &session, session.db, w);
      break;
    case RunMode::kHop:
      execute_command(spec, views, *engine_, engine_->shard(plan.shard), false, nullptr,
                      session.db, w);
      break;
    case RunMode::kAtomic: {
      // Every shard lives on this thread, so they are trivially "parked"; the ones the
      // plan names (and this "thread's" shard 0) are held, as run_atomic would hold them.
      std::vector<size_t> held = plan.shards;
      held.push_back(0);
      std::sort(held.begin(), held.end());
      held.erase(std::unique(held.begin(), held.end()), held.end());
      Engine::HeldShards scope(&held);
      execute_command(spec, views, *engine_, engine_->shard(0), true, &session, session.db, w);
      break;
    }
  }
}

std::string TestServer::run3(const std::vector<std::string>& argv) {
  int saved = session_.resp;
  session_.resp = 3;
  std::string out = run(argv);
  session_.resp = saved;
  return out;
}

void TestServer::advance(int64_t ms) { now_ms_ += ms; }

size_t TestServer::expire_cycle(size_t max) {
  size_t n = 0;
  for (size_t i = 0; i < engine_->shard_count(); ++i) {
    for (uint32_t db = 0; db < engine_->shard(i).db_count(); ++db) {
      n += engine_->shard(i).keyspace(db).expire_due(now_ms_, max);
    }
    // Inventory holds: the same hook the shard's expiry timer runs.
    n += engine_->shard(i).expire_holds(now_ms_, max).value_or(0);
  }
  return n;
}

namespace {

// "<type><n>\r\n". Built by appending: GCC 12 reports a false -Wrestrict on chains of
// string operator+ once they are inlined.
std::string header(char type, size_t n) {
  std::string out(1, type);
  out.append(std::to_string(n)).append("\r\n");
  return out;
}

}  // namespace

std::string key_on_another_shard(TestServer& s, const std::string& key) {
  for (int i = 0; i < 100; ++i) {
    std::string k = "k" + std::to_string(i);
    if (s.engine().shard_of(k) != s.engine().shard_of(key)) {
      return k;
    }
  }
  throw std::runtime_error("no key on another shard than " + key);
}

std::string bulk(const std::string& s) {
  std::string out = header('$', s.size());
  out.append(s).append("\r\n");
  return out;
}

std::string integer(int64_t v) {
  std::string out(1, ':');
  out.append(std::to_string(v)).append("\r\n");
  return out;
}

std::string arr(std::initializer_list<std::string> items) {
  std::string out = header('*', items.size());
  for (const auto& i : items) {
    out.append(i);
  }
  return out;
}

std::string ent(const std::string& id, std::initializer_list<std::string> fields) {
  std::string out = "*2\r\n";
  out.append(bulk(id)).append(header('*', fields.size()));
  for (const auto& f : fields) {
    out.append(bulk(f));
  }
  return out;
}

std::string error(const std::string& text) {
  std::string out(1, '-');
  out.append(text).append("\r\n");
  return out;
}

}  // namespace hotkv::test
