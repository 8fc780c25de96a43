// MODULE: HotKV loads no modules. LIST answers an empty list and HELP its help, so tools that
// probe for modules (exporters, clients' HELLO handling) see none; LOAD, LOADEX and UNLOAD are
// refused with the error Redis 7 gives while its enable-module-command is "no".
#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/errors_server.hpp"
#include "hotkv/commands/families.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/commands/table.hpp"

namespace hotkv {
namespace {

void module_help(CommandContext& ctx) {
  static const char* kHelp[] = {
      "MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "LIST",
      "    Return a list of loaded modules (none: HotKV has no module support).",
      "LOAD <path> [<arg> ...]",
      "    Refused: modules cannot be loaded.",
      "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
      "    Refused: modules cannot be loaded.",
      "UNLOAD <name>",
      "    Refused: no module is loaded.",
      "HELP",
      "    Print this help."};
  ctx.reply.array(std::size(kHelp));
  for (const char* line : kHelp) {
    ctx.reply.simple(line);
  }
}

struct Subcommand {
  const char* name;  // upper case
  int arity;
  void (*run)(CommandContext&);
};
constexpr Subcommand kSubcommands[] = {
    {"LIST", 2, [](CommandContext& ctx) { ctx.reply.array(0); }},
    {"LOAD", -3, [](CommandContext& ctx) { ctx.error(err::kModuleCommandNotAllowed); }},
    {"LOADEX", -3, [](CommandContext& ctx) { ctx.error(err::kModuleCommandNotAllowed); }},
    {"UNLOAD", 3, [](CommandContext& ctx) { ctx.error(err::kModuleCommandNotAllowed); }},
    {"HELP", 2, module_help},
};

void cmd_module(CommandContext& ctx) {
  std::string_view sub = ctx.arg(1);
  for (const Subcommand& s : kSubcommands) {
    if (!strcasecmp_view(sub, s.name)) {
      continue;
    }
    auto argc = static_cast<int>(ctx.argc());
    if (s.arity >= 0 ? argc != s.arity : argc < -s.arity) {
      ctx.error(err::subcommand_arity("module", sub));
      return;
    }
    s.run(ctx);
    return;
  }
  ctx.error(err::unknown_subcommand("MODULE", sub));
}

}  // namespace

void register_modules(Table& t) {
  // clang-format off
  t.add({"MODULE", -2, kAdmin | kNoScript, no_keys(), cmd_module, "server", "MODULE LIST | LOAD path [arg [arg ...]] | LOADEX path [CONFIG name value [CONFIG name value ...]] [ARGS arg [arg ...]] | UNLOAD name | HELP", "Lists the loaded modules (none); loading modules is not supported.", {"list", "load", "loadex", "unload", "help"}});
  // clang-format on
}

}  // namespace hotkv
