// Bytes written as hex in tests (payloads captured from redis-server), e.g. "0a0b" -> "\x0a\x0b".
#pragma once

#include <string>
#include <string_view>

namespace hotkv::test {

inline std::string unhex(std::string_view h) {
  std::string out;
  for (size_t i = 0; i + 1 < h.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(h.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

}  // namespace hotkv::test
