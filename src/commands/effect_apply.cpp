// HOTKV.EFFECT, the internal command that carries an effect no Redis command can express (an
// inventory op) from a primary to a HotKV replica (docs/replication.md). It applies the op
// through the same registry replay uses, so a replica does exactly what loading the primary's
// log would do -- never a re-run of the command that produced it -- and logs it as its own
// effect. Flagged admin and noscript: it is for the replication stream, not for applications.
#include <string>
#include <vector>

#include "hotkv/commands/context.hpp"
#include "hotkv/commands/families.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/shard/effect_commands.hpp"
#include "hotkv/shard/effect_registry.hpp"
#include "hotkv/shard/op_effects.hpp"
#include "hotkv/types/encoding_limits.hpp"
#include "hotkv/util/notify.hpp"
#include "hotkv/util/numbers.hpp"

namespace hotkv {
namespace {

// HOTKV.EFFECT key op_code [arg ...]: the op's logged arguments, unchanged.
void cmd_hotkv_effect(CommandContext& ctx) {
  auto code = parse_int64(ctx.arg(2));
  const EffectOp* op = code && *code >= 0 && *code <= 0xFFFF
                           ? find_effect_op(static_cast<uint16_t>(*code))
                           : nullptr;
  if (op == nullptr) {
    ctx.error("ERR unknown effect op code '" + std::string(ctx.arg(2)) + "'");
    return;
  }
  Effect e;
  e.kind = EffectKind::kOp;
  e.key = std::string(ctx.arg(1));
  e.op = op->code;
  e.db = ctx.db_index;
  for (size_t i = 3; i < ctx.argc(); ++i) {
    e.args.emplace_back(ctx.arg(i));
  }
  // Every op decodes all its arguments and checks what it needs before it changes anything,
  // so a refused effect leaves the key as it was.
  std::string error;
  if (!op->apply(ctx.db(e.key), e,
                 ReplayContext{ctx.now_ms, EncodingLimits::from(ctx.engine.config())}, error)) {
    ctx.error("ERR " + std::string(op->name) + ": " + error);
    return;
  }
  std::vector<std::string_view> args(ctx.argv.begin() + 3, ctx.argv.end());
  ctx.log_op(e.key, static_cast<OpCode>(op->code), args);
  ctx.notify(kNotifyGeneric, "hotkv.effect", e.key);
  ctx.reply.ok();
}

}  // namespace

void register_effect_apply(Table& t) {
  // clang-format off
  t.add({"HOTKV.EFFECT", -3, kWrite | kDenyOom | kAdmin | kNoScript, keys(1, 1, 1), cmd_hotkv_effect, "server", "HOTKV.EFFECT key op_code [arg ...]", "Internal: applies one logged effect (an op of docs/aof-format.md) as replay does; sent by a primary to a HotKV replica."});
  // clang-format on
}

}  // namespace hotkv
