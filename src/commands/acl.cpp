// ACL SETUSER | GETUSER | DELUSER | LIST | USERS | WHOAMI | CAT | LOG | SAVE | LOAD | GENPASS |
// DRYRUN | HELP, with Redis 7's replies. The users live in the engine's AclStore
// (acl_store.hpp); connections pick up a change at their next command.
#include <algorithm>
#include <string>
#include <string_view>

#include <openssl/rand.h>

#include "hotkv/commands/acl_session.hpp"
#include "hotkv/commands/acl_store.hpp"
#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/errors_acl.hpp"
#include "hotkv/commands/errors_server.hpp"
#include "hotkv/commands/families.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/commands/subcommands.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/util/clock.hpp"
#include "hotkv/util/config.hpp"
#include "hotkv/util/numbers.hpp"
#include "hotkv/util/strings.hpp"

namespace hotkv {
namespace {

// Closes every connection authenticated as one of `names` (the caller's own after its reply),
// as Redis does for a deleted user.
void kill_clients_of(CommandContext& ctx, const std::vector<std::string>& names) {
  for (const auto& info : ctx.engine.clients().snapshot()) {
    std::string user = ctx.engine.clients().user(*info);
    if (std::find(names.begin(), names.end(), user) == names.end()) {
      continue;
    }
    if (info->id == ctx.session->info->id) {
      ctx.session->close_after_reply = true;
    } else if (info->control) {
      info->control->kill();
    }
  }
}

void acl_setuser(CommandContext& ctx) {
  std::vector<std::string_view> rules(ctx.argv.begin() + 3, ctx.argv.end());
  if (Status st = ctx.engine.acl().set_user(ctx.arg(2), rules); !st.is_ok()) {
    ctx.error("ERR " + st.message());
    return;
  }
  ctx.reply.ok();
}

void reply_selector(CommandContext& ctx, const AclSelector& s) {
  ctx.reply.bulk("commands");
  ctx.reply.bulk(acl_describe_commands(s));
  ctx.reply.bulk("keys");
  ctx.reply.bulk(acl_describe_keys(s));
  ctx.reply.bulk("channels");
  ctx.reply.bulk(acl_describe_channels(s));
}

void acl_getuser(CommandContext& ctx) {
  std::shared_ptr<const AclUser> u = ctx.engine.acl().find(ctx.arg(2));
  if (u == nullptr) {
    ctx.reply.null();
    return;
  }
  ctx.reply.map(6);
  ctx.reply.bulk("flags");
  std::vector<const char*> flags{u->enabled ? "on" : "off"};
  if (u->nopass) {
    flags.push_back("nopass");
  }
  if (u->sanitize_payload > 0) {
    flags.push_back("sanitize-payload");
  } else if (u->sanitize_payload < 0) {
    flags.push_back("skip-sanitize-payload");
  }
  ctx.reply.array(flags.size());
  for (const char* f : flags) {
    ctx.reply.bulk(f);
  }
  ctx.reply.bulk("passwords");
  ctx.reply.array(u->passwords.size());
  for (const std::string& p : u->passwords) {
    ctx.reply.bulk(p);
  }
  reply_selector(ctx, u->root);
  ctx.reply.bulk("selectors");
  ctx.reply.array(u->selectors.size());
  for (const AclSelector& s : u->selectors) {
    ctx.reply.map(3);
    reply_selector(ctx, s);
  }
}

void acl_deluser(CommandContext& ctx) {
  for (size_t i = 2; i < ctx.argc(); ++i) {
    if (ctx.arg(i) == "default") {
      ctx.error(err::kDefaultUserUndeletable);
      return;
    }
  }
  std::vector<std::string> deleted;
  for (size_t i = 2; i < ctx.argc(); ++i) {
    if (ctx.engine.acl().del_user(ctx.arg(i))) {
      deleted.emplace_back(ctx.arg(i));
    }
  }
  kill_clients_of(ctx, deleted);
  ctx.reply.integer(static_cast<int64_t>(deleted.size()));
}

void acl_list(CommandContext& ctx) {
  auto users = ctx.engine.acl().users();
  ctx.reply.array(users.size());
  for (const auto& u : users) {
    ctx.reply.bulk(acl_describe_user(*u));
  }
}

void acl_users(CommandContext& ctx) {
  auto users = ctx.engine.acl().users();
  ctx.reply.array(users.size());
  for (const auto& u : users) {
    ctx.reply.bulk(u->name);
  }
}

void acl_whoami(CommandContext& ctx) { ctx.reply.bulk(ctx.session->user_name); }

void acl_cat(CommandContext& ctx) {
  if (ctx.argc() > 3) {
    ctx.error(err::subcommand_arity("acl", ctx.arg(1)));
    return;
  }
  if (ctx.argc() == 2) {
    const auto& cats = acl_category_names();
    ctx.reply.array(cats.size());
    for (const std::string& c : cats) {
      ctx.reply.bulk(c);
    }
    return;
  }
  std::string cat = ascii_lower(ctx.arg(2));
  const auto& cats = acl_category_names();
  if (std::find(cats.begin(), cats.end(), cat) == cats.end()) {
    ctx.error("ERR Unknown category '" + std::string(ctx.arg(2)) + "'");
    return;
  }
  std::vector<std::string> names;
  for (const CommandSpec& spec : ctx.engine.table().all()) {
    if (!acl_command_in_category(spec, cat)) {
      continue;
    }
    // A container's subcommands share its entry, so its category; Redis lists both.
    names.push_back(ascii_lower(spec.name));
    for (const std::string& sub : spec.subcommands) {
      names.push_back(ascii_lower(spec.name) + "|" + sub);
    }
  }
  ctx.reply.array(names.size());
  for (const std::string& n : names) {
    ctx.reply.bulk(n);
  }
}

void acl_log(CommandContext& ctx) {
  size_t count = 10;
  if (ctx.argc() > 3) {
    ctx.error(err::subcommand_arity("acl", ctx.arg(1)));
    return;
  }
  if (ctx.argc() == 3) {
    if (strcasecmp_view(ctx.arg(2), "RESET")) {
      ctx.engine.acl().log_reset();
      ctx.reply.ok();
      return;
    }
    int64_t n = 0;
    if (!ctx.int_arg_or_reply(2, n)) {
      return;
    }
    count = n < 0 ? 0 : static_cast<size_t>(n);
  }
  std::vector<AclLogEntry> entries = ctx.engine.acl().log_entries(count);
  int64_t now = unix_ms();
  ctx.reply.array(entries.size());
  for (const AclLogEntry& e : entries) {
    ctx.reply.map(10);
    ctx.reply.bulk("count");
    ctx.reply.integer(static_cast<int64_t>(e.count));
    ctx.reply.bulk("reason");
    ctx.reply.bulk(e.reason);
    ctx.reply.bulk("context");
    ctx.reply.bulk(e.context);
    ctx.reply.bulk("object");
    ctx.reply.bulk(e.object);
    ctx.reply.bulk("username");
    ctx.reply.bulk(e.username);
    ctx.reply.bulk("age-seconds");
    ctx.reply.dbl(static_cast<double>(now - e.created_ms) / 1000.0);
    ctx.reply.bulk("client-info");
    ctx.reply.bulk(e.client_info);
    ctx.reply.bulk("entry-id");
    ctx.reply.integer(static_cast<int64_t>(e.entry_id));
    ctx.reply.bulk("timestamp-created");
    ctx.reply.integer(e.created_ms);
    ctx.reply.bulk("timestamp-last-updated");
    ctx.reply.integer(e.updated_ms);
  }
}

void acl_save(CommandContext& ctx) {
  std::string path = ctx.engine.config().get_string("aclfile");
  if (path.empty()) {
    ctx.error(err::kNoAclFile);
    return;
  }
  if (Status st = ctx.engine.acl().save_file(path); !st.is_ok()) {
    ctx.error(
        "ERR There was an error trying to save the ACLs. Please check the server logs "
        "for more information");
    return;
  }
  ctx.reply.ok();
}

void acl_load(CommandContext& ctx) {
  std::string path = ctx.engine.config().get_string("aclfile");
  if (path.empty()) {
    ctx.error(err::kNoAclFile);
    return;
  }
  std::vector<std::string> before;
  for (const auto& u : ctx.engine.acl().users()) {
    before.push_back(u->name);
  }
  if (Status st = ctx.engine.acl().load_file(path); !st.is_ok()) {
    ctx.error("ERR " + st.message());
    return;
  }
  // requirepass keeps naming the default user's password.
  std::string pass = ctx.engine.config().requirepass();
  if (!pass.empty()) {
    ctx.engine.acl().set_default_password(pass);
  }
  std::vector<std::string> gone;
  for (const std::string& name : before) {
    if (ctx.engine.acl().find(name) == nullptr) {
      gone.push_back(name);
    }
  }
  kill_clients_of(ctx, gone);
  ctx.reply.ok();
}

void acl_genpass(CommandContext& ctx) {
  int64_t bits = 256;
  if (ctx.argc() > 3) {
    ctx.error(err::subcommand_arity("acl", ctx.arg(1)));
    return;
  }
  if (ctx.argc() == 3) {
    auto v = parse_int64(ctx.arg(2));
    if (!v || *v <= 0 || *v > 4096) {
      ctx.error(err::kGenpassBits);
      return;
    }
    bits = *v;
  }
  size_t chars = static_cast<size_t>((bits + 3) / 4);
  std::string raw((chars + 1) / 2, '\0');
  RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), static_cast<int>(raw.size()));
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : raw) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  out.resize(chars);
  ctx.reply.bulk(out);
}

