// The shared user table and ACL LOG (see acl_store.hpp).
#include "hotkv/commands/acl_store.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "hotkv/commands/table.hpp"
#include "hotkv/util/file_io.hpp"

namespace hotkv {
namespace {

// Redis merges a repeated denial into one entry while it recurs within this window.
constexpr int64_t kLogGroupMs = 60000;

std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) {
      ++i;
    }
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') {
      ++i;
    }
    if (i > start) {
      words.push_back(line.substr(start, i - start));
    }
  }
  return words;
}

}  // namespace

AclStore::AclStore(const Table& table) : table_(table) {
  AclUser d = acl_default_user();
  acl_finish(d, table_);
  users_["default"] = std::make_shared<const AclUser>(std::move(d));
}

void AclStore::publish(std::string name, AclUser user) {
  users_[std::move(name)] = std::make_shared<const AclUser>(std::move(user));
  epoch_.fetch_add(1, std::memory_order_release);
}

std::shared_ptr<const AclUser> AclStore::find(std::string_view name) const {
  std::lock_guard lock(mutex_);
  auto it = users_.find(name);
  return it == users_.end() ? nullptr : it->second;
}

std::shared_ptr<const AclUser> AclStore::authenticate(std::string_view name,
                                                      std::string_view password) const {
  std::shared_ptr<const AclUser> u = find(name);
  return u != nullptr && acl_password_ok(*u, password) ? u : nullptr;
}

bool AclStore::default_is_open() const {
  std::shared_ptr<const AclUser> d = find("default");
  return d != nullptr && d->enabled && d->nopass;
}

Status AclStore::set_user(std::string_view name, std::span<const std::string_view> rules) {
  std::lock_guard lock(mutex_);
  auto it = users_.find(name);
  AclUser u = it != users_.end() ? *it->second : acl_new_user(std::string(name));
  if (Status st = acl_apply_rules(u, rules, table_); !st.is_ok()) {
    return st;
  }
  publish(std::string(name), std::move(u));
  return {};
}

bool AclStore::del_user(std::string_view name) {
  std::lock_guard lock(mutex_);
  auto it = users_.find(name);
  if (it == users_.end()) {
    return false;
  }
  users_.erase(it);
  epoch_.fetch_add(1, std::memory_order_release);
  return true;
}

std::vector<std::shared_ptr<const AclUser>> AclStore::users() const {
  std::lock_guard lock(mutex_);
  std::vector<std::shared_ptr<const AclUser>> out;
  out.reserve(users_.size());
  for (const auto& [name, u] : users_) {
    out.push_back(u);
  }
  return out;
}

void AclStore::set_default_password(const std::string& password) {
  std::lock_guard lock(mutex_);
  AclUser d = *users_["default"];
  // What Redis does for requirepass: "resetpass" then ">password", or "nopass" when empty.
  std::string rule = password.empty() ? "nopass" : ">" + password;
  (void)acl_apply_rule(d, "resetpass", table_);
  (void)acl_apply_rule(d, rule, table_);
  acl_finish(d, table_);
  publish("default", std::move(d));
}

Status AclStore::load_lines(const std::vector<std::string>& lines, const std::string& where) {
  std::map<std::string, std::shared_ptr<const AclUser>, std::less<>> fresh;
  int lineno = 0;
  for (const std::string& raw : lines) {
    ++lineno;
    std::string_view line = raw;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) {
      line.remove_suffix(1);
    }
    std::vector<std::string_view> words = split_words(line);
    if (words.empty() || words[0].starts_with('#')) {
      continue;
    }
    std::string at = where + ":" + std::to_string(lineno) + ": ";
    if (words[0] != "user" || words.size() < 2) {
      return Status::invalid_argument(at + "line should start with user keyword");
    }
    std::string name(words[1]);
    if (fresh.count(name) != 0) {
      return Status::invalid_argument(at + "Duplicate user '" + name + "' found");
    }
    AclUser u = acl_new_user(name);
    if (Status st = acl_apply_rules(u, std::span(words).subspan(2), table_); !st.is_ok()) {
      return Status::invalid_argument(at + st.message());
    }
    fresh[name] = std::make_shared<const AclUser>(std::move(u));
  }
  if (fresh.count("default") == 0) {
    AclUser d = acl_default_user();
    acl_finish(d, table_);
    fresh["default"] = std::make_shared<const AclUser>(std::move(d));
  }
  std::lock_guard lock(mutex_);
  users_ = std::move(fresh);
  epoch_.fetch_add(1, std::memory_order_release);
  return {};
}

Status AclStore::load_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return Status::not_found("Error loading ACLs, opening file '" + path + "': " +
                             std::strerror(errno));
  }
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    lines.push_back(std::move(line));
  }
  return load_lines(lines, path);
}

Status AclStore::save_file(const std::string& path) const {
  std::string text;
  for (const auto& u : users()) {
    text += acl_describe_user(*u);
    text += '\n';
  }
  return write_file_atomically(path, text);
}

void AclStore::log(std::string reason, std::string context, std::string object,
                   std::string username, std::string client_info, int64_t now_ms,
                   size_t max_len) {
  std::lock_guard lock(mutex_);
  for (auto it = log_.begin(); it != log_.end(); ++it) {
    if (it->reason == reason && it->context == context && it->object == object &&
        it->username == username && now_ms - it->updated_ms < kLogGroupMs) {
      AclLogEntry e = std::move(*it);
      log_.erase(it);
      ++e.count;
      e.updated_ms = now_ms;
      e.client_info = std::move(client_info);
      log_.push_front(std::move(e));
      return;
    }
  }
  AclLogEntry e;
  e.reason = std::move(reason);
  e.context = std::move(context);
  e.object = std::move(object);
  e.username = std::move(username);
  e.created_ms = now_ms;
  e.updated_ms = now_ms;
  e.client_info = std::move(client_info);
  e.entry_id = next_entry_id_++;
  log_.push_front(std::move(e));
  while (log_.size() > max_len) {
    log_.pop_back();
  }
}

std::vector<AclLogEntry> AclStore::log_entries(size_t count) const {
  std::lock_guard lock(mutex_);
  std::vector<AclLogEntry> out;
  for (size_t i = 0; i < log_.size() && i < count; ++i) {
    out.push_back(log_[i]);
  }
  return out;
}

void AclStore::log_reset() {
  std::lock_guard lock(mutex_);
  log_.clear();
}

}  // namespace hotkv
