// ACL rules, their text form and the permission check (see acl_user.hpp).
#include "hotkv/commands/acl_user.hpp"

#include <algorithm>
#include <cctype>

#include <openssl/evp.h>

#include "hotkv/commands/key_flags.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/util/glob.hpp"
#include "hotkv/util/strings.hpp"

namespace hotkv {
namespace {

constexpr const char* kSyntax = "Syntax error";
constexpr const char* kUnknownName = "Unknown command or category name in ACL";
constexpr const char* kBadHash =
    "The password hash must be exactly 64 characters and contain only lowercase hexadecimal "
    "characters";
constexpr const char* kNoSuchPassword =
    "The password you are trying to remove from the user does not exist";
constexpr const char* kKeyAfterAll =
    "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have "
    "any effect. Try 'resetkeys' to start with an empty list of patterns";
constexpr const char* kChannelAfterAll =
    "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not "
    "have any effect. Try 'resetchannels' to start with an empty list of channels";

bool eq(std::string_view a, std::string_view b) { return equals_ignore_case(a, b); }

size_t slot_words(const Table& table) { return (table.stat_slots() + 63) / 64; }

void set_bit(AclSelector& s, size_t slot, bool on) {
  if (s.allowed.size() <= slot / 64) {
    s.allowed.resize(slot / 64 + 1, 0);
  }
  uint64_t bit = uint64_t{1} << (slot % 64);
  if (on) {
    s.allowed[slot / 64] |= bit;
  } else {
    s.allowed[slot / 64] &= ~bit;
    s.all_commands = false;
  }
}

// A container's bit goes with its subcommands' bits, as in Redis.
void set_command(AclSelector& s, const CommandSpec& spec, const Table& table, bool on) {
  set_bit(s, spec.id, on);
  for (size_t i = 0; i < spec.subcommands.size(); ++i) {
    set_bit(s, table.subcommand_slot(spec, i), on);
  }
}

// Drops earlier rules naming the same command (or category); a command's rule also drops its
// subcommands' rules ("+config" replaces "-config|get").
void remove_command_rule(AclSelector& s, std::string_view rule) {
  std::string out;
  size_t i = 0;
  const std::string& r = s.command_rules;
  while (i < r.size()) {
    size_t end = r.find(' ', i);
    if (end == std::string::npos) {
      end = r.size();
    }
    std::string_view word(r.data() + i + 1, end - i - 1);  // without its +/-
    bool same = word == rule || (word.size() > rule.size() && word.starts_with(rule) &&
                                 word[rule.size()] == '|');
    if (!same) {
      if (!out.empty()) {
        out += ' ';
      }
      out.append(r, i, end - i);
    }
    i = end + 1;
  }
  s.command_rules = std::move(out);
}

void update_command_rules(AclSelector& s, std::string_view rule, bool allow) {
  std::string lower = ascii_lower(rule);
  remove_command_rule(s, lower);
  if (!s.command_rules.empty()) {
    s.command_rules += ' ';
  }
  s.command_rules += allow ? '+' : '-';
  s.command_rules += lower;
}

void all_commands(AclSelector& s, const Table& table, bool on) {
  s.allowed.assign(slot_words(table), on ? ~uint64_t{0} : 0);
  s.all_commands = on;
  s.from_all = on;
  s.command_rules.clear();
}

bool valid_hash(std::string_view h) {
  return h.size() == 64 && std::all_of(h.begin(), h.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

Status fail(const char* reason) { return Status::invalid_argument(reason); }

Status add_key_pattern(AclSelector& s, std::string_view op) {
  uint8_t perms = 0;
  size_t at = 0;
  if (op[0] == '%') {
    for (at = 1; at < op.size(); ++at) {
      char c = static_cast<char>(std::toupper(static_cast<unsigned char>(op[at])));
      if (c == 'R') {
        perms |= kAclKeyRead;
      } else if (c == 'W') {
        perms |= kAclKeyWrite;
      } else if (op[at] == '~') {
        break;
      } else {
        return fail(kSyntax);
      }
    }
    if (perms == 0 || at == op.size()) {
      return fail(kSyntax);
    }
  } else {
    perms = kAclKeyRead | kAclKeyWrite;
  }
  if (s.all_keys) {
    return fail(kKeyAfterAll);
  }
  std::string_view pattern = op.substr(at + 1);
  if (pattern == "*" && perms == (kAclKeyRead | kAclKeyWrite)) {
    s.all_keys = true;
    s.keys.clear();
    return {};
  }
  for (AclKeyPattern& k : s.keys) {
    if (k.pattern == pattern) {
      k.perms |= perms;
      return {};
    }
  }
  s.keys.push_back({std::string(pattern), perms});
  return {};
}

Status apply_command_rule(AclSelector& s, std::string_view op, const Table& table) {
  bool allow = op[0] == '+';
  std::string_view name = op.substr(1);
  if (name.starts_with('@')) {
    std::string_view cat = name.substr(1);
    const auto& cats = acl_category_names();
    if (std::find_if(cats.begin(), cats.end(), [&](const std::string& c) { return eq(c, cat); }) ==
        cats.end()) {
      return fail(kUnknownName);
    }
    std::string lower = ascii_lower(cat);
    update_command_rules(s, "@" + lower, allow);
    for (const CommandSpec& spec : table.all()) {
      if (acl_command_in_category(spec, lower)) {
        set_command(s, spec, table, allow);
      }
    }
    return {};
  }
  size_t bar = name.find('|');
  const CommandSpec* spec = table.find(name.substr(0, bar));
  if (spec == nullptr) {
    return fail(kUnknownName);
  }
  if (bar == std::string_view::npos) {
    set_command(s, *spec, table, allow);
    update_command_rules(s, spec->name, allow);
    return {};
  }
  std::string sub = ascii_lower(name.substr(bar + 1));
  auto it = std::find(spec->subcommands.begin(), spec->subcommands.end(), sub);
  if (sub.empty() || it == spec->subcommands.end()) {
    // Redis's first-argument rules for commands without subcommands are not supported.
    return fail(kUnknownName);
  }
  set_bit(s, table.subcommand_slot(*spec, static_cast<size_t>(it - spec->subcommands.begin())),
          allow);
  update_command_rules(s, spec->name + "|" + sub, allow);
  return {};
}

Status apply_selector_rule(AclSelector& s, std::string_view op, const Table& table) {
  if (op.empty()) {
    return fail(kSyntax);
  }
  if (eq(op, "allkeys") || op == "~*") {
    s.all_keys = true;
    s.keys.clear();
  } else if (eq(op, "resetkeys")) {
    s.all_keys = false;
    s.keys.clear();
  } else if (eq(op, "allchannels") || op == "&*") {
    s.all_channels = true;
    s.channels.clear();
  } else if (eq(op, "resetchannels")) {
    s.all_channels = false;
    s.channels.clear();
  } else if (eq(op, "allcommands") || eq(op, "+@all")) {
    all_commands(s, table, true);
  } else if (eq(op, "nocommands") || eq(op, "-@all")) {
    all_commands(s, table, false);
  } else if (op[0] == '~' || op[0] == '%') {
    return add_key_pattern(s, op);
  } else if (op[0] == '&') {
    if (s.all_channels) {
      return fail(kChannelAfterAll);
    }
    std::string_view ch = op.substr(1);
    if (std::find(s.channels.begin(), s.channels.end(), ch) == s.channels.end()) {
      s.channels.emplace_back(ch);
    }
  } else if ((op[0] == '+' || op[0] == '-') && op.size() > 1) {
    return apply_command_rule(s, op, table);
  } else {
    return fail(kSyntax);
  }
  return {};
}

AclSelector empty_selector(const Table& table) {
  AclSelector s;
  s.allowed.assign(slot_words(table), 0);
  return s;
}

// The words of a "(...)" selector, split on spaces.
std::vector<std::string_view> selector_words(std::string_view body) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < body.size()) {
    size_t end = body.find(' ', i);
    if (end == std::string_view::npos) {
      end = body.size();
    }
    if (end > i) {
      words.push_back(body.substr(i, end - i));
    }
    i = end + 1;
  }
  return words;
}

Status remove_password(AclUser& u, const std::string& hash) {
  auto it = std::find(u.passwords.begin(), u.passwords.end(), hash);
  if (it == u.passwords.end()) {
    return fail(kNoSuchPassword);
  }
  u.passwords.erase(it);
  return {};
}

void add_password(AclUser& u, std::string hash) {
  if (std::find(u.passwords.begin(), u.passwords.end(), hash) == u.passwords.end()) {
    u.passwords.push_back(std::move(hash));
  }
  u.nopass = false;
}

const std::vector<std::string> kCategories = {
    "keyspace", "read",       "write",       "set",        "sortedset",  "list",
    "hash",     "string",     "bitmap",      "hyperloglog", "geo",       "stream",
    "pubsub",   "admin",      "fast",        "slow",       "blocking",   "dangerous",
    "connection", "transaction", "scripting", "inventory", "ratelimit"};

// Where Redis gives a command categories its flags do not imply (its per-command
// acl_categories), named here so ACL CAT matches redis-server's.
bool named(const CommandSpec& spec, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), spec.name) != names.end();
}

