// A connection's input buffer: bytes received but not yet consumed by the parser. It grows
// only when it is full of unconsumed bytes, so the memory a half-received request holds is
// bounded by what the client actually sent, never by a length it claims. It holds no memory
// until the first read, and an idle connection gives it back (release), so ten thousand
// connected shoppers who are not typing cost no input buffers.
#pragma once

#include <cstring>
#include <string_view>
#include <vector>

namespace hotkv {

class InputBuffer {
 public:
  static constexpr size_t kInitial = 16 * 1024;
  static constexpr size_t kMinRead = 4 * 1024;

  InputBuffer() = default;

  std::string_view data() const { return {buf_.data() + start_, end_ - start_}; }
  size_t size() const { return end_ - start_; }
  void consume(size_t n) {
    start_ += n;
    if (start_ == end_) {
      start_ = end_ = 0;
    }
  }
  // Makes room for at least kMinRead bytes: first by moving unconsumed bytes to the front,
  // then by doubling.
  void prepare() {
    if (buf_.empty()) {
      buf_.resize(kInitial);
      return;
    }
    if (buf_.size() - end_ >= kMinRead) {
      return;
    }
    if (start_ > 0) {
      std::memmove(buf_.data(), buf_.data() + start_, end_ - start_);
      end_ -= start_;
      start_ = 0;
    }
    if (buf_.size() - end_ < kMinRead) {
      buf_.resize(buf_.size() * 2);
    }
  }
  char* write_ptr() { return buf_.data() + end_; }
  size_t writable() const { return buf_.size() - end_; }
  void commit(size_t n) { end_ += n; }
  size_t capacity() const { return buf_.size(); }
  // Frees the buffer if it holds nothing; the next prepare() allocates it again.
  void release() {
    if (start_ == end_) {
      std::vector<char>().swap(buf_);
      start_ = end_ = 0;
    }
  }
  // Gives memory back after a big request was consumed.
  void shrink_if_idle() {
    if (start_ == end_ && buf_.size() > 4 * kInitial) {
      std::vector<char>(kInitial).swap(buf_);
      start_ = end_ = 0;
    }
  }

 private:
  std::vector<char> buf_;
  size_t start_ = 0;
  size_t end_ = 0;
};

}  // namespace hotkv
