// The command table (see table.hpp): registration, case-insensitive lookup, key positions and
// the docs page rendered from it.
#include "hotkv/commands/table.hpp"

#include "hotkv/commands/acl_session.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "hotkv/commands/families.hpp"
#include "hotkv/commands/script_store.hpp"
#include "hotkv/shard/engine.hpp"

namespace hotkv {

void Table::add(CommandSpec spec) {
  if (spec.handler == nullptr || index_.count(spec.name) > 0) {
    throw std::logic_error("bad command table entry: " + spec.name);
  }
  spec.id = commands_.size();
  // Subcommand slots follow every command's, so they are numbered apart until the table is
  // complete (subcommand_slot adds the command count).
  spec.first_sub = subcommand_count_;
  subcommand_count_ += spec.subcommands.size();
  index_.emplace(spec.name, spec.id);
  commands_.push_back(std::move(spec));
}

const CommandSpec* Table::find(std::string_view name) const {
  char buf[64];
  if (name.size() > sizeof(buf)) {
    return nullptr;
  }
  // ASCII only, inline: std::toupper is a locale-aware library call per character, and this
  // runs once per command.
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    buf[i] = c >= 'a' && c <= 'z' ? static_cast<char>(c - ('a' - 'A')) : c;
  }
  auto it = index_.find(std::string_view(buf, name.size()));
  return it == index_.end() ? nullptr : &commands_[it->second];
}

size_t Table::stat_slot(const CommandSpec& spec, std::span<const std::string_view> argv) const {
  if (spec.subcommands.empty() || argv.size() < 2) {
    return spec.id;
  }
  for (size_t i = 0; i < spec.subcommands.size(); ++i) {
    const std::string& sub = spec.subcommands[i];
    std::string_view a = argv[1];
    if (a.size() == sub.size() && std::equal(a.begin(), a.end(), sub.begin(), [](char x, char y) {
          return (x >= 'A' && x <= 'Z' ? static_cast<char>(x + ('a' - 'A')) : x) == y;
        })) {
      return subcommand_slot(spec, i);
    }
  }
  return spec.id;
}

bool Table::key_indexes(const CommandSpec& spec, std::span<const std::string_view> argv,
                        std::vector<size_t>& out) {
  if (spec.keys.finder != nullptr) {
    spec.keys.finder(argv, out);
    return true;
  }
  if (spec.keys.first <= 0) {
    return true;
  }
  int argc = static_cast<int>(argv.size());
  int last = spec.keys.last < 0 ? argc + spec.keys.last : spec.keys.last;
  int step = spec.keys.step <= 0 ? 1 : spec.keys.step;
  if (last >= argc) {
    return false;
  }
  for (int i = spec.keys.first; i <= last; i += step) {
    out.push_back(static_cast<size_t>(i));
  }
  return true;
}

std::unique_ptr<Engine> make_engine(Config& config, const Table& table,
                                    std::vector<asio::io_context*> contexts,
                                    ScriptStore::VmFactory script_vms) {
  auto engine = std::make_unique<Engine>(config, table, table.stat_slots(), std::move(contexts));
  auto scripts = std::make_shared<ScriptStore>(engine->shard_count());
  scripts->set_vm_factory(std::move(script_vms));
  engine->set_scripts(std::move(scripts));
  install_acl(*engine, config, table);
  for (EngineInit init : table.engine_inits()) {
    init(*engine);
  }
  return engine;
}

const Table& command_table() {
  static const Table table = [] {
    Table t;
    register_server(t);
    register_command(t);
    register_latency(t);
    register_slowlog(t);
    register_monitor(t);
    register_strings(t);
    register_keys(t);
    register_memory(t);
    register_modules(t);
    register_databases(t);
    register_expire(t);
    register_connection(t);
    register_acl(t);
    register_persistence(t);
    register_pubsub(t);
    register_streams(t);
    register_ratelimit(t);
    register_inventory(t);
    register_transactions(t);
    register_scripting(t);
    register_functions(t);
    register_sets(t);
    register_hashes(t);
    register_zsets(t);
    register_geo(t);
    register_lists(t);
    register_bitmaps(t);
    register_hyperloglog(t);
    register_replication(t);
    register_replication_sync(t);
    register_sort(t);
    register_dump(t);
    register_effect_apply(t);
    return t;
  }();
  return table;
}

std::vector<std::string> flag_names(uint32_t flags) {
  static const std::pair<uint32_t, const char*> kNames[] = {
      {kWrite, "write"},   {kReadOnly, "readonly"}, {kDenyOom, "denyoom"},   {kAdmin, "admin"},
      {kPubSub, "pubsub"}, {kNoScript, "noscript"}, {kBlocking, "blocking"}, {kLoading, "loading"},
      {kStale, "stale"},   {kFast, "fast"},         {kNoAuth, "no_auth"},    {kNoMulti, "no_multi"},
      {kAllowBusy, "allow_busy"},
  };
  std::vector<std::string> out;
  for (const auto& [bit, name] : kNames) {
    if ((flags & bit) != 0) {
      out.emplace_back(name);
    }
  }
  return out;
}

std::string render_commands_markdown(const Table& table) {
  std::map<std::string, std::vector<const CommandSpec*>> by_group;
  for (const auto& c : table.all()) {
    by_group[c.group].push_back(&c);
  }
  std::string out =
      "# Commands\n\n"
      "Every command HotKV answers, generated from the command table "
      "(`hotkv --commands-markdown > docs/commands.md`; a unit test checks this file matches).\n"
      "Arity counts the command name; a negative arity means \"at least\".\n";
  for (auto& [group, cmds] : by_group) {
    std::sort(cmds.begin(), cmds.end(),
              [](const CommandSpec* a, const CommandSpec* b) { return a->name < b->name; });
    out += "\n## " + group + "\n\n| Syntax | Arity | Flags | Summary |\n|---|---|---|---|\n";
    for (const CommandSpec* c : cmds) {
      std::string flags;
      for (const auto& f : flag_names(c->flags)) {
        flags += (flags.empty() ? "" : ", ") + f;
      }
      out += "| `" + c->syntax + "` | " + std::to_string(c->arity) + " | " + flags + " | " +
             c->summary + " |\n";
    }
  }
  return out;
}

}  // namespace hotkv
