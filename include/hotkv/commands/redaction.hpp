// What SLOWLOG and MONITOR show of a command: its arguments, with the secrets in them
// (AUTH's password, HELLO ... AUTH, CONFIG SET of a password setting, MIGRATE's AUTH/AUTH2)
// replaced by "(redacted)", as Redis 7 shows them.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hotkv {

std::vector<std::string> redacted_args(std::span<const std::string_view> argv);

}  // namespace hotkv
