// OpArgs: the arguments of one aggregate-value effect (op_effects.hpp) as they are built, ids
// as "ms-seq" and integers in decimal, in one buffer instead of a string per argument. Used
// by the commands that log effects (ctx.log_op) and by the encoders that rebuild whole values;
// replay reads effects back through each op's typed decode (op_codec.hpp).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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

}  // namespace hotkv
