// Small text helpers shared across layers.
#pragma once

#include <string>
#include <string_view>

namespace hotkv {

// ASCII lower case (command and subcommand names in Redis's error texts).
std::string ascii_lower(std::string_view s);
// ASCII upper case (subcommand names some error texts quote in capitals).
std::string ascii_upper(std::string_view s);

}  // namespace hotkv
