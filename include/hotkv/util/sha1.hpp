// SHA-1, for script ids: EVALSHA names a script by the lowercase hex SHA-1 of its body, as
// Redis does, so a client computes the same id on either server.
#pragma once

#include <string>
#include <string_view>

namespace hotkv {

// 40 lowercase hex digits.
std::string sha1_hex(std::string_view data);

}  // namespace hotkv
