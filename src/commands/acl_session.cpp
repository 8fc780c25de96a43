// Authentication and per-command ACL checks for connections, EXEC and scripts (see
// acl_session.hpp).
#include "hotkv/commands/acl_session.hpp"

#include "hotkv/commands/acl_store.hpp"
#include "hotkv/commands/client_session.hpp"
#include "hotkv/commands/errors_acl.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/resp/writer.hpp"
#include "hotkv/shard/engine.hpp"
#include "hotkv/shard/tracking.hpp"
#include "hotkv/util/clock.hpp"
#include "hotkv/util/config.hpp"
#include "hotkv/util/strings.hpp"

namespace hotkv {
namespace {

const char* reason_name(AclDenial d) {
  switch (d) {
    case AclDenial::kCommand:
      return "command";
    case AclDenial::kKey:
      return "key";
    case AclDenial::kChannel:
      return "channel";
    case AclDenial::kAuth:
      return "auth";
    default:
      return "";
  }
}

// The session's snapshot, brought up to date when any user changed since it was taken.
const AclUser* current_user(ClientSession& session, Engine& engine) {
  uint64_t epoch = engine.acl().epoch();
  if (session.acl_epoch != epoch) {
    session.user = engine.acl().find(session.user_name);
    session.acl_epoch = epoch;
  }
  return session.user.get();
}

// The ACL LOG object of a denial: the command's full name, or the refused key or channel.
std::string denial_object(const AclCheckResult& r, const CommandSpec& spec,
                          std::span<const std::string_view> argv) {
  if (r.denial == AclDenial::kCommand) {
    return acl_command_fullname(spec, argv);
  }
  return std::string(argv[r.arg]);
}

}  // namespace

void install_acl(Engine& engine, Config& config, const Table& table) {
  auto store = std::make_shared<AclStore>(table);
  std::string pass = config.requirepass();
  if (!pass.empty()) {
    store->set_default_password(pass);
  }
  std::weak_ptr<AclStore> weak = store;
  config.set_requirepass_hook([weak](const std::string& p) {
    if (auto s = weak.lock()) {
      s->set_default_password(p);
    }
  });
  engine.set_acl(std::move(store));
}

std::string load_acl_at_startup(Engine& engine, const Config& config) {
  std::string aclfile = config.get_string("aclfile");
  std::vector<std::string> lines = config.user_lines();
  if (!aclfile.empty() && !lines.empty()) {
    return "Configuring Redis with users defined in redis.conf and at the same setting an ACL "
           "file path is invalid. This setup is very likely to lead to configuration errors "
           "and security holes, please define either an ACL file or declare users directly in "
           "your redis.conf, but not both.";
  }
  Status st;
  if (!aclfile.empty()) {
    st = engine.acl().load_file(aclfile);
  } else if (!lines.empty()) {
    st = engine.acl().load_lines(lines, "config file");
  }
  if (!st.is_ok()) {
    return st.message();
  }
  // requirepass still sets the default user's password when users come from elsewhere.
  std::string pass = config.requirepass();
  if (!pass.empty()) {
    engine.acl().set_default_password(pass);
  }
  return "";
}

void acl_start_session(ClientSession& session, Engine& engine) {
  session.user_name = "default";
  session.acl_epoch = engine.acl().epoch();
  session.user = engine.acl().find("default");
  session.authenticated = session.user != nullptr && session.user->enabled && session.user->nopass;
}

bool acl_authenticate(ClientSession& session, Engine& engine, std::string_view command,
                      std::string_view user, std::string_view password) {
  uint64_t epoch = engine.acl().epoch();
  std::shared_ptr<const AclUser> u = engine.acl().authenticate(user, password);
  if (u == nullptr) {
    acl_log_denial(engine, &session, user, AclDenial::kAuth,
                   session.multi.active ? "multi" : "toplevel", std::string(command),
                   ascii_lower(command));
    return false;
  }
  session.user_name = u->name;
  session.user = std::move(u);
  session.acl_epoch = epoch;
  session.authenticated = true;
  engine.clients().set_user(*session.info, session.user_name);
  return true;
}

bool acl_allows_or_reply(ClientSession& session, Engine& engine, const CommandSpec& spec,
                         std::span<const std::string_view> argv,
                         std::span<const size_t> key_indexes, ReplyWriter& reply) {
  const AclUser* u = current_user(session, engine);
  if ((u != nullptr && u->unrestricted) || session.master_link) {
    return true;  // the common case: one flag (a master's link runs whatever it sends)
  }
  AclCheckResult r{AclDenial::kCommand, 0};
  if (u != nullptr) {
    r = acl_check(*u, spec, argv, engine.table(), key_indexes);
    if (r.denial == AclDenial::kNone) {
      return true;
    }
  }
  std::string fullname = acl_command_fullname(spec, argv);
  acl_log_denial(engine, &session, session.user_name, r.denial,
                 session.multi.active ? "multi" : "toplevel", denial_object(r, spec, argv),
                 fullname);
  switch (r.denial) {
    case AclDenial::kKey:
      reply.error(err::kNoPermKey);
      break;
    case AclDenial::kChannel:
      reply.error(err::kNoPermChannel);
      break;
    default:
      reply.error(std::string(err::kNoPermCommandPrefix) + fullname + "' command");
      break;
  }
  return false;
}

std::string acl_exec_refusal(ClientSession& session, Engine& engine, const CommandSpec& spec,
                             std::span<const std::string_view> argv) {
  const AclUser* u = current_user(session, engine);
  if (u != nullptr && u->unrestricted) {
    return {};
  }
  AclCheckResult r{AclDenial::kCommand, 0};
  if (u != nullptr) {
    r = acl_check(*u, spec, argv, engine.table());
    if (r.denial == AclDenial::kNone) {
      return {};
    }
  }
  acl_log_denial(engine, &session, session.user_name, r.denial, "multi",
                 denial_object(r, spec, argv), acl_command_fullname(spec, argv));
  const char* reason = r.denial == AclDenial::kKey       ? err::kExecReasonKey
                       : r.denial == AclDenial::kChannel ? err::kExecReasonChannel
                                                         : err::kExecReasonCommand;
  return std::string(err::kNoPermExecPrefix) + reason;
}

const char* acl_script_refusal(Engine& engine, const CommandSpec& spec,
                               std::span<const std::string_view> argv) {
  const TrackingCaller& caller = current_tracking_caller();
  if (caller.acl_user == nullptr) {
    return nullptr;
  }
  AclCheckResult r = acl_check(*caller.acl_user, spec, argv, engine.table());
  if (r.denial == AclDenial::kNone) {
    return nullptr;
  }
  std::shared_ptr<ClientInfo> info = engine.clients().find(caller.client);
  std::string client_info =
      info != nullptr ? engine.clients().describe(*info, unix_ms_coarse(), "eval") : "";
  engine.acl().log(reason_name(r.denial), "lua", denial_object(r, spec, argv),
                   caller.acl_user->name, std::move(client_info), unix_ms_coarse(),
                   static_cast<size_t>(engine.config().acllog_max_len.load()));
  return r.denial == AclDenial::kKey       ? err::kScriptNoPermKey
         : r.denial == AclDenial::kChannel ? err::kScriptNoPermChannel
                                           : err::kScriptNoPermCommand;
}

bool acl_script_allows(Engine& engine, const CommandSpec& spec,
                       std::span<const std::string_view> argv) {
  const TrackingCaller& caller = current_tracking_caller();
  return caller.acl_user == nullptr ||
         acl_check(*caller.acl_user, spec, argv, engine.table()).denial == AclDenial::kNone;
}

void acl_log_denial(Engine& engine, const ClientSession* session, std::string_view username,
                    AclDenial denial, std::string_view context, std::string object,
                    std::string_view cmd_name) {
  int64_t now = unix_ms_coarse();
  std::string client_info;
  if (session != nullptr && session->info != nullptr) {
    client_info = engine.clients().describe(*session->info, now, cmd_name);
  }
  engine.acl().log(reason_name(denial), std::string(context), std::move(object),
                   std::string(username), std::move(client_info), now,
                   static_cast<size_t>(engine.config().acllog_max_len.load()));
}

}  // namespace hotkv
