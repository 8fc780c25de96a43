// The publish/subscribe hub (see pubsub.hpp).
#include "hotkv/shard/pubsub.hpp"

#include <algorithm>
#include <mutex>

#include <asio/post.hpp>

#include "hotkv/util/assert.hpp"
#include "hotkv/util/glob.hpp"

namespace hotkv {
namespace {

template <class Map>
bool add_to(Map& map, std::string_view name, const std::shared_ptr<PubSubClient>& c) {
  auto it = map.find(name);
  if (it == map.end()) {
    it = map.emplace(std::string(name), typename Map::mapped_type{}).first;
  }
  for (const auto& existing : it->second) {
    if (existing->id == c->id) {
      return false;
    }
  }
  it->second.push_back(c);
  return true;
}

template <class Map>
bool remove_from(Map& map, std::string_view name, uint64_t id) {
  auto it = map.find(name);
  if (it == map.end()) {
    return false;
  }
  auto& list = it->second;
  auto pos = std::find_if(list.begin(), list.end(), [id](const auto& c) { return c->id == id; });
  if (pos == list.end()) {
    return false;
  }
  list.erase(pos);
  if (list.empty()) {
    map.erase(it);
  }
  return true;
}

}  // namespace

bool PubSubHub::add(ClientMap& map, std::string_view name,
                    const std::shared_ptr<PubSubClient>& c) {
  std::unique_lock lock(mu_);
  bool added = add_to(map, name, c);
  if (added) {
    subscriptions_.fetch_add(1, std::memory_order_relaxed);
  }
  return added;
}

bool PubSubHub::remove(ClientMap& map, std::string_view name, uint64_t client_id) {
  std::unique_lock lock(mu_);
  bool removed = remove_from(map, name, client_id);
  if (removed) {
    subscriptions_.fetch_sub(1, std::memory_order_relaxed);
  }
  return removed;
}

PubSubHub::Outbox& PubSubHub::outbox_for(asio::io_context* io) {
  size_t n = outbox_count_.load(std::memory_order_acquire);
  for (size_t i = 0; i < n; ++i) {
    Outbox* box = outbox_slots_[i].load(std::memory_order_acquire);
    if (box->io == io) {
      return *box;
    }
  }
  std::lock_guard lock(outboxes_mu_);
  n = outbox_count_.load(std::memory_order_relaxed);
  for (size_t i = 0; i < n; ++i) {
    Outbox* box = outbox_slots_[i].load(std::memory_order_relaxed);
    if (box->io == io) {
      return *box;
    }
  }
  HOTKV_ASSERT(n < kMaxOutboxes);
  outboxes_.push_back(std::make_unique<Outbox>());
  outboxes_.back()->io = io;
  outbox_slots_[n].store(outboxes_.back().get(), std::memory_order_release);
  outbox_count_.store(n + 1, std::memory_order_release);
  return *outboxes_.back();
}

void PubSubHub::drain(Outbox& box) {
  std::vector<Delivery> items;
  {
    std::lock_guard lock(box.mu);
    items.swap(box.items);
    box.drain_posted = false;
  }
  for (const Delivery& d : items) {
    d.client->deliver(*d.message);
  }
  // One flush per client per run of its messages: they leave in as few writes as possible.
  const PubSubClient* last = nullptr;
  for (const Delivery& d : items) {
    if (d.client.get() != last && d.client->flush) {
      last = d.client.get();
      d.client->flush();
    }
  }
}

size_t PubSubHub::publish(std::string_view channel, std::string_view payload) {
  if (idle()) {
    return 0;
  }
  size_t receivers = 0;
  // Each distinct pattern (and the plain channel) gets one message shared by its deliveries.
  std::vector<std::shared_ptr<const PubSubMessage>> messages;
  auto message_for = [&](std::string_view pattern) {
    for (const auto& m : messages) {
      if (m->pattern == pattern) {
        return m;
      }
    }
    auto m = std::make_shared<PubSubMessage>();
    m->pattern.assign(pattern);
    m->channel.assign(channel);
    m->payload.assign(payload);
    messages.push_back(m);
    return messages.back();
  };
  auto enqueue = [&](const std::shared_ptr<PubSubClient>& c, std::string_view pattern) {
    ++receivers;
    Outbox& box = outbox_for(c->io);
    std::lock_guard box_lock(box.mu);
    box.items.push_back(Delivery{c, message_for(pattern)});
    if (!box.drain_posted) {
      box.drain_posted = true;
      Outbox* b = &box;
      asio::post(*c->io, [b] { drain(*b); });
    }
  };
  std::shared_lock lock(mu_);
  auto it = channels_.find(channel);
  if (it != channels_.end()) {
    for (const auto& c : it->second) {
      enqueue(c, {});
    }
  }
  for (const auto& [pattern, list] : patterns_) {
    if (glob_match(pattern, channel, false)) {
      for (const auto& c : list) {
        enqueue(c, pattern);
      }
    }
  }
  return receivers;
}

std::vector<std::string> PubSubHub::channels(std::string_view pattern) const {
  std::shared_lock lock(mu_);
  std::vector<std::string> out;
  for (const auto& kv : channels_) {
    if (pattern.empty() || glob_match(pattern, kv.first, false)) {
      out.push_back(kv.first);
    }
  }
  return out;
}

size_t PubSubHub::numsub(std::string_view channel) const {
  std::shared_lock lock(mu_);
  auto it = channels_.find(channel);
  return it == channels_.end() ? 0 : it->second.size();
}

size_t PubSubHub::numpat() const {
  std::shared_lock lock(mu_);
  return patterns_.size();
}

}  // namespace hotkv
