#include "hotkv/types/geohash.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace hotkv::geo {
namespace {

constexpr double kDegToRad = M_PI / 180.0;
constexpr double kMercatorMax = 20037726.37;
constexpr uint64_t kEvenBits = 0x5555555555555555ULL;  // latitude
constexpr uint64_t kOddBits = 0xaaaaaaaaaaaaaaaaULL;   // longitude
constexpr Range kLonRange{kLonMin, kLonMax};
constexpr Range kLatRange{kLatMin, kLatMax};

double deg_to_rad(double deg) { return deg * kDegToRad; }
double rad_to_deg(double rad) { return rad / kDegToRad; }

// Spreads the 32 bits of v over the even bits of a 64-bit word (bit i goes to bit 2i).
uint64_t spread(uint32_t v) {
  uint64_t x = v;
  x = (x | (x << 16)) & 0x0000FFFF0000FFFFULL;
  x = (x | (x << 8)) & 0x00FF00FF00FF00FFULL;
  x = (x | (x << 4)) & 0x0F0F0F0F0F0F0F0FULL;
  x = (x | (x << 2)) & 0x3333333333333333ULL;
  x = (x | (x << 1)) & 0x5555555555555555ULL;
  return x;
}

// The inverse of spread: gathers the even bits of x into 32 bits.
uint32_t gather(uint64_t x) {
  x &= 0x5555555555555555ULL;
  x = (x | (x >> 1)) & 0x3333333333333333ULL;
  x = (x | (x >> 2)) & 0x0F0F0F0F0F0F0F0FULL;
  x = (x | (x >> 4)) & 0x00FF00FF00FF00FFULL;
  x = (x | (x >> 8)) & 0x0000FFFF0000FFFFULL;
  x = (x | (x >> 16)) & 0x00000000FFFFFFFFULL;
  return static_cast<uint32_t>(x);
}

// Moves a cell one step along one axis (longitude: the odd bits; latitude: the even bits),
// wrapping around at the edge. The other axis's bits are filled with ones so that the carry
// (or borrow) of the addition crosses them, then put back.
Bits move(Bits h, bool longitude, int d) {
  if (d == 0) {
    return h;
  }
  uint64_t own_mask = longitude ? kOddBits : kEvenBits;
  uint64_t other_mask = longitude ? kEvenBits : kOddBits;
  int unused = 64 - h.step * 2;
  uint64_t own = h.bits & own_mask;
  uint64_t other = h.bits & other_mask;
  uint64_t filler = other_mask >> unused;
  if (d > 0) {
    own = own + filler + 1;
  } else {
    own = (own | filler) - (filler + 1);
  }
  own &= own_mask >> unused;
  h.bits = own | other;
  return h;
}

Bits neighbour(Bits h, int dlon, int dlat) { return move(move(h, true, dlon), false, dlat); }

// The step whose cells are about the size of the search radius, a little coarser near the
// poles where meridians converge.
int steps_for_radius(double range_m, double lat) {
  if (range_m == 0) {
    return kStepMax;
  }
  int step = 1;
  while (range_m < kMercatorMax) {
    range_m *= 2;
    ++step;
  }
  step -= 2;  // so the radius fits in the 3x3 cells in most cases
  if (lat > 66 || lat < -66) {
    --step;
    if (lat > 80 || lat < -80) {
      --step;
    }
  }
  return std::max(1, std::min(step, kStepMax));
}

uint64_t align52(Bits h) { return h.bits << (52 - h.step * 2); }

}  // namespace

bool valid_lon_lat(double lon, double lat) {
  return !(lon < kLonMin || lon > kLonMax || lat < kLatMin || lat > kLatMax);
}

bool encode(Range lon_range, Range lat_range, double lon, double lat, int step, Bits& out) {
  out = Bits{};
  if (step > 32 || step <= 0 || lat_range.max - lat_range.min == 0 ||
      lon_range.max - lon_range.min == 0) {
    return false;
  }
  if (!valid_lon_lat(lon, lat) || lat < lat_range.min || lat > lat_range.max ||
      lon < lon_range.min || lon > lon_range.max) {
    return false;
  }
  double lat_offset = (lat - lat_range.min) / (lat_range.max - lat_range.min);
  double lon_offset = (lon - lon_range.min) / (lon_range.max - lon_range.min);
  // Cell indexes, truncated as Redis truncates them (at the upper limit the index is 2^step,
  // one past the last cell, exactly as Redis computes it).
  auto ilat = static_cast<uint32_t>(lat_offset * static_cast<double>(1ULL << step));
  auto ilon = static_cast<uint32_t>(lon_offset * static_cast<double>(1ULL << step));
  out.bits = spread(ilat) | (spread(ilon) << 1);
  out.step = static_cast<uint8_t>(step);
  return true;
}

