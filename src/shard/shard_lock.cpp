// ShardLock (see shard_lock.hpp).
#include "hotkv/shard/shard_lock.hpp"

namespace hotkv {

bool ShardLock::try_acquire() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (held_) {
    return false;
  }
  held_ = true;
  return true;
}

void ShardLock::acquire_or_wait(std::function<void()> granted) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (held_) {
      waiters_.push_back(std::move(granted));
      return;
    }
    held_ = true;
  }
  granted();
}

void ShardLock::release() {
  std::function<void()> next;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (waiters_.empty()) {
      held_ = false;
      return;
    }
    next = std::move(waiters_.front());
    waiters_.pop_front();
  }
  next();
}

}  // namespace hotkv
