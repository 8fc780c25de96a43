// While a script runs past busy-reply-threshold, the thread that accepts connections (worker
// 0) may be the very thread running it; with --threads 1 it always is. Then nobody could
// reach SCRIPT KILL. This small thread steps in only while a script is that late: it accepts
// new connections on the listening socket itself and answers them as Redis answers during a
// busy script: SCRIPT KILL and FUNCTION KILL work (AUTH first if requirepass is set),
// SHUTDOWN NOSAVE ends the process, anything else gets -BUSY. Those connections are closed
// once the script has ended (clients reconnect); connections accepted normally are untouched.
#pragma once

#include <atomic>
#include <thread>

namespace hotkv {

class Engine;

class BusyResponder {
 public:
  BusyResponder(Engine& engine, int listen_fd);
  ~BusyResponder();
  BusyResponder(const BusyResponder&) = delete;
  BusyResponder& operator=(const BusyResponder&) = delete;

  // Stops and joins the thread (before the listening socket is closed).
  void stop();

 private:
  void run();

  Engine& engine_;
  int listen_fd_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace hotkv