bool decode(Range lon_range, Range lat_range, Bits h, Area& out) {
  if (h.none() || lat_range.max - lat_range.min == 0 || lon_range.max - lon_range.min == 0) {
    return false;
  }
  uint32_t ilat = gather(h.bits);
  uint32_t ilon = gather(h.bits >> 1);
  double cells = static_cast<double>(1ULL << h.step);
  double lat_scale = lat_range.max - lat_range.min;
  double lon_scale = lon_range.max - lon_range.min;
  out.lat.min = lat_range.min + (ilat * 1.0 / cells) * lat_scale;
  out.lat.max = lat_range.min + ((ilat + 1.0) / cells) * lat_scale;
  out.lon.min = lon_range.min + (ilon * 1.0 / cells) * lon_scale;
  out.lon.max = lon_range.min + ((ilon + 1.0) / cells) * lon_scale;
  return true;
}

uint64_t score_of(double lon, double lat) {
  Bits h;
  encode(kLonRange, kLatRange, lon, lat, kStepMax, h);
  return align52(h);
}

bool decode_score(double score, double& lon, double& lat) {
  Bits h{static_cast<uint64_t>(score), kStepMax};
  Area a;
  if (!decode(kLonRange, kLatRange, h, a)) {
    return false;
  }
  lon = std::max(kLonMin, std::min(kLonMax, (a.lon.min + a.lon.max) / 2));
  lat = std::max(kLatMin, std::min(kLatMax, (a.lat.min + a.lat.max) / 2));
  return true;
}

std::string hash_string(double score) {
  static constexpr char kAlphabet[] = "0123456789bcdefghjkmnpqrstuvwxyz";
  double lon = 0;
  double lat = 0;
  Bits h;
  if (decode_score(score, lon, lat)) {
    encode({-180, 180}, {-90, 90}, lon, lat, kStepMax, h);
  }
  std::string out(11, '0');
  for (int i = 0; i < 10; ++i) {
    out[i] = kAlphabet[(h.bits >> (52 - (i + 1) * 5)) & 0x1f];
  }
  return out;
}

double lat_distance(double lat1, double lat2) {
  return kEarthRadiusMeters * std::fabs(deg_to_rad(lat2) - deg_to_rad(lat1));
}

double distance(double lon1, double lat1, double lon2, double lat2) {
  double lon1r = deg_to_rad(lon1);
  double lon2r = deg_to_rad(lon2);
  double v = std::sin((lon2r - lon1r) / 2);
  // Same meridian: the distance is along it (and cheaper).
  if (v == 0.0) {
    return lat_distance(lat1, lat2);
  }
  double lat1r = deg_to_rad(lat1);
  double lat2r = deg_to_rad(lat2);
  double u = std::sin((lat2r - lat1r) / 2);
  double a = u * u + std::cos(lat1r) * std::cos(lat2r) * v * v;
  return 2.0 * kEarthRadiusMeters * std::asin(std::sqrt(a));
}

bool Shape::contains(double score, double& plon, double& plat, double& dist_m) const {
  if (!decode_score(score, plon, plat)) {
    return false;
  }
  if (!box) {
    dist_m = distance(lon, lat, plon, plat);
    return dist_m <= radius * conversion;
  }
  // The latitude test is the cheaper one, so it goes first.
  if (lat_distance(plat, lat) > height * conversion / 2) {
    return false;
  }
  if (distance(plon, plat, lon, plat) > width * conversion / 2) {
    return false;
  }
  dist_m = distance(lon, lat, plon, plat);
  return true;
}

