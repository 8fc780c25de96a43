// Session subscription bookkeeping (see pubsub_session.hpp).
#include "hotkv/commands/pubsub_session.hpp"

#include "hotkv/commands/errors_server.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/util/strings.hpp"

namespace hotkv {
namespace {

// What CLIENT LIST and CLIENT KILL TYPE pubsub read from other threads.
void publish_counts(ClientSession& s) {
  if (s.info) {
    s.info->channels.store(static_cast<uint32_t>(s.channels.size()), std::memory_order_relaxed);
    s.info->patterns.store(static_cast<uint32_t>(s.patterns.size()), std::memory_order_relaxed);
  }
}

}  // namespace

bool subscribe_channel(Engine& engine, ClientSession& s, const std::string& name, bool pattern) {
  auto& set = pattern ? s.patterns : s.channels;
  if (set.count(name) != 0) {
    return false;
  }
  bool first = s.subscriptions() == 0;
  set.insert(name);
  publish_counts(s);
  if (pattern) {
    engine.pubsub().psubscribe(name, s.pubsub);
  } else {
    engine.pubsub().subscribe(name, s.pubsub);
  }
  if (first) {
    engine.pubsub().client_subscribed(true);
  }
  return true;
}

bool unsubscribe_channel(Engine& engine, ClientSession& s, const std::string& name, bool pattern) {
  auto& set = pattern ? s.patterns : s.channels;
  auto it = set.find(name);
  if (it == set.end()) {
    return false;
  }
  set.erase(it);
  publish_counts(s);
  if (pattern) {
    engine.pubsub().punsubscribe(name, s.pubsub->id);
  } else {
    engine.pubsub().unsubscribe(name, s.pubsub->id);
  }
  if (s.subscriptions() == 0) {
    engine.pubsub().client_subscribed(false);
  }
  return true;
}

void unsubscribe_all(Engine& engine, ClientSession& s) {
  std::vector<std::string> channels(s.channels.begin(), s.channels.end());
  for (const auto& c : channels) {
    unsubscribe_channel(engine, s, c, false);
  }
  std::vector<std::string> patterns(s.patterns.begin(), s.patterns.end());
  for (const auto& p : patterns) {
    unsubscribe_channel(engine, s, p, true);
  }
}

bool allowed_while_subscribed(std::string_view command) {
  for (const char* name : {"SUBSCRIBE", "UNSUBSCRIBE", "PSUBSCRIBE", "PUNSUBSCRIBE",
                           "SSUBSCRIBE", "SUNSUBSCRIBE", "PING", "QUIT", "RESET"}) {
    if (strcasecmp_view(command, name)) {
      return true;
    }
  }
  return false;
}

std::string subscribed_context_error(std::string_view command) {
  return err::subscribed_context(command);
}

}  // namespace hotkv
