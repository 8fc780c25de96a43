#include "hotkv/scripting/script_store.hpp"

#include <mutex>

#include "hotkv/scripting/lua_vm.hpp"
#include "hotkv/util/sha1.hpp"
#include "hotkv/util/strings.hpp"

namespace hotkv {

std::shared_ptr<const Script> parse_script(std::string_view body, std::string& error) {
  auto s = std::make_shared<Script>();
  s->sha = sha1_hex(body);
  s->source.assign(body);
  if (body.substr(0, 2) != "#!") {
    return s;
  }
  s->has_shebang = true;
  size_t eol = body.find('\n');
  std::string_view line = body.substr(2, eol == std::string_view::npos ? body.size() - 2 : eol - 2);
  size_t space = line.find(' ');
  std::string_view engine = line.substr(0, space);
  if (engine != "lua") {
    error = "ERR Could not find engine '" + std::string(engine) + "'";
    return nullptr;
  }
  std::string_view rest = space == std::string_view::npos ? std::string_view() : line.substr(space);
  while (!rest.empty()) {
    size_t start = rest.find_first_not_of(' ');
    if (start == std::string_view::npos) {
      break;
    }
    rest.remove_prefix(start);
    size_t end = rest.find(' ');
    std::string_view word = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end);
    if (word.substr(0, 6) != "flags=") {
      error = "ERR Unknown lua shebang option: " + std::string(word);
      return nullptr;
    }
    std::string_view flags = word.substr(6);
    while (!flags.empty()) {
      size_t comma = flags.find(',');
      std::string_view f = flags.substr(0, comma);
      flags = comma == std::string_view::npos ? std::string_view() : flags.substr(comma + 1);
      if (f == "no-writes") {
        s->no_writes = true;
      } else if (f != "allow-oom" && f != "allow-stale" && f != "no-cluster" &&
                 f != "allow-cross-slot-keys" && !f.empty()) {
        error = "ERR Unexpected flag in script shebang: " + std::string(f);
        return nullptr;
      }
    }
  }
  // Blank the shebang (Lua would not parse it) but keep the newline, so error lines match.
  size_t cut = eol == std::string::npos ? s->source.size() : eol;
  s->source.replace(0, cut, "");
  return s;
}

ScriptStore::ScriptStore(size_t shards) {
  vms_.resize(shards);
  for (size_t i = 0; i < shards; ++i) {
    slots_.push_back(std::make_unique<ScriptSlot>());
  }
}

ScriptStore::~ScriptStore() = default;

std::shared_ptr<const Script> ScriptStore::add(std::string_view body, std::string& error) {
  std::string sha = sha1_hex(body);
  {
    std::shared_lock lock(mutex_);
    auto it = scripts_.find(sha);
    if (it != scripts_.end()) {
      return it->second;
    }
  }
  auto s = parse_script(body, error);
  if (!s) {
    return nullptr;
  }
  std::unique_lock lock(mutex_);
  auto [it, inserted] = scripts_.emplace(s->sha, s);
  if (inserted) {
    bytes_ += s->source.size() + sizeof(Script) + 64;
  }
  return it->second;
}

std::shared_ptr<const Script> ScriptStore::find(std::string_view sha) const {
  std::shared_lock lock(mutex_);
  // EVALSHA takes the id in any case, as Redis does.
  std::string lower = ascii_lower(sha);
  auto it = scripts_.find(lower);
  return it == scripts_.end() ? nullptr : it->second;
}

void ScriptStore::flush() {
  std::unique_lock lock(mutex_);
  scripts_.clear();
  bytes_ = 0;
  generation_.fetch_add(1, std::memory_order_acq_rel);
}

size_t ScriptStore::count() const {
  std::shared_lock lock(mutex_);
  return scripts_.size();
}

size_t ScriptStore::memory_bytes() const {
  std::shared_lock lock(mutex_);
  return bytes_;
}

LuaVm& ScriptStore::vm(size_t shard) {
  if (!vms_[shard]) {
    vms_[shard] = std::make_unique<LuaVm>(*this, shard);
  }
  return *vms_[shard];
}

void ScriptStore::mark_timed_out(size_t shard) {
  if (!slots_[shard]->timed_out.exchange(true)) {
    busy_.fetch_add(1, std::memory_order_acq_rel);
  }
}

void ScriptStore::clear_timed_out(size_t shard) {
  ScriptSlot& s = *slots_[shard];
  if (s.timed_out.exchange(false)) {
    busy_.fetch_sub(1, std::memory_order_acq_rel);
  }
  s.kill.store(false);
  s.wrote.store(false);
}

std::string ScriptStore::request_kill(bool& ok) {
  ok = false;
  bool any = false;
  for (auto& s : slots_) {
    if (s->timed_out.load()) {
      any = true;
      if (s->wrote.load()) {
        return "UNKILLABLE Sorry the script already executed write commands against the "
               "dataset. You can either wait the script termination or kill the server in a "
               "hard way using the SHUTDOWN NOSAVE command.";
      }
    }
  }
  if (!any) {
    return "NOTBUSY No scripts in execution right now.";
  }
  for (auto& s : slots_) {
    if (s->timed_out.load()) {
      s->kill.store(true);
    }
  }
  ok = true;
  return "OK";
}

}  // namespace hotkv
