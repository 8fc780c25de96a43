// Geohash math behind the GEO commands, in Redis's conventions so that a member's sorted-set
// score is bit for bit the one Redis stores:
//
// - a position is encoded at 26 steps per axis over longitude [-180, 180] and latitude
//   [-85.05112878, 85.05112878] (the Web Mercator limits), each offset truncated to an integer
//   cell index; the two 26-bit indexes are interleaved, latitude in the even bits and longitude
//   in the odd ones, into a 52-bit integer that is the score;
// - decoding gives the centre of the cell, clamped to the limits;
// - GEOHASH strings re-encode that centre over the standard [-90, 90] latitude range and spell
//   the 52 bits in base32, the 11th character always '0' (there are only 52 bits);
// - distances are haversine on a sphere of radius 6372797.560856 m;
// - a search covers the centre cell and its 8 neighbours at a step chosen from the radius
//   (search_ranges), each cell a score interval, and then filters points by exact distance (or
//   box) test (Shape::contains).
//
// Pure functions, no state: used from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hotkv::geo {

inline constexpr double kLonMin = -180;
inline constexpr double kLonMax = 180;
inline constexpr double kLatMin = -85.05112878;
inline constexpr double kLatMax = 85.05112878;
inline constexpr int kStepMax = 26;  // bits per axis of a stored score
inline constexpr double kEarthRadiusMeters = 6372797.560856;

struct Range {
  double min = 0;
  double max = 0;
};

// A cell: `step` bits per axis, interleaved into the low 2*step bits. {0, 0} means "no cell".
struct Bits {
  uint64_t bits = 0;
  uint8_t step = 0;

  bool none() const { return bits == 0 && step == 0; }
};

struct Area {
  Range lon;
  Range lat;
};

// Encodes (lon, lat) at `step` (1..32) over the given ranges. False if the step is invalid or
// the point lies outside the ranges or the Mercator limits.
bool encode(Range lon_range, Range lat_range, double lon, double lat, int step, Bits& out);
// The cell's bounds over the given ranges; false for a "no cell".
bool decode(Range lon_range, Range lat_range, Bits h, Area& out);

// The 52-bit score of a position. REQUIRES: valid_lon_lat(lon, lat).
uint64_t score_of(double lon, double lat);
bool valid_lon_lat(double lon, double lat);
// The centre of the cell a score names, clamped to the limits (GEOPOS answers this).
bool decode_score(double score, double& lon, double& lat);
// The 11-character standard geohash of a score (GEOHASH).
std::string hash_string(double score);

// Great-circle distance in meters.
double distance(double lon1, double lat1, double lon2, double lat2);
// Meters along a meridian between two latitudes.
double lat_distance(double lat1, double lat2);

// What a search looks for: a circle (radius) or an axis-aligned box (width x height) around a
// centre, sizes in a unit `conversion` meters long.
struct Shape {
  bool box = false;
  double lon = 0;
  double lat = 0;
  double radius = 0;
  double width = 0;
  double height = 0;
  double conversion = 1;

  // True if the position of `score` lies in the shape; gives its position and its distance
  // from the centre in meters.
  bool contains(double score, double& lon, double& lat, double& dist_m) const;
};

// The score intervals [min, max) to scan for a shape, in the order Redis scans them (the centre
// cell, then N, S, E, W, NE, NW, SE, SW), leaving out the neighbours the shape cannot reach and
// a neighbour equal to the one scanned before it.
std::vector<std::pair<uint64_t, uint64_t>> search_ranges(const Shape& s);

// A distance with 4 decimals, rounded as Redis rounds it ("5.2145").
std::string format_distance(double d);
// A coordinate as Redis prints one ("%.17Lf" without trailing zeros).
std::string format_coord(double d);

}  // namespace hotkv::geo
