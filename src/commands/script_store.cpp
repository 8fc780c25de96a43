#include "hotkv/commands/script_store.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>

#include "hotkv/commands/errors_scripting.hpp"
#include "hotkv/util/file_io.hpp"
#include "hotkv/util/sha1.hpp"
#include "hotkv/util/strings.hpp"

namespace hotkv {
namespace {

// The next space-separated word of a shebang line's options, taken off the front of `rest`;
// empty once none is left.
std::string_view next_word(std::string_view& rest) {
  const size_t start = rest.find_first_not_of(' ');
  if (start == std::string_view::npos) {
    rest = {};
    return {};
  }
  rest.remove_prefix(start);
  const size_t end = rest.find(' ');
  std::string_view word = rest.substr(0, end);
  rest = end == std::string_view::npos ? std::string_view() : rest.substr(end);
  return word;
}

}  // namespace

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
    error = err::shebang_engine(engine);
    return nullptr;
  }
  std::string_view rest = space == std::string_view::npos ? std::string_view() : line.substr(space);
  for (std::string_view word = next_word(rest); !word.empty(); word = next_word(rest)) {
    if (word.substr(0, 6) != "flags=") {
      error = err::shebang_option(word);
      return nullptr;
    }
    std::string_view flags = word.substr(6);
    while (!flags.empty()) {
      size_t comma = flags.find(',');
      std::string_view f = flags.substr(0, comma);
      flags = comma == std::string_view::npos ? std::string_view() : flags.substr(comma + 1);
      if (f == "no-writes") {
        s->no_writes = true;
      } else if (f == "allow-oom") {
        s->allow_oom = true;
      } else if (f != "allow-stale" && f != "no-cluster" &&
                 f != "allow-cross-slot-keys" && !f.empty()) {
        error = err::shebang_flag(f);
        return nullptr;
      }
    }
  }
  // Blank the shebang (Lua would not parse it) but keep the newline, so error lines match.
  size_t cut = eol == std::string::npos ? s->source.size() : eol;
  s->source.replace(0, cut, "");
  return s;
}

ScriptStore::ScriptStore(size_t shards) : running_(shards) {
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

ScriptVm& ScriptStore::vm(size_t shard) {
  if (!vms_[shard]) {
    vms_[shard] = vm_factory_(*this, shard);
  }
  return *vms_[shard];
}

void ScriptStore::mark_timed_out(size_t shard, bool function, std::string name,
                                 std::vector<std::string> command, int64_t started_ms) {
  ScriptSlot& s = *slots_[shard];
  {
    std::lock_guard lock(running_mutex_);
    running_[shard] = RunningFunction{std::move(name), std::move(command), started_ms};
  }
  s.function.store(function);
  if (!s.timed_out.exchange(true)) {
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

bool ScriptStore::running_function(RunningFunction& out) const {
  std::lock_guard lock(running_mutex_);
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i]->timed_out.load() && slots_[i]->function.load()) {
      out = running_[i];
      return true;
    }
  }
  return false;
}

std::string ScriptStore::busy_error(bool function) {
  return function ? err::kBusyFunction : err::kBusyScript;
}

std::string ScriptStore::busy_error() const {
  for (const auto& s : slots_) {
    if (s->timed_out.load() && s->function.load()) {
      return busy_error(true);
    }
  }
  return busy_error(false);
}

std::string ScriptStore::request_kill(bool& ok, bool function) {
  ok = false;
  // Every busy script of the asked kind that has not written is stopped (with several
  // threads, several scripts can be busy at once).
  bool any = false;
  bool wrote = false;
  for (auto& s : slots_) {
    if (!s->timed_out.load()) {
      continue;
    }
    any = true;
    if (s->function.load() != function) {
      continue;  // SCRIPT KILL does not stop a function, nor FUNCTION KILL a script
    }
    if (s->wrote.load()) {
      wrote = true;
    } else {
      s->kill.store(true, std::memory_order_release);
      ok = true;
    }
  }
  if (ok) {
    return "OK";
  }
  if (!any) {
    return err::kNotBusy;
  }
  if (wrote) {
    return err::kUnkillable;
  }
  return busy_error(!function);
}

}  // namespace hotkv

// ---------------------------------------------------------------------------------------------
// Function libraries.

namespace hotkv {

namespace {
constexpr std::string_view kFunctionsMagic = "HOTKV-FUNCTIONS 1\n";
}  // namespace

std::shared_ptr<Library> parse_library(std::string_view code, std::string& error) {
  if (code.substr(0, 2) != "#!") {
    error = err::kLibraryMetadataMissing;
    return nullptr;
  }
  size_t eol = code.find('\n');
  std::string_view line = code.substr(2, eol == std::string_view::npos ? code.size() - 2 : eol - 2);
  size_t space = line.find(' ');
  std::string_view engine = line.substr(0, space);
  if (ascii_lower(engine) != "lua") {  // engine names are case-insensitive, as on Redis
    error = err::engine_not_found(engine);
    return nullptr;
  }
  auto lib = std::make_shared<Library>();
  std::string_view rest = space == std::string_view::npos ? std::string_view() : line.substr(space);
  for (std::string_view word = next_word(rest); !word.empty(); word = next_word(rest)) {
    if (word.substr(0, 5) == "name=") {
      if (!lib->name.empty()) {
        error = err::kLibraryNameTwice;
        return nullptr;
      }
      std::string_view value = word.substr(5);
      // name="foo" reads as foo, as Redis splits the line like a command line.
      if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
          value.back() == value.front()) {
        value = value.substr(1, value.size() - 2);
      }
      lib->name.assign(value);
    } else {
      error = err::metadata_value(word);
      return nullptr;
    }
  }
  if (lib->name.empty()) {
    error = err::kLibraryNameNotGiven;
    return nullptr;
  }
  for (char c : lib->name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') {
      error = err::kLibraryNameChars;
      return nullptr;
    }
  }
  lib->code.assign(code);
  lib->source.assign(code);
  lib->source.replace(0, eol == std::string_view::npos ? code.size() : eol, "");
  return lib;
}

