// ACL rules: parsing, their ACL LIST form, and the permission check over the real command
// table; then ACL commands and AUTH through the dispatcher.
#include <catch2/catch.hpp>

#include "hotkv/commands/acl_store.hpp"
#include "hotkv/commands/acl_user.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/shard/tracking.hpp"
#include "support/test_server.hpp"

using hotkv::AclDenial;
using hotkv::AclUser;
using hotkv::command_table;

namespace {

AclUser make(std::initializer_list<std::string_view> rules, const std::string& name = "u") {
  AclUser u = hotkv::acl_new_user(name);
  std::vector<std::string_view> r(rules);
  hotkv::Status st = hotkv::acl_apply_rules(u, r, command_table());
  INFO(st.message());
  REQUIRE(st.is_ok());
  return u;
}

std::string refusal(std::initializer_list<std::string_view> rules) {
  AclUser u = hotkv::acl_new_user("u");
  std::vector<std::string_view> r(rules);
  return hotkv::acl_apply_rules(u, r, command_table()).message();
}

AclDenial check(const AclUser& u, std::vector<std::string_view> argv) {
  const hotkv::CommandSpec* spec = command_table().find(argv[0]);
  REQUIRE(spec != nullptr);
  return hotkv::acl_check(u, *spec, argv, command_table()).denial;
}

}  // namespace

TEST_CASE("a new user is off with no keys, channels or commands", "[acl]") {
  AclUser u = make({});
  CHECK(hotkv::acl_describe_user(u) == "user u off resetchannels -@all");
  CHECK(check(u, {"GET", "k"}) == AclDenial::kCommand);
  CHECK(!u.unrestricted);
}

TEST_CASE("the default user allows everything with one flag", "[acl]") {
  AclUser d = hotkv::acl_default_user();
  hotkv::acl_finish(d, command_table());
  CHECK(d.unrestricted);
  CHECK(hotkv::acl_describe_user(d) == "user default on nopass ~* &* +@all");
  CHECK(check(d, {"FLUSHALL"}) == AclDenial::kNone);
}

TEST_CASE("rules describe themselves back in the order given, compacted", "[acl]") {
  AclUser u = make({"on", ">p1", "~key:*", "%R~stock:*", "&chan*", "+@write", "+get", "-set",
                    "+config|get", "(+get ~x*)"});
  CHECK(hotkv::acl_describe_user(u) ==
        "user u on #" + hotkv::acl_hash_password("p1") +
            " ~key:* %R~stock:* resetchannels &chan* -@all +@write +get -set +config|get "
            "(~x* resetchannels -@all +get)");
  SECTION("a later rule for a command replaces the earlier one") {
    AclUser v = make({"+get", "+set", "-get"});
    CHECK(hotkv::acl_describe_commands(v.root) == "-@all +set -get");
  }
  SECTION("a command's rule replaces its subcommands' rules") {
    AclUser v = make({"+config|get", "+config|set", "-config", "+config|get"});
    CHECK(hotkv::acl_describe_commands(v.root) == "-@all -config +config|get");
  }
  SECTION("+@all and -@all start over") {
    AclUser v = make({"+get", "+@read", "allcommands", "-set"});
    CHECK(hotkv::acl_describe_commands(v.root) == "+@all -set");
    AclUser w = make({"+get", "-@all", "+set"});
    CHECK(hotkv::acl_describe_commands(w.root) == "-@all +set");
  }
  SECTION("reset leaves an off user with sanitize-payload") {
    AclUser v = make({"on", "nopass", "~*", "+@all", "reset"});
    CHECK(hotkv::acl_describe_user(v) == "user u off sanitize-payload resetchannels -@all");
  }
}

TEST_CASE("passwords are kept as SHA-256 digests", "[acl]") {
  // The digest of "p1" as Redis shows it.
  CHECK(hotkv::acl_hash_password("p1") ==
        "f64551fcd6f07823cb87971cfb91446425da18286b3ab1ef935e0cbd7a69f68a");
  AclUser u = make({"on", ">a", ">b", ">a"});
  CHECK(u.passwords.size() == 2);
  CHECK(hotkv::acl_password_ok(u, "a"));
  CHECK(hotkv::acl_password_ok(u, "b"));
  CHECK(!hotkv::acl_password_ok(u, "c"));
  AclUser v = make({"on", "#" + hotkv::acl_hash_password("x")});
  CHECK(hotkv::acl_password_ok(v, "x"));
  AclUser w = make({"on", ">a", "<a"});
  CHECK(!hotkv::acl_password_ok(w, "a"));
  CHECK(hotkv::acl_password_ok(make({"on", "nopass"}), "anything"));
  CHECK(!hotkv::acl_password_ok(make({"off", "nopass"}), "anything"));
}

