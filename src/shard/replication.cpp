// Replication state and the backlog ring (shard/replication.hpp).
#include "hotkv/shard/replication.hpp"

#include <algorithm>
#include <random>
#include <utility>

namespace hotkv {

ReplicationBacklog::ReplicationBacklog(size_t capacity) : ring_(std::max<size_t>(capacity, 1), '\0') {}

void ReplicationBacklog::append(std::string_view bytes) {
  end_ += bytes.size();
  // Only the newest `capacity` bytes can survive: skip what would be overwritten anyway.
  if (bytes.size() > ring_.size()) {
    bytes.remove_prefix(bytes.size() - ring_.size());
  }
  while (!bytes.empty()) {
    size_t n = std::min(bytes.size(), ring_.size() - head_);
    ring_.replace(head_, n, bytes.data(), n);
    head_ = (head_ + n) % ring_.size();
    bytes.remove_prefix(n);
    histlen_ = std::min(ring_.size(), histlen_ + n);
  }
}

void ReplicationBacklog::copy_from(uint64_t offset, size_t max, std::string& out) const {
  size_t want = std::min<uint64_t>(max, end_ - offset);
  // The byte after `offset` sits (end_ - offset) bytes behind head_.
  size_t back = static_cast<size_t>(end_ - offset);
  size_t pos = (head_ + ring_.size() - back) % ring_.size();
  while (want > 0) {
    size_t n = std::min(want, ring_.size() - pos);
    out.append(ring_, pos, n);
    pos = (pos + n) % ring_.size();
    want -= n;
  }
}

void ReplicationBacklog::resize(size_t capacity) {
  capacity = std::max<size_t>(capacity, 1);
  if (capacity == ring_.size()) {
    return;
  }
  size_t keep = std::min(histlen_, capacity);
  std::string kept;
  copy_from(end_ - keep, keep, kept);
  ring_.assign(capacity, '\0');
  head_ = 0;
  histlen_ = 0;
  uint64_t end = end_;
  append(kept);
  end_ = end;
  head_ %= ring_.size();
}

void ReplicationBacklog::reset(uint64_t offset) {
  head_ = 0;
  histlen_ = 0;
  end_ = offset;
}

std::string_view link_state_name(LinkState s) {
  switch (s) {
    case LinkState::kNone:
      return "none";
    case LinkState::kConnect:
      return "connect";
    case LinkState::kConnecting:
      return "connecting";
    case LinkState::kSync:
      return "sync";
    case LinkState::kConnected:
      return "connected";
  }
  return "none";
}

std::string random_hex_id() {
  static constexpr char kHex[] = "0123456789abcdef";
  std::random_device rd;
  std::string id(40, '0');
  for (char& c : id) {
    c = kHex[rd() & 15];
  }
  return id;
}

Replication::Replication()
    : replid_(random_hex_id()), replid2_(40, '0'), backlog_(1024 * 1024) {}

Replication::Ids Replication::ids() const {
  std::lock_guard lock(mu_);
  return {replid_, replid2_, second_offset_};
}

void Replication::become_replica(std::string host, int64_t port) {
  std::lock_guard lock(mu_);
  master_host_ = std::move(host);
  master_port_ = port;
  link_ = LinkState::kConnect;
  role_.store(ReplicationRole::kReplica, std::memory_order_relaxed);
  // A replica keeps a backlog: if it is promoted, its own replicas continue from it.
  backlog_active_.store(true, std::memory_order_relaxed);
}

void Replication::become_master() {
  std::lock_guard lock(mu_);
  if (role_.load(std::memory_order_relaxed) == ReplicationRole::kMaster) {
    return;
  }
  replid2_ = replid_;
  second_offset_ = static_cast<int64_t>(offset_.load()) + 1;
  replid_ = random_hex_id();
  master_host_.clear();
  master_port_ = 0;
  link_ = LinkState::kNone;
  role_.store(ReplicationRole::kMaster, std::memory_order_relaxed);
}

std::optional<std::pair<std::string, int64_t>> Replication::master() const {
  std::lock_guard lock(mu_);
  if (role_.load(std::memory_order_relaxed) != ReplicationRole::kReplica) {
    return std::nullopt;
  }
  return std::make_pair(master_host_, master_port_);
}

LinkState Replication::link_state() const {
  std::lock_guard lock(mu_);
  return link_;
}

void Replication::set_link_state(LinkState s, int64_t now_ms) {
  std::lock_guard lock(mu_);
  if (link_ == LinkState::kConnected && s != LinkState::kConnected) {
    link_down_since_ms_ = now_ms;
  }
  link_ = s;
}

int64_t Replication::link_down_since_ms() const {
  std::lock_guard lock(mu_);
  return link_down_since_ms_;
}

void Replication::note_master_io(int64_t now_ms) {
  std::lock_guard lock(mu_);
  master_io_ms_ = now_ms;
}

int64_t Replication::last_io_seconds_ago(int64_t now_s) const {
  std::lock_guard lock(mu_);
  return master_io_ms_ == 0 ? -1 : now_s - master_io_ms_ / 1000;
}

void Replication::note_transfer(const Transfer& t) {
  std::lock_guard lock(mu_);
  transfer_ = t;
}

Replication::Transfer Replication::transfer() const {
  std::lock_guard lock(mu_);
  return transfer_;
}

void Replication::activate_backlog() {
  backlog_active_.store(true, std::memory_order_relaxed);
}

uint64_t Replication::feed(std::string_view resp) {
  std::lock_guard lock(mu_);
  backlog_.append(resp);
  offset_.store(backlog_.end_offset(), std::memory_order_release);
  for (const auto& ch : channels_) {
    if (ch->overflowed) {
      continue;
    }
    ch->pending.append(resp);
    if (ch->limit > 0 && ch->pending.size() > ch->limit) {
      // The replica cannot keep up: its connection is closed and it resyncs, rather than the
      // master's memory growing without bound (client-output-buffer-limit replica).
      ch->overflowed = true;
      std::string().swap(ch->pending);
    }
    if (!ch->wake_posted && ch->wake) {
      ch->wake_posted = true;
      ch->wake();
    }
  }
  return backlog_.end_offset();
}

bool Replication::attach_channel(std::shared_ptr<ReplicaChannel> channel, uint64_t from_offset) {
  std::lock_guard lock(mu_);
  if (!backlog_.holds_from(from_offset)) {
    return false;
  }
  backlog_.copy_from(from_offset, backlog_.end_offset() - from_offset, channel->pending);
  channel->wake_posted = false;
  channels_.push_back(std::move(channel));
  return true;
}

bool Replication::take_pending(ReplicaChannel& channel, std::string& out) {
  std::lock_guard lock(mu_);
  channel.wake_posted = false;
  if (channel.overflowed) {
    return false;
  }
  out.swap(channel.pending);
  return true;
}

void Replication::set_channel_wake(ReplicaChannel& channel, std::function<void()> wake) {
  std::lock_guard lock(mu_);
  channel.wake = std::move(wake);
  if (!channel.pending.empty() && !channel.wake_posted) {
    channel.wake_posted = true;
    channel.wake();
  }
}

void Replication::detach_channel(const ReplicaChannel& channel) {
  std::lock_guard lock(mu_);
  std::erase_if(channels_, [&](const auto& c) { return c.get() == &channel; });
}

size_t Replication::channels() const {
  std::lock_guard lock(mu_);
  return channels_.size();
}

void Replication::add_waiter(std::shared_ptr<AckWaiter> w) {
  std::lock_guard lock(mu_);
  waiters_.push_back(std::move(w));
  wake_waiters_locked();
}

void Replication::remove_waiter(const std::shared_ptr<AckWaiter>& w) {
  std::lock_guard lock(mu_);
  std::erase(waiters_, w);
}

void Replication::wake_waiters_locked() {
  for (const auto& w : waiters_) {
    if (!w->woken && acked_locked(w->offset) >= w->count) {
      w->woken = true;
      w->wake();
    }
  }
}

Replication::BacklogInfo Replication::backlog_info() const {
  std::lock_guard lock(mu_);
  bool active = backlog_active_.load(std::memory_order_relaxed);
  return {active, backlog_.capacity(), active ? backlog_.first_byte_offset() : 0,
          active ? backlog_.histlen() : 0};
}

void Replication::set_backlog_size(size_t size) {
  std::lock_guard lock(mu_);
  backlog_.resize(size);
}

void Replication::adopt_master_stream(std::string replid, uint64_t offset) {
  std::lock_guard lock(mu_);
  replid_ = std::move(replid);
  replid2_.assign(40, '0');
  second_offset_ = -1;
  backlog_.reset(offset);
  offset_.store(offset, std::memory_order_release);
}

void Replication::continue_under_new_id(std::string replid) {
  std::lock_guard lock(mu_);
  replid2_ = std::move(replid_);
  second_offset_ = static_cast<int64_t>(offset_.load()) + 1;
  replid_ = std::move(replid);
}

bool Replication::read_backlog(uint64_t offset, size_t max, std::string& out) const {
  std::lock_guard lock(mu_);
  if (!backlog_.holds_from(offset)) {
    return false;
  }
  backlog_.copy_from(offset, max, out);
  return true;
}

bool Replication::can_continue(std::string_view replid, uint64_t offset) const {
  std::lock_guard lock(mu_);
  if (!backlog_active_.load(std::memory_order_relaxed)) {
    return false;
  }
  bool ours = replid == replid_;
  // Our previous id is good up to where it ended (the promotion's offset).
  bool previous = replid == replid2_ && second_offset_ >= 0 &&
                  static_cast<int64_t>(offset) + 1 <= second_offset_;
  return (ours || previous) && backlog_.holds_from(offset);
}

void Replication::set_restored_stream(uint32_t db) {
  std::lock_guard lock(mu_);
  restored_db_ = db;
}

std::optional<uint32_t> Replication::take_restored_stream() {
  std::lock_guard lock(mu_);
  return std::exchange(restored_db_, std::nullopt);
}

void Replication::add_replica(ReplicaPeer peer) {
  std::lock_guard lock(mu_);
  std::erase_if(replicas_, [&](const ReplicaPeer& p) { return p.client_id == peer.client_id; });
  replicas_.push_back(std::move(peer));
}

void Replication::update_replica(uint64_t client_id, std::string_view state,
                                 std::optional<uint64_t> ack, int64_t now_ms) {
  std::lock_guard lock(mu_);
  for (ReplicaPeer& p : replicas_) {
    if (p.client_id == client_id) {
      if (!state.empty()) {
        p.state = state;
        if (state == "online" && p.last_ack_ms == 0) {
          p.last_ack_ms = now_ms;  // its repl-timeout counts from here until it acknowledges
        }
      }
      if (ack) {
        p.ack_offset = std::max(p.ack_offset, *ack);
        p.last_ack_ms = now_ms;
      }
    }
  }
  wake_waiters_locked();
}

void Replication::remove_replica(uint64_t client_id) {
  std::lock_guard lock(mu_);
  std::erase_if(replicas_, [&](const ReplicaPeer& p) { return p.client_id == client_id; });
}

std::vector<ReplicaPeer> Replication::replicas() const {
  std::lock_guard lock(mu_);
  return replicas_;
}

std::vector<uint64_t> Replication::silent_replicas(int64_t now_ms, int64_t timeout_ms) const {
  std::lock_guard lock(mu_);
  std::vector<uint64_t> out;
  for (const ReplicaPeer& p : replicas_) {
    if (p.state == "online" && p.last_ack_ms > 0 && now_ms - p.last_ack_ms > timeout_ms) {
      out.push_back(p.client_id);
    }
  }
  return out;
}

size_t Replication::replicas_acked(uint64_t offset) const {
  std::lock_guard lock(mu_);
  return acked_locked(offset);
}

size_t Replication::acked_locked(uint64_t offset) const {
  return static_cast<size_t>(std::count_if(replicas_.begin(), replicas_.end(), [&](const ReplicaPeer& p) {
    return p.state == "online" && p.ack_offset >= offset;
  }));
}

size_t Replication::good_replicas(int64_t now_ms, int64_t max_lag_s) const {
  std::lock_guard lock(mu_);
  return static_cast<size_t>(std::count_if(replicas_.begin(), replicas_.end(), [&](const ReplicaPeer& p) {
    return p.state == "online" && (now_ms - p.last_ack_ms) / 1000 <= max_lag_s;
  }));
}

}  // namespace hotkv
