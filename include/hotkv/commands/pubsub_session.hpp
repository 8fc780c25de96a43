// A session's subscriptions, kept in step with the hub: used by the pub/sub commands, RESET
// and the connection when it closes. Connection's thread.
#pragma once

#include <string>
#include <string_view>

#include "hotkv/commands/client_session.hpp"
#include "hotkv/shard/engine.hpp"

namespace hotkv {

// Returns false if it was already subscribed.
bool subscribe_channel(Engine& engine, ClientSession& s, const std::string& name, bool pattern);
// Returns false if it was not subscribed.
bool unsubscribe_channel(Engine& engine, ClientSession& s, const std::string& name, bool pattern);
void unsubscribe_all(Engine& engine, ClientSession& s);

// RESP2 subscribers may run only these (Redis's rule); the error text otherwise.
bool allowed_while_subscribed(std::string_view command);
std::string subscribed_context_error(std::string_view command);

}  // namespace hotkv