// Whole-keyspace or server-stalling commands that carry no admin flag.
bool dangerous_by_name(const CommandSpec& spec) {
  return named(spec, {"KEYS", "FLUSHDB", "FLUSHALL", "SWAPDB", "SORT", "SORT_RO", "RESTORE",
                      "MIGRATE", "INFO", "CLIENT", "ROLE", "LASTSAVE", "PFDEBUG", "PFSELFTEST"});
}

// SORT reads lists, sets and sorted sets; Redis files it under those, not @keyspace.
bool is_sort(const CommandSpec& spec) { return named(spec, {"SORT", "SORT_RO"}); }

}  // namespace

const std::vector<std::string>& acl_category_names() { return kCategories; }

bool acl_command_in_category(const CommandSpec& spec, std::string_view c) {
  const std::string& g = spec.group;
  uint32_t f = spec.flags;
  // Scripts are @scripting and @slow only: what they read or write is their commands' business.
  bool scripting = g == "scripting";
  if (c == "read") return (f & kReadOnly) != 0 && !scripting;
  if (c == "write") return (f & kWrite) != 0 && !scripting;
  if (c == "admin") return (f & kAdmin) != 0 || named(spec, {"ROLE", "LASTSAVE"});
  if (c == "dangerous") return (f & kAdmin) != 0 || dangerous_by_name(spec);
  if (c == "fast") return (f & kFast) != 0;
  if (c == "slow") return (f & kFast) == 0;
  if (c == "blocking") return (f & kBlocking) != 0;
  if (c == "pubsub") return (f & kPubSub) != 0 || g == "pubsub";
  if (c == "keyspace") {
    return (g == "generic" && !is_sort(spec) && spec.name != "WAIT") ||
           named(spec, {"DBSIZE", "FLUSHDB", "FLUSHALL", "SWAPDB"});
  }
  if (c == "connection") return g == "connection" || named(spec, {"WAIT", "COMMAND"});
  if (c == "transaction") return g == "transactions";
  if (c == "sortedset") return g == "sorted_set" || is_sort(spec);
  if (c == "set" || c == "list") return g == c || is_sort(spec);
  if (c == "hash" || c == "string" || c == "bitmap" || c == "hyperloglog" || c == "geo" ||
      c == "stream" || c == "scripting" || c == "inventory" || c == "ratelimit") {
    return g == c;
  }
  return false;
}