TEST_CASE("bad rules are refused with Redis's reasons and change nothing", "[acl]") {
  CHECK(refusal({"badrule"}) == "Error in ACL SETUSER modifier 'badrule': Syntax error");
  CHECK(refusal({"+nosuch"}) ==
        "Error in ACL SETUSER modifier '+nosuch': Unknown command or category name in ACL");
  CHECK(refusal({"+@nosuch"}).ends_with("Unknown command or category name in ACL"));
  CHECK(refusal({"+config|nosuch"}).ends_with("Unknown command or category name in ACL"));
  CHECK(refusal({"%X~x"}).ends_with("Syntax error"));
  CHECK(refusal({"#abc"}).ends_with("The password hash must be exactly 64 characters and contain "
                                    "only lowercase hexadecimal characters"));
  CHECK(refusal({"<nope"}).ends_with(
      "The password you are trying to remove from the user does not exist"));
  CHECK(refusal({"allkeys", "~c"}).find("Adding a pattern after the * pattern") !=
        std::string::npos);
  CHECK(refusal({"(~a +get", "on"}) ==
        "Unmatched parenthesis in acl selector starting at '(~a'.");
  AclUser u = make({"on", "+get"});
  std::vector<std::string_view> bad{"+set", "+nosuch"};
  CHECK(!hotkv::acl_apply_rules(u, bad, command_table()).is_ok());
  CHECK(hotkv::acl_describe_commands(u.root) == "-@all +get");
}

TEST_CASE("commands, keys and channels are checked per selector", "[acl]") {
  AclUser u = make({"on", "nopass", "~k*", "+get", "+set", "+publish", "+subscribe",
                    "+psubscribe", "&news.*"});
  CHECK(check(u, {"GET", "k1"}) == AclDenial::kNone);
  CHECK(check(u, {"GET", "x"}) == AclDenial::kKey);
  CHECK(check(u, {"DEL", "k1"}) == AclDenial::kCommand);
  CHECK(check(u, {"PUBLISH", "news.1", "m"}) == AclDenial::kNone);
  CHECK(check(u, {"PUBLISH", "other", "m"}) == AclDenial::kChannel);
  CHECK(check(u, {"SUBSCRIBE", "news.a", "news.b"}) == AclDenial::kNone);
  // Redis 7 matches a PSUBSCRIBE pattern literally against the allowed ones.
  CHECK(check(u, {"PSUBSCRIBE", "news.*"}) == AclDenial::kNone);
  CHECK(check(u, {"PSUBSCRIBE", "news.a*"}) == AclDenial::kChannel);
  CHECK(check(u, {"AUTH", "x"}) == AclDenial::kNone);  // no-auth commands always pass
  SECTION("a second selector can allow what the root refuses") {
    AclUser v = make({"on", "~k*", "+get", "(~other* +get +set)"});
    CHECK(check(v, {"GET", "other1"}) == AclDenial::kNone);
    CHECK(check(v, {"SET", "other1", "v"}) == AclDenial::kNone);
    CHECK(check(v, {"SET", "k1", "v"}) == AclDenial::kKey);  // the most relevant refusal
    AclUser w = make({"on", "~k*", "+get", "clearselectors", "(~other* +get)", "clearselectors"});
    CHECK(check(w, {"GET", "other1"}) == AclDenial::kKey);
  }
  SECTION("a subcommand can be allowed alone") {
    AclUser v = make({"on", "+config|get"});
    CHECK(check(v, {"CONFIG", "GET", "maxmemory"}) == AclDenial::kNone);
    CHECK(check(v, {"CONFIG", "SET", "maxmemory", "1"}) == AclDenial::kCommand);
  }
}