void acl_dryrun(CommandContext& ctx) {
  std::shared_ptr<const AclUser> u = ctx.engine.acl().find(ctx.arg(2));
  if (u == nullptr) {
    ctx.error("ERR User '" + std::string(ctx.arg(2)) + "' not found");
    return;
  }
  std::span<const std::string_view> argv = ctx.argv.subspan(3);
  const CommandSpec* spec = ctx.engine.table().find(argv[0]);
  if (spec == nullptr) {
    ctx.error("ERR Command '" + std::string(argv[0]) + "' not found");
    return;
  }
  int argc = static_cast<int>(argv.size());
  if ((spec->arity > 0 && argc != spec->arity) || (spec->arity < 0 && argc < -spec->arity)) {
    ctx.error(err::wrong_arity(argv[0]));
    return;
  }
  AclCheckResult r = acl_check(*u, *spec, argv, ctx.engine.table());
  switch (r.denial) {
    case AclDenial::kNone:
      ctx.reply.ok();
      break;
    case AclDenial::kKey:
      ctx.reply.bulk("This user has no permissions to access the '" + std::string(argv[r.arg]) +
                     "' key");
      break;
    case AclDenial::kChannel:
      ctx.reply.bulk("This user has no permissions to access the '" + std::string(argv[r.arg]) +
                     "' channel");
      break;
    default:
      ctx.reply.bulk("This user has no permissions to run the '" +
                     acl_command_fullname(*spec, argv) + "' command");
      break;
  }
}