AclUser acl_new_user(std::string name) {
  AclUser u;
  u.name = std::move(name);
  return u;
}

AclUser acl_default_user() {
  AclUser u;
  u.name = "default";
  u.enabled = true;
  u.nopass = true;
  u.root.all_keys = true;
  u.root.all_channels = true;
  u.root.all_commands = true;
  u.root.from_all = true;
  return u;
}

Status acl_apply_rule(AclUser& u, std::string_view op, const Table& table) {
  if (u.root.allowed.empty() && !u.root.all_commands) {
    u.root.allowed.assign(slot_words(table), 0);
  }
  if (u.root.all_commands && u.root.allowed.empty()) {
    u.root.allowed.assign(slot_words(table), ~uint64_t{0});
  }
  if (op.empty()) {
    return fail(kSyntax);
  }
  if (eq(op, "on")) {
    u.enabled = true;
  } else if (eq(op, "off")) {
    u.enabled = false;
  } else if (eq(op, "skip-sanitize-payload")) {
    u.sanitize_payload = -1;
  } else if (eq(op, "sanitize-payload")) {
    u.sanitize_payload = 1;
  } else if (eq(op, "nopass")) {
    u.nopass = true;
    u.passwords.clear();
  } else if (eq(op, "resetpass")) {
    u.nopass = false;
    u.passwords.clear();
  } else if (op[0] == '>') {
    add_password(u, acl_hash_password(op.substr(1)));
  } else if (op[0] == '#') {
    if (!valid_hash(op.substr(1))) {
      return fail(kBadHash);
    }
    add_password(u, std::string(op.substr(1)));
  } else if (op[0] == '<') {
    return remove_password(u, acl_hash_password(op.substr(1)));
  } else if (op[0] == '!') {
    if (!valid_hash(op.substr(1))) {
      return fail(kBadHash);
    }
    return remove_password(u, std::string(op.substr(1)));
  } else if (op[0] == '(' && op.back() == ')') {
    AclSelector s = empty_selector(table);
    for (std::string_view w : selector_words(op.substr(1, op.size() - 2))) {
      if (Status st = apply_selector_rule(s, w, table); !st.is_ok()) {
        return st;
      }
    }
    u.selectors.push_back(std::move(s));
  } else if (eq(op, "clearselectors")) {
    u.selectors.clear();
  } else if (eq(op, "reset")) {
    u.passwords.clear();
    u.nopass = false;
    u.enabled = false;
    u.selectors.clear();
    u.sanitize_payload = 1;
    u.root = empty_selector(table);
  } else {
    return apply_selector_rule(u.root, op, table);
  }
  return {};
}

