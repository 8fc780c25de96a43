// Unit tests for the log manifest: the text round-trips, inconsistent or hostile manifests are
// refused as corrupt, a missing file is no manifest (not a failure), and an atomic store can
// be read back.
#include "hotkv/persist/manifest.hpp"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

using hotkv::Manifest;
using hotkv::StatusCode;

TEST_CASE("manifests round-trip and reject inconsistent segments", "[persist][manifest]") {
  Manifest m;
  m.segments.push_back({1, true, 2, {"a.1.base.0.aof", "a.1.base.1.aof"}});
  m.segments.push_back({2, false, 1, {"a.2.incr.0.aof"}});
  auto back = hotkv::parse_manifest(hotkv::render_manifest(m));
  REQUIRE(back.is_ok());
  REQUIRE(back.value().segments.size() == 2);
  CHECK(back.value().segments[0].base);
  CHECK(back.value().segments[0].files == m.segments[0].files);
  CHECK(back.value().next_seq() == 3);
  SECTION("a segment missing a file") {
    auto r = hotkv::parse_manifest("segment 1 incr 2\nfile x\n");
    REQUIRE(r.status().code() == StatusCode::kCorruption);
    CHECK(r.status().message() == "segment 1 lists 1 files for 2 shards");
  }
  SECTION("segments out of order") {
    auto r = hotkv::parse_manifest("segment 2 incr 1\nfile x\nsegment 1 incr 1\nfile y\n");
    REQUIRE(r.status().code() == StatusCode::kCorruption);
    CHECK(r.status().message() == "line 3: segments out of order");
  }
  SECTION("a file outside the log directory") {
    auto r = hotkv::parse_manifest("file ../etc/passwd\n");
    CHECK(r.status().code() == StatusCode::kCorruption);
  }
  CHECK(hotkv::segment_file_name("appendonly.aof", 3, false, 1) == "appendonly.aof.3.incr.1.aof");
}

TEST_CASE("a stored manifest loads back, and a missing one is no manifest", "[persist][manifest]") {
  std::string path = "/tmp/hotkv-manifest-test-" + std::to_string(::getpid()) + ".manifest";
  std::remove(path.c_str());
  auto missing = hotkv::load_manifest(path);
  REQUIRE(missing.is_ok());
  REQUIRE_FALSE(missing.value().has_value());

  Manifest m;
  m.segments.push_back({4, false, 1, {"x.4.incr.0.aof"}});
  REQUIRE(hotkv::store_manifest(path, m).is_ok());
  auto loaded = hotkv::load_manifest(path);
  REQUIRE(loaded.is_ok());
  REQUIRE(loaded.value().has_value());
  CHECK(loaded.value()->segments[0].files == m.segments[0].files);

  SECTION("the string forms agree") {
    Manifest out;
    std::string error;
    CHECK(hotkv::read_manifest(path, out, error));
    CHECK(error.empty());
    CHECK(out.segments.size() == 1);
  }
  SECTION("a damaged file is corrupt") {
    std::ofstream(path) << "segment one\n";
    auto bad = hotkv::load_manifest(path);
    REQUIRE_FALSE(bad.is_ok());
    CHECK(bad.status().code() == StatusCode::kCorruption);
  }
  SECTION("a store into a missing directory is an I/O error") {
    hotkv::Status st = hotkv::store_manifest("/nonexistent-dir/x.manifest", m);
    CHECK(st.code() == StatusCode::kIoError);
    CHECK(st.message().rfind("cannot create /nonexistent-dir/x.manifest.tmp: ", 0) == 0);
  }
  std::remove(path.c_str());
}
