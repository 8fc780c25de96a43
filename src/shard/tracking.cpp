// Client-side caching, the server-wide half (see tracking.hpp and docs/client-caching.md).
#include "hotkv/shard/tracking.hpp"

#include <algorithm>

#include <asio/post.hpp>

#include "hotkv/shard/engine.hpp"
#include "hotkv/util/access_clock.hpp"

namespace hotkv {
namespace {

thread_local TrackingCaller running_caller;

void post_message(ClientInfo& to, TrackingMessage m) {
  if (to.control) {
    to.control->push(std::make_shared<const TrackingMessage>(std::move(m)));
  }
}

}  // namespace

const TrackingCaller& current_tracking_caller() { return running_caller; }

ScopedTrackingCaller::ScopedTrackingCaller(const TrackingCaller& caller) : saved_(running_caller) {
  running_caller = caller;
  access_clock_frozen = caller.no_touch;
}

ScopedTrackingCaller::~ScopedTrackingCaller() {
  running_caller = saved_;
  access_clock_frozen = saved_.no_touch;
}

Tracking::Tracking(Engine& engine) : engine_(engine) {}

void Tracking::enable(ClientInfo& c, uint32_t options, uint64_t redirect,
                      const std::vector<std::string>& prefixes) {
  uint32_t before = c.tracking.load(std::memory_order_relaxed);
  if ((before & kTrackingOn) == 0) {
    clients_.fetch_add(1, std::memory_order_relaxed);
  }
  c.tracking_redirect.store(redirect, std::memory_order_relaxed);
  c.tracking.store(options | kTrackingOn, std::memory_order_release);
  if ((options & kTrackingBcast) == 0) {
    return;
  }
  std::unique_lock lock(prefixes_mu_);
  std::vector<std::string>& mine = client_prefixes_[c.id];
  for (const std::string& p : prefixes) {
    if (std::find(mine.begin(), mine.end(), p) != mine.end()) {
      continue;
    }
    mine.push_back(p);
    std::vector<uint64_t>& ids = prefix_clients_[p];
    ids.push_back(c.id);
  }
  bcast_prefixes_.store(prefix_clients_.size(), std::memory_order_relaxed);
}

void Tracking::disable(ClientInfo& c) {
  uint32_t before = c.tracking.exchange(0, std::memory_order_acq_rel);
  c.tracking_redirect.store(0, std::memory_order_relaxed);
  if ((before & kTrackingOn) == 0) {
    return;
  }
  clients_.fetch_sub(1, std::memory_order_relaxed);
  if ((before & kTrackingBcast) == 0) {
    return;
  }
  std::unique_lock lock(prefixes_mu_);
  auto mine = client_prefixes_.find(c.id);
  if (mine == client_prefixes_.end()) {
    return;
  }
  for (const std::string& p : mine->second) {
    auto it = prefix_clients_.find(p);
    if (it == prefix_clients_.end()) {
      continue;
    }
    std::erase(it->second, c.id);
    if (it->second.empty()) {
      prefix_clients_.erase(it);
    }
  }
  client_prefixes_.erase(mine);
  bcast_prefixes_.store(prefix_clients_.size(), std::memory_order_relaxed);
}

std::vector<std::string> Tracking::prefixes_of(uint64_t client) const {
  std::shared_lock lock(prefixes_mu_);
  auto it = client_prefixes_.find(client);
  return it == client_prefixes_.end() ? std::vector<std::string>{} : it->second;
}

Status Tracking::check_prefixes(uint64_t client, const std::vector<std::string>& prefixes) const {
  std::vector<std::string> existing = prefixes_of(client);
  for (size_t i = 0; i < prefixes.size(); ++i) {
    for (const std::string& e : existing) {
      if (prefixes_overlap(e, prefixes[i])) {
        return Status::conflict("Prefix '" + prefixes[i] + "' overlaps with an existing prefix '" +
                                e + "'. Prefixes for a single client must not overlap.");
      }
    }
    for (size_t j = i + 1; j < prefixes.size(); ++j) {
      if (prefixes_overlap(prefixes[i], prefixes[j])) {
        return Status::conflict("Prefix '" + prefixes[i] +
                                "' overlaps with another provided prefix '" + prefixes[j] +
                                "'. Prefixes for a single client must not overlap.");
      }
    }
  }
  return {};
}

TrackingTable& Tracking::table_of(Shard& owner) { return owner.tracking().table; }

bool Tracking::owner_tracks(Shard& owner) const { return !owner.tracking().table.empty(); }

size_t Tracking::total_keys() const {
  size_t n = 0;
  for (size_t i = 0; i < engine_.shard_count(); ++i) {
    n += engine_.shard(i).tracking().table.keys();
  }
  return n;
}

size_t Tracking::total_items() const {
  size_t n = 0;
  for (size_t i = 0; i < engine_.shard_count(); ++i) {
    n += engine_.shard(i).tracking().table.items();
  }
  return n;
}

int64_t Tracking::max_keys() const {
  return engine_.config().tracking_table_max_keys.load(std::memory_order_relaxed);
}

void Tracking::remember(Shard& owner, std::string_view key, uint64_t caller) {
  if (table_of(owner).remember(key, caller)) {
    int64_t limit = max_keys();
    if (limit > 0 && static_cast<int64_t>(total_keys()) > limit) {
      enforce_limit();
    }
  }
}

void Tracking::key_changed_slow(Shard& owner, std::string_view key, bool expired) {
  const TrackingCaller& caller = current_tracking_caller();
  uint64_t writer = expired ? 0 : caller.client;
  if (owner_tracks(owner)) {
    std::vector<uint64_t> ids = table_of(owner).take(key);
    if (!ids.empty()) {
      // Like every push about a write, it leaves once the write is durable (Shard::after_log).
      if (!owner.pushes_wait()) {
        notify_clients(std::string(key), ids, writer, caller.client);
      } else {
        owner.after_log([this, key = std::string(key), ids = std::move(ids), writer,
                         cause = caller.client] { notify_clients(key, ids, writer, cause); });
      }
    }
  }
  if (bcast_prefixes_.load(std::memory_order_relaxed) == 0) {
    return;
  }
  ShardTracking& st = owner.tracking();
  bool matched = false;
  {
    std::shared_lock lock(prefixes_mu_);
    for (const auto& [prefix, ids] : prefix_clients_) {
      if (key.starts_with(prefix)) {
        auto it = st.bcast_changed.find(prefix);
        if (it == st.bcast_changed.end()) {
          it = st.bcast_changed.emplace(prefix, std::vector<ShardTracking::ChangedKey>{}).first;
        }
        it->second.push_back({std::string(key), writer, caller.client});
        matched = true;
      }
    }
  }
  if (matched && !st.bcast_flush_posted) {
    // After the handlers already queued on the key's thread: the keys of this command (an
    // MSET, a transaction) and of the rest of the turn go out together.
    st.bcast_flush_posted = true;
    Shard* s = &owner;
    asio::post(owner.io(), [this, s] { broadcast(*s); });
  }
}

void Tracking::broadcast(Shard& owner) {
  if (owner.pushes_wait()) {
    // The changes are not durable yet: the whole batch goes out after the flush.
    owner.after_log([this, s = &owner] { broadcast(*s); });
    return;
  }
  ShardTracking& st = owner.tracking();
  st.bcast_flush_posted = false;
  auto changed = std::move(st.bcast_changed);
  st.bcast_changed.clear();
  for (auto& [prefix, keys] : changed) {
    std::vector<uint64_t> ids;
    {
      std::shared_lock lock(prefixes_mu_);
      auto it = prefix_clients_.find(prefix);
      if (it == prefix_clients_.end()) {
        continue;
      }
      ids = it->second;
    }
    for (uint64_t id : ids) {
      auto c = engine_.clients().find(id);
      if (!c) {
        continue;
      }
      uint32_t flags = c->tracking.load(std::memory_order_acquire);
      if ((flags & kTrackingBcast) == 0) {
        continue;
      }
      bool noloop = (flags & kTrackingNoloop) != 0;
      TrackingMessage m;
      m.cause = keys.empty() ? 0 : keys.front().cause;
      for (const ShardTracking::ChangedKey& k : keys) {
        if (noloop && k.writer == id) {
          continue;
        }
        if (k.cause != m.cause) {
          m.cause = 0;
        }
        m.keys.push_back(k.key);
      }
      if (!m.keys.empty()) {
        send(*c, std::move(m));
      }
    }
  }
}

void Tracking::notify_clients(const std::string& key, const std::vector<uint64_t>& ids,
                              uint64_t writer, uint64_t cause) {
  for (uint64_t id : ids) {
    auto c = engine_.clients().find(id);
    if (!c) {
      continue;
    }
    uint32_t flags = c->tracking.load(std::memory_order_acquire);
    // A client that switched to BCAST meanwhile hears only about its prefixes (as Redis).
    if ((flags & kTrackingOn) == 0 || (flags & kTrackingBcast) != 0) {
      continue;
    }
    if ((flags & kTrackingNoloop) != 0 && writer == id) {
      continue;
    }
    TrackingMessage m;
    m.keys.push_back(key);
    m.cause = cause;
    send(*c, std::move(m));
  }
}

void Tracking::send(ClientInfo& c, TrackingMessage m) {
  uint64_t redirect = c.tracking_redirect.load(std::memory_order_relaxed);
  if (redirect == 0) {
    post_message(c, std::move(m));
    return;
  }
  auto target = engine_.clients().find(redirect);
  if (!target) {
    c.tracking.fetch_or(kTrackingBrokenRedirect, std::memory_order_acq_rel);
    TrackingMessage broken;
    broken.kind = TrackingMessage::Kind::kRedirBroken;
    broken.redirect = redirect;
    broken.cause = m.cause;
    post_message(c, std::move(broken));
    return;
  }
  m.redirected = true;
  post_message(*target, std::move(m));
}

void Tracking::flushed(const std::vector<Shard*>& held) {
  for (Shard* s : held) {
    s->tracking().table.clear();
  }
  if (clients_.load(std::memory_order_relaxed) == 0) {
    return;
  }
  uint64_t cause = current_tracking_caller().client;
  for (const auto& c : engine_.clients().snapshot()) {
    if ((c->tracking.load(std::memory_order_acquire) & kTrackingOn) == 0) {
      continue;
    }
    TrackingMessage m;
    m.kind = TrackingMessage::Kind::kFlush;
    m.cause = cause;
    send(*c, std::move(m));
  }
}

void Tracking::enforce_limit() {
  int64_t limit = max_keys();
  if (limit <= 0 || static_cast<int64_t>(total_keys()) <= limit) {
    return;
  }
  if (enforce_posted_.exchange(true, std::memory_order_acq_rel)) {
    return;  // a round is on its way; it evicts until the total fits
  }
  auto remaining = std::make_shared<std::atomic<size_t>>(engine_.shard_count());
  for (size_t i = 0; i < engine_.shard_count(); ++i) {
    Shard* s = &engine_.shard(i);
    asio::post(s->io(), [this, s, remaining] {
      evict_over_limit(*s);
      if (remaining->fetch_sub(1, std::memory_order_acq_rel) == 1) {
        enforce_posted_.store(false, std::memory_order_release);
      }
    });
  }
}

void Tracking::evict_over_limit(Shard& s) {
  ScopedTrackingCaller nobody(TrackingCaller{});
  std::string key;
  std::vector<uint64_t> ids;
  for (;;) {
    {
      std::lock_guard lock(evict_mu_);
      int64_t limit = max_keys();
      if (limit <= 0 || static_cast<int64_t>(total_keys()) <= limit) {
        return;
      }
      if (!s.tracking().table.take_any(key, ids)) {
        return;
      }
    }
    // As Redis: the clients are told as if the key had changed.
    notify_clients(key, ids, 0);
  }
}

}  // namespace hotkv