Status acl_merge_selector_args(std::span<const std::string_view> args,
                               std::vector<std::string>& out) {
  out.clear();
  std::string open;
  bool in_selector = false;
  for (std::string_view a : args) {
    if (!in_selector && a.starts_with('(') && !a.ends_with(')')) {
      open = std::string(a);
      in_selector = true;
    } else if (in_selector) {
      open += ' ';
      open += a;
      if (a.ends_with(')')) {
        out.push_back(std::move(open));
        in_selector = false;
      }
    } else {
      out.emplace_back(a);
    }
  }
  if (in_selector) {
    size_t first = open.find(' ');
    return Status::invalid_argument("Unmatched parenthesis in acl selector starting at '" +
                                    open.substr(0, first) + "'.");
  }
  return {};
}

Status acl_apply_rules(AclUser& user, std::span<const std::string_view> rules,
                       const Table& table) {
  std::vector<std::string> merged;
  if (Status st = acl_merge_selector_args(rules, merged); !st.is_ok()) {
    return st;
  }
  AclUser copy = user;
  for (const std::string& r : merged) {
    if (Status st = acl_apply_rule(copy, r, table); !st.is_ok()) {
      return Status::invalid_argument("Error in ACL SETUSER modifier '" + r + "': " +
                                      st.message());
    }
  }
  acl_finish(copy, table);
  user = std::move(copy);
  return {};
}

void acl_finish(AclUser& u, const Table& table) {
  if (u.root.allowed.size() < slot_words(table)) {
    u.root.allowed.resize(slot_words(table), u.root.all_commands ? ~uint64_t{0} : 0);
  }
  // A user turned off keeps its open connections (as in Redis), so "on" is not part of it.
  u.unrestricted = u.root.all_commands && u.root.all_keys && u.root.all_channels;
}

std::string acl_describe_commands(const AclSelector& s) {
  std::string out = s.from_all ? "+@all" : "-@all";
  if (!s.command_rules.empty()) {
    out += ' ';
    out += s.command_rules;
  }
  return out;
}

std::string acl_describe_keys(const AclSelector& s) {
  if (s.all_keys) {
    return "~*";
  }
  std::string out;
  for (const AclKeyPattern& k : s.keys) {
    if (!out.empty()) {
      out += ' ';
    }
    out += k.perms == kAclKeyRead ? "%R~" : k.perms == kAclKeyWrite ? "%W~" : "~";
    out += k.pattern;
  }
  return out;
}

std::string acl_describe_channels(const AclSelector& s) {
  if (s.all_channels) {
    return "&*";
  }
  std::string out;
  for (const std::string& c : s.channels) {
    if (!out.empty()) {
      out += ' ';
    }
    out += '&';
    out += c;
  }
  return out;
}

namespace {

std::string describe_selector(const AclSelector& s) {
  std::string out = acl_describe_keys(s);
  if (!out.empty()) {
    out += ' ';
  }
  if (s.all_channels) {
    out += "&* ";
  } else {
    out += "resetchannels ";
    std::string ch = acl_describe_channels(s);
    if (!ch.empty()) {
      out += ch + " ";
    }
  }
  out += acl_describe_commands(s);
  return out;
}

}  // namespace

std::string acl_describe_user(const AclUser& u) {
  std::string out = "user " + u.name + (u.enabled ? " on" : " off");
  if (u.nopass) {
    out += " nopass";
  }
  if (u.sanitize_payload > 0) {
    out += " sanitize-payload";
  } else if (u.sanitize_payload < 0) {
    out += " skip-sanitize-payload";
  }
  for (const std::string& h : u.passwords) {
    out += " #" + h;
  }
  out += ' ';
  out += describe_selector(u.root);
  for (const AclSelector& s : u.selectors) {
    out += " (" + describe_selector(s) + ")";
  }
  return out;
}

std::string acl_hash_password(std::string_view password) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(password.data(), password.size(), digest, &len, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(len * 2);
  for (unsigned int i = 0; i < len; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 15];
  }
  return out;
}