std::vector<std::pair<uint64_t, uint64_t>> search_ranges(const Shape& s) {
  // The bounding box of the shape in degrees; the longitude span is taken at the latitude edge
  // nearer the pole, where it is wider.
  double half_h = s.conversion * (s.box ? s.height / 2 : s.radius);
  double half_w = s.conversion * (s.box ? s.width / 2 : s.radius);
  double lat_delta = rad_to_deg(half_h / kEarthRadiusMeters);
  double lon_delta_top =
      rad_to_deg(half_w / kEarthRadiusMeters / std::cos(deg_to_rad(s.lat + lat_delta)));
  double lon_delta_bottom =
      rad_to_deg(half_w / kEarthRadiusMeters / std::cos(deg_to_rad(s.lat - lat_delta)));
  bool southern = s.lat < 0;
  double min_lon = southern ? s.lon - lon_delta_bottom : s.lon - lon_delta_top;
  double max_lon = southern ? s.lon + lon_delta_bottom : s.lon + lon_delta_top;
  double min_lat = s.lat - lat_delta;
  double max_lat = s.lat + lat_delta;

  double radius_m =
      s.box ? std::sqrt((s.width / 2) * (s.width / 2) + (s.height / 2) * (s.height / 2)) : s.radius;
  radius_m *= s.conversion;
  int steps = steps_for_radius(radius_m, s.lat);

  Bits centre;
  Area area;
  encode(kLonRange, kLatRange, s.lon, s.lat, steps, centre);
  decode(kLonRange, kLatRange, centre, area);
  // If a side neighbour does not reach the edge of the bounding box, the cells are too small:
  // one step coarser.
  Area north;
  Area south;
  Area east;
  Area west;
  decode(kLonRange, kLatRange, neighbour(centre, 0, 1), north);
  decode(kLonRange, kLatRange, neighbour(centre, 0, -1), south);
  decode(kLonRange, kLatRange, neighbour(centre, 1, 0), east);
  decode(kLonRange, kLatRange, neighbour(centre, -1, 0), west);
  bool too_small = north.lat.max < max_lat || south.lat.min > min_lat || east.lon.max < max_lon ||
                   west.lon.min > min_lon;
  if (steps > 1 && too_small) {
    --steps;
    encode(kLonRange, kLatRange, s.lon, s.lat, steps, centre);
    decode(kLonRange, kLatRange, centre, area);
  }
  // The centre, N, S, E, W, NE, NW, SE, SW.
  static constexpr int kMoves[9][2] = {{0, 0}, {0, 1},  {0, -1}, {1, 0},  {-1, 0},
                                       {1, 1}, {-1, 1}, {1, -1}, {-1, -1}};
  Bits cells[9];
  for (int i = 0; i < 9; ++i) {
    cells[i] = neighbour(centre, kMoves[i][0], kMoves[i][1]);
  }
  // Neighbours on a side the shape does not reach past the centre cell are left out.
  if (steps >= 2) {
    for (int i = 1; i < 9; ++i) {
      int dlon = kMoves[i][0];
      int dlat = kMoves[i][1];
      if ((dlat < 0 && area.lat.min < min_lat) || (dlat > 0 && area.lat.max > max_lat) ||
          (dlon < 0 && area.lon.min < min_lon) || (dlon > 0 && area.lon.max > max_lon)) {
        cells[i] = Bits{};
      }
    }
  }
  std::vector<std::pair<uint64_t, uint64_t>> out;
  int last = -1;
  for (int i = 0; i < 9; ++i) {
    if (cells[i].none()) {
      continue;
    }
    // With a huge radius neighbours can coincide; a cell equal to the last one scanned is
    // skipped (as Redis does; only the previous one is compared).
    if (last > 0 && cells[i].bits == cells[last].bits && cells[i].step == cells[last].step) {
      continue;
    }
    Bits next = cells[i];
    ++next.bits;
    out.emplace_back(align52(cells[i]), align52(next));
    last = i;
  }
  return out;
}

std::string format_distance(double d) {
  long long scaled = std::llrint(d * 10000.0);
  bool negative = scaled < 0;
  unsigned long long v = negative ? 0ULL - static_cast<unsigned long long>(scaled)
                                  : static_cast<unsigned long long>(scaled);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%s%llu.%04llu", negative ? "-" : "", v / 10000, v % 10000);
  return buf;
}

std::string format_coord(double d) {
  char buf[128];
  int len = std::snprintf(buf, sizeof(buf), "%.17Lf", static_cast<long double>(d));
  if (len <= 0 || len >= static_cast<int>(sizeof(buf))) {
    return "0";
  }
  std::string out(buf, static_cast<size_t>(len));
  if (out.find('.') != std::string::npos) {
    while (!out.empty() && out.back() == '0') {
      out.pop_back();
    }
    if (!out.empty() && out.back() == '.') {
      out.pop_back();
    }
  }
  if (out == "-0") {
    out = "0";
  }
  return out;
}

}  // namespace hotkv::geo
