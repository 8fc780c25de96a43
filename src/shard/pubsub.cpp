// The publish/subscribe hub (see pubsub.hpp).
#include "hotkv/shard/pubsub.hpp"

#include <algorithm>
#include <mutex>
#include <type_traits>

#include <asio/post.hpp>

#include "hotkv/resp/writer.hpp"
#include "hotkv/util/assert.hpp"
#include "hotkv/util/glob.hpp"

namespace hotkv {
namespace {

template <class Receivers>
void index_threads(Receivers& r) {
  r.threads.clear();
  for (const auto& c : r.clients) {
    if (std::find(r.threads.begin(), r.threads.end(), c->io) == r.threads.end()) {
      r.threads.push_back(c->io);
    }
  }
}

template <class Map>
bool add_to(Map& map, std::string_view name, const std::shared_ptr<PubSubClient>& c) {
  using Receivers = typename Map::mapped_type::element_type;
  auto it = map.find(name);
  auto next = std::make_shared<std::remove_const_t<Receivers>>();
  if (it != map.end()) {
    for (const auto& existing : it->second->clients) {
      if (existing->id == c->id) {
        return false;
      }
    }
    next->clients.reserve(it->second->clients.size() + 1);
    next->clients = it->second->clients;
  }
  next->clients.push_back(c);
  index_threads(*next);
  map.insert_or_assign(std::string(name), std::move(next));
  return true;
}

template <class Map>
bool remove_from(Map& map, std::string_view name, uint64_t id) {
  using Receivers = typename Map::mapped_type::element_type;
  auto it = map.find(name);
  if (it == map.end()) {
    return false;
  }
  const auto& list = it->second->clients;
  auto pos = std::find_if(list.begin(), list.end(), [id](const auto& c) { return c->id == id; });
  if (pos == list.end()) {
    return false;
  }
  if (list.size() == 1) {
    map.erase(it);
    return true;
  }
  auto next = std::make_shared<std::remove_const_t<Receivers>>();
  next->clients.reserve(list.size() - 1);
  next->clients.insert(next->clients.end(), list.begin(), pos);
  next->clients.insert(next->clients.end(), pos + 1, list.end());
  index_threads(*next);
  it->second = std::move(next);
  return true;
}

std::shared_ptr<const PubSubMessage> make_message(std::string_view pattern,
                                                  std::string_view channel,
                                                  std::string_view payload) {
  auto m = std::make_shared<PubSubMessage>();
  m->pattern.assign(pattern);
  m->channel.assign(channel);
  m->payload.assign(payload);
  for (int proto : {2, 3}) {
    ReplyWriter w(proto == 2 ? m->resp2 : m->resp3, proto);
    if (pattern.empty()) {
      w.push(3);
      w.bulk("message");
    } else {
      w.push(4);
      w.bulk("pmessage");
      w.bulk(pattern);
    }
    w.bulk(channel);
    w.bulk(payload);
  }
  return m;
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
  std::vector<Delivery>& items = box.spare;  // only this thread drains this outbox
  {
    std::lock_guard lock(box.mu);
    items.swap(box.items);
    box.drain_posted = false;
  }
  // One flush per client per batch: its messages leave in as few writes as possible.
  std::vector<PubSubClient*> to_flush;
  for (const Delivery& d : items) {
    for (const auto& c : d.receivers->clients) {
      if (c->io != box.io || c->sink == nullptr) {
        continue;  // another thread's subscriber, or one that has gone away
      }
      c->sink->deliver(*d.message);
      if (!c->flush_pending) {
        c->flush_pending = true;
        to_flush.push_back(c.get());
      }
    }
  }
  for (PubSubClient* c : to_flush) {
    c->flush_pending = false;
    if (c->sink != nullptr) {
      c->sink->flush();
    }
  }
  // The batch's references go now, on this thread; the capacity stays for the next one.
  items.clear();
}

void PubSubHub::enqueue(const Delivery& d) {
  for (asio::io_context* io : d.receivers->threads) {
    Outbox& box = outbox_for(io);
    std::lock_guard box_lock(box.mu);
    box.items.push_back(d);
    if (!box.drain_posted) {
      box.drain_posted = true;
      Outbox* b = &box;
      asio::post(*io, [b] { drain(*b); });
    }
  }
}

template <class Fn>
void PubSubHub::for_each_receivers(std::string_view channel, Fn&& fn) const {
  std::shared_lock lock(mu_);
  auto it = channels_.find(channel);
  if (it != channels_.end()) {
    fn(it->second, std::string_view());
  }
  for (const auto& [pattern, r] : patterns_) {
    if (glob_match(pattern, channel, false)) {
      fn(r, std::string_view(pattern));
    }
  }
}

size_t PubSubHub::publish(std::string_view channel, std::string_view payload) {
  if (idle()) {
    return 0;
  }
  size_t receivers = 0;
  for_each_receivers(channel, [&](const std::shared_ptr<const Receivers>& r,
                                  std::string_view pattern) {
    receivers += r->clients.size();
    enqueue(Delivery{make_message(pattern, channel, payload), r});
  });
  return receivers;
}

PubSubHub::Prepared PubSubHub::prepare(std::string_view channel, std::string_view payload) const {
  Prepared p;
  if (idle()) {
    return p;
  }
  for_each_receivers(channel, [&](const std::shared_ptr<const Receivers>& r,
                                  std::string_view pattern) {
    p.receivers += r->clients.size();
    p.parts.push_back(Delivery{make_message(pattern, channel, payload), r});
  });
  return p;
}

void PubSubHub::send(const Prepared& p) {
  for (const Delivery& d : p.parts) {
    enqueue(d);
  }
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
  return it == channels_.end() ? 0 : it->second->clients.size();
}

size_t PubSubHub::numpat() const {
  std::shared_lock lock(mu_);
  return patterns_.size();
}

}  // namespace hotkv