bool acl_password_ok(const AclUser& u, std::string_view password) {
  if (!u.enabled) {
    return false;
  }
  if (u.nopass) {
    return true;
  }
  if (u.passwords.empty()) {
    return false;
  }
  std::string h = acl_hash_password(password);
  // Compared in full whatever the position of a difference (no early exit on a mismatch).
  bool ok = false;
  for (const std::string& p : u.passwords) {
    unsigned diff = 0;
    for (size_t i = 0; i < 64; ++i) {
      diff |= static_cast<unsigned>(p[i] ^ h[i]);
    }
    ok |= diff == 0;
  }
  return ok;
}

std::string acl_command_fullname(const CommandSpec& spec, std::span<const std::string_view> argv) {
  std::string name = ascii_lower(spec.name);
  if (!spec.subcommands.empty() && argv.size() >= 2) {
    std::string sub = ascii_lower(argv[1]);
    if (std::find(spec.subcommands.begin(), spec.subcommands.end(), sub) !=
        spec.subcommands.end()) {
      name += "|" + sub;
    }
  }
  return name;
}

namespace {

// The arguments that are channels, and whether they are patterns (PSUBSCRIBE, matched
// literally against the allowed patterns as Redis 7 does).
void channel_args(const CommandSpec& spec, std::span<const std::string_view> argv,
                  std::vector<size_t>& out, bool& patterns) {
  patterns = false;
  const std::string& n = spec.name;
  if (n == "PUBLISH" || n == "SPUBLISH") {
    out.push_back(1);
  } else if (n == "SUBSCRIBE" || n == "SSUBSCRIBE" || n == "PSUBSCRIBE") {
    patterns = n == "PSUBSCRIBE";
    for (size_t i = 1; i < argv.size(); ++i) {
      out.push_back(i);
    }
  }
}

bool key_allowed(const AclSelector& s, std::string_view key, uint8_t need) {
  for (const AclKeyPattern& k : s.keys) {
    if ((k.perms & need) == need && glob_match(k.pattern, key)) {
      return true;
    }
  }
  return false;
}

uint8_t key_needs(const CommandSpec& spec, std::span<const std::string_view> argv, size_t nth,
                  size_t count) {
  uint8_t need = 0;
  for (std::string_view f : key_flags(spec, argv, nth, count)) {
    if (f == "access") {
      need |= kAclKeyRead;
    } else if (f == "update" || f == "insert" || f == "delete") {
      need |= kAclKeyWrite;
    }
  }
  return need;
}

AclCheckResult check_selector(const AclSelector& s, const CommandSpec& spec,
                              std::span<const std::string_view> argv, const Table& table,
                              std::span<const size_t> keys) {
  if ((spec.flags & kNoAuth) == 0 && !s.allows_slot(table.stat_slot(spec, argv))) {
    return {AclDenial::kCommand, 0};
  }
  if (!s.all_keys) {
    for (size_t i = 0; i < keys.size(); ++i) {
      if (!key_allowed(s, argv[keys[i]], key_needs(spec, argv, i, keys.size()))) {
        return {AclDenial::kKey, keys[i]};
      }
    }
  }
  if (!s.all_channels) {
    thread_local std::vector<size_t> chans;
    chans.clear();
    bool patterns = false;
    channel_args(spec, argv, chans, patterns);
    for (size_t i : chans) {
      bool ok = std::any_of(s.channels.begin(), s.channels.end(), [&](const std::string& p) {
        return patterns ? p == argv[i] : glob_match(p, argv[i]);
      });
      if (!ok) {
        return {AclDenial::kChannel, i};
      }
    }
  }
  return {};
}

}  // namespace

AclCheckResult acl_check(const AclUser& user, const CommandSpec& spec,
                         std::span<const std::string_view> argv, const Table& table) {
  if (user.unrestricted) {
    return {};
  }
  thread_local std::vector<size_t> keys;
  keys.clear();
  Table::key_indexes(spec, argv, keys);
  return acl_check(user, spec, argv, table, keys);
}

AclCheckResult acl_check(const AclUser& user, const CommandSpec& spec,
                         std::span<const std::string_view> argv, const Table& table,
                         std::span<const size_t> key_indexes) {
  if (user.unrestricted) {
    return {};
  }
  AclCheckResult worst{AclDenial::kCommand, 0};
  auto consider = [&](const AclSelector& s) {
    AclCheckResult r = check_selector(s, spec, argv, table, key_indexes);
    if (r.denial == AclDenial::kNone) {
      return true;
    }
    if (r.denial > worst.denial || (r.denial == worst.denial && r.arg > worst.arg)) {
      worst = r;
    }
    return false;
  };
  if (consider(user.root)) {
    return {};
  }
  for (const AclSelector& s : user.selectors) {
    if (consider(s)) {
      return {};
    }
  }
  return worst;
}

}  // namespace hotkv
