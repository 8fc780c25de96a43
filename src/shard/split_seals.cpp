// Seals of split operations (split_seals.hpp).
#include "hotkv/shard/split_seals.hpp"

#include <memory>
#include <vector>

#include <asio/async_result.hpp>
#include <asio/post.hpp>
#include <asio/use_awaitable.hpp>

namespace hotkv {

bool SplitSeals::close(uint64_t seq) {
  std::lock_guard<std::mutex> g(mu_);
  uint64_t below = sealed_below_.load(std::memory_order_relaxed);
  size_t at = static_cast<size_t>(seq - below);
  if (closed_.size() <= at) {
    closed_.resize(at + 1, false);
  }
  closed_[at] = true;
  if (at != 0) {
    return false;  // an earlier operation is still open
  }
  while (!closed_.empty() && closed_.front()) {
    closed_.pop_front();
    ++below;
  }
  sealed_below_.store(below, std::memory_order_seq_cst);
  return true;
}

asio::awaitable<void> SealGate::wait() {
  if (!pending()) {
    co_return;
  }
  auto initiation = [this](auto handler) {
    auto shared = std::make_shared<decltype(handler)>(std::move(handler));
    when_sealed([shared]() mutable { std::move(*shared)(); });
  };
  co_await asio::async_initiate<decltype(asio::use_awaitable), void()>(std::move(initiation),
                                                                        asio::use_awaitable);
}

void SealGate::when_sealed(std::function<void()> fn) {
  uint64_t need = taint_.load(std::memory_order_relaxed);
  if (need == 0 || need < seals_.sealed_below()) {
    fn();
    return;
  }
  waiters_.emplace_back(need, std::move(fn));
  if (waiters_.size() == 1) {
    wanted_.store(need, std::memory_order_seq_cst);
    if (need < seals_.sealed_below()) {
      post_run();  // sealed meanwhile, before advanced() could see us waiting
    }
  }
}

void SealGate::advanced(uint64_t below) {
  uint64_t wanted = wanted_.load(std::memory_order_seq_cst);
  if (wanted != 0 && wanted < below) {
    post_run();
  }
}

void SealGate::post_run() {
  if (run_posted_.exchange(true, std::memory_order_acq_rel)) {
    return;
  }
  asio::post(io_, [this] { run_ready(); });
}

void SealGate::run_ready() {
  run_posted_.store(false, std::memory_order_release);
  uint64_t below = seals_.sealed_below();
  std::vector<std::function<void()>> ready;
  while (!waiters_.empty() && waiters_.front().first < below) {
    ready.push_back(std::move(waiters_.front().second));
    waiters_.pop_front();
  }
  uint64_t next = waiters_.empty() ? 0 : waiters_.front().first;
  wanted_.store(next, std::memory_order_seq_cst);
  if (next != 0 && next < seals_.sealed_below()) {
    post_run();
  }
  // Run after the list is consistent: a resumed connection may wait again at once.
  for (auto& fn : ready) {
    fn();
  }
}

}  // namespace hotkv
