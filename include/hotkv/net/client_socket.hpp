// A client's TCP socket with one addition: a read that knows when it has emptied the socket,
// so that the next read waits for epoll instead of trying recv() first.
//
// asio's async_read_some always tries a non-blocking recv() before it waits (its reactor only
// stops trying after a read of zero bytes). A request/reply client has sent nothing new when
// we come back for its next request, so every request cost a second, empty recv() that
// answered EAGAIN. With TCP_INQ set, each recvmsg() also says how many bytes are still queued
// in the kernel -- counting a received FIN as one, so an end of stream that came with the
// last bytes is never lost. When nothing is left, read_some reports the read to the reactor
// as "exhausted": the reactor then skips the speculative recv() for the next read until an
// epoll event for the socket arrives (and any byte arriving later raises one in asio's
// edge-triggered set). The decision is taken inside the reactor, at the moment of the recv,
// so no edge can slip between the read and the wait whatever the coroutine awaits between.
//
// This reaches into asio's reactor internals (asio 1.22, epoll). On any other asio version or
// reactor, read_some is the ordinary async_read_some; where TCP_INQ is refused, every read
// counts as not exhausted, which is asio's own behaviour.
#pragma once

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <system_error>
#include <utility>

#include <asio/async_result.hpp>
#include <asio/buffer.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/version.hpp>

#if ASIO_VERSION == 102201 && defined(ASIO_HAS_EPOLL) && !defined(ASIO_HAS_IO_URING_AS_DEFAULT)
#define HOTKV_DRAINING_READ 1
#include <asio/detail/bind_handler.hpp>
#include <asio/detail/fenced_block.hpp>
#include <asio/detail/handler_alloc_helpers.hpp>
#include <asio/detail/handler_cont_helpers.hpp>
#include <asio/detail/handler_work.hpp>
#include <asio/detail/memory.hpp>
#include <asio/detail/reactor.hpp>
#include <asio/detail/reactor_op.hpp>
#include <asio/detail/socket_ops.hpp>
#endif

namespace hotkv {

// recvmsg and sendto as plain system calls. glibc's wrappers are thread-cancellation points
// and pay two atomic read-modify-writes per call for it; no thread here is ever cancelled,
// and a request makes one call of each.
inline ssize_t recvmsg_uncancellable(int fd, msghdr* msg, int flags) {
  return ::syscall(SYS_recvmsg, fd, msg, flags);
}
inline ssize_t send_uncancellable(int fd, const void* data, size_t size, int flags) {
  return ::syscall(SYS_sendto, fd, data, size, flags, nullptr, 0);
}

#ifdef HOTKV_DRAINING_READ
namespace detail {

// The reactor operation: asio's stream receive through recvmsg(), answering
// "done_and_exhausted" when TCP_INQ says nothing is left (see above). Handler allocation,
// work tracking and the upcall follow asio's own reactive_socket_recv_op.
template <typename Handler, typename IoExecutor>
class DrainingRecvOp : public asio::detail::reactor_op {
 public:
  ASIO_DEFINE_HANDLER_PTR(DrainingRecvOp);

  DrainingRecvOp(asio::detail::socket_type fd, asio::mutable_buffer buf, Handler& handler,
                 const IoExecutor& io_ex)
      : reactor_op(std::error_code(), &DrainingRecvOp::do_perform, &DrainingRecvOp::do_complete),
        fd_(fd),
        buf_(buf),
        handler_(std::move(handler)),
        work_(handler_, io_ex) {}

  static status do_perform(reactor_op* base) {
    auto* o = static_cast<DrainingRecvOp*>(base);
    iovec iov{o->buf_.data(), o->buf_.size()};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    ssize_t n;
    do {
      n = recvmsg_uncancellable(o->fd_, &msg, 0);
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        return not_done;  // stays queued until epoll reports the socket readable
      }
      o->ec_ = std::error_code(errno, asio::error::get_system_category());
      o->bytes_transferred_ = 0;
      return done_and_exhausted;
    }
    o->bytes_transferred_ = static_cast<size_t>(n);
    if (n == 0) {
      o->ec_ = asio::error::eof;
      return done_and_exhausted;
    }
    o->ec_ = std::error_code();
    return queued_after(msg) == 0 ? done_and_exhausted : done;
  }

