// INFO errorstats: error replies counted by their code, the first word of the error
// ("ERR", "WRONGTYPE", "NOGROUP"), as Redis 7 counts them. Any thread counts; INFO reads.
//
// Codes are few and new ones rare, so they live in a fixed table that only grows: counting
// scans the codes published so far (no lock) and takes the mutex only to publish a code seen
// for the first time. As Redis, at most kMaxCodes distinct codes are tracked; errors with
// further codes are not (total_error_replies still counts them).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hotkv {

class ErrorStats {
 public:
  static constexpr size_t kMaxCodes = 128;
  // Redis looks for the code's end in the first 32 bytes of the error.
  static constexpr size_t kMaxCodeLength = 31;

  // The code of an error text ("NOGROUP No such key" -> "NOGROUP", with or without the
  // leading '-'); "ERR" when no space ends a code within the first 32 bytes, as Redis does.
  static std::string_view code_of(std::string_view error);

  // Any thread: one error reply with this text.
  void count(std::string_view error);
  // (code, count) of every code counted since the last reset, by code.
  std::vector<std::pair<std::string, uint64_t>> snapshot() const;
  // CONFIG RESETSTAT: every count goes to 0 (counts racing with it may survive). Unlike Redis,
  // which empties its table, a code keeps its slot, so the codes seen before a reset still
  // count towards kMaxCodes.
  void reset();

 private:
  struct Code {
    std::array<char, kMaxCodeLength> name{};
    uint8_t length = 0;
    std::atomic<uint64_t> count{0};
  };
  std::array<Code, kMaxCodes> codes_;
  std::atomic<size_t> published_{0};  // codes_[0, published_) are complete
  std::mutex publish_mutex_;
};

}  // namespace hotkv
