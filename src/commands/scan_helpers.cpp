#include "hotkv/commands/scan_helpers.hpp"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <string>

#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/string_helpers.hpp"

namespace hotkv {

bool parse_scan_cursor_or_reply(CommandContext& ctx, std::string_view arg, uint64_t& out) {
  std::string text(arg);
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if ((!text.empty() && std::isspace(static_cast<unsigned char>(text[0])) != 0) || *end != '\0' ||
      errno == ERANGE) {
    ctx.error(err::kInvalidCursor);
    return false;
  }
  out = v;
  return true;
}

bool parse_scan_options_or_reply(CommandContext& ctx, size_t first, bool allow_novalues,
                                 ScanOptions& out) {
  for (size_t i = first; i < ctx.argc(); ++i) {
    bool has_arg = i + 1 < ctx.argc();
    if (has_arg && strcasecmp_view(ctx.arg(i), "COUNT")) {
      if (!ctx.int_arg_or_reply(++i, out.count)) {
        return false;
      }
      if (out.count < 1) {
        ctx.error(err::kSyntax);
        return false;
      }
    } else if (has_arg && strcasecmp_view(ctx.arg(i), "MATCH")) {
      out.pattern = ctx.arg(++i);
      out.has_pattern = out.pattern != "*";
    } else if (allow_novalues && strcasecmp_view(ctx.arg(i), "NOVALUES")) {
      out.novalues = true;
    } else {
      ctx.error(err::kSyntax);
      return false;
    }
  }
  return true;
}

void reply_empty_scan(CommandContext& ctx) {
  ctx.reply.array(2);
  ctx.reply.bulk("0");
  ctx.reply.array(0);
}

}  // namespace hotkv
