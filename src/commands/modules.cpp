// MODULE: HotKV loads no modules. LIST answers an empty list and HELP its help, so tools that
// probe for modules (exporters, clients' HELLO handling) see none; LOAD, LOADEX and UNLOAD are
// refused with the error Redis 7 gives while its enable-module-command is "no".
#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/errors_server.hpp"
#include "hotkv/commands/families.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/commands/subcommands.hpp"
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

constexpr Subcommand kModuleSubcommands[] = {
    {"LIST", 2, [](CommandContext& ctx) { ctx.reply.array(0); }},
    {"LOAD", -3, [](CommandContext& ctx) { ctx.error(err::kModuleCommandNotAllowed); }},
    {"LOADEX", -3, [](CommandContext& ctx) { ctx.error(err::kModuleCommandNotAllowed); }},
    {"UNLOAD", 3, [](CommandContext& ctx) { ctx.error(err::kModuleCommandNotAllowed); }},
    {"HELP", 2, module_help},
};

void cmd_module(CommandContext& ctx) { run_subcommand(ctx, kModuleSubcommands, "MODULE"); }

}  // namespace

void register_modules(Table& t) {
  // clang-format off
  t.add({"MODULE", -2, kAdmin | kNoScript, no_keys(), cmd_module, "server", "MODULE LIST | LOAD path [arg [arg ...]] | LOADEX path [CONFIG name value [CONFIG name value ...]] [ARGS arg [arg ...]] | UNLOAD name | HELP", "Lists the loaded modules (none); loading modules is not supported.", {"list", "load", "loadex", "unload", "help"}});
  // clang-format on
}

}  // namespace hotkv
