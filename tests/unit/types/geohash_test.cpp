// Geohash math: scores, positions, hash strings and distances against values redis-server 7.0
// gives for the same inputs, plus round trips and the search cells' coverage.
#include "hotkv/types/geohash.hpp"

#include <cmath>
#include <random>

#include <catch2/catch.hpp>

namespace geo = hotkv::geo;

TEST_CASE("geohash: scores are Redis's 52-bit interleaving", "[geohash]") {
  CHECK(geo::score_of(13.361389, 38.115556) == 3479099956230698ULL);
  CHECK(geo::score_of(15.087269, 37.502669) == 3479447370796909ULL);
  CHECK(geo::score_of(-180, -85.05112878) == 0);
  CHECK(geo::score_of(0, 0) == 3377699720527872ULL);
  // At the upper limits the cell index is one past the last, exactly as Redis computes it.
  CHECK(geo::score_of(180, 85.05112878) == 13510798882111488ULL);
}

TEST_CASE("geohash: positions decode to the cell centre, clamped", "[geohash]") {
  double lon = 0;
  double lat = 0;
  REQUIRE(geo::decode_score(3479099956230698.0, lon, lat));
  CHECK(geo::format_coord(lon) == "13.36138933897018433");
  CHECK(geo::format_coord(lat) == "38.11555639549629859");
  REQUIRE(geo::decode_score(13510798882111488.0, lon, lat));
  CHECK(geo::format_coord(lon) == "180");
  CHECK(geo::format_coord(lat) == "85.0511287799999991");
  REQUIRE(geo::decode_score(0, lon, lat));
  CHECK(geo::format_coord(lon) == "-179.99999731779098511");
  CHECK(geo::format_coord(lat) == "-85.05112751263942528");
  REQUIRE(geo::decode_score(3377699720527872.0, lon, lat));
  CHECK(geo::format_coord(lon) == "0.00000268220901489");
}

TEST_CASE("geohash: 11-character strings", "[geohash]") {
  CHECK(geo::hash_string(3479099956230698.0) == "sqc8b49rny0");
  CHECK(geo::hash_string(3479447370796909.0) == "sqdtr74hyu0");
  CHECK(geo::hash_string(13510798882111488.0) == "bp05b5048p0");
  CHECK(geo::hash_string(0) == "00bh0hbj200");
  CHECK(geo::hash_string(3377699720527872.0) == "s0000000000");
}

TEST_CASE("geohash: distances and their formatting", "[geohash]") {
  double d = geo::distance(13.36138933897018433, 38.11555639549629859, 15.087267458438873,
                           37.50266842333162);
  CHECK(geo::format_distance(d / 1000) == "166.2742");
  CHECK(geo::distance(10, 20, 10, 20) == 0);
  CHECK(geo::format_distance(0) == "0.0000");
  CHECK(geo::format_distance(1.23456) == "1.2346");
  CHECK(geo::format_distance(-2.5) == "-2.5000");
  // Along one meridian the distance is the latitude difference.
  CHECK(geo::distance(5, 0, 5, 1) == Approx(geo::kEarthRadiusMeters * M_PI / 180));
}

TEST_CASE("geohash: valid ranges", "[geohash]") {
  CHECK(geo::valid_lon_lat(180, 85.05112878));
  CHECK_FALSE(geo::valid_lon_lat(180.0001, 0));
  CHECK_FALSE(geo::valid_lon_lat(0, 85.06));
  CHECK_FALSE(geo::valid_lon_lat(-200, 0));
  geo::Bits b;
  CHECK_FALSE(geo::encode({-180, 180}, {-90, 90}, 0, 0, 0, b));
  CHECK_FALSE(geo::encode({-180, 180}, {-90, 90}, 0, 0, 33, b));
}

TEST_CASE("geohash: encode and decode round trip at every step", "[geohash]") {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> lon_d(-180, 180);
  std::uniform_real_distribution<double> lat_d(-85, 85);
  for (int i = 0; i < 2000; ++i) {
    double lon = lon_d(rng);
    double lat = lat_d(rng);
    int step = 1 + i % 26;
    geo::Bits b;
    REQUIRE(
        geo::encode({geo::kLonMin, geo::kLonMax}, {geo::kLatMin, geo::kLatMax}, lon, lat, step, b));
    geo::Area a;
    REQUIRE(geo::decode({geo::kLonMin, geo::kLonMax}, {geo::kLatMin, geo::kLatMax}, b, a));
    CHECK(a.lon.min <= lon);
    CHECK(lon <= a.lon.max);
    CHECK(a.lat.min <= lat);
    CHECK(lat <= a.lat.max);
  }
}

// Every point within a radius lies in one of the search intervals: checked by brute force.
TEST_CASE("geohash: search cells cover the shape", "[geohash]") {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> lon_d(-170, 170);
  std::uniform_real_distribution<double> lat_d(-70, 70);
  std::uniform_real_distribution<double> off(-1, 1);
  for (int round = 0; round < 200; ++round) {
    geo::Shape s;
    s.lon = lon_d(rng);
    s.lat = lat_d(rng);
    s.box = round % 2 == 1;
    s.radius = 1000.0 * (1 + round % 50);
    s.width = s.radius * 2;
    s.height = s.radius;
    auto ranges = geo::search_ranges(s);
    REQUIRE_FALSE(ranges.empty());
    REQUIRE(ranges.size() <= 9);
    for (int i = 0; i < 200; ++i) {
      double lon = s.lon + off(rng) * s.radius / 50000;
      double lat = s.lat + off(rng) * s.radius / 100000;
      uint64_t score = geo::score_of(lon, lat);
      double plon = 0;
      double plat = 0;
      double dist = 0;
      if (!s.contains(static_cast<double>(score), plon, plat, dist)) {
        continue;
      }
      bool covered = false;
      for (const auto& [min, max] : ranges) {
        covered = covered || (score >= min && score < max);
      }
      CHECK(covered);
    }
  }
}
