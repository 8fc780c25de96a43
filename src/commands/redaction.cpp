// Secrets kept out of SLOWLOG and MONITOR (see redaction.hpp).
#include "hotkv/commands/redaction.hpp"

#include "hotkv/commands/string_helpers.hpp"

namespace hotkv {
namespace {

constexpr std::string_view kRedacted = "(redacted)";

}  // namespace

std::vector<std::string> redacted_args(std::span<const std::string_view> argv) {
  std::vector<std::string> out(argv.begin(), argv.end());
  if (out.empty()) {
    return out;
  }
  std::string_view cmd = argv[0];
  if (strcasecmp_view(cmd, "AUTH")) {
    for (size_t i = 1; i < out.size(); ++i) {
      out[i] = kRedacted;
    }
  } else if (strcasecmp_view(cmd, "HELLO")) {
    // HELLO protover [AUTH username password] [SETNAME name]
    for (size_t i = 2; i < out.size(); ++i) {
      if (strcasecmp_view(argv[i], "AUTH") && i + 2 < out.size()) {
        out[i + 1] = kRedacted;
        out[i + 2] = kRedacted;
        i += 2;
      }
    }
  } else if (strcasecmp_view(cmd, "CONFIG") && argv.size() >= 4 &&
             strcasecmp_view(argv[1], "SET")) {
    for (size_t i = 2; i + 1 < out.size(); i += 2) {
      if (strcasecmp_view(argv[i], "REQUIREPASS") || strcasecmp_view(argv[i], "MASTERAUTH")) {
        out[i + 1] = kRedacted;
      }
    }
  } else if (strcasecmp_view(cmd, "MIGRATE")) {
    for (size_t i = 6; i < out.size(); ++i) {
      if (strcasecmp_view(argv[i], "AUTH") && i + 1 < out.size()) {
        out[++i] = kRedacted;
      } else if (strcasecmp_view(argv[i], "AUTH2") && i + 2 < out.size()) {
        out[++i] = kRedacted;
        out[++i] = kRedacted;
      }
    }
  }
  return out;
}

}  // namespace hotkv
