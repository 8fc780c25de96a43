// Pub/sub commands: SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, PUBLISH and PUBSUB. The
// subscription commands run on the client's own thread (they change its session); PUBLISH
// runs anywhere and the hub carries messages to the subscribers' threads (shard/pubsub.hpp).
// Confirmations and messages are arrays in RESP2 and push frames in RESP3, as in Redis.
#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/families.hpp"
#include "hotkv/commands/pubsub_session.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/util/strings.hpp"

namespace hotkv {
namespace {

// One confirmation: [kind, name or nil, subscription count]. It goes out even when the
// client silenced its replies (client_session.hpp).
void confirm(CommandContext& ctx, std::string_view kind, const std::string* name, size_t count) {
  ClientSession& s = *ctx.session;
  ReplyWriter side(s.pushes_while_silenced, s.resp);
  ReplyWriter& w = s.replies_silenced ? side : ctx.reply;
  w.push(3);
  w.bulk(kind);
  if (name != nullptr) {
    w.bulk(*name);
  } else {
    w.null();
  }
  w.integer(static_cast<int64_t>(count));
}

void cmd_subscribe(CommandContext& ctx) {
  ClientSession& s = *ctx.session;
  for (size_t i = 1; i < ctx.argc(); ++i) {
    std::string channel(ctx.arg(i));
    subscribe_channel(ctx.engine, s, channel, false);
    confirm(ctx, "subscribe", &channel, s.subscriptions());
  }
}

void cmd_psubscribe(CommandContext& ctx) {
  ClientSession& s = *ctx.session;
  for (size_t i = 1; i < ctx.argc(); ++i) {
    std::string pattern(ctx.arg(i));
    subscribe_channel(ctx.engine, s, pattern, true);
    confirm(ctx, "psubscribe", &pattern, s.subscriptions());
  }
}

void unsubscribe_generic(CommandContext& ctx, bool patterns) {
  ClientSession& s = *ctx.session;
  const char* kind = patterns ? "punsubscribe" : "unsubscribe";
  std::vector<std::string> names;
  if (ctx.argc() == 1) {
    const auto& current = patterns ? s.patterns : s.channels;
    names.assign(current.begin(), current.end());
    if (names.empty()) {
      confirm(ctx, kind, nullptr, s.subscriptions());
      return;
    }
  } else {
    for (size_t i = 1; i < ctx.argc(); ++i) {
      names.emplace_back(ctx.arg(i));
    }
  }
  for (const std::string& name : names) {
    unsubscribe_channel(ctx.engine, s, name, patterns);
    confirm(ctx, kind, &name, s.subscriptions());
  }
}

void cmd_unsubscribe(CommandContext& ctx) { unsubscribe_generic(ctx, false); }
void cmd_punsubscribe(CommandContext& ctx) { unsubscribe_generic(ctx, true); }

void cmd_publish(CommandContext& ctx) {
  PubSubHub& hub = ctx.engine.pubsub();
  // A message published after a write (in MULTI, a script, a pipeline) reaches no subscriber
  // before that write is durable (Shard::after_log). Inside a multi-shard operation the
  // writes may be pending on any of its shards: it is held until the operation has flushed
  // them all (Engine::flush_logs).
  if (!ctx.multi_shard && !ctx.shard.pushes_wait()) {
    ctx.reply.integer(static_cast<int64_t>(hub.publish(ctx.arg(1), ctx.arg(2))));
    return;
  }
  auto prepared = std::make_shared<PubSubHub::Prepared>(hub.prepare(ctx.arg(1), ctx.arg(2)));
  size_t n = prepared->receivers;
  if (n > 0) {
    ctx.shard.after_log([&hub, prepared] { hub.send(*prepared); }, ctx.multi_shard);
  }
  ctx.reply.integer(static_cast<int64_t>(n));
}

void cmd_pubsub(CommandContext& ctx) {
  std::string_view sub = ctx.arg(1);
  PubSubHub& hub = ctx.engine.pubsub();
  if (strcasecmp_view(sub, "CHANNELS") && ctx.argc() <= 3) {
    auto list = hub.channels(ctx.argc() == 3 ? ctx.arg(2) : std::string_view());
    ctx.reply.array(list.size());
    for (const auto& c : list) {
      ctx.reply.bulk(c);
    }
  } else if (strcasecmp_view(sub, "NUMSUB")) {
    ctx.reply.map(ctx.argc() - 2);
    for (size_t i = 2; i < ctx.argc(); ++i) {
      ctx.reply.bulk(ctx.arg(i));
      ctx.reply.integer(static_cast<int64_t>(hub.numsub(ctx.arg(i))));
    }
  } else if (strcasecmp_view(sub, "NUMPAT") && ctx.argc() == 2) {
    ctx.reply.integer(static_cast<int64_t>(hub.numpat()));
  } else if (strcasecmp_view(sub, "HELP") && ctx.argc() == 2) {
    static const char* kHelp[] = {
        "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CHANNELS [<pattern>]",
        "    Return the currently active channels matching a <pattern> (default: '*').",
        "NUMPAT",
        "    Return number of subscriptions to patterns.",
        "NUMSUB [<channel> ...]",
        "    Return the number of subscribers for the specified channels, excluding",
        "    pattern subscriptions(default: no channels).",
        "HELP",
        "    Print this help."};
    ctx.reply.array(std::size(kHelp));
    for (const char* line : kHelp) {
      ctx.reply.simple(line);
    }
  } else if (strcasecmp_view(sub, "NUMPAT") || strcasecmp_view(sub, "HELP")) {
    // Fixed-arity subcommands: Redis 7 checks them like commands of their own.
    ctx.error(err::subcommand_arity("pubsub", sub));
  } else if (strcasecmp_view(sub, "CHANNELS")) {
    ctx.error(err::subcommand_syntax("PUBSUB", sub));
  } else {
    ctx.error(err::unknown_subcommand("PUBSUB", sub));
  }
}

}  // namespace

void register_pubsub(Table& t) {
  constexpr uint32_t kSub = kConnection | kPubSub | kNoScript | kLoading | kStale;
  t.add({"SUBSCRIBE",    -2, kSub, no_keys(), cmd_subscribe,    "pubsub", "SUBSCRIBE channel [channel ...]", "Listens for messages published to channels."});
  t.add({"UNSUBSCRIBE",  -1, kSub, no_keys(), cmd_unsubscribe,  "pubsub", "UNSUBSCRIBE [channel [channel ...]]", "Stops listening to messages posted to channels."});
  t.add({"PSUBSCRIBE",   -2, kSub, no_keys(), cmd_psubscribe,   "pubsub", "PSUBSCRIBE pattern [pattern ...]", "Listens for messages published to channels that match one or more patterns."});
  t.add({"PUNSUBSCRIBE", -1, kSub, no_keys(), cmd_punsubscribe, "pubsub", "PUNSUBSCRIBE [pattern [pattern ...]]", "Stops listening to messages published to channels that match one or more patterns."});
  t.add({"PUBLISH",       3, kPubSub | kLoading | kStale | kFast, no_keys(), cmd_publish, "pubsub", "PUBLISH channel message", "Posts a message to a channel."});
  t.add({"PUBSUB",
         -2,
         kPubSub | kLoading | kStale,
         no_keys(),
         cmd_pubsub,
         "pubsub",
         "PUBSUB CHANNELS|NUMSUB|NUMPAT|HELP [arguments]",
         "Inspects the state of the pub/sub subsystem.",
         {"channels", "numsub", "numpat", "help"}});
}

}  // namespace hotkv
