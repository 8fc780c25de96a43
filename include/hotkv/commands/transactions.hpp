// MULTI/EXEC state helpers shared by the transaction commands and the connection that runs
// EXEC.
#pragma once

#include <string>
#include <string_view>

#include "hotkv/commands/client_session.hpp"
#include "hotkv/commands/table.hpp"

namespace hotkv {

inline constexpr const char* kExecAbort =
    "EXECABORT Transaction discarded because of previous errors.";
// EXEC itself refused (a busy script): Redis names the reason in the EXECABORT.
inline std::string exec_abort_because(std::string_view reason) {
  return "EXECABORT Transaction discarded because of: " + std::string(reason);
}

// Ends the transaction and forgets the watched keys (EXEC, DISCARD, RESET).
void clear_transaction(ClientSession& session);

// True for the commands that run at once inside MULTI instead of being queued.
bool runs_inside_multi(const CommandSpec& spec);

}  // namespace hotkv
