// Hibernation: an idle client costs a few hundred bytes instead of a whole Connection.
//
// A parked connection (park_if_idle: idle 2 s, nothing buffered) still holds its Connection
// object (about 1.7 KB with its session), its suspended coroutine frames and asio's state for
// its socket. A client whose session is plain -- no transaction, subscription, tracking,
// WATCH, MONITOR, replication role, TLS or silenced replies -- gives all of that up: its
// descriptor goes to an epoll instance of the thread's ConnectionSet, and what its session
// holds beyond the defaults (database, protocol, user) goes into a HibernatedConnection. The
// ClientInfo stays in the registry, so CLIENT LIST, INFO and client eviction see the client as
// before. When the client sends again, or is killed, or a tracking message is addressed to it,
// the set rebuilds the Connection with the constructor a migration uses and starts it; its
// first read finds the bytes in the kernel. docs/architecture.md, "Idle connections cost
// little", has the figures.
#include <sys/epoll.h>
#include <unistd.h>

#include <array>

#include "hotkv/net/connection.hpp"
#include "hotkv/util/clock.hpp"
#include "hotkv/util/memory.hpp"

namespace hotkv {

namespace {

bool default_replica_handshake(const ReplicaHandshake& r) {
  return r.listening_port == 0 && r.announced_ip.empty() && !r.capa_eof && !r.capa_psync2 &&
         !r.rdb_only && !r.attached && r.sync == nullptr;
}

}  // namespace

bool Connection::hibernate() {
  const ClientSession& s = session_;
  bool plain = !tls_ && !master_ && !closing_ && !shutting_down_ && in_.size() == 0 &&
               out_.empty() && deferred_.empty() && inflight_.empty() && held_.empty() &&
               !push_sending_ && !coro_sending_ && !reply_deferred_ && !blocked_ &&
               executor_.idle() && !monitor_registered_ &&
               !replica_wake_ && !wait_timer_ && s.subscriptions() == 0 && !s.multi.active &&
               s.multi.queue.empty() && s.watch == nullptr && s.reply_mode == ReplyMode::kOn &&
               !s.skip_this_reply && !s.replies_silenced && s.pushes_while_silenced.empty() &&
               !s.close_after_reply && !s.monitoring && !s.tracking_caching &&
               s.info->tracking.load(std::memory_order_relaxed) == 0 && !s.master_link &&
               !s.running_exec && !s.pending_wait && default_replica_handshake(s.replica);
  if (!plain) {
    return false;
  }
  std::error_code ec;
  asio::ip::tcp protocol = socket_.local_endpoint(ec).protocol();
  if (ec) {
    return false;
  }
  int fd = socket_.release(ec);  // out of asio's reactor (the descriptor stays open)
  if (ec || fd < 0) {
    return false;
  }
  HibernatedConnection h;
  h.fd = fd;
  h.v6 = protocol == asio::ip::tcp::v6();
  h.resp = static_cast<uint8_t>(s.resp);
  h.authenticated = s.authenticated;
  h.db = s.db;
  h.acl_epoch = s.acl_epoch;
  h.info = s.info;
  h.owner = owner_;
  if ((s.user != nullptr ? std::string_view(s.user->name) : "default") != s.user_name) {
    return false;  // a user deleted since it logged in: the record could not name it
  }
  h.user = s.user;
  if (!set_.hibernate(engine_, shard_, std::move(h))) {
    socket_.assign(protocol, fd, ec);  // back to asio: it stays a parked connection
    if (ec) {
      ::close(fd);
      closing_ = true;
    }
    return false;
  }
  {
    std::lock_guard lock(owner_->mutex);
    owner_->conn.reset();
    owner_->hibernated_in = &set_;
  }
  session_.pubsub->sink = nullptr;
  return true;
}

bool ConnectionSet::hibernate(Engine& engine, size_t shard, HibernatedConnection&& h) {
  asio::io_context& io = engine.shard(shard).io();
  if (!epoll_) {
    int fd = ::epoll_create1(EPOLL_CLOEXEC);
    if (fd < 0) {
      return false;
    }
    engine_ = &engine;
    shard_ = shard;
    epoll_ = std::make_unique<asio::posix::stream_descriptor>(io, fd);
  }
  uint64_t id = h.info->id;
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP;
  ev.data.u64 = id;
  if (::epoll_ctl(epoll_->native_handle(), EPOLL_CTL_ADD, h.fd, &ev) != 0) {
    return false;  // out of epoll watches (max_user_watches): it stays a parked connection
  }
  conns_.erase(id);
  {
    ClientLifetimeAllocations lifetime;
    hibernated_.emplace(id, std::move(h));
  }
  engine.stats().hibernated_clients.fetch_add(1, std::memory_order_relaxed);
  watch_hibernated();
  return true;
}

void ConnectionSet::watch_hibernated() {
  if (watching_ || hibernated_.empty()) {
    return;
  }
  watching_ = true;
  epoll_->async_wait(asio::posix::stream_descriptor::wait_read, [this](std::error_code ec) {
    if (ec) {
      return;  // closed: the server is stopping
    }
    watching_ = false;
    wake_ready();
    watch_hibernated();
  });
}

void ConnectionSet::wake_ready() {
  std::array<epoll_event, 128> ready{};
  int n = ::epoll_wait(epoll_->native_handle(), ready.data(), static_cast<int>(ready.size()), 0);
  for (int i = 0; i < n; ++i) {
    wake(ready[static_cast<size_t>(i)].data.u64);
  }
  // More than a batch ready: the instance stays readable and the next wait returns at once.
}

std::shared_ptr<Connection> ConnectionSet::wake(uint64_t id,
                                                std::shared_ptr<const TrackingMessage> message) {
  auto it = hibernated_.find(id);
  if (it == hibernated_.end()) {
    return nullptr;
  }
  HibernatedConnection h = std::move(it->second);
  hibernated_.erase(it);
  engine_->stats().hibernated_clients.fetch_sub(1, std::memory_order_relaxed);
  ::epoll_ctl(epoll_->native_handle(), EPOLL_CTL_DEL, h.fd, nullptr);
  {
    std::lock_guard lock(h.owner->mutex);
    h.owner->hibernated_in = nullptr;
    if (message) {
      h.owner->keep_message(std::move(message));  // run() delivers it, as after a move
    }
  }
  ConnectionHandoff from;
  from.fd = h.fd;
  from.protocol = h.v6 ? asio::ip::tcp::v6() : asio::ip::tcp::v4();
  from.session.info = std::move(h.info);
  from.session.resp = h.resp;
  from.session.db = h.db;
  from.session.authenticated = h.authenticated;
  from.session.user_name = h.user != nullptr ? h.user->name : "default";
  from.session.user = std::move(h.user);
  from.session.acl_epoch = h.acl_epoch;
  from.owner = std::move(h.owner);
  return take_over(*engine_, shard_, std::move(from));
}

void ConnectionSet::close_hibernated(std::vector<uint64_t> ids) {
  for (uint64_t id : ids) {
    auto it = hibernated_.find(id);
    if (it == hibernated_.end()) {
      continue;
    }
    HibernatedConnection& h = it->second;
    {
      std::lock_guard lock(h.owner->mutex);
      h.owner->hibernated_in = nullptr;
      h.owner->io = nullptr;  // nothing is left to post to
    }
    ::close(h.fd);  // also leaves the epoll instance
    engine_->clients().remove(id);
    engine_->stats().hibernated_clients.fetch_sub(1, std::memory_order_relaxed);
    hibernated_.erase(it);
    count_released();
  }
}

}  // namespace hotkv