TEST_CASE("%R~ and %W~ follow each key's read and write flags", "[acl]") {
  AclUser u = make({"on", "%R~src*", "%W~dst*", "~both*", "+@all"});
  CHECK(check(u, {"GET", "src1"}) == AclDenial::kNone);
  CHECK(check(u, {"GET", "dst1"}) == AclDenial::kKey);
  CHECK(check(u, {"SET", "dst1", "v"}) == AclDenial::kNone);
  CHECK(check(u, {"SET", "src1", "v"}) == AclDenial::kKey);
  CHECK(check(u, {"INCR", "dst1"}) == AclDenial::kKey);  // reads it too
  CHECK(check(u, {"INCR", "both1"}) == AclDenial::kNone);
  CHECK(check(u, {"LMOVE", "src1", "dst1", "LEFT", "LEFT"}) == AclDenial::kKey);
  CHECK(check(u, {"SUNIONSTORE", "dst1", "src1", "src2"}) == AclDenial::kNone);
}

TEST_CASE("categories come from the table's flags and groups", "[acl]") {
  const auto& t = command_table();
  auto in = [&](const char* cmd, const char* cat) {
    return hotkv::acl_command_in_category(*t.find(cmd), cat);
  };
  CHECK(in("GET", "read"));
  CHECK(in("GET", "string"));
  CHECK(in("GET", "fast"));
  CHECK(!in("GET", "write"));
  CHECK(in("SET", "write"));
  CHECK(in("SET", "slow"));
  CHECK(in("INV.RESERVE", "inventory"));
  CHECK(in("GCRA.LIMIT", "ratelimit"));
  CHECK(in("CL.THROTTLE", "ratelimit"));
  CHECK(in("BLPOP", "blocking"));
  CHECK(in("FLUSHALL", "dangerous"));
  CHECK(in("KEYS", "dangerous"));
  CHECK(in("CONFIG", "admin"));
  CHECK(in("ZADD", "sortedset"));
  CHECK(in("XREADGROUP", "stream"));
  CHECK(in("MULTI", "transaction"));
  CHECK(in("EVAL", "scripting"));
  CHECK(in("PUBLISH", "pubsub"));
  CHECK(in("DEL", "keyspace"));
  CHECK(in("AUTH", "connection"));
  // Where Redis's own category lists differ from what the flags say.
  CHECK(in("SORT", "list"));
  CHECK(!in("SORT", "keyspace"));
  CHECK(!in("EVAL_RO", "read"));
  CHECK(in("ROLE", "admin"));
  CHECK(in("BZPOPMIN", "fast"));
  AclUser u = make({"on", "+@inventory", "~*"});
  CHECK(check(u, {"INV.RESERVE", "stock:1", "h1", "1", "1000"}) == AclDenial::kNone);
  CHECK(check(u, {"GET", "stock:1"}) == AclDenial::kCommand);
}

TEST_CASE("ACL commands and AUTH through the dispatcher", "[acl]") {
  hotkv::test::TestServer s;
  CHECK(s.run({"ACL", "WHOAMI"}) == "$7\r\ndefault\r\n");
  CHECK(s.run({"ACL", "SETUSER", "alice", "on", ">pw", "~k*", "+get"}) == "+OK\r\n");
  CHECK(s.run({"AUTH", "alice", "bad"}) ==
        "-WRONGPASS invalid username-password pair or user is disabled.\r\n");
  CHECK(s.run({"AUTH", "alice", "pw"}) == "+OK\r\n");
  CHECK(s.run({"ACL", "WHOAMI"}) ==
        "-NOPERM this user has no permissions to run the 'acl|whoami' command\r\n");
  CHECK(s.run({"GET", "x"}) ==
        "-NOPERM this user has no permissions to access one of the keys used as arguments\r\n");
  CHECK(s.run({"GET", "k1"}) == "$-1\r\n");
  CHECK(s.run({"SET", "k1", "v"}) ==
        "-NOPERM this user has no permissions to run the 'set' command\r\n");
  // A change reaches the authenticated session at its next command.
  auto entries = s.engine().acl().log_entries(10);
  REQUIRE(entries.size() == 4);
  CHECK(entries[0].reason == "command");
  CHECK(entries[0].object == "set");
  CHECK(entries[1].reason == "key");
  CHECK(entries[1].object == "x");
  CHECK(entries[3].reason == "auth");
  CHECK(entries[3].username == "alice");
  CHECK(entries[3].object == "AUTH");
  std::vector<std::string_view> more{"+set"};
  REQUIRE(s.engine().acl().set_user("alice", more).is_ok());
  CHECK(s.run({"SET", "k1", "v"}) == "+OK\r\n");
  CHECK(s.run({"AUTH", "default", "x"}) == "+OK\r\n");  // default is nopass
  CHECK(s.run({"ACL", "DELUSER", "default"}) == "-ERR The 'default' user cannot be removed\r\n");
  CHECK(s.run({"ACL", "DRYRUN", "alice", "GET", "zz"}) ==
        "$51\r\nThis user has no permissions to access the 'zz' key\r\n");
  CHECK(s.run({"ACL", "DRYRUN", "alice", "GET", "k2"}) == "+OK\r\n");
  CHECK(s.run({"ACL", "DELUSER", "alice", "nobody"}) == ":1\r\n");
}