bool ScriptStore::add_library(std::shared_ptr<Library> lib, bool replace, std::string& error) {
  std::vector<std::shared_ptr<Library>> libs{std::move(lib)};
  return merge_libraries(std::move(libs),
                         replace ? RestorePolicy::kReplace : RestorePolicy::kAppend, true, error);
}

bool ScriptStore::restore_libraries(std::vector<std::shared_ptr<Library>> libs,
                                    RestorePolicy policy, std::string& error) {
  return merge_libraries(std::move(libs), policy, false, error);
}

bool ScriptStore::merge_libraries(std::vector<std::shared_ptr<Library>> libs, RestorePolicy policy,
                                  bool load_texts, std::string& error) {
  std::unique_lock lock(mutex_);
  // Built on copies and swapped in at the end, so a refusal leaves everything as it was.
  auto libraries = policy == RestorePolicy::kFlush ? decltype(libraries_){} : libraries_;
  auto owners = policy == RestorePolicy::kFlush ? decltype(function_owner_){} : function_owner_;
  for (auto& lib : libs) {
    // Function names are case-insensitive (FCALL TEST finds test), as on Redis: the owner
    // map is keyed by the lowercase name.
    auto existing = libraries.find(lib->name);
    if (existing != libraries.end()) {
      if (policy != RestorePolicy::kReplace) {
        // FUNCTION LOAD quotes the name, FUNCTION RESTORE does not (Redis's two texts).
        error = err::library_exists(lib->name, load_texts);
        return false;
      }
      for (const LibraryFunction& f : existing->second->functions) {
        owners.erase(ascii_lower(f.name));
      }
    }
    for (const LibraryFunction& f : lib->functions) {
      auto owner = owners.find(ascii_lower(f.name));
      if (owner != owners.end() && owner->second != lib->name) {
        error = err::function_exists(f.name);
        return false;
      }
      owners[ascii_lower(f.name)] = lib->name;
    }
    libraries[lib->name] = std::move(lib);
  }
  libraries_ = std::move(libraries);
  function_owner_ = std::move(owners);
  functions_generation_.fetch_add(1, std::memory_order_acq_rel);
  return true;
}

bool ScriptStore::delete_library(std::string_view name) {
  std::unique_lock lock(mutex_);
  auto it = libraries_.find(name);
  if (it == libraries_.end()) {
    return false;
  }
  for (const LibraryFunction& f : it->second->functions) {
    function_owner_.erase(ascii_lower(f.name));
  }
  libraries_.erase(it);
  functions_generation_.fetch_add(1, std::memory_order_acq_rel);
  return true;
}

void ScriptStore::flush_libraries() {
  std::unique_lock lock(mutex_);
  libraries_.clear();
  function_owner_.clear();
  functions_generation_.fetch_add(1, std::memory_order_acq_rel);
}

std::shared_ptr<const Library> ScriptStore::find_function(std::string_view name,
                                                          const LibraryFunction** fn) const {
  std::shared_lock lock(mutex_);
  auto owner = function_owner_.find(ascii_lower(name));
  if (owner == function_owner_.end()) {
    return nullptr;
  }
  auto lib = libraries_.find(owner->second);
  if (lib == libraries_.end()) {
    return nullptr;
  }
  for (const LibraryFunction& f : lib->second->functions) {
    if (ascii_lower(f.name) == ascii_lower(name)) {
      *fn = &f;
      return lib->second;
    }
  }
  return nullptr;
}

std::vector<std::shared_ptr<const Library>> ScriptStore::libraries() const {
  std::shared_lock lock(mutex_);
  std::vector<std::shared_ptr<const Library>> out;
  for (const auto& [name, lib] : libraries_) {
    out.push_back(lib);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a->name < b->name; });
  return out;
}

bool ScriptStore::save_libraries(std::string& error) const {
  if (functions_file_.empty()) {
    return true;
  }
  std::string data(kFunctionsMagic);
  for (const auto& lib : libraries()) {
    data += std::to_string(lib->code.size());
    data += '\n';
    data += lib->code;
    data += '\n';
  }
  std::string tmp = functions_file_ + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    error = err::cannot_write(tmp, errno);
    return false;
  }
  bool ok = write_fully(fd, data) && ::fsync(fd) == 0;
  int saved = errno;
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), functions_file_.c_str()) != 0) {
    error = err::cannot_write(functions_file_, ok ? errno : saved);
    return false;
  }
  return true;
}

bool ScriptStore::read_libraries_file(std::vector<std::string>& codes, std::string& error) const {
  if (functions_file_.empty()) {
    return true;
  }
  std::ifstream in(functions_file_, std::ios::binary);
  if (!in) {
    return true;  // nothing saved yet
  }
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (data.compare(0, kFunctionsMagic.size(), kFunctionsMagic) != 0) {
    error = functions_file_ + " is not a HotKV functions file";
    return false;
  }
  size_t pos = kFunctionsMagic.size();
  while (pos < data.size()) {
    size_t eol = data.find('\n', pos);
    if (eol == std::string::npos) {
      error = functions_file_ + " is truncated";
      return false;
    }
    size_t len = std::strtoull(data.c_str() + pos, nullptr, 10);
    if (eol + 1 + len + 1 > data.size()) {
      error = functions_file_ + " is truncated";
      return false;
    }
    codes.push_back(data.substr(eol + 1, len));
    pos = eol + 1 + len + 1;
  }
  return true;
}

}  // namespace hotkv
