// OpArgs: the arguments of one aggregate-value effect (op_effects.hpp) as they are built, ids
// as "ms-seq" and integers in decimal, in one buffer instead of a string per argument. Used
// by the commands that log effects and by the encoders that rebuild whole values. OpArgReader
// reads them back during replay.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hotkv/persist/record.hpp"
#include "hotkv/types/stream.hpp"
#include "hotkv/util/numbers.hpp"

namespace hotkv {

// Single-threaded; views() stays valid until the next add() or clear().
class OpArgs {
 public:
  OpArgs& add(std::string_view s) {
    parts_.emplace_back(buf_.size(), s.size());
    buf_.append(s);
    return *this;
  }
  OpArgs& add(StreamId id) {
    size_t start = buf_.size();
    id.append_to(buf_);
    parts_.emplace_back(start, buf_.size() - start);
    return *this;
  }
  OpArgs& add_int(int64_t v) {
    size_t start = buf_.size();
    append_int64(buf_, v);
    parts_.emplace_back(start, buf_.size() - start);
    return *this;
  }
  size_t size() const { return parts_.size(); }
  void clear() {
    buf_.clear();
    parts_.clear();
  }
  std::span<const std::string_view> views() {
    views_.clear();
    for (const auto& [off, len] : parts_) {
      views_.emplace_back(buf_.data() + off, len);
    }
    return views_;
  }

 private:
  std::string buf_;
  std::vector<std::pair<size_t, size_t>> parts_;
  std::vector<std::string_view> views_;
};

// Checked access to the arguments of one effect during replay; the first failure becomes the
// error text. Single-threaded; `e` and `error` must outlive the reader.
class OpArgReader {
 public:
  OpArgReader(const Effect& e, std::string& error) : args_(e.args), error_(error) {}
  size_t size() const { return args_.size(); }
  const std::string& str(size_t i) const { return args_[i]; }
  bool id(size_t i, StreamId& out) {
    return parse_stream_id(args_[i], 0, false, out) || fail("bad stream id '" + args_[i] + "'");
  }
  bool integer(size_t i, int64_t& out) {
    auto v = parse_int64(args_[i]);
    if (!v) {
      return fail("bad integer '" + args_[i] + "'");
    }
    out = *v;
    return true;
  }
  bool at_least(size_t n) { return args_.size() >= n || fail("too few arguments"); }
  bool exactly(size_t n) { return args_.size() == n || fail("wrong number of arguments"); }
  bool fail(std::string text) {
    error_ = std::move(text);
    return false;
  }

 private:
  const std::vector<std::string>& args_;
  std::string& error_;
};

}  // namespace hotkv
