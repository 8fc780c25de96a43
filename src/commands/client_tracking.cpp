// CLIENT TRACKING, CACHING, GETREDIR and TRACKINGINFO, with Redis 7.0's options, checks and
// error texts (see client_tracking.hpp).
#include "hotkv/commands/client_tracking.hpp"

#include <string>
#include <vector>

#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/errors_server.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/util/numbers.hpp"
#include "hotkv/util/strings.hpp"

namespace hotkv {
namespace {

// CLIENT TRACKING ON|OFF [REDIRECT id] [PREFIX p ...] [BCAST] [OPTIN] [OPTOUT] [NOLOOP]
void client_tracking(CommandContext& ctx) {
  ClientSession& s = *ctx.session;
  uint64_t redirect = 0;
  uint32_t options = 0;
  std::vector<std::string> prefixes;
  for (size_t j = 3; j < ctx.argc(); ++j) {
    bool more = j + 1 < ctx.argc();
    std::string_view opt = ctx.arg(j);
    if (strcasecmp_view(opt, "REDIRECT") && more) {
      ++j;
      if (redirect != 0) {
        ctx.error(err::kTrackingOneRedirect);
        return;
      }
      int64_t id = 0;
      if (!ctx.int_arg_or_reply(j, id)) {
        return;
      }
      // The target must exist now, though it may go away later (then tracking-redir-broken).
      if (id <= 0 || !ctx.engine.clients().find(static_cast<uint64_t>(id))) {
        ctx.error(err::kTrackingNoRedirectClient);
        return;
      }
      redirect = static_cast<uint64_t>(id);
    } else if (strcasecmp_view(opt, "BCAST")) {
      options |= kTrackingBcast;
    } else if (strcasecmp_view(opt, "OPTIN")) {
      options |= kTrackingOptin;
    } else if (strcasecmp_view(opt, "OPTOUT")) {
      options |= kTrackingOptout;
    } else if (strcasecmp_view(opt, "NOLOOP")) {
      options |= kTrackingNoloop;
    } else if (strcasecmp_view(opt, "PREFIX") && more) {
      prefixes.emplace_back(ctx.arg(++j));
    } else {
      ctx.error(err::kSyntax);
      return;
    }
  }
  if (strcasecmp_view(ctx.arg(2), "OFF")) {
    stop_tracking(ctx.engine, s);
    ctx.reply.ok();
    return;
  }
  if (!strcasecmp_view(ctx.arg(2), "ON")) {
    ctx.error(err::kSyntax);
    return;
  }
  uint32_t now = s.info->tracking.load(std::memory_order_relaxed);
  bool on = (now & kTrackingOn) != 0;
  bool bcast = (options & kTrackingBcast) != 0;
  if (!bcast && !prefixes.empty()) {
    ctx.error(err::kTrackingPrefixNeedsBcast);
    return;
  }
  if (on && ((now & kTrackingBcast) != 0) != bcast) {
    ctx.error(err::kTrackingBcastSwitch);
    return;
  }
  if (bcast && (options & (kTrackingOptin | kTrackingOptout)) != 0) {
    ctx.error(err::kTrackingOptInOutBcast);
    return;
  }
  if ((options & kTrackingOptin) != 0 && (options & kTrackingOptout) != 0) {
    ctx.error(err::kTrackingOptInAndOut);
    return;
  }
  if (on && (((options & kTrackingOptin) != 0 && (now & kTrackingOptout) != 0) ||
             ((options & kTrackingOptout) != 0 && (now & kTrackingOptin) != 0))) {
    ctx.error(err::kTrackingOptSwitch);
    return;
  }
  if (bcast) {
    if (Status st = ctx.engine.tracking().check_prefixes(s.info->id, prefixes); !st.is_ok()) {
      ctx.error(err::from_status(st));
      return;
    }
    if (prefixes.empty()) {
      prefixes.emplace_back();  // BCAST without PREFIX: every key
    }
  }
  ctx.engine.tracking().enable(*s.info, options, redirect, prefixes);
  ctx.reply.ok();
}

// CLIENT CACHING YES|NO
void client_caching(CommandContext& ctx) {
  ClientSession& s = *ctx.session;
  uint32_t flags = s.info->tracking.load(std::memory_order_relaxed);
  if ((flags & kTrackingOn) == 0) {
    ctx.error(err::kCachingNeedsTracking);
    return;
  }
  if (strcasecmp_view(ctx.arg(2), "YES")) {
    if ((flags & kTrackingOptin) == 0) {
      ctx.error(err::kCachingYesNeedsOptIn);
      return;
    }
  } else if (strcasecmp_view(ctx.arg(2), "NO")) {
    if ((flags & kTrackingOptout) == 0) {
      ctx.error(err::kCachingNoNeedsOptOut);
      return;
    }
  } else {
    ctx.error(err::kSyntax);
    return;
  }
  s.tracking_caching = true;
  ctx.reply.ok();
}

void client_trackinginfo(CommandContext& ctx) {
  ClientSession& s = *ctx.session;
  uint32_t flags = s.info->tracking.load(std::memory_order_relaxed);
  std::vector<const char*> names;
  if ((flags & kTrackingOn) == 0) {
    names.push_back("off");
  } else {
    names.push_back("on");
    if ((flags & kTrackingBcast) != 0) {
      names.push_back("bcast");
    }
    if ((flags & kTrackingOptin) != 0) {
      names.push_back("optin");
      if (s.tracking_caching) {
        names.push_back("caching-yes");
      }
    }
    if ((flags & kTrackingOptout) != 0) {
      names.push_back("optout");
      if (s.tracking_caching) {
        names.push_back("caching-no");
      }
    }
    if ((flags & kTrackingNoloop) != 0) {
      names.push_back("noloop");
    }
    if ((flags & kTrackingBrokenRedirect) != 0) {
      names.push_back("broken_redirect");
    }
  }
  ctx.reply.map(3);
  ctx.reply.bulk("flags");
  ctx.reply.set(names.size());
  for (const char* n : names) {
    ctx.reply.bulk(n);
  }
  ctx.reply.bulk("redirect");
  ctx.reply.integer(
      (flags & kTrackingOn) != 0 ? static_cast<int64_t>(s.info->tracking_redirect.load()) : -1);
  ctx.reply.bulk("prefixes");
  std::vector<std::string> prefixes = ctx.engine.tracking().prefixes_of(s.info->id);
  ctx.reply.array(prefixes.size());
  for (const std::string& p : prefixes) {
    ctx.reply.bulk(p);
  }
}

}  // namespace

bool client_tracking_subcommand(CommandContext& ctx) {
  std::string_view sub = ctx.arg(1);
  if (strcasecmp_view(sub, "TRACKING") && ctx.argc() >= 3) {
    client_tracking(ctx);
  } else if (strcasecmp_view(sub, "CACHING") && ctx.argc() == 3) {
    client_caching(ctx);
  } else if (strcasecmp_view(sub, "GETREDIR") && ctx.argc() == 2) {
    uint32_t flags = ctx.session->info->tracking.load(std::memory_order_relaxed);
    ctx.reply.integer((flags & kTrackingOn) != 0
                          ? static_cast<int64_t>(ctx.session->info->tracking_redirect.load())
                          : -1);
  } else if (strcasecmp_view(sub, "TRACKINGINFO") && ctx.argc() == 2) {
    client_trackinginfo(ctx);
  } else {
    return false;
  }
  return true;
}

TrackingCaller take_tracking_caller(ClientSession& session, const CommandSpec& spec) {
  TrackingCaller caller;
  caller.client = session.info->id;
  if (session.user != nullptr && !session.user->unrestricted) {
    caller.acl_user = session.user;
  }
  // TOUCH is the one command that still touches for a NO-TOUCH client, as in Redis.
  caller.no_touch = session.info->no_touch.load(std::memory_order_relaxed) && spec.name != "TOUCH";
  uint32_t flags = session.info->tracking.load(std::memory_order_relaxed);
  if ((flags & kTrackingOn) != 0 && (flags & kTrackingBcast) == 0) {
    bool optin = (flags & kTrackingOptin) != 0;
    bool optout = (flags & kTrackingOptout) != 0;
    caller.track_reads =
        !((optin && !session.tracking_caching) || (optout && session.tracking_caching));
  }
  if (!session.multi.active && spec.name != "CLIENT") {
    session.tracking_caching = false;
  }
  return caller;
}

void stop_tracking(Engine& engine, ClientSession& session) {
  engine.tracking().disable(*session.info);
  session.tracking_caching = false;
}

}  // namespace hotkv
