// Publish/subscribe across threads. Subscriptions are few and change rarely; messages are
// many. The hub keeps, under a reader/writer lock, which clients listen on each channel and
// pattern; PUBLISH (from any thread) looks the receivers up under the shared lock and appends
// the deliveries to the receiving thread's outbox. An outbox is drained by one task on its
// thread, posted when it goes from empty to non-empty, so a burst of messages (100,000
// "expired" events) costs a handful of posts and, per subscriber, a handful of writes, not one
// of each per message. Appends happen in publish order, so every subscriber sees one
// publisher's messages in publish order.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <asio/io_context.hpp>

namespace hotkv {

// A message on its way to its subscribers: "message" (pattern empty) or "pmessage". One
// message is shared by every subscriber it reaches through the same channel or pattern, with
// its wire form encoded once per protocol at publish time rather than once per subscriber.
struct PubSubMessage {
  std::string pattern;  // the matching pattern for pmessage, else empty
  std::string channel;
  std::string payload;
  std::string resp2;  // the array a RESP2 subscriber receives
  std::string resp3;  // the push frame a RESP3 subscriber receives
  const std::string& wire(int proto) const { return proto >= 3 ? resp3 : resp2; }
};

// Where a subscriber's messages go. Called on the subscriber's own thread only: `deliver` for
// each message of a drained batch, then `flush` once per batch.
class PubSubSink {
 public:
  virtual void deliver(const PubSubMessage& m) = 0;
  virtual void flush() {}

 protected:
  ~PubSubSink() = default;
};

// One subscribed connection as the hub sees it. `sink` and `flush_pending` belong to the
// client's thread: the owner clears `sink` there when it goes away, so a batch drained later
// skips it without any reference counting per message.
struct PubSubClient {
  uint64_t id = 0;
  asio::io_context* io = nullptr;
  PubSubSink* sink = nullptr;
  bool flush_pending = false;
};

class PubSubHub {
  struct Delivery;

 public:
  // Any thread. Returns true if the client was not yet subscribed to it.
  bool subscribe(std::string_view channel, const std::shared_ptr<PubSubClient>& c) {
    return add(channels_, channel, c);
  }
  bool unsubscribe(std::string_view channel, uint64_t client_id) {
    return remove(channels_, channel, client_id);
  }
  bool psubscribe(std::string_view pattern, const std::shared_ptr<PubSubClient>& c) {
    return add(patterns_, pattern, c);
  }
  bool punsubscribe(std::string_view pattern, uint64_t client_id) {
    return remove(patterns_, pattern, client_id);
  }

  // Any thread. Delivers to every subscriber of the channel and of each matching pattern
  // (asynchronously, on their threads) and returns how many receive it.
  size_t publish(std::string_view channel, std::string_view payload);
  // PUBLISH in two steps, for a message that must wait (Shard::after_log): prepare fixes its
  // receivers, the clients subscribed when it is published (as in Redis), and counts them;
  // send delivers it to them later, from any thread.
  struct Prepared {
    std::vector<Delivery> parts;
    size_t receivers = 0;
  };
  Prepared prepare(std::string_view channel, std::string_view payload) const;
  void send(const Prepared& p);
  // Cheap check for keyspace notifications: nobody listens at all.
  bool idle() const { return subscriptions_.load(std::memory_order_relaxed) == 0; }

  // PUBSUB CHANNELS / NUMSUB / NUMPAT.
  std::vector<std::string> channels(std::string_view pattern) const;  // "" = all
  size_t numsub(std::string_view channel) const;
  size_t numpat() const;
  // Clients with at least one subscription (INFO pubsub_clients).
  size_t client_count() const { return clients_.load(std::memory_order_relaxed); }
  // The connection tracks its own subscription count and reports 0 <-> 1 transitions.
  void client_subscribed(bool first) {
    clients_.fetch_add(first ? 1 : -1, std::memory_order_relaxed);
  }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using ClientList = std::vector<std::shared_ptr<PubSubClient>>;
  // The subscribers of one channel or pattern, copied on every change and never modified, so a
  // publish hands one reference to each receiving thread instead of one per subscriber.
  struct Receivers {
    ClientList clients;
    std::vector<asio::io_context*> threads;  // the distinct client->io values of `clients`
  };
  using ClientMap =
      std::unordered_map<std::string, std::shared_ptr<const Receivers>, Hash, std::equal_to<>>;
  bool add(ClientMap& map, std::string_view name, const std::shared_ptr<PubSubClient>& c);
  bool remove(ClientMap& map, std::string_view name, uint64_t client_id);
  mutable std::shared_mutex mu_;
  ClientMap channels_;
  ClientMap patterns_;
  std::atomic<int64_t> subscriptions_{0};
  std::atomic<int64_t> clients_{0};

  // Deliveries waiting for their thread: a message and the receivers it was published to; the
  // drain picks the receivers that live on its thread.
  struct Delivery {
    std::shared_ptr<const PubSubMessage> message;
    std::shared_ptr<const Receivers> receivers;
  };
  struct Outbox {
    asio::io_context* io = nullptr;
    std::mutex mu;
    std::vector<Delivery> items;
    std::vector<Delivery> spare;  // the drain's buffer, kept to reuse its capacity
    bool drain_posted = false;
  };
  Outbox& outbox_for(asio::io_context* io);
  void enqueue(const Delivery& d);
  // Calls fn(receivers, pattern) for the channel's subscribers ("" pattern) and for each
  // matching pattern's, under the shared lock.
  template <class Fn>
  void for_each_receivers(std::string_view channel, Fn&& fn) const;
  static void drain(Outbox& box);
  // One outbox per thread, never removed: looked up without a lock (publishers on every
  // thread), created under outboxes_mu_.
  static constexpr size_t kMaxOutboxes = 1024;
  std::mutex outboxes_mu_;
  std::array<std::atomic<Outbox*>, kMaxOutboxes> outbox_slots_{};
  std::atomic<size_t> outbox_count_{0};
  std::vector<std::unique_ptr<Outbox>> outboxes_;  // owns what outbox_slots_ points to
};

}  // namespace hotkv
