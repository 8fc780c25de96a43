// TestServer runs commands through the real command table, dispatcher and shards without a
// socket, with a manual clock, so command tests are fast and never sleep. With more than one
// shard, commands whose keys span shards run through the same single-threaded path the
// coordinator uses (all shards are local here).
#pragma once

#include <initializer_list>
#include <memory>
#include <span>
#include <string_view>
#include <string>
#include <vector>

#include <asio/io_context.hpp>

#include "hotkv/commands/client_session.hpp"
#include "hotkv/commands/command_call.hpp"
#include "hotkv/exec/plan.hpp"
#include "hotkv/resp/writer.hpp"
#include "hotkv/shard/engine.hpp"
#include "hotkv/shard/pubsub.hpp"
#include "hotkv/util/config.hpp"

namespace hotkv::test {

class TestServer : private PubSubSink {
 public:
  explicit TestServer(size_t shards = 1, int64_t start_ms = 1'700'000'000'000);

  // Runs one command and returns the raw RESP reply bytes.
  std::string run(const std::vector<std::string>& argv);
  // Runs a command with RESP3 replies.
  std::string run3(const std::vector<std::string>& argv);
  // Runs one command as another client (its own database, MULTI and subscriptions).
  std::string run_as(ClientSession& session, const std::vector<std::string>& argv);
  // Another client of this server, authenticated, in database 0; its pub/sub messages are
  // collected by pushes() too.
  ClientSession new_session();

  void advance(int64_t ms);             // moves the manual clock
  // Runs active expiry on every shard: keys, then inventory holds (expiry and retention
  // purge). Returns keys deleted plus hold wheel entries fired.
  size_t expire_cycle(size_t max = 1000000);
  int64_t now() const { return now_ms_; }
  Engine& engine() { return *engine_; }
  // Runs the posted work (pub/sub deliveries, blocked-client serving) and returns the
  // messages delivered to this session since the last call.
  std::vector<PubSubMessage> pushes();
  Config& config() { return config_; }
  ClientSession& session() { return session_; }

 private:
  int64_t now_ms_;
  Config config_;
  std::vector<std::unique_ptr<asio::io_context>> contexts_;
  std::unique_ptr<Engine> engine_;
  ClientSession session_;
  std::vector<PubSubMessage> pushes_;
  void deliver(const PubSubMessage& m) override { pushes_.push_back(m); }
  void run_planned(std::span<const std::string_view> views, ClientSession& session,
                   const Plan& plan, ReplyWriter& w);
};

// A key ("k0", "k1", ...) whose shard is not `key`'s; throws if none of the first 100 is.
std::string key_on_another_shard(TestServer& s, const std::string& key);

// RESP helpers for assertions.
std::string bulk(const std::string& s);
std::string integer(int64_t v);
inline const std::string kOk = "+OK\r\n";
inline const std::string kNil = "$-1\r\n";
inline const std::string kNilArray = "*-1\r\n";
// An array of already-encoded replies.
std::string arr(std::initializer_list<std::string> items);
// `count` keys named prefix<N>, each on a different shard of `s` (REQUIREs that many shards).
std::vector<std::string> keys_on_distinct_shards(TestServer& s, const std::string& prefix,
                                                 size_t count);
// One stream entry as Redis replies it: [id, [field, value, ...]].
std::string ent(const std::string& id, std::initializer_list<std::string> fields);
// An error reply: "-<text>\r\n".
std::string error(const std::string& text);

}  // namespace hotkv::test
