// The client registry (see client_registry.hpp). It is touched on connect, disconnect and by
// CLIENT commands, and by invalidations of tracked keys (find), never per request, so a mutex
// is fine here.
#include "hotkv/shard/client_registry.hpp"

#include <fmt/format.h>

#include "hotkv/util/memory.hpp"

namespace hotkv {

void ClientRegistry::add(std::shared_ptr<ClientInfo> info) {
  std::lock_guard<std::mutex> lock(mutex_);
  ClientLifetimeAllocations lifetime;  // the B-tree's nodes live as long as their clients
  clients_[info->id] = std::move(info);
  count_.store(clients_.size(), std::memory_order_relaxed);
}

void ClientRegistry::remove(uint64_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
  clients_.erase(id);
  count_.store(clients_.size(), std::memory_order_relaxed);
}

std::shared_ptr<ClientInfo> ClientRegistry::find(uint64_t id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = clients_.find(id);
  return it == clients_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<ClientInfo>> ClientRegistry::snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::shared_ptr<ClientInfo>> out;
  out.reserve(clients_.size());
  for (const auto& kv : clients_) {
    out.push_back(kv.second);
  }
  return out;
}

namespace {

ClientInfo::Labels& labels_of(ClientInfo& info) {
  if (!info.labels) {
    info.labels = std::make_unique<ClientInfo::Labels>();
  }
  return *info.labels;
}

}  // namespace

void ClientRegistry::set_name(ClientInfo& info, std::string name) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (info.labels || !name.empty()) {
    labels_of(info).name = std::move(name);
  }
}

std::string ClientRegistry::name(const ClientInfo& info) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return info.labels ? info.labels->name : std::string();
}

void ClientRegistry::set_no_evict(ClientInfo& info, bool on) {
  std::lock_guard<std::mutex> lock(mutex_);
  info.no_evict = on;
}

void ClientRegistry::set_lib(ClientInfo& info, const std::string* lib_name,
                             const std::string* lib_ver) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (lib_name != nullptr) {
    labels_of(info).lib_name = *lib_name;
  }
  if (lib_ver != nullptr) {
    labels_of(info).lib_ver = *lib_ver;
  }
}

void ClientRegistry::set_user(ClientInfo& info, std::string user) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (info.labels || user != "default") {
    labels_of(info).user = std::move(user);
  }
}

std::string ClientRegistry::user(const ClientInfo& info) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return info.labels ? info.labels->user : std::string("default");
}

std::string ClientRegistry::describe(const ClientInfo& info, int64_t now_ms,
                                     std::string_view cmd_name) const {
  std::string name;
  std::string lib_name;
  std::string lib_ver;
  std::string user = "default";
  bool no_evict = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (info.labels) {
      name = info.labels->name;
      user = info.labels->user;
      lib_name = info.labels->lib_name;
      lib_ver = info.labels->lib_ver;
    }
    no_evict = info.no_evict;
  }
  // Redis's letters, in its order: O monitor, S replica, M master, P pub/sub, x in MULTI,
  // b blocked, t tracking, R broken redirect, B broadcast, e no-evict, T no-touch.
  uint32_t tracking = info.tracking.load(std::memory_order_relaxed);
  int32_t multi = info.multi.load(std::memory_order_relaxed);
  std::string flags;
  if (info.monitor.load(std::memory_order_relaxed)) {
    flags += 'O';
  }
  switch (info.link.load(std::memory_order_relaxed)) {
    case ClientInfo::kReplicaLink:
      flags += 'S';
      break;
    case ClientInfo::kMasterLink:
      flags += 'M';
      break;
    default:
      break;
  }
  if (info.subscribed()) {
    flags += 'P';
  }
  if (multi >= 0) {
    flags += 'x';
  }
  if (info.blocked.load(std::memory_order_relaxed)) {
    flags += 'b';
  }
  if ((tracking & kTrackingOn) != 0) {
    flags += 't';
    if ((tracking & kTrackingBrokenRedirect) != 0) {
      flags += 'R';
    }
    if ((tracking & kTrackingBcast) != 0) {
      flags += 'B';
    }
  }
  if (no_evict) {
    flags += 'e';
  }
  if (info.no_touch.load(std::memory_order_relaxed)) {
    flags += 'T';
  }
  if (flags.empty()) {
    flags.push_back('N');  // (not = "N": GCC 12 warns wrongly there)
  }
  int64_t redir = (tracking & kTrackingOn) != 0
                      ? static_cast<int64_t>(info.tracking_redirect.load(std::memory_order_relaxed))
                      : -1;
  int64_t age = (now_ms - info.created_ms) / 1000;
  int64_t idle = (now_ms - info.last_interaction_ms.load(std::memory_order_relaxed)) / 1000;
  return fmt::format(
      "id={} addr={} laddr={} fd={} name={} age={} idle={} flags={} db={} sub={} psub={} ssub=0 "
      "multi={} qbuf={} qbuf-free=0 argv-mem=0 multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem={} "
      "tot-mem={} events=r cmd={} user={} redir={} resp={} lib-name={} lib-ver={} "
      "thread={}",
      info.id, info.addr, info.laddr, info.fd, name, age < 0 ? 0 : age, idle < 0 ? 0 : idle, flags,
      info.db.load(std::memory_order_relaxed), info.channels.load(std::memory_order_relaxed),
      info.patterns.load(std::memory_order_relaxed), multi,
      info.query_buffer.load(std::memory_order_relaxed),
      info.output_buffer.load(std::memory_order_relaxed), memory_of(info), cmd_name, user, redir,
      info.resp.load(std::memory_order_relaxed), lib_name, lib_ver,
      info.shard.load(std::memory_order_relaxed));
}

}  // namespace hotkv
