// COMMAND: what the server knows about its commands (COUNT, INFO, DOCS, LIST, GETKEYS,
// GETKEYSANDFLAGS, HELP), every reply generated from the command table. DOCS's argument trees
// come from the table's syntax strings (command_docs.hpp), key flags from the command's kind
// (key_flags.hpp).
#include <algorithm>
#include <string>
#include <vector>

#include "hotkv/commands/command_docs.hpp"
#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/errors_server.hpp"
#include "hotkv/commands/families.hpp"
#include "hotkv/commands/key_flags.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/util/glob.hpp"
#include "hotkv/util/strings.hpp"

namespace hotkv {
namespace {

// COMMAND LIST names a container's subcommands as Redis 7 does: "config", then "config|get"...
void append_with_subcommands(const CommandSpec& c, std::vector<std::string>& names) {
  std::string name = ascii_lower(c.name);
  for (const std::string& sub : c.subcommands) {
    names.push_back(name + "|" + sub);
  }
  names.push_back(std::move(name));
}

std::vector<std::string> acl_categories(const CommandSpec& c) {
  std::vector<std::string> out;
  if (c.group == "generic") {
    out.emplace_back("@keyspace");
  } else if (c.group != "server") {
    out.push_back("@" + c.group);
  }
  if ((c.flags & kWrite) != 0) {
    out.emplace_back("@write");
  }
  if ((c.flags & kReadOnly) != 0) {
    out.emplace_back("@read");
  }
  out.emplace_back((c.flags & kFast) != 0 ? "@fast" : "@slow");
  if ((c.flags & kAdmin) != 0) {
    out.emplace_back("@admin");
    out.emplace_back("@dangerous");
  }
  if ((c.flags & kAllShards) != 0 && (c.flags & kWrite) != 0) {
    out.emplace_back("@dangerous");
  }
  return out;
}

// Keys found by a function of the arguments rather than fixed positions move with the
// arguments ("movablekeys"). A container's finder only picks its subcommands' fixed key, so
// it is not movable (Redis marks MEMORY and OBJECT so too).
bool movable_keys(const CommandSpec& c) {
  return c.keys.finder != nullptr && c.subcommands.empty();
}

bool has_keys(const CommandSpec& c) { return c.keys.first > 0 || c.keys.finder != nullptr; }

void reply_command_info(CommandContext& ctx, const CommandSpec& c) {
  ctx.reply.array(10);
  ctx.reply.bulk(ascii_lower(c.name));
  ctx.reply.integer(c.arity);
  auto flags = flag_names(c.flags);
  if (movable_keys(c)) {
    flags.emplace_back("movablekeys");
  }
  ctx.reply.set(flags.size());
  for (const auto& f : flags) {
    ctx.reply.simple(f);
  }
  ctx.reply.integer(c.keys.first);
  ctx.reply.integer(c.keys.last);
  ctx.reply.integer(c.keys.step);
  auto cats = acl_categories(c);
  ctx.reply.set(cats.size());
  for (const auto& cat : cats) {
    ctx.reply.simple(cat);
  }
  ctx.reply.set(0);    // tips
  ctx.reply.array(0);  // key specifications
  ctx.reply.array(0);  // subcommands
}

// One argument of COMMAND DOCS, as Redis 7.0 shapes it: name, type, token, flags, arguments.
void reply_doc_arg(CommandContext& ctx, const DocArg& a) {
  std::vector<std::string_view> flags;
  if (a.optional) {
    flags.emplace_back("optional");
  }
  if (a.multiple) {
    flags.emplace_back("multiple");
  }
  if (a.multiple_token) {
    flags.emplace_back("multiple_token");
  }
  ctx.reply.map(2 + (a.token.empty() ? 0 : 1) + (flags.empty() ? 0 : 1) +
                (a.arguments.empty() ? 0 : 1));
  ctx.reply.bulk("name");
  ctx.reply.bulk(a.name);
  ctx.reply.bulk("type");
  ctx.reply.bulk(a.type);
  if (!a.token.empty()) {
    ctx.reply.bulk("token");
    ctx.reply.bulk(a.token);
  }
  if (!flags.empty()) {
    ctx.reply.bulk("flags");
    ctx.reply.set(flags.size());
    for (std::string_view f : flags) {
      ctx.reply.simple(f);
    }
  }
  if (!a.arguments.empty()) {
    ctx.reply.bulk("arguments");
    ctx.reply.array(a.arguments.size());
    for (const DocArg& sub : a.arguments) {
      reply_doc_arg(ctx, sub);
    }
  }
}

// summary, since, group and the argument tree. "since" is the HotKV version: the table does
// not record in which Redis version a command appeared.
void reply_command_docs(CommandContext& ctx, const CommandSpec& c) {
  SyntaxTree tree = parse_command_syntax(c.syntax);
  bool args = tree.ok && !tree.arguments.empty();
  ctx.reply.bulk(ascii_lower(c.name));
  ctx.reply.map(3 + (args ? 1 : 0));
  ctx.reply.bulk("summary");
  ctx.reply.bulk(c.summary);
  ctx.reply.bulk("since");
  ctx.reply.bulk(HOTKV_VERSION);
  ctx.reply.bulk("group");
  ctx.reply.bulk(c.group);
  if (args) {
    ctx.reply.bulk("arguments");
    ctx.reply.array(tree.arguments.size());
    for (const DocArg& a : tree.arguments) {
      reply_doc_arg(ctx, a);
    }
  }
}

void command_docs(CommandContext& ctx, const Table& table) {
  std::vector<const CommandSpec*> specs;
  if (ctx.argc() == 2) {
    for (const auto& c : table.all()) {
      specs.push_back(&c);
    }
  } else {
    for (size_t i = 2; i < ctx.argc(); ++i) {
      if (const CommandSpec* c = table.find(ctx.arg(i))) {
        specs.push_back(c);
      }
    }
  }
  ctx.reply.map(specs.size());
  for (const CommandSpec* c : specs) {
    reply_command_docs(ctx, *c);
  }
}

void reply_names(CommandContext& ctx, const std::vector<std::string>& names) {
  ctx.reply.array(names.size());
  for (const auto& n : names) {
    ctx.reply.bulk(n);
  }
}

// LIST [FILTERBY MODULE name|ACLCAT category|PATTERN pattern]. No modules exist, so MODULE
// filters down to nothing.
void command_list(CommandContext& ctx, const Table& table) {
  if (ctx.argc() != 2 && (ctx.argc() != 5 || !strcasecmp_view(ctx.arg(2), "FILTERBY"))) {
    ctx.error(err::kSyntax);
    return;
  }
  std::vector<std::string> names;
  if (ctx.argc() == 2) {
    for (const auto& c : table.all()) {
      append_with_subcommands(c, names);
    }
    reply_names(ctx, names);
    return;
  }
  std::string_view kind = ctx.arg(3);
  std::string_view value = ctx.arg(4);
  if (strcasecmp_view(kind, "MODULE")) {
    reply_names(ctx, names);
  } else if (strcasecmp_view(kind, "ACLCAT")) {
    std::string cat = "@" + ascii_lower(value);
    for (const auto& c : table.all()) {
      auto cats = acl_categories(c);
      if (std::find(cats.begin(), cats.end(), cat) != cats.end()) {
        append_with_subcommands(c, names);  // subcommands share their container's categories
      }
    }
    reply_names(ctx, names);
  } else if (strcasecmp_view(kind, "PATTERN")) {
    std::vector<std::string> all;
    for (const auto& c : table.all()) {
      append_with_subcommands(c, all);
    }
    for (std::string& n : all) {
      if (glob_match(value, n, true)) {
        names.push_back(std::move(n));
      }
    }
    reply_names(ctx, names);
  } else {
    ctx.error(err::kSyntax);
  }
}

// GETKEYS and GETKEYSANDFLAGS: the keys of a full command, in Redis 7's order of checks. A
// command whose keys all depend on its arguments (EVAL ... 0) may have none.
void command_getkeys(CommandContext& ctx, const Table& table, bool with_flags) {
  const CommandSpec* c = table.find(ctx.arg(2));
  if (c == nullptr) {
    ctx.error(err::kInvalidCommand);
    return;
  }
  if (!has_keys(*c)) {
    ctx.error(err::kNoKeyArguments);
    return;
  }
  auto argv = ctx.argv.subspan(2);
  int argc = static_cast<int>(argv.size());
  if ((c->arity > 0 && argc != c->arity) || (c->arity < 0 && argc < -c->arity)) {
    ctx.error(err::kInvalidCommandArgs);
    return;
  }
  std::vector<size_t> idx;
  if (!Table::key_indexes(*c, argv, idx) || idx.empty()) {
    if (movable_keys(*c) && c->keys.first == 0) {
      ctx.reply.array(0);
    } else {
      ctx.error(err::kInvalidGetkeysArgs);
    }
    return;
  }
  ctx.reply.array(idx.size());
  for (size_t n = 0; n < idx.size(); ++n) {
    if (!with_flags) {
      ctx.reply.bulk(argv[idx[n]]);
      continue;
    }
    ctx.reply.array(2);
    ctx.reply.bulk(argv[idx[n]]);
    auto flags = key_flags(*c, argv, n, idx.size());
    ctx.reply.set(flags.size());
    for (std::string_view f : flags) {
      ctx.reply.simple(f);
    }
  }
}

void command_help(CommandContext& ctx) {
  static const char* kHelp[] = {
      "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "(no subcommand)",
      "    Return details about all commands.",
      "COUNT",
      "    Return the total number of commands in this server.",
      "LIST [FILTERBY (MODULE <module-name>|ACLCAT <category>|PATTERN <pattern>)]",
      "    Return a list of all commands in this server.",
      "INFO [<command-name> ...]",
      "    Return details about multiple commands.",
      "DOCS [<command-name> ...]",
      "    Return documentation details about multiple commands.",
      "GETKEYS <full-command>",
      "    Return the keys from a full command.",
      "GETKEYSANDFLAGS <full-command>",
      "    Return the keys and the access flags from a full command.",
      "HELP",
      "    Print this help."};
  ctx.reply.array(std::size(kHelp));
  for (const char* line : kHelp) {
    ctx.reply.simple(line);
  }
}

void cmd_command(CommandContext& ctx) {
  const Table& table = ctx.engine.table();
  if (ctx.argc() == 1) {
    ctx.reply.array(table.size());
    for (const auto& c : table.all()) {
      reply_command_info(ctx, c);
    }
    return;
  }
  std::string_view sub = ctx.arg(1);
  if (strcasecmp_view(sub, "COUNT") && ctx.argc() == 2) {
    ctx.reply.integer(static_cast<int64_t>(table.size()));
  } else if (strcasecmp_view(sub, "INFO")) {
    if (ctx.argc() == 2) {
      ctx.reply.array(table.size());
      for (const auto& c : table.all()) {
        reply_command_info(ctx, c);
      }
      return;
    }
    ctx.reply.array(ctx.argc() - 2);
    for (size_t i = 2; i < ctx.argc(); ++i) {
      const CommandSpec* c = table.find(ctx.arg(i));
      if (c == nullptr) {
        ctx.reply.null_array();
      } else {
        reply_command_info(ctx, *c);
      }
    }
  } else if (strcasecmp_view(sub, "DOCS")) {
    command_docs(ctx, table);
  } else if (strcasecmp_view(sub, "LIST")) {
    command_list(ctx, table);
  } else if (strcasecmp_view(sub, "GETKEYS") && ctx.argc() >= 4) {
    // Redis 7's command|getkeys has arity -4: a command name and at least one argument.
    command_getkeys(ctx, table, false);
  } else if (strcasecmp_view(sub, "GETKEYSANDFLAGS") && ctx.argc() >= 4) {
    command_getkeys(ctx, table, true);
  } else if (strcasecmp_view(sub, "HELP") && ctx.argc() == 2) {
    command_help(ctx);
  } else {
    ctx.error(err::subcommand_arity("command", sub));
  }
}

}  // namespace

void register_command(Table& t) {
  // clang-format off
  t.add({"COMMAND",  -1, kLoading | kStale, no_keys(), cmd_command, "server", "COMMAND [COUNT | INFO [command-name [command-name ...]] | DOCS [command-name [command-name ...]] | LIST [FILTERBY (MODULE module-name | ACLCAT category | PATTERN pattern)] | GETKEYS command [arg [arg ...]] | GETKEYSANDFLAGS command [arg [arg ...]] | HELP]", "Returns detailed information about commands.", {"count", "info", "docs", "list", "getkeys", "getkeysandflags", "help"}});
  // clang-format on
}

}  // namespace hotkv