TEST_CASE("requirepass sets the default user's password", "[acl]") {
  hotkv::test::TestServer s;
  REQUIRE(s.config().set("requirepass", "secret", false).is_ok());
  auto d = s.engine().acl().find("default");
  CHECK(hotkv::acl_password_ok(*d, "secret"));
  CHECK(!hotkv::acl_password_ok(*d, "other"));
  CHECK(!s.engine().acl().default_is_open());
  REQUIRE(s.config().set("requirepass", "", false).is_ok());
  CHECK(s.engine().acl().default_is_open());
}

TEST_CASE("users load from rule lines all or nothing", "[acl]") {
  hotkv::AclStore store(command_table());
  CHECK(store.load_lines({"user a on nopass ~* +get", "user b off"}, "f").is_ok());
  CHECK(store.find("a") != nullptr);
  CHECK(store.find("default") != nullptr);  // reset to its starting rules
  hotkv::Status st = store.load_lines({"user c on", "user a +nosuch"}, "f");
  CHECK(st.message() ==
        "f:2: Error in ACL SETUSER modifier '+nosuch': Unknown command or category name in ACL");
  CHECK(store.find("c") == nullptr);
  CHECK(store.find("b") != nullptr);
  CHECK(store.load_lines({"user a on", "user a off"}, "f").message() ==
        "f:2: Duplicate user 'a' found");
  CHECK(store.load_lines({"nonsense"}, "f").message() ==
        "f:1: line should start with user keyword");
}

TEST_CASE("ACL LOG groups repeated denials and keeps the newest first", "[acl]") {
  hotkv::AclStore store(command_table());
  store.log("command", "toplevel", "get", "u", "", 1000, 128);
  store.log("key", "toplevel", "k", "u", "", 2000, 128);
  store.log("command", "toplevel", "get", "u", "", 3000, 128);
  auto e = store.log_entries(10);
  REQUIRE(e.size() == 2);
  CHECK(e[0].object == "get");
  CHECK(e[0].count == 2);
  CHECK(e[0].updated_ms == 3000);
  store.log("command", "toplevel", "get", "u", "", 3000 + 61000, 128);
  CHECK(store.log_entries(10).size() == 3);
  for (int i = 0; i < 10; ++i) {
    store.log("key", "toplevel", "k" + std::to_string(i), "u", "", 70000, 5);
  }
  CHECK(store.log_entries(100).size() == 5);
  store.log_reset();
  CHECK(store.log_entries(10).empty());
}

TEST_CASE("redis.acl_check_cmd answers for the script's caller without running or logging",
          "[acl]") {
  hotkv::test::TestServer s;
  REQUIRE(s.run({"ACL", "SETUSER", "bob", "on", ">pw", "~x*", "+@scripting", "+set"}) ==
          "+OK\r\n");
  REQUIRE(s.run({"AUTH", "bob", "pw"}) == "+OK\r\n");
  // The connection names the caller of every command (take_tracking_caller); here by hand.
  hotkv::TrackingCaller caller;
  caller.acl_user = s.session().user;
  hotkv::ScopedTrackingCaller as(caller);
  CHECK(s.run({"EVAL", "return redis.acl_check_cmd('set', 'xx', 1)", "0"}) == ":1\r\n");
  CHECK(s.run({"EVAL", "return redis.acl_check_cmd('hset', 'xx', 'f', 1)", "0"}) == "$-1\r\n");
  CHECK(s.run({"EVAL", "return redis.acl_check_cmd('set', 'yy', 1)", "0"}) == "$-1\r\n");
  CHECK(s.run({"GET", "xx"}) == "-NOPERM this user has no permissions to run the 'get' command\r\n");
  CHECK(s.engine().acl().log_entries(10).size() == 1);  // only the GET above
  CHECK(s.run({"EVAL", "return redis.acl_check_cmd('nosuch')", "0"})
            .find("Invalid command passed to redis.acl_check_cmd()") != std::string::npos);
}
