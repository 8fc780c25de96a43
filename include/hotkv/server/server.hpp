// The server process: one worker thread per shard (each with its own io_context and its own
// connections), the listening socket, signal handling and the once-a-second housekeeping.
// Connections are accepted on worker 0 and handed round-robin to the workers.
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/signal_set.hpp>
#include <asio/steady_timer.hpp>

#include "hotkv/net/connection.hpp"
#include "hotkv/net/master_link.hpp"
#include "hotkv/net/tls_context.hpp"
#include "hotkv/shard/engine.hpp"
#include "hotkv/shard/persistence.hpp"
#include "hotkv/util/config.hpp"

namespace hotkv {

class Server {
 public:
  explicit Server(Config& config);
  ~Server();

  // Binds the listening socket. Returns an empty string or a one-line reason.
  std::string listen();
  // Runs until shutdown; returns the process exit code.
  int run();
  // Any thread: stop accepting, finish in-flight replies, close clients, stop the workers.
  void shutdown();
  uint16_t port() const { return port_; }
  uint16_t tls_port() const { return tls_port_; }

 private:
  struct Worker {
    // One thread runs each context. Other threads only post to it (the scheduler keeps its
    // lock), so the reactor's per-socket lock, taken several times per request, is dropped.
    asio::io_context io{ASIO_CONCURRENCY_HINT_UNSAFE_IO};
    ConnectionSet connections;
    std::unique_ptr<asio::steady_timer> cron;
    std::unique_ptr<asio::steady_timer> drain_timer;
    std::thread thread;
  };

  // Accepts on the plain port, or on the tls-port (`tls`: each connection gets a TLS session
  // of the current context), handing connections round-robin to the workers.
  asio::awaitable<void> accept_loop(bool tls);
  // Builds the TLS context from the tls-* settings and makes it the one new connections take.
  // "" or why not.
  std::string configure_tls();
  // CONFIG SET port / tls-port: the listener moves (port 0: closes). "" or why not.
  std::string move_listener(int64_t port, bool tls);
  // Takes a connection that moves to worker `target` over there (ConnectionSet::adopt).
  void adopt_connection(size_t target, ConnectionHandoff h);
  // Starts a log rewrite with every shard parked (auto-aof-rewrite thresholds reached).
  asio::awaitable<void> auto_rewrite();
  // Starts a BGSAVE SCHEDULE'd while the log's compaction ran (every shard parked).
  asio::awaitable<void> scheduled_bgsave();
  // CONFIG SET appendonly: turns the log on or off with every shard parked.
  asio::awaitable<void> switch_appendonly(bool on);
  void start_cron(size_t i);
  void on_cron(size_t i);
  void sample_rates(int64_t now);
  // Worker 0's cron: cuts off replicas silent for longer than repl-timeout.
  void drop_silent_replicas();
  // protected-mode: answers -DENIED and closes a client from outside the loopback interface
  // while the default user has no password. True if it did.
  bool refused_by_protected_mode(asio::ip::tcp::socket& accepted);
  // Worker 0's cron: gives freed memory back to the system after many clients disconnected.
  void return_freed_memory(int64_t now_ms);
  void configure_socket(asio::ip::tcp::socket& s);
  void wait_for_drain(Worker* w, int64_t deadline_ms,
                      std::shared_ptr<std::atomic<size_t>> remaining);

  Config& config_;
  std::vector<std::unique_ptr<Worker>> workers_;
  // A replica's link to its master, on worker 0 (destroyed before the workers it uses).
  std::unique_ptr<MasterLink> master_link_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<Persistence> persistence_;
  std::thread loader_;
  std::atomic<int> exit_code_{0};
  std::unique_ptr<asio::ip::tcp::acceptor> acceptor_;
  std::unique_ptr<asio::ip::tcp::acceptor> tls_acceptor_;
  TlsContextHolder tls_;
  std::unique_ptr<asio::signal_set> signals_;
  std::atomic<bool> stopping_{false};
  size_t next_worker_ = 0;
  uint16_t port_ = 0;
  uint16_t tls_port_ = 0;
  uint64_t last_ops_total_ = 0;
  bool auto_rewrite_running_ = false;
  bool scheduled_bgsave_running_ = false;
  static constexpr uint64_t kTrimAfterReleased = 1000;
  uint64_t released_since_trim_ = 0;
  int64_t last_trim_ms_ = 0;
  int64_t last_ops_ms_ = 0;
  // instantaneous_input_kbps/output_kbps: the last 16 samples' network rates, averaged as
  // Redis does (1.6 s at one sample per 100 ms).
  static constexpr size_t kRateSamples = 16;
  std::array<double, kRateSamples> input_kbps_samples_{};
  std::array<double, kRateSamples> output_kbps_samples_{};
  size_t rate_sample_ = 0;
  uint64_t last_net_in_ = 0;
  uint64_t last_net_out_ = 0;
  uint64_t peak_ticks_ = 0;
};

}  // namespace hotkv
