#include "hotkv/shard/replication_state.hpp"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <string>

namespace {

std::string temp_dir() {
  char tmpl[] = "/tmp/hotkv-replstate-XXXXXX";
  REQUIRE(::mkdtemp(tmpl) != nullptr);
  return tmpl;
}

}  // namespace

TEST_CASE("A replica's stream position survives a restart once, then is gone", "[replication]") {
  std::string dir = temp_dir();
  hotkv::ReplicationPosition p{std::string(40, 'a'), 12345, 3, "aof"};
  REQUIRE(hotkv::save_replication_position(dir, p).is_ok());
  auto back = hotkv::take_replication_position(dir);
  REQUIRE(back);
  CHECK(back->replid == p.replid);
  CHECK(back->offset == 12345);
  CHECK(back->db == 3);
  CHECK(back->source == "aof");
  // Taken: a later crash and restart must not offer it again.
  CHECK_FALSE(hotkv::take_replication_position(dir));
  // A damaged file offers nothing (and is removed too).
  std::ofstream(dir + "/replication-position") << "short 1\n";
  CHECK_FALSE(hotkv::take_replication_position(dir));
  CHECK(::access((dir + "/replication-position").c_str(), F_OK) != 0);
  ::rmdir(dir.c_str());
}