  // TCP_INQ's count of bytes left after the read (a pending FIN counts as one); -1 without it.
  static int queued_after(msghdr& msg) {
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level == SOL_TCP && c->cmsg_type == TCP_CM_INQ) {
        int inq = -1;
        std::memcpy(&inq, CMSG_DATA(c), sizeof(inq));
        return inq;
      }
    }
    return -1;
  }

  static void do_complete(void* owner, asio::detail::operation* base,
                          const std::error_code& /*ec*/, std::size_t /*bytes*/) {
    auto* o = static_cast<DrainingRecvOp*>(base);
    ptr p = {asio::detail::addressof(o->handler_), o, o};
    asio::detail::handler_work<Handler, IoExecutor> w(std::move(o->work_));
    // The handler is moved out before the operation's memory is given back, as asio does:
    // part of the handler may own that memory.
    asio::detail::binder2<Handler, std::error_code, std::size_t> handler(
        o->handler_, o->ec_, o->bytes_transferred_);
    p.h = asio::detail::addressof(handler.handler_);
    p.reset();
    if (owner != nullptr) {
      asio::detail::fenced_block b(asio::detail::fenced_block::half);
      w.complete(handler, handler.handler_);
    }
  }

 private:
  asio::detail::socket_type fd_;
  asio::mutable_buffer buf_;
  Handler handler_;
  asio::detail::handler_work<Handler, IoExecutor> work_;
};

}  // namespace detail
#endif

class ClientSocket : public asio::ip::tcp::socket {
 public:
  explicit ClientSocket(asio::ip::tcp::socket&& s) : asio::ip::tcp::socket(std::move(s)) {
#ifdef HOTKV_DRAINING_READ
    int on = 1;
    ::setsockopt(native_handle(), SOL_TCP, TCP_INQ, &on, sizeof(on));
#endif
  }

  // A non-blocking send of as much of buf as the socket takes now (like write_some on a
  // non-blocking socket: would_block when it takes nothing). No SIGPIPE.
  size_t send_now(asio::const_buffer buf, std::error_code& ec) {
    ssize_t n;
    do {
      n = send_uncancellable(native_handle(), buf.data(), buf.size(), MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
      ec = errno == EAGAIN || errno == EWOULDBLOCK
               ? std::error_code(asio::error::would_block)
               : std::error_code(errno, asio::error::get_system_category());
      return 0;
    }
    ec.clear();
    return static_cast<size_t>(n);
  }

  // True if a read would not block now: bytes, an end of stream or an error are waiting. A
  // wait for readability (async_wait) must ask this first: asio's reactor drops an epoll
  // edge that arrives while no operation is queued, so bytes that came before the wait was
  // queued would raise no event for it.
  bool readable_now() {
    pollfd p{};
    p.fd = native_handle();
    p.events = POLLIN | POLLRDHUP;
    return ::poll(&p, 1, 0) != 0;
  }

  // Like async_read_some with one non-empty buffer. Per-operation cancellation slots are not
  // connected: a connection stops its read by closing the socket.
  template <typename Token>
  auto read_some(asio::mutable_buffer buf, Token&& token) {
#ifdef HOTKV_DRAINING_READ
    return asio::async_initiate<Token, void(std::error_code, std::size_t)>(
        [this, buf](auto handler) { start_draining_read(buf, std::move(handler)); }, token);
#else
    return async_read_some(buf, std::forward<Token>(token));
#endif
  }

 private:
#ifdef HOTKV_DRAINING_READ
  template <typename Handler>
  void start_draining_read(asio::mutable_buffer buf, Handler handler) {
    using Op = detail::DrainingRecvOp<Handler, executor_type>;
    auto& impl = impl_.get_implementation();
    auto& reactor = asio::use_service<asio::detail::reactor>(
        asio::query(get_executor(), asio::execution::context));
    bool is_continuation = asio_handler_cont_helpers::is_continuation(handler);
    typename Op::ptr p = {asio::detail::addressof(handler), Op::ptr::allocate(handler), nullptr};
    p.p = new (p.v) Op(impl.socket_, buf, handler, get_executor());
    if (buf.size() == 0) {
      reactor.post_immediate_completion(p.p, is_continuation);  // nothing to read: done at once
    } else if ((impl.state_ & asio::detail::socket_ops::non_blocking) != 0 ||
        asio::detail::socket_ops::set_internal_non_blocking(impl.socket_, impl.state_, true,
                                                             p.p->ec_)) {
      reactor.start_op(asio::detail::reactor::read_op, impl.socket_, impl.reactor_data_, p.p,
                       is_continuation, true);
    } else {
      reactor.post_immediate_completion(p.p, is_continuation);
    }
    p.v = p.p = nullptr;
  }
#endif
};

}  // namespace hotkv
