// Connection commands: PING, ECHO, HELLO, AUTH, SELECT, QUIT, RESET and CLIENT. They run on the
// client's own thread (flag kConnection) because they read or change its session.
#include <algorithm>
#include <optional>

#include "hotkv/commands/acl_session.hpp"
#include "hotkv/commands/acl_store.hpp"
#include "hotkv/commands/client_tracking.hpp"
#include "hotkv/commands/command_call.hpp"
#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/errors_server.hpp"
#include "hotkv/commands/families.hpp"
#include "hotkv/commands/pubsub_session.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/commands/transactions.hpp"
#include "hotkv/util/clock.hpp"
#include "hotkv/util/glob.hpp"
#include "hotkv/util/numbers.hpp"
#include "hotkv/util/strings.hpp"

namespace hotkv {
namespace {

constexpr const char* kCompatVersion = "7.2.0";

void cmd_ping(CommandContext& ctx) {
  if (ctx.argc() > 2) {
    ctx.wrong_arity();
    return;
  }
  if (ctx.session != nullptr && ctx.session->resp == 2 && ctx.session->subscriptions() > 0) {
    // A RESP2 subscriber's PING answers in the shape of a message, as in Redis.
    ctx.reply.array(2);
    ctx.reply.bulk("pong");
    ctx.reply.bulk(ctx.argc() == 2 ? ctx.arg(1) : std::string_view());
    return;
  }
  if (ctx.argc() == 2) {
    ctx.reply.bulk(ctx.arg(1));
  } else {
    ctx.reply.simple("PONG");
  }
}

void cmd_echo(CommandContext& ctx) { ctx.reply.bulk(ctx.arg(1)); }

// AUTH and HELLO AUTH: the ACL user (default's password is requirepass); a failure is an
// "auth" entry of ACL LOG.
bool check_password(CommandContext& ctx, std::string_view user, std::string_view pass) {
  return acl_authenticate(*ctx.session, ctx.engine, ctx.arg(0), user, pass);
}

bool valid_client_name(std::string_view name) {
  return std::all_of(name.begin(), name.end(), [](char c) { return c >= '!' && c <= '~'; });
}

void cmd_auth(CommandContext& ctx) {
  if (ctx.argc() > 3) {
    ctx.error(err::kSyntax);
    return;
  }
  std::string_view user = ctx.argc() == 3 ? ctx.arg(1) : "default";
  std::string_view pass = ctx.arg(ctx.argc() - 1);
  if (ctx.argc() == 2 && ctx.engine.acl().default_is_open()) {
    ctx.error(err::kAuthNotConfigured);
    return;
  }
  if (!check_password(ctx, user, pass)) {
    ctx.error(err::kWrongPass);
    return;
  }
  ctx.reply.ok();
}

void reply_hello_map(CommandContext& ctx) {
  ctx.reply.map(7);
  ctx.reply.bulk("server");
  ctx.reply.bulk("hotkv");
  ctx.reply.bulk("version");
  ctx.reply.bulk(kCompatVersion);
  ctx.reply.bulk("proto");
  ctx.reply.integer(ctx.session->resp);
  ctx.reply.bulk("id");
  ctx.reply.integer(static_cast<int64_t>(ctx.session->info->id));
  ctx.reply.bulk("mode");
  ctx.reply.bulk("standalone");
  ctx.reply.bulk("role");
  ctx.reply.bulk("master");
  ctx.reply.bulk("modules");
  ctx.reply.array(0);
}

// HELLO [protover [AUTH username password] [SETNAME clientname]]
void cmd_hello(CommandContext& ctx) {
  int64_t proto = ctx.session->resp;
  size_t i = 1;
  if (ctx.argc() >= 2) {
    auto v = parse_int64(ctx.arg(1));
    if (!v) {
      ctx.error(err::kProtoNotInteger);
      return;
    }
    if (*v < 2 || *v > 3) {
      ctx.error(err::kNoProto);
      return;
    }
    proto = *v;
    i = 2;
  }
  std::string_view user;
  std::string_view pass;
  bool has_auth = false;
  std::string_view name;
  bool has_name = false;
  for (; i < ctx.argc(); ++i) {
    size_t more = ctx.argc() - i - 1;
    if (strcasecmp_view(ctx.arg(i), "AUTH") && more >= 2) {
      user = ctx.arg(i + 1);
      pass = ctx.arg(i + 2);
      has_auth = true;
      i += 2;
    } else if (strcasecmp_view(ctx.arg(i), "SETNAME") && more >= 1) {
      name = ctx.arg(i + 1);
      has_name = true;
      ++i;
    } else {
      ctx.error(err::hello_option(ctx.arg(i)));
      return;
    }
  }
  if (has_name && !valid_client_name(name)) {
    ctx.error(err::kClientNameChars);
    return;
  }
  if (has_auth && !check_password(ctx, user, pass)) {
    ctx.error(err::kWrongPass);
    return;
  }
  if (!has_auth && !ctx.session->authenticated) {
    ctx.error(err::kHelloNoAuth);
    return;
  }
  if (has_name) {
    ctx.engine.clients().set_name(*ctx.session->info, std::string(name));
  }
  ctx.session->resp = static_cast<int>(proto);
  ctx.session->info->resp.store(static_cast<int>(proto), std::memory_order_relaxed);
  // The reply itself already speaks the protocol just chosen.
  ReplyWriter w(ctx.reply.buffer(), ctx.session->resp);
  CommandContext hello_ctx{.argv = ctx.argv,
                           .reply = w,
                           .engine = ctx.engine,
                           .shard = ctx.shard,
                           .multi_shard = ctx.multi_shard,
                           .session = ctx.session,
                           .spec = ctx.spec,
                           .now_ms = ctx.now_ms,
                           .scratch = {},
                           .block_request = nullptr,
                           .woken = false,
                           .logged_shards = {}};
  reply_hello_map(hello_ctx);
}

void cmd_select(CommandContext& ctx) {
  int64_t db = 0;
  if (!ctx.int_arg_or_reply(1, db)) {
    return;
  }
  if (db < 0 || db >= static_cast<int64_t>(ctx.shard.db_count())) {
    ctx.error(err::kDbIndexRange);
    return;
  }
  // Inside a script there is no session: the script's own database changes (lua_redis_api).
  if (ctx.session != nullptr) {
    ctx.session->db = static_cast<uint32_t>(db);
    ctx.session->info->db.store(static_cast<uint32_t>(db), std::memory_order_relaxed);
  }
  ctx.reply.ok();
}

void cmd_quit(CommandContext& ctx) {
  ctx.session->close_after_reply = true;
  ctx.reply.ok();
}

void cmd_reset(CommandContext& ctx) {
  unsubscribe_all(ctx.engine, *ctx.session);
  stop_tracking(ctx.engine, *ctx.session);
  clear_transaction(*ctx.session);
  ctx.session->resp = 2;
  ctx.session->info->resp.store(2, std::memory_order_relaxed);
  ctx.session->db = 0;
  ctx.session->info->db.store(0, std::memory_order_relaxed);
  ctx.session->reply_mode = ReplyMode::kOn;
  ctx.session->skip_this_reply = false;
  // Back to the default user, authenticated only if it needs no password (as Redis's RESET).
  acl_start_session(*ctx.session, ctx.engine);
  ctx.engine.clients().set_user(*ctx.session->info, "default");
  ctx.engine.clients().set_name(*ctx.session->info, "");
  ReplyWriter w(ctx.reply.buffer(), 2);
  w.simple("RESET");
}

// CLIENT LIST's cmd=: the last command's statistics slot (net/connection.cpp stores it), so a
// container's subcommand is named as Redis names it ("client|list").
std::string command_name_of(const ClientInfo& info, const Table& table) {
  int64_t slot = info.last_command.load(std::memory_order_relaxed);
  if (slot < 0 || static_cast<size_t>(slot) >= table.stat_slots()) {
    return "NULL";
  }
  auto at = static_cast<size_t>(slot);
  if (at < table.size()) {
    return ascii_lower(table.all()[at].name);
  }
  for (const CommandSpec& spec : table.all()) {
    for (size_t i = 0; i < spec.subcommands.size(); ++i) {
      if (table.subcommand_slot(spec, i) == at) {
        return stat_slot_name(spec, i);
      }
    }
  }
  return "NULL";
}

// CLIENT LIST/KILL TYPE: Redis's client classes ("slave" is REPLICA's old name).
enum class ClientKind { kNormal, kMaster, kReplica, kPubSub };

std::optional<ClientKind> parse_client_kind(std::string_view t) {
  if (strcasecmp_view(t, "NORMAL")) {
    return ClientKind::kNormal;
  }
  if (strcasecmp_view(t, "MASTER")) {
    return ClientKind::kMaster;
  }
  if (strcasecmp_view(t, "REPLICA") || strcasecmp_view(t, "SLAVE")) {
    return ClientKind::kReplica;
  }
  if (strcasecmp_view(t, "PUBSUB")) {
    return ClientKind::kPubSub;
  }
  return std::nullopt;
}

ClientKind kind_of(const ClientInfo& info) {
  switch (info.link.load(std::memory_order_relaxed)) {
    case ClientInfo::kReplicaLink:
      return ClientKind::kReplica;
    case ClientInfo::kMasterLink:
      return ClientKind::kMaster;
    default:
      return info.subscribed() ? ClientKind::kPubSub : ClientKind::kNormal;
  }
}

void client_list(CommandContext& ctx) {
  std::vector<uint64_t> ids;
  std::optional<ClientKind> kind;
  for (size_t i = 2; i < ctx.argc(); ++i) {
    if (strcasecmp_view(ctx.arg(i), "ID")) {
      for (++i; i < ctx.argc(); ++i) {
        auto v = parse_int64(ctx.arg(i));
        if (!v || *v <= 0) {
          ctx.error(err::kInvalidClientId);
          return;
        }
        ids.push_back(static_cast<uint64_t>(*v));
      }
    } else if (strcasecmp_view(ctx.arg(i), "TYPE") && i + 1 < ctx.argc()) {
      std::string_view t = ctx.arg(++i);
      kind = parse_client_kind(t);
      if (!kind) {
        ctx.error(err::unknown_client_type(t));
        return;
      }
    } else {
      ctx.error(err::kSyntax);
      return;
    }
  }
  std::string out;
  for (const auto& info : ctx.engine.clients().snapshot()) {
    if (!ids.empty() && std::find(ids.begin(), ids.end(), info->id) == ids.end()) {
      continue;
    }
    if (kind && kind_of(*info) != *kind) {
      continue;
    }
    out += ctx.engine.clients().describe(*info, ctx.now_ms,
                                         command_name_of(*info, ctx.engine.table()));
    out += '\n';
  }
  ctx.reply.verbatim(out);
}

// CLIENT KILL addr | CLIENT KILL [ID id] [ADDR addr] [LADDR addr] [USER name] [SKIPME yes|no]
// [MAXAGE s] [TYPE normal|...]
// CLIENT UNBLOCK id [TIMEOUT|ERROR]: 1 if that client was blocked (it then gets the timeout
// reply, or -UNBLOCKED with ERROR), else 0.
void client_unblock(CommandContext& ctx) {
  int64_t id = 0;
  if (!ctx.int_arg_or_reply(2, id)) {
    return;
  }
  bool error = false;
  if (ctx.argc() == 4) {
    if (strcasecmp_view(ctx.arg(3), "ERROR")) {
      error = true;
    } else if (!strcasecmp_view(ctx.arg(3), "TIMEOUT")) {
      ctx.error(err::kUnblockReason);
      return;
    }
  }
  for (const auto& info : ctx.engine.clients().snapshot()) {
    if (static_cast<int64_t>(info->id) == id) {
      if (info->blocked.load(std::memory_order_relaxed) && info->control) {
        info->control->unblock(error);
        ctx.reply.integer(1);
        return;
      }
      break;
    }
  }
  ctx.reply.integer(0);
}

void client_kill(CommandContext& ctx) {
  bool old_form = ctx.argc() == 3;
  std::string addr;
  std::string laddr;
  uint64_t id = 0;
  std::optional<ClientKind> kind;
  bool skipme = true;
  int64_t maxage = 0;
  std::string user;
  if (old_form) {
    addr = std::string(ctx.arg(2));
    skipme = false;
  } else {
    if ((ctx.argc() - 2) % 2 != 0) {
      ctx.error(err::kSyntax);
      return;
    }
    for (size_t i = 2; i + 1 < ctx.argc(); i += 2) {
      std::string_view opt = ctx.arg(i);
      std::string_view val = ctx.arg(i + 1);
      if (strcasecmp_view(opt, "ID")) {
        auto v = parse_int64(val);
        if (!v || *v <= 0) {
          ctx.error(err::kClientIdPositive);
          return;
        }
        id = static_cast<uint64_t>(*v);
      } else if (strcasecmp_view(opt, "ADDR")) {
        addr = std::string(val);
      } else if (strcasecmp_view(opt, "LADDR")) {
        laddr = std::string(val);
      } else if (strcasecmp_view(opt, "USER")) {
        if (ctx.engine.acl().find(val) == nullptr) {
          ctx.error(err::no_such_user(val));
          return;
        }
        user = std::string(val);
      } else if (strcasecmp_view(opt, "SKIPME")) {
        if (strcasecmp_view(val, "YES")) {
          skipme = true;
        } else if (strcasecmp_view(val, "NO")) {
          skipme = false;
        } else {
          ctx.error(err::kSyntax);
          return;
        }
      } else if (strcasecmp_view(opt, "MAXAGE")) {
        auto v = parse_int64(val);
        if (!v) {
          ctx.error(err::kSyntax);
          return;
        }
        maxage = *v;
      } else if (strcasecmp_view(opt, "TYPE")) {
        kind = parse_client_kind(val);
        if (!kind) {
          ctx.error(err::unknown_client_type(val));
          return;
        }
      } else {
        ctx.error(err::kSyntax);
        return;
      }
    }
  }
  int64_t killed = 0;
  for (const auto& info : ctx.engine.clients().snapshot()) {
    if (id != 0 && info->id != id) {
      continue;
    }
    if (!addr.empty() && info->addr != addr) {
      continue;
    }
    if (!laddr.empty() && info->laddr != laddr) {
      continue;
    }
    if (maxage > 0 && (ctx.now_ms - info->created_ms) / 1000 < maxage) {
      continue;
    }
    if (kind && kind_of(*info) != *kind) {
      continue;
    }
    if (!user.empty() && ctx.engine.clients().user(*info) != user) {
      continue;
    }
    if (info->id == ctx.session->info->id) {
      if (skipme) {
        continue;
      }
      // Killing yourself: the reply is still delivered, then the connection closes.
      ctx.session->close_after_reply = true;
      ++killed;
      continue;
    }
    if (info->control) {
      info->control->kill();
    }
    ++killed;
  }
  if (old_form) {
    if (killed == 0) {
      ctx.error(err::kNoSuchClient);
    } else {
      ctx.reply.ok();
    }
    return;
  }
  ctx.reply.integer(killed);
}

// CLIENT PAUSE timeout [WRITE|ALL]: until the timeout (ms) passes or CLIENT UNPAUSE, every
// client's commands (ALL), or only those that write or may be replicated (WRITE), wait before
// they run (net/connection.cpp holds them). A pause over another keeps the later end and the
// stricter mode, as in Redis.
void client_pause(CommandContext& ctx) {
  if (ctx.argc() > 4) {
    ctx.error(err::subcommand_syntax("CLIENT", ctx.arg(1)));
    return;
  }
  auto timeout = parse_int64(ctx.arg(2));
  if (!timeout) {
    ctx.error(err::kPauseTimeout);
    return;
  }
  if (*timeout < 0) {
    ctx.error(err::kPauseNegative);
    return;
  }
  bool writes_only = false;
  if (ctx.argc() == 4) {
    if (strcasecmp_view(ctx.arg(3), "WRITE")) {
      writes_only = true;
    } else if (!strcasecmp_view(ctx.arg(3), "ALL")) {
      ctx.error(err::kPauseMode);
      return;
    }
  }
  Engine::ClientPause& pause = ctx.engine.client_pause();
  int64_t now = unix_ms();
  int64_t until = *timeout > INT64_MAX - now ? INT64_MAX : now + *timeout;
  int64_t current = pause.until_ms.load(std::memory_order_relaxed);
  if (current > now) {
    until = std::max(until, current);
    writes_only = writes_only && pause.writes_only.load(std::memory_order_relaxed);
  }
  pause.writes_only.store(writes_only, std::memory_order_relaxed);
  pause.until_ms.store(until, std::memory_order_release);
  ctx.reply.ok();
}

void cmd_client(CommandContext& ctx) {
  std::string_view sub = ctx.arg(1);
  ClientSession& s = *ctx.session;
  auto arity_error = [&] {
    ctx.error(err::subcommand_arity("client", sub));
  };
  if (client_tracking_subcommand(ctx)) {
    return;
  }
  if (strcasecmp_view(sub, "ID") && ctx.argc() == 2) {
    ctx.reply.integer(static_cast<int64_t>(s.info->id));
  } else if (strcasecmp_view(sub, "SETNAME") && ctx.argc() == 3) {
    if (!valid_client_name(ctx.arg(2))) {
      ctx.error(err::kClientNameChars);
      return;
    }
    ctx.engine.clients().set_name(*s.info, std::string(ctx.arg(2)));
    ctx.reply.ok();
  } else if (strcasecmp_view(sub, "GETNAME") && ctx.argc() == 2) {
    std::string name = ctx.engine.clients().name(*s.info);
    if (name.empty()) {
      ctx.reply.null();
    } else {
      ctx.reply.bulk(name);
    }
  } else if (strcasecmp_view(sub, "LIST")) {
    client_list(ctx);
  } else if (strcasecmp_view(sub, "INFO") && ctx.argc() == 2) {
    ctx.reply.verbatim(ctx.engine.clients().describe(*s.info, ctx.now_ms, "client|info") + "\n");
  } else if (strcasecmp_view(sub, "KILL") && ctx.argc() >= 3) {
    client_kill(ctx);
  } else if (strcasecmp_view(sub, "UNBLOCK") && (ctx.argc() == 3 || ctx.argc() == 4)) {
    client_unblock(ctx);
  } else if (strcasecmp_view(sub, "SETINFO") && ctx.argc() == 4) {
    std::string attr(ctx.arg(2));
    std::string val(ctx.arg(3));
    if (!valid_client_name(val) && !val.empty()) {
      ctx.error(err::client_attribute_chars(attr));
      return;
    }
    if (strcasecmp_view(attr, "LIB-NAME")) {
      ctx.engine.clients().set_lib(*s.info, &val, nullptr);
    } else if (strcasecmp_view(attr, "LIB-VER")) {
      ctx.engine.clients().set_lib(*s.info, nullptr, &val);
    } else {
      ctx.error(err::unrecognized_option(attr));
      return;
    }
    ctx.reply.ok();
  } else if (strcasecmp_view(sub, "PAUSE") && ctx.argc() >= 3) {
    client_pause(ctx);
  } else if (strcasecmp_view(sub, "UNPAUSE") && ctx.argc() == 2) {
    ctx.engine.client_pause().until_ms.store(0, std::memory_order_release);
    ctx.engine.client_pause().writes_only.store(false, std::memory_order_relaxed);
    ctx.reply.ok();
  } else if (strcasecmp_view(sub, "NO-TOUCH") && ctx.argc() == 3) {
    if (strcasecmp_view(ctx.arg(2), "ON")) {
      s.info->no_touch.store(true, std::memory_order_relaxed);
    } else if (strcasecmp_view(ctx.arg(2), "OFF")) {
      s.info->no_touch.store(false, std::memory_order_relaxed);
    } else {
      ctx.error(err::kSyntax);
      return;
    }
    ctx.reply.ok();
  } else if (strcasecmp_view(sub, "NO-EVICT") && ctx.argc() == 3) {
    if (!strcasecmp_view(ctx.arg(2), "ON") && !strcasecmp_view(ctx.arg(2), "OFF")) {
      ctx.error(err::kSyntax);
      return;
    }
    // Client eviction (maxmemory-clients) passes over this client; CLIENT LIST shows flag e.
    ctx.engine.clients().set_no_evict(*s.info, strcasecmp_view(ctx.arg(2), "ON"));
    ctx.reply.ok();
  } else if (strcasecmp_view(sub, "REPLY") && ctx.argc() == 3) {
    if (strcasecmp_view(ctx.arg(2), "ON")) {
      s.reply_mode = ReplyMode::kOn;
      s.skip_this_reply = false;  // a SKIP just before is cancelled, and this OK is sent
      ctx.reply.ok();
    } else if (strcasecmp_view(ctx.arg(2), "OFF")) {
      s.reply_mode = ReplyMode::kOff;
    } else if (strcasecmp_view(ctx.arg(2), "SKIP")) {
      if (s.reply_mode == ReplyMode::kOn) {
        s.skip_this_reply = true;
      }
    } else {
      ctx.error(err::kSyntax);
    }
  } else if (strcasecmp_view(sub, "HELP") && ctx.argc() == 2) {
    // clang-format off
    static const char* kHelp[] = {
        "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "ID", "    Return the ID of the current connection.",
        "GETNAME", "    Return the name of the current connection.",
        "SETNAME <name>", "    Assign the name <name> to the current connection.",
        "LIST [TYPE <type>] [ID <id> [<id> ...]]", "    Return information about client connections.",
        "INFO", "    Return information about the current client connection.",
        "KILL <ip:port> | KILL <option> <value> [...]", "    Kill connections.",
        "SETINFO <LIB-NAME|LIB-VER> <value>", "    Set client library name or version.",
        "PAUSE <timeout> [WRITE|ALL]", "    Hold every client's commands (ALL, the default) or only writes (WRITE) for <timeout> ms.",
        "UNPAUSE", "    End a CLIENT PAUSE at once.",
        "NO-TOUCH (ON|OFF)", "    ON: this connection's commands leave the keys' LRU/LFU clocks alone (except TOUCH).",
        "NO-EVICT (ON|OFF)", "    Protect the current client connection from eviction.",
        "REPLY (ON|OFF|SKIP)", "    Control the replies sent to the current connection.",
        "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]] [OPTIN] [OPTOUT] [NOLOOP]",
        "    Control server assisted client side caching.",
        "CACHING (YES|NO)", "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
        "GETREDIR", "    Return the client ID we are redirecting to when tracking is enabled.",
        "TRACKINGINFO", "    Report tracking status for the current connection.",
        "HELP", "    Print this help."};
    // clang-format on
    ctx.reply.array(std::size(kHelp));
    for (const char* line : kHelp) {
      ctx.reply.simple(line);
    }
  } else {
    arity_error();
  }
}

}  // namespace

void register_connection(Table& t) {
  constexpr uint32_t kConn = kConnection | kFast;
  // clang-format off
  t.add({"PING",   -1, kConn, no_keys(), cmd_ping, "connection", "PING [message]", "Returns the server's liveliness response."});
  t.add({"ECHO",    2, kConn | kLoading | kStale, no_keys(), cmd_echo, "connection", "ECHO message", "Returns the given string."});
  t.add({"HELLO",  -1, kConn | kNoAuth | kNoScript | kLoading | kStale | kAllowBusy, no_keys(), cmd_hello, "connection", "HELLO [protover [AUTH username password] [SETNAME clientname]]", "Handshakes with the server: selects the protocol version, authenticates, names the client."});
  t.add({"AUTH",   -2, kConn | kNoAuth | kNoScript | kLoading | kStale | kAllowBusy, no_keys(), cmd_auth, "connection", "AUTH [username] password", "Authenticates the connection."});
  t.add({"SELECT",  2, kConn | kLoading | kStale, no_keys(), cmd_select, "connection", "SELECT index", "Changes the selected database."});
  t.add({"QUIT",   -1, kConn | kNoAuth | kNoScript | kLoading | kStale | kAllowBusy | kRunsInMulti, no_keys(), cmd_quit, "connection", "QUIT", "Closes the connection."});
  t.add({"RESET",   1, kConn | kNoAuth | kNoScript | kLoading | kStale | kAllowBusy | kRunsInMulti, no_keys(), cmd_reset, "connection", "RESET", "Resets the connection."});
  t.add({"CLIENT", -2, kConnection | kAdmin | kNoScript | kLoading | kStale, no_keys(), cmd_client, "connection", "CLIENT ID|SETNAME|GETNAME|LIST|INFO|KILL|UNBLOCK|SETINFO|PAUSE|UNPAUSE|NO-TOUCH|NO-EVICT|REPLY|TRACKING|CACHING|GETREDIR|TRACKINGINFO|HELP [arguments]", "Inspects and controls client connections.", {"id", "setname", "getname", "list", "info", "kill", "unblock", "setinfo", "pause", "unpause", "no-touch", "no-evict", "reply", "tracking", "caching", "getredir", "trackinginfo", "help"}});
  // clang-format on
}

}  // namespace hotkv
