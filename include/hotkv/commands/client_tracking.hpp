// Client-side caching from the client's side: CLIENT TRACKING, CACHING, GETREDIR and
// TRACKINGINFO, and what a connection tells the engine before each command
// (docs/client-caching.md). Connection's thread.
#pragma once

#include "hotkv/commands/client_session.hpp"
#include "hotkv/commands/context.hpp"
#include "hotkv/shard/tracking.hpp"

namespace hotkv {

struct CommandSpec;

// Handles CLIENT TRACKING|CACHING|GETREDIR|TRACKINGINFO; false (nothing replied) for any
// other subcommand or arity.
bool client_tracking_subcommand(CommandContext& ctx);

// The caller the engine sees for `spec`, about to run for this session: whether its reads are
// remembered (tracking on, not BCAST, OPTIN/OPTOUT with CLIENT CACHING). A CLIENT CACHING
// answer lasts for one command, or for a whole transaction: it is consumed here by any command
// but CLIENT, and not inside MULTI (EXEC consumes it).
TrackingCaller take_tracking_caller(ClientSession& session, const CommandSpec& spec);

// Tracking off for this session (CLIENT TRACKING OFF, RESET, the connection's end).
void stop_tracking(Engine& engine, ClientSession& session);

}  // namespace hotkv
