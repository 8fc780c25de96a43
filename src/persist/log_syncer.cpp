// LogSyncer (see log_syncer.hpp).
#include "hotkv/persist/log_syncer.hpp"

#include <utility>

namespace hotkv {

LogSyncer::~LogSyncer() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) {
    thread_.join();
  }
}

void LogSyncer::request(std::function<void()> done) {
  {
    std::lock_guard lock(mu_);
    job_ = std::move(done);
    if (!thread_.joinable()) {
      thread_ = std::thread([this] { loop(); });
    }
  }
  cv_.notify_one();
}

void LogSyncer::loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return stop_ || job_; });
    if (!job_) {
      return;  // stopping with nothing left to sync
    }
    std::function<void()> done = std::move(job_);
    job_ = nullptr;
    lock.unlock();
    // A failed sync is recorded in the log (last_errno): later writes are refused with
    // -MISCONF until a flush succeeds. The group's waiters are released either way, exactly as
    // the inline flush did.
    log_.sync();
    done();
    lock.lock();
  }
}

}  // namespace hotkv
