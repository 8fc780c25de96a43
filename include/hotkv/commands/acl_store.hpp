// The server's ACL users and ACL LOG, shared by every thread.
//
// Users are kept as immutable snapshots (shared_ptr<const AclUser>): a change builds a new
// user and swaps it in under the mutex, then bumps epoch(). A connection keeps the snapshot
// of its user and compares one relaxed atomic (the epoch) per command to notice a change, so
// ACL SETUSER reaches connections on every thread at their next command, and a user whose
// rules allow everything costs one flag test on top (AclUser::unrestricted).
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "hotkv/commands/acl_user.hpp"
#include "hotkv/util/status.hpp"

namespace hotkv {

class Table;

// One ACL LOG entry (Redis 7's fields).
struct AclLogEntry {
  uint64_t count = 1;
  std::string reason;   // command, key, channel, auth
  std::string context;  // toplevel, multi, lua
  std::string object;   // the command's full name, the key, the channel or "AUTH"
  std::string username;
  int64_t created_ms = 0;
  int64_t updated_ms = 0;
  std::string client_info;
  uint64_t entry_id = 0;
};

class AclStore {
 public:
  // Starts with the default user (on nopass ~* &* +@all). Any thread.
  explicit AclStore(const Table& table);

  const Table& table() const { return table_; }
  // Changes whenever any user changes (any thread, relaxed).
  uint64_t epoch() const { return epoch_.load(std::memory_order_acquire); }

  // The current snapshot of the user, or null when there is none.
  std::shared_ptr<const AclUser> find(std::string_view name) const;
  // The user when the password opens it (enabled, nopass or a matching hash), else null.
  std::shared_ptr<const AclUser> authenticate(std::string_view name,
                                              std::string_view password) const;
  // Whether a new connection starts authenticated as default: default is on and nopass.
  bool default_is_open() const;
  // ACL SETUSER: applies the rules to the user (created when missing), all or nothing. The
  // error message is Redis's whole ERR text.
  Status set_user(std::string_view name, std::span<const std::string_view> rules);
  // ACL DELUSER: false if the user did not exist. REQUIRES: name != "default".
  bool del_user(std::string_view name);
  std::vector<std::shared_ptr<const AclUser>> users() const;  // in name order
  // requirepass: "" makes default nopass, anything else its only password.
  void set_default_password(const std::string& password);

  // ACL LOAD / start-up: parses "user <name> <rules...>" lines. All or nothing: on failure
  // (message: "<where>:<line>: <reason>") nothing changes. The default user, when the file
  // does not name it, is reset to its starting rules as in Redis.
  Status load_lines(const std::vector<std::string>& lines, const std::string& where);
  Status load_file(const std::string& path);
  // ACL SAVE: every user's ACL LIST line, written to a temporary file and renamed over path.
  Status save_file(const std::string& path) const;

  // ACL LOG. Entries equal in reason, context, object and user within 60 s are one entry
  // whose count grows (newest first).
  void log(std::string reason, std::string context, std::string object, std::string username,
           std::string client_info, int64_t now_ms, size_t max_len);
  std::vector<AclLogEntry> log_entries(size_t count) const;
  void log_reset();

 private:
  void publish(std::string name, AclUser user);  // REQUIRES: mutex_ held

  const Table& table_;
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const AclUser>, std::less<>> users_;
  std::atomic<uint64_t> epoch_{1};
  std::deque<AclLogEntry> log_;
  uint64_t next_entry_id_ = 0;
};

}  // namespace hotkv
