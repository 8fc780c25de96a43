// Fuzz target for the command families: short sequences of commands from the command table,
// with arguments built from the input, run through the real table, dispatcher and shards
// (TestServer, as the unit tests run them; one or two shards, so cross-shard paths run too).
//
// Input: byte 0 picks one or two shards; then per command one byte for the command (an index
// into the table, minus the commands that stop the process, fork, touch the network or the
// configuration: see kSkipped) or 0xFF to move the clock and run active expiry, one byte for the
// argument count, then per argument a tag byte and its bytes: a key of a small shared set, a
// keyword of that command's syntax, a number (small, or an edge such as inf or INT64_MAX), a
// stream id, a field name, a script of a small fixed set, the previous bulk reply (so RESTORE
// gets DUMP's payloads), or raw bytes.
// Checks, besides no crash, no sanitizer report and no hang: every reply is well-formed RESP;
// INV.AUDIT finds no broken `available + held + sold = total` after inventory commands and
// expiry; every record the shards log decodes, and applies to a fresh server as replay would.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <spdlog/spdlog.h>

#include "hotkv/commands/table.hpp"
#include "hotkv/persist/record.hpp"
#include "hotkv/persist/shard_log.hpp"
#include "hotkv/shard/engine.hpp"
#include "hotkv/shard/op_effects.hpp"
#include "hotkv/shard/shard.hpp"
#include "support/resp_value.hpp"
#include "support/test_server.hpp"

