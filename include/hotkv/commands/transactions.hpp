// MULTI/EXEC state helpers shared by the transaction commands and the connection that runs
// EXEC.
#pragma once

#include "hotkv/commands/client_session.hpp"
#include "hotkv/commands/table.hpp"

namespace hotkv {

inline constexpr const char* kExecAbort =
    "EXECABORT Transaction discarded because of previous errors.";

// Ends the transaction and forgets the watched keys (EXEC, DISCARD, RESET).
void clear_transaction(ClientSession& session);

// True for the commands that run at once inside MULTI instead of being queued.
bool runs_inside_multi(const CommandSpec& spec);

}  // namespace hotkv
