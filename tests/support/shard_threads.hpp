// An engine whose shards run on threads of their own, as the server runs them (TestServer
// keeps every shard on the caller's thread instead): for the tests of what crosses threads,
// call_on, run_atomic and a connection's executor.
#pragma once

#include <memory>
#include <thread>
#include <vector>

#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>

#include "hotkv/commands/table.hpp"
#include "hotkv/scripting/lua_vm.hpp"
#include "hotkv/shard/engine.hpp"
#include "hotkv/util/config.hpp"

namespace hotkv::test {

struct ShardThreads {
  explicit ShardThreads(size_t n) {
    std::vector<asio::io_context*> ptrs;
    for (size_t i = 0; i < n; ++i) {
      ios.push_back(std::make_unique<asio::io_context>(1));
      ptrs.push_back(ios.back().get());
    }
    engine = make_engine(config, command_table(), ptrs, lua_vm_factory());
    for (auto& io : ios) {
      guards.emplace_back(asio::make_work_guard(*io));
    }
    for (auto& io : ios) {
      threads.emplace_back([ctx = io.get()] { ctx->run(); });
    }
  }
  ~ShardThreads() {
    guards.clear();
    for (auto& io : ios) {
      io->stop();
    }
    for (auto& t : threads) {
      t.join();
    }
  }
  ShardThreads(const ShardThreads&) = delete;
  ShardThreads& operator=(const ShardThreads&) = delete;

  Config config;
  std::vector<std::unique_ptr<asio::io_context>> ios;
  std::unique_ptr<Engine> engine;
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> guards;
  std::vector<std::thread> threads;
};

}  // namespace hotkv::test