void acl_help(CommandContext& ctx) {
  // clang-format off
  static const char* const kHelp[] = {
      "ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CAT [<category>]",
      "    List all commands that belong to <category>, or all command categories",
      "    when no category is specified.",
      "DELUSER <username> [<username> ...]",
      "    Delete a list of users.",
      "DRYRUN <username> <command> [<arg> ...]",
      "    Returns whether the user can execute the given command without executing the command.",
      "GETUSER <username>",
      "    Get the user's details.",
      "GENPASS [<bits>]",
      "    Generate a secure 256-bit user password. The optional `bits` argument can",
      "    be used to specify a different size.",
      "LIST",
      "    Show users details in config file format.",
      "LOAD",
      "    Reload users from the ACL file.",
      "LOG [<count> | RESET]",
      "    Show the ACL log entries.",
      "SAVE",
      "    Save the current config to the ACL file.",
      "SETUSER <username> <attribute> [<attribute> ...]",
      "    Create or modify a user with the specified attributes.",
      "USERS",
      "    List all the registered usernames.",
      "WHOAMI",
      "    Return the current connection username.",
      "HELP",
      "    Print this help."};
  // clang-format on
  ctx.reply.array(std::size(kHelp));
  for (const char* line : kHelp) {
    ctx.reply.simple(line);
  }
}

constexpr Subcommand kAclSubcommands[] = {
    {"CAT", -2, acl_cat},         {"DELUSER", -3, acl_deluser}, {"DRYRUN", -4, acl_dryrun},
    {"GENPASS", -2, acl_genpass}, {"GETUSER", 3, acl_getuser},  {"LIST", 2, acl_list},
    {"LOAD", 2, acl_load},        {"LOG", -2, acl_log},         {"SAVE", 2, acl_save},
    {"SETUSER", -3, acl_setuser}, {"USERS", 2, acl_users},      {"WHOAMI", 2, acl_whoami},
    {"HELP", 2, acl_help},
};

void cmd_acl(CommandContext& ctx) { run_subcommand(ctx, kAclSubcommands, "ACL"); }

}  // namespace

void register_acl(Table& t) {
  // clang-format off
  t.add({"ACL", -2, kConnection | kAdmin | kNoScript | kLoading | kStale, no_keys(), cmd_acl, "server", "ACL SETUSER|GETUSER|DELUSER|LIST|USERS|WHOAMI|CAT|LOG|SAVE|LOAD|GENPASS|DRYRUN|HELP [arguments]", "Manages ACL users: their passwords, and the commands, keys and channels they may use.", {"cat", "deluser", "dryrun", "genpass", "getuser", "list", "load", "log", "save", "setuser", "users", "whoami", "help"}});
  // clang-format on
}

}  // namespace hotkv