namespace {

using namespace hotkv;

[[noreturn]] void fail(const char* what, const std::string& detail = {}) {
  std::fprintf(stderr, "commands_fuzz: %s %s\n", what, detail.c_str());
  std::abort();
}

// Commands that would end or fork the process, wait for other servers or clients, open sockets
// or files, or change settings (CONFIG SET could move the port or the data directory): not
// what this target is about, and unsafe in a process that runs thousands of inputs.
const std::set<std::string> kSkipped = {
    "SHUTDOWN", "DEBUG",   "SAVE",    "BGSAVE",   "BGREWRITEAOF", "REPLICAOF", "SLAVEOF",
    "SYNC",     "PSYNC",   "MIGRATE", "MONITOR",  "FAILOVER",     "WAIT",      "WAITAOF",
    "MODULE",   "CONFIG",  "REPLCONF", "CLUSTER", "READONLY",     "READWRITE", "LASTSAVE",
    // Runs for seconds by design (Redis's too): a self-test, not a command of the data path.
    "PFSELFTEST"};
// Subcommands skipped for the same reasons (argv[1], upper case).
const std::set<std::pair<std::string, std::string>> kSkippedSub = {
    {"CLIENT", "PAUSE"}, {"CLIENT", "KILL"}, {"SCRIPT", "KILL"}, {"FUNCTION", "KILL"}};

// Scripts are taken from this list: a script the input spelled could loop for ever, which is
// Redis's behaviour too (SCRIPT KILL ends it), not a finding.
const std::vector<std::string> kScripts = {
    "return 1",
    "return redis.call('SET', KEYS[1], ARGV[1])",
    "return redis.pcall('INCRBY', KEYS[1], ARGV[1])",
    "return {KEYS[1], ARGV[1], redis.call('TYPE', KEYS[1])}",
    "redis.call('DEL', KEYS[1]) return redis.call('RPUSH', KEYS[1], ARGV[1], ARGV[2])",
    "return cjson.encode({redis.call('GET', KEYS[1])})",
    "return cmsgpack.unpack(ARGV[1])",
    "return redis.call('INV.RESERVE', KEYS[1], ARGV[1], 'h1', 1000)",
    "error('boom')",
    "#!lua name=lib\nredis.register_function('f', function(k, a) return redis.call('GET', k[1]) "
    "end)",
};

const std::vector<std::string> kKeys = {"k0", "k1", "{t}k2", "{t}k3", "k4"};
const std::vector<std::string> kFields = {"f0", "f1", "f2", "a", "m"};
const std::vector<std::string> kIds = {"0-0", "*", "$", ">", "+", "-", "1-1", "0", "2-0"};
const std::vector<std::string> kNumbers = {
    "0",   "-1",   "1.5",  "inf", "-inf", "+inf", "nan", "9223372036854775807",
    "-9223372036854775808", "18446744073709551616", "1e400", "0x10", "+1", " 1", "", "-0"};

struct CommandVocab {
  const CommandSpec* spec;
  std::vector<std::string> keywords;  // upper-case words of its syntax and its subcommands
};

std::vector<CommandVocab> build_vocab() {
  std::vector<CommandVocab> out;
  for (const CommandSpec& spec : command_table().all()) {
    if (kSkipped.count(spec.name) != 0) {
      continue;
    }
    CommandVocab v{&spec, {}};
    std::set<std::string> words;
    std::string word;
    for (char c : spec.syntax + " ") {
      if (std::isupper(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) ||
          c == '-' || c == '_' || c == '.') {
        word.push_back(c);
        continue;
      }
      if (word.size() >= 2 && word != spec.name &&
          std::any_of(word.begin(), word.end(), [](char ch) { return std::isupper(static_cast<unsigned char>(ch)); })) {
        words.insert(word);
      }
      word.clear();
    }
    for (const auto& sub : spec.subcommands) {
      std::string up = sub;
      for (auto& ch : up) {
        ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      }
      words.insert(up);
    }
    v.keywords.assign(words.begin(), words.end());
    out.push_back(std::move(v));
  }
  return out;
}

const std::vector<CommandVocab>& vocab() {
  static const std::vector<CommandVocab> v = build_vocab();
  return v;
}

class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool empty() const { return pos_ >= size_; }
  uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  std::string bytes(size_t n) {
    n = std::min(n, size_ - std::min(pos_, size_));
    std::string s(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return s;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

template <typename T>
const T& pick(const std::vector<T>& v, uint8_t b) {
  return v[b % v.size()];
}

std::string argument(Input& in, const CommandVocab& cmd, const std::string& last_bulk) {
  const uint8_t tag = in.byte();
  const uint8_t b = in.byte();
  switch (tag % 10) {
    case 0:
      return pick(kKeys, b);
    case 1:
      return cmd.keywords.empty() ? pick(kKeys, b) : pick(cmd.keywords, b);
    case 2:
      return std::to_string(static_cast<int>(b % 24) - 3);
    case 3:
      return pick(kNumbers, b);
    case 4:
      return pick(kIds, b);
    case 5:
      return pick(kFields, b);
    case 6:
      return pick(vocab(), b).spec->name;
    case 7:
      return last_bulk;
    case 8:
      return std::to_string(static_cast<int64_t>(b) * 1000 + tag);  // counts, times, ids
    default:
      return in.bytes(b % 32);
  }
}

// Splits `reply` into its top-level RESP values; fails if it is not a whole number of them.
void check_reply(const std::string& reply, const std::vector<std::string>& argv,
                 std::string& last_bulk) {
  size_t pos = 0;
  try {
    while (pos < reply.size()) {
      test::Resp r = test::detail::parse_resp_at(reply, pos);
      if (r.type == '$' && !r.null) {
        last_bulk = r.str;
      }
    }
  } catch (const std::exception& e) {
    fail("malformed reply to", argv[0] + ": " + e.what());
  }
}

// Collects what every shard's log writes (no file: the tap is what a replica's feed uses).
class Capture : public LogTap {
 public:
  explicit Capture(size_t shards) : logs(shards) {}
  void on_records(size_t shard, std::string_view records) override {
    logs.at(shard).append(records);
  }
  std::vector<std::string> logs;
};

// Applies shard `shard`'s log as the loader would: a keyed effect on its key's shard, a flush
// or a swapdb on the shard whose log holds it.
void replay_into(const std::string& log, size_t shard, test::TestServer& dst) {
  RecordDecoder dec(log);
  Record r;
  DecodeStatus st;
  while ((st = dec.next(r)) == DecodeStatus::kOk) {
    for (const Effect& e : r.effects) {
      Engine& eng = dst.engine();
      if (e.db >= eng.shard(0).db_count()) {
        fail("a logged effect names a database out of range");
      }
      const bool keyed = e.kind != EffectKind::kFlush && e.kind != EffectKind::kSwapDb;
      Keyspace& ks = eng.shard(keyed ? eng.shard_of(e.key) : shard).keyspace(e.db);
      std::string err;
      switch (e.kind) {
        case EffectKind::kOp:
          if (!apply_op_effect(ks, e, dst.now(), err)) {
            fail("a logged op does not apply:", err);
          }
          break;
        case EffectKind::kDel:
          ks.erase(e.key);
          break;
        case EffectKind::kExpire:
          if (Value* v = ks.find(e.key, dst.now())) {
            ks.set_expire(e.key, *v, e.at_ms);
          }
          break;
        case EffectKind::kPut: {
          Value v = e.is_int ? Value::from_int(e.integer) : Value::from_string(e.str);
          v.set_expire_raw(e.at_ms);
          ks.put(e.key, std::move(v));
          break;
        }
        case EffectKind::kFlush:
          ks.clear();
          break;
        case EffectKind::kSwapDb:
          eng.shard(shard).swap_dbs(e.db, e.db2);
          break;
        default:
          fail("a logged effect of an unknown kind");
      }
    }
  }
  if (st != DecodeStatus::kEnd) {
    fail("the logged records do not decode:", dec.error());
  }
}

// The argument of argv that is a script's source, if any (EVAL's, SCRIPT LOAD's, FUNCTION
// LOAD's): it is replaced by one of kScripts.
std::string* script_argument(std::vector<std::string>& argv, const std::string& sub) {
  if ((argv[0] == "EVAL" || argv[0] == "EVAL_RO") && argv.size() > 1) {
    return &argv[1];
  }
  if ((argv[0] == "SCRIPT" || argv[0] == "FUNCTION") && sub == "LOAD" && argv.size() > 2) {
    return &argv.back();
  }
  return nullptr;
}

bool is_inventory(const CommandSpec& spec) { return spec.group == "inventory"; }

// INV.AUDIT of the database `db`, from a client of its own (the fuzzed one may be subscribed
// or inside MULTI).
void audit(test::TestServer& s, uint32_t db) {
  ClientSession auditor = s.new_session();
  auditor.db = db;
  const std::string reply = s.run_as(auditor, {"INV.AUDIT"});
  if (reply != "*0\r\n") {
    fail("INV.AUDIT:", reply);
  }
}

// Building an engine costs far more than a short command sequence (timing wheels, statistics,
// sixteen databases per shard), so each shard count has one server for the whole run, emptied
// before every input; each input runs as a new client.
struct Servers {
  test::TestServer* run = nullptr;
  test::TestServer* replay = nullptr;
  Capture* capture = nullptr;
};

Servers& servers_for(size_t shards) {
  static Servers cache[2];
  Servers& s = cache[shards - 1];
  if (s.run == nullptr) {
    s.run = new test::TestServer(shards);
    s.replay = new test::TestServer(shards);
    s.capture = new Capture(shards);
    for (size_t i = 0; i < shards; ++i) {
      s.run->engine().shard(i).log().set_tap(s.capture, i);
      s.run->engine().shard(i).log().set_tap_on(true);
    }
  }
  return s;
}

void empty_server(test::TestServer& s) {
  ClientSession admin = s.new_session();
  for (const std::vector<std::string>& argv :
       {std::vector<std::string>{"FLUSHALL"}, {"SCRIPT", "FLUSH"}, {"FUNCTION", "FLUSH"}}) {
    s.run_as(admin, argv);
  }
  for (size_t i = 0; i < s.engine().shard_count(); ++i) {
    s.engine().shard(i).log().flush_if_needed();
  }
  s.pushes();
}

// The seed corpus (tests/fuzz/corpus/commands/): readable command sequences, encoded in the
// input format above with every argument as raw bytes. Written by running the target with
// HOTKV_FUZZ_WRITE_SEEDS=<dir>, so the seeds follow the table when commands are added.
// "+clock <ms/250>" moves the clock and runs expiry.
using Sequence = std::vector<std::vector<std::string>>;
const std::vector<std::pair<std::string, Sequence>> kSeeds = {
    {"strings", {{"SET", "k0", "v", "EX", "10", "NX"}, {"GET", "k0"}, {"APPEND", "k0", "x"},
                 {"INCRBYFLOAT", "k1", "1.5"}, {"GETRANGE", "k0", "0", "-1"},
                 {"SETRANGE", "k0", "3", "ab"}, {"MSET", "k0", "1", "{t}k2", "2"},
                 {"MGET", "k0", "k1", "{t}k2"}, {"GETEX", "k0", "PX", "500"}, {"+clock", "4"},
                 {"GETDEL", "k0"}}},
    {"keys", {{"SET", "k0", "1"}, {"EXPIRE", "k0", "5", "NX"}, {"TTL", "k0"}, {"RENAME", "k0",
              "k1"}, {"COPY", "k1", "{t}k2"}, {"SCAN", "0", "MATCH", "k*", "COUNT", "2"},
              {"OBJECT", "ENCODING", "k1"}, {"DUMP", "k1"}, {"RESTORE", "k4", "0", "$last"},
              {"KEYS", "*"}, {"TYPE", "k4"}, {"UNLINK", "k1", "k4"}}},
    {"lists", {{"RPUSH", "k0", "a", "b", "c"}, {"LPOS", "k0", "b", "RANK", "-1"},
               {"LINSERT", "k0", "BEFORE", "b", "x"}, {"LMOVE", "k0", "k1", "LEFT", "RIGHT"},
               {"LMPOP", "2", "k0", "k1", "LEFT", "COUNT", "2"}, {"BLPOP", "k1", "0"},
               {"LRANGE", "k0", "0", "-1"}, {"LTRIM", "k0", "1", "-1"}, {"SORT", "k0", "ALPHA"}}},
    {"hashes", {{"HSET", "k0", "f0", "1", "f1", "x"}, {"HINCRBY", "k0", "f0", "5"},
                {"HINCRBYFLOAT", "k0", "f1", "1"}, {"HRANDFIELD", "k0", "-3", "WITHVALUES"},
                {"HSCAN", "k0", "0"}, {"HGETALL", "k0"}, {"HDEL", "k0", "f0", "f1"}}},
    {"sets", {{"SADD", "k0", "a", "b", "1"}, {"SADD", "{t}k2", "1", "2"},
              {"SINTERSTORE", "{t}k3", "{t}k2", "{t}k2"}, {"SUNION", "k0", "k1"},
              {"SPOP", "k0", "2"}, {"SRANDMEMBER", "k0", "-5"}, {"SMOVE", "k0", "k1", "a"},
              {"SINTERCARD", "2", "k0", "k1", "LIMIT", "1"}}},
    {"zsets", {{"ZADD", "k0", "1", "a", "2.5", "b", "inf", "c"}, {"ZADD", "k0", "GT", "CH",
               "3", "a"}, {"ZRANGE", "k0", "(1", "+inf", "BYSCORE", "LIMIT", "0", "2"},
               {"ZRANGEBYLEX", "k0", "-", "+"}, {"ZUNIONSTORE", "k1", "1", "k0", "WEIGHTS", "2"},
               {"ZPOPMIN", "k0", "2"}, {"ZMPOP", "1", "k1", "MAX"}, {"ZRANK", "k1", "a"},
               {"ZINCRBY", "k1", "-inf", "a"}}},
    {"streams", {{"XADD", "k0", "*", "f", "v"}, {"XADD", "k0", "MAXLEN", "~", "5", "2-0",
                 "a", "b"}, {"XGROUP", "CREATE", "k0", "g", "0"}, {"XREADGROUP", "GROUP", "g",
                 "c", "COUNT", "1", "STREAMS", "k0", ">"}, {"XPENDING", "k0", "g"},
                 {"XCLAIM", "k0", "g", "c2", "0", "2-0"}, {"XAUTOCLAIM", "k0", "g", "c", "0",
                 "0-0"}, {"XINFO", "STREAM", "k0", "FULL"}, {"XTRIM", "k0", "MINID", "3"},
                 {"XDEL", "k0", "2-0"}, {"XRANGE", "k0", "-", "+"}}},
    {"inventory", {{"INV.CREATE", "k0", "10", "MAXPEROWNER", "3", "EVENTS", "k4"},
                   {"INV.RESERVE", "k0", "h1", "2", "1000", "OWNER", "o"},
                   {"INV.RESERVE", "k0", "h2", "1", "500"}, {"INV.COMMIT", "k0", "h1"},
                   {"INV.EXTEND", "k0", "h2", "2000"}, {"INV.RESTOCK", "k0", "-3"},
                   {"+clock", "12"}, {"INV.HOLDS", "k0"}, {"INV.GET", "k0"},
                   {"INV.MRESERVE", "h3", "100", "k0", "1", "{t}k2", "1"}, {"INV.AUDIT"}}},
    {"ratelimit", {{"GCRA.LIMIT", "k0", "1000", "5", "BURST", "2"}, {"GCRA.LIMIT", "k0",
                   "1000", "5", "COST", "3"}, {"+clock", "1"}, {"GCRA.LIMIT", "k0", "1", "1"}}},
    {"transactions", {{"WATCH", "k0"}, {"MULTI"}, {"SET", "k0", "1"}, {"INCR", "k1"},
                      {"EXEC"}, {"MULTI"}, {"DISCARD"}, {"UNWATCH"}}},
    {"scripts", {{"EVAL", "return redis.call('SET', KEYS[1], ARGV[1])", "1", "k0", "v"},
                 {"SCRIPT", "LOAD", "return 1"}, {"EVAL", "return cmsgpack.unpack(ARGV[1])",
                 "0", "\x93\x01\x02\x03"}, {"FUNCTION", "FLUSH"}}},
    {"server", {{"HELLO", "3"}, {"CLIENT", "SETNAME", "x"}, {"INFO", "keyspace"},
                {"SELECT", "3"}, {"SET", "k0", "1"}, {"SWAPDB", "0", "3"}, {"MOVE", "k0", "1"},
                {"DBSIZE"}, {"FLUSHALL"}, {"COMMAND", "INFO", "GET"}, {"LATENCY", "LATEST"},
                {"MEMORY", "USAGE", "k0"}, {"SLOWLOG", "GET", "2"}}},
    {"bits_geo_hll", {{"SETBIT", "k0", "7", "1"}, {"BITCOUNT", "k0", "0", "-1", "BIT"},
                      {"BITFIELD", "k0", "INCRBY", "i5", "100", "1", "OVERFLOW", "SAT"},
                      {"BITOP", "NOT", "k1", "k0"}, {"GEOADD", "k4", "13.36", "38.11", "a"},
                      {"GEOSEARCH", "k4", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km",
                       "ASC", "WITHDIST"}, {"PFADD", "{t}k2", "a", "b"}, {"PFCOUNT", "{t}k2"},
                      {"PFMERGE", "{t}k3", "{t}k2"}}},
    {"pubsub", {{"SUBSCRIBE", "c1", "c2"}, {"PUBLISH", "c1", "m"}, {"PSUBSCRIBE", "c*"},
                {"PUBSUB", "NUMSUB", "c1"}, {"UNSUBSCRIBE"}, {"PUNSUBSCRIBE"}}},
};

void write_seeds(const std::string& dir) {
  for (const auto& [name, seq] : kSeeds) {
    std::string out(1, '\x01');  // two shards
    for (const auto& cmd : seq) {
      if (cmd[0] == "+clock") {
        out.push_back('\xff');
        out.push_back(static_cast<char>(std::stoi(cmd[1])));
        continue;
      }
      size_t index = 0;
      while (index < vocab().size() && vocab()[index].spec->name != cmd[0]) {
        ++index;
      }
      if (index == vocab().size() || cmd.size() > 16) {
        fail("a seed names an unknown or skipped command, or too many arguments:", cmd[0]);
      }
      out.push_back(static_cast<char>(index));
      size_t count = cmd.size() - 1;
      for (size_t a = 1; a < cmd.size(); ++a) {
        auto script = std::find(kScripts.begin(), kScripts.end(), cmd[a]);
        if (script != kScripts.end() && script - kScripts.begin() < 8) {
          count |= static_cast<size_t>(script - kScripts.begin()) << 4;
        }
      }
      out.push_back(static_cast<char>(count));
      for (size_t a = 1; a < cmd.size(); ++a) {
        if (std::find(kScripts.begin(), kScripts.end(), cmd[a]) != kScripts.end()) {
          out.push_back(9);  // a placeholder: the harness puts the script there
          out.push_back(0);
          continue;
        }
        if (cmd[a] == "$last") {
          out.push_back(7);
          out.push_back(0);
          continue;
        }
        if (cmd[a].size() >= 32) {
          fail("a seed argument is longer than 31 bytes:", cmd[a]);
        }
        out.push_back(9);
        out.push_back(static_cast<char>(cmd[a].size()));
        out.append(cmd[a]);
      }
    }
    std::FILE* f = std::fopen((dir + "/" + name).c_str(), "wb");
    if (f == nullptr || std::fwrite(out.data(), 1, out.size(), f) != out.size()) {
      fail("cannot write a seed in", dir);
    }
    std::fclose(f);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);
  vocab();
  if (const char* dir = std::getenv("HOTKV_FUZZ_WRITE_SEEDS")) {
    write_seeds(dir);
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) {
    return 0;
  }
  Input in(data, size);
  const size_t shards = (in.byte() & 1) != 0 ? 2 : 1;
  Servers& servers = servers_for(shards);
  test::TestServer& s = *servers.run;
  s.advance(1000);
  for (auto& log : servers.capture->logs) {
    log.clear();
  }
  ClientSession client = s.new_session();
  std::string last_bulk = "v";
  bool inventory_touched = false;
  for (int n = 0; n < 16 && !in.empty(); ++n) {
    const uint8_t which = in.byte();
    if (which == 0xFF) {
      s.advance(static_cast<int64_t>(in.byte()) * 250);
      s.expire_cycle();
      if (inventory_touched) {
        audit(s, client.db);
      }
      continue;
    }
    const CommandVocab& cmd = pick(vocab(), which);
    const uint8_t count = in.byte();
    std::vector<std::string> argv{cmd.spec->name};
    size_t args = count & 15;
    if ((count & 0x80) != 0) {  // the arity, so most such calls get past the arity check
      args = cmd.spec->arity > 0 ? static_cast<size_t>(cmd.spec->arity - 1)
                                 : static_cast<size_t>(-cmd.spec->arity - 1) + ((count >> 4) & 3);
    }
    for (size_t a = 0; a < args; ++a) {
      argv.push_back(argument(in, cmd, last_bulk));
    }
    std::string sub = argv.size() > 1 ? argv[1] : "";
    for (auto& ch : sub) {
      ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    }
    if (kSkippedSub.count({argv[0], sub}) != 0) {
      continue;
    }
    if (std::string* body = script_argument(argv, sub)) {
      *body = pick(kScripts, static_cast<uint8_t>((count >> 4) & 7));
    }
    const std::string reply = s.run_as(client, argv);
    check_reply(reply, argv, last_bulk);
    for (size_t i = 0; i < shards; ++i) {
      s.engine().shard(i).log().flush_if_needed();
    }
    if (is_inventory(*cmd.spec)) {
      inventory_touched = true;
      audit(s, client.db);
    }
  }
  s.run_as(client, {"RESET"});  // drops its subscriptions, WATCH and MULTI
  s.pushes();
  for (size_t i = 0; i < shards; ++i) {
    s.engine().shard(i).log().flush_if_needed();
  }
  test::TestServer& replayed = *servers.replay;
  replayed.advance(s.now() - replayed.now());
  for (size_t i = 0; i < shards; ++i) {
    replay_into(servers.capture->logs[i], i, replayed);
  }
  // Emptied now rather than before the next input: what this input allocated is freed within
  // it, as the leak check expects.
  empty_server(s);
  for (size_t i = 0; i < shards; ++i) {
    for (uint32_t db = 0; db < replayed.engine().shard(i).db_count(); ++db) {
      replayed.engine().shard(i).keyspace(db).clear();
    }
  }
  return 0;
}
