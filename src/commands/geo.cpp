// Geo commands: GEOADD, GEODIST, GEOHASH, GEOPOS, GEOSEARCH, GEOSEARCHSTORE, GEORADIUS,
// GEORADIUSBYMEMBER and their _RO forms. A geo set is a sorted set whose scores are 52-bit
// geohashes (types/geohash.hpp), the same scores Redis stores, so every sorted-set command works
// on it and its data replays and persists as any zset's. A search scans the score intervals of
// the centre cell and its neighbours and keeps the points passing the exact test, in the order
// Redis finds them; a STORE destination may live on another shard (the dispatcher then parks
// both, as for ZUNIONSTORE).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/errors_values.hpp"
#include "hotkv/commands/families.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/commands/zset_helpers.hpp"
#include "hotkv/types/geohash.hpp"
#include "hotkv/util/numbers.hpp"

namespace hotkv {
namespace {

// A coordinate reply: RESP2 a bulk string, RESP3 a double, both in Redis's "%.17Lf" text.
void reply_coord(ReplyWriter& w, double v) {
  std::string text = geo::format_coord(v);
  if (w.proto() == 3) {
    w.buffer().push_back(',');
    w.buffer().append(text);
    w.buffer().append("\r\n");
  } else {
    w.bulk(text);
  }
}

bool lon_lat_or_reply(CommandContext& ctx, size_t at, double& lon, double& lat) {
  std::optional<double> x = parse_double(ctx.arg(at));
  std::optional<double> y = x ? parse_double(ctx.arg(at + 1)) : std::nullopt;
  if (!x || !y) {
    ctx.error(err::kNotFloat);
    return false;
  }
  if (!geo::valid_lon_lat(*x, *y)) {
    ctx.error(err::invalid_lon_lat(*x, *y));
    return false;
  }
  lon = *x;
  lat = *y;
  return true;
}

// Meters per unit, or a negative value after replying the error.
double unit_or_reply(CommandContext& ctx, std::string_view u) {
  if (strcasecmp_view(u, "M")) {
    return 1;
  }
  if (strcasecmp_view(u, "KM")) {
    return 1000;
  }
  if (strcasecmp_view(u, "FT")) {
    return 0.3048;
  }
  if (strcasecmp_view(u, "MI")) {
    return 1609.34;
  }
  ctx.error(err::kGeoUnit);
  return -1;
}

// A non-negative number read with `what`'s error text (err::kGeoRadiusNotNumeric).
bool size_or_reply(CommandContext& ctx, size_t at, const char* not_numeric, const char* negative,
                   double& out) {
  std::optional<double> v = parse_double(ctx.arg(at));
  if (!v) {
    ctx.error(not_numeric);
    return false;
  }
  if (*v < 0) {
    ctx.error(negative);
    return false;
  }
  out = *v;
  return true;
}

// GEOADD key [NX|XX] [CH] longitude latitude member [...]: ZADD with the geohash as score.
void cmd_geoadd(CommandContext& ctx) {
  ZAddFlags f;
  size_t at = 2;
  for (; at < ctx.argc(); ++at) {
    std::string_view a = ctx.arg(at);
    if (strcasecmp_view(a, "NX")) {
      f.nx = true;
    } else if (strcasecmp_view(a, "XX")) {
      f.xx = true;
    } else if (strcasecmp_view(a, "CH")) {
      f.ch = true;
    } else {
      break;
    }
  }
  size_t left = ctx.argc() - at;
  if (left == 0 || left % 3 != 0 || (f.xx && f.nx)) {
    ctx.error(err::kSyntax);
    return;
  }
  std::vector<double> scores;
  std::vector<std::string_view> members;
  for (size_t i = at; i < ctx.argc(); i += 3) {
    double lon = 0;
    double lat = 0;
    if (!lon_lat_or_reply(ctx, i, lon, lat)) {
      return;
    }
    scores.push_back(static_cast<double>(geo::score_of(lon, lat)));
    members.push_back(ctx.arg(i + 2));
  }
  zadd_apply(ctx, ctx.arg(1), f, std::move(scores), members, "zadd");
}

// GEODIST key member1 member2 [m|km|ft|mi]
void cmd_geodist(CommandContext& ctx) {
  double to_meters = 1;
  if (ctx.argc() == 5) {
    to_meters = unit_or_reply(ctx, ctx.arg(4));
    if (to_meters < 0) {
      return;
    }
  } else if (ctx.argc() > 5) {
    ctx.error(err::kSyntax);
    return;
  }
  ZSet* z = nullptr;
  if (!zset_lookup_or_reply(ctx, ctx.arg(1), true, z)) {
    return;
  }
  std::optional<double> s1 = z == nullptr ? std::nullopt : z->score(ctx.arg(2));
  std::optional<double> s2 = z == nullptr ? std::nullopt : z->score(ctx.arg(3));
  double lon1 = 0;
  double lat1 = 0;
  double lon2 = 0;
  double lat2 = 0;
  if (!s1 || !s2 || !geo::decode_score(*s1, lon1, lat1) || !geo::decode_score(*s2, lon2, lat2)) {
    ctx.reply.null();
    return;
  }
  ctx.reply.bulk(geo::format_distance(geo::distance(lon1, lat1, lon2, lat2) / to_meters));
}

// GEOHASH key [member ...]
void cmd_geohash(CommandContext& ctx) {
  ZSet* z = nullptr;
  if (!zset_lookup_or_reply(ctx, ctx.arg(1), true, z)) {
    return;
  }
  ctx.reply.array(ctx.argc() - 2);
  for (size_t i = 2; i < ctx.argc(); ++i) {
    std::optional<double> s = z == nullptr ? std::nullopt : z->score(ctx.arg(i));
    if (s) {
      ctx.reply.bulk(geo::hash_string(*s));
    } else {
      ctx.reply.null();
    }
  }
}

// GEOPOS key [member ...]
void cmd_geopos(CommandContext& ctx) {
  ZSet* z = nullptr;
  if (!zset_lookup_or_reply(ctx, ctx.arg(1), true, z)) {
    return;
  }
  ctx.reply.array(ctx.argc() - 2);
  for (size_t i = 2; i < ctx.argc(); ++i) {
    std::optional<double> s = z == nullptr ? std::nullopt : z->score(ctx.arg(i));
    double lon = 0;
    double lat = 0;
    if (!s || !geo::decode_score(*s, lon, lat)) {
      ctx.reply.null_array();
      continue;
    }
    ctx.reply.array(2);
    reply_coord(ctx.reply, lon);
    reply_coord(ctx.reply, lat);
  }
}

// ---------------------------------------------------------------------------------------------
// Searches.

enum SearchFlags : unsigned {
  kFromCoords = 1u << 0,  // GEORADIUS: longitude latitude radius unit
  kFromMember = 1u << 1,  // GEORADIUSBYMEMBER: member radius unit
  kNoStore = 1u << 2,     // the _RO forms
  kSearch = 1u << 3,      // GEOSEARCH syntax
  kSearchStore = 1u << 4  // GEOSEARCHSTORE
};

enum class Sort { kNone, kAsc, kDesc };

struct Point {
  std::string member;
  double score;
  double lon;
  double lat;
  double dist;  // meters until the reply converts it
};

// The position of member in z, or false (replies nothing).
bool member_position(const ZSet& z, std::string_view member, double& lon, double& lat) {
  std::optional<double> s = z.score(member);
  return s && geo::decode_score(*s, lon, lat);
}

// Points of z within the shape, in the order Redis's scan finds them; stops once `limit`
// (0: none) points are found.
std::vector<Point> find_points(const ZSet& z, const geo::Shape& shape, size_t limit) {
  std::vector<Point> out;
  for (const auto& [min, max] : geo::search_ranges(shape)) {
    if (limit != 0 && out.size() >= limit) {
      break;
    }
    ScoreRange r{static_cast<double>(min), static_cast<double>(max), false, true};
    for (const ZSet::Node* n = z.first_in(r); n != nullptr && r.below_max(n->score());
         n = n->next()) {
      Point p{std::string(), n->score(), 0, 0, 0};
      if (shape.contains(n->score(), p.lon, p.lat, p.dist)) {
        p.member.assign(n->member());
        out.push_back(std::move(p));
      }
      if (limit != 0 && out.size() >= limit) {
        break;
      }
    }
  }
  return out;
}

// Every search spelling, parsed as Redis parses it: GEORADIUS key lon lat radius unit [...],
// GEORADIUSBYMEMBER key member radius unit [...], GEOSEARCH key <from> <by> [...],
// GEOSEARCHSTORE dst src <from> <by> [...].
void search_generic(CommandContext& ctx, size_t src_at, unsigned flags) {
  ZSet* z = nullptr;
  if (!zset_lookup_or_reply(ctx, ctx.arg(src_at), true, z)) {
    return;
  }
  geo::Shape shape;
  size_t base = 0;
  std::string_view store_key;
  bool store = false;
  bool storedist = false;
  if (flags & kFromCoords) {
    base = 6;
    if (!lon_lat_or_reply(ctx, 2, shape.lon, shape.lat) ||
        !size_or_reply(ctx, 4, err::kGeoRadiusNotNumeric, err::kGeoRadiusNegative,
                       shape.radius) ||
        (shape.conversion = unit_or_reply(ctx, ctx.arg(5))) < 0) {
      return;
    }
  } else if (flags & kFromMember) {
    base = 5;
    // Without the key, the member and radius are not looked at (as in Redis).
    if (z != nullptr) {
      if (!member_position(*z, ctx.arg(2), shape.lon, shape.lat)) {
        ctx.error(err::kGeoMemberUndecodable);
        return;
      }
      if (!size_or_reply(ctx, 3, err::kGeoRadiusNotNumeric, err::kGeoRadiusNegative,
                         shape.radius) ||
          (shape.conversion = unit_or_reply(ctx, ctx.arg(4))) < 0) {
        return;
      }
    }
  } else {
    base = 2;
    if (flags & kSearchStore) {
      base = 3;
      store = true;
      store_key = ctx.arg(1);
    }
  }
  bool withdist = false;
  bool withhash = false;
  bool withcoord = false;
  bool frommember = false;
  bool fromloc = false;
  bool byradius = false;
  bool bybox = false;
  bool any = false;
  Sort sort = Sort::kNone;
  int64_t count = 0;
  bool search = (flags & kSearch) != 0;
  for (size_t i = base; i < ctx.argc(); ++i) {
    size_t left = ctx.argc() - i - 1;  // arguments after this one
    std::string_view a = ctx.arg(i);
    if (strcasecmp_view(a, "WITHDIST")) {
      withdist = true;
    } else if (strcasecmp_view(a, "WITHHASH")) {
      withhash = true;
    } else if (strcasecmp_view(a, "WITHCOORD")) {
      withcoord = true;
    } else if (strcasecmp_view(a, "ANY")) {
      any = true;
    } else if (strcasecmp_view(a, "ASC")) {
      sort = Sort::kAsc;
    } else if (strcasecmp_view(a, "DESC")) {
      sort = Sort::kDesc;
    } else if (strcasecmp_view(a, "COUNT") && left >= 1) {
      if (!ctx.int_arg_or_reply(i + 1, count)) {
        return;
      }
      if (count <= 0) {
        ctx.error(err::kCountMustBePositive);
        return;
      }
      ++i;
    } else if ((strcasecmp_view(a, "STORE") || strcasecmp_view(a, "STOREDIST")) && left >= 1 &&
               !(flags & kNoStore) && !search) {
      store = true;
      store_key = ctx.arg(i + 1);
      storedist = strcasecmp_view(a, "STOREDIST");
      ++i;
    } else if (strcasecmp_view(a, "STOREDIST") && search && (flags & kSearchStore)) {
      storedist = true;
    } else if (strcasecmp_view(a, "FROMMEMBER") && left >= 1 && search && !fromloc) {
      if (z != nullptr && !member_position(*z, ctx.arg(i + 1), shape.lon, shape.lat)) {
        ctx.error(err::kGeoMemberUndecodable);
        return;
      }
      frommember = true;
      ++i;
    } else if (strcasecmp_view(a, "FROMLONLAT") && left >= 2 && search && !frommember) {
      if (!lon_lat_or_reply(ctx, i + 1, shape.lon, shape.lat)) {
        return;
      }
      fromloc = true;
      i += 2;
    } else if (strcasecmp_view(a, "BYRADIUS") && left >= 2 && search && !bybox) {
      if (!size_or_reply(ctx, i + 1, err::kGeoRadiusNotNumeric, err::kGeoRadiusNegative,
                         shape.radius) ||
          (shape.conversion = unit_or_reply(ctx, ctx.arg(i + 2))) < 0) {
        return;
      }
      shape.box = false;
      byradius = true;
      i += 2;
    } else if (strcasecmp_view(a, "BYBOX") && left >= 3 && search && !byradius) {
      std::optional<double> w = parse_double(ctx.arg(i + 1));
      std::optional<double> h = w ? parse_double(ctx.arg(i + 2)) : std::nullopt;
      if (!w) {
        ctx.error(err::kGeoWidthNotNumeric);
        return;
      }
      if (!h) {
        ctx.error(err::kGeoHeightNotNumeric);
        return;
      }
      if (*w < 0 || *h < 0) {
        ctx.error(err::kGeoBoxNegative);
        return;
      }
      if ((shape.conversion = unit_or_reply(ctx, ctx.arg(i + 3))) < 0) {
        return;
      }
      shape.width = *w;
      shape.height = *h;
      shape.box = true;
      bybox = true;
      i += 3;
    } else {
      ctx.error(err::kSyntax);
      return;
    }
  }
  if (store && (withdist || withhash || withcoord)) {
    ctx.error(err::geo_store_with_extras((flags & kSearchStore) != 0));
    return;
  }
  if (search && !(frommember || fromloc)) {
    ctx.error(err::geo_one_origin(ctx.arg(0)));
    return;
  }
  if (search && !(byradius || bybox)) {
    ctx.error(err::geo_one_shape(ctx.arg(0)));
    return;
  }
  if (any && count == 0) {
    ctx.error(err::kGeoAnyNeedsCount);
    return;
  }
  if (z == nullptr) {
    if (store) {
      zset_store_logged(ctx, store_key, new_zset(ctx), "georadiusstore");
    } else {
      ctx.reply.array(0);
    }
    return;
  }
  // COUNT without an order means the nearest ones (unless ANY).
  if (count != 0 && sort == Sort::kNone && !any) {
    sort = Sort::kAsc;
  }
  std::vector<Point> points = find_points(*z, shape, any ? static_cast<size_t>(count) : 0);
  size_t returned =
      count == 0 ? points.size() : std::min(points.size(), static_cast<size_t>(count));
  if (sort != Sort::kNone) {
    auto cmp = [&](const Point& a, const Point& b) {
      return sort == Sort::kAsc ? a.dist < b.dist : a.dist > b.dist;
    };
    if (returned == points.size()) {
      std::stable_sort(points.begin(), points.end(), cmp);
    } else {
      std::partial_sort(points.begin(), points.begin() + static_cast<std::ptrdiff_t>(returned),
                        points.end(), cmp);
    }
  }
  points.resize(returned);
  for (Point& p : points) {
    p.dist /= shape.conversion;
  }
  if (store) {
    std::unique_ptr<ZSet> result = new_zset(ctx);
    for (const Point& p : points) {
      result->set(p.member, storedist ? p.dist : p.score);
    }
    zset_store_logged(ctx, store_key, std::move(result),
                      search ? "geosearchstore" : "georadiusstore");
    return;
  }
  size_t extras = (withdist ? 1 : 0) + (withhash ? 1 : 0) + (withcoord ? 1 : 0);
  ctx.reply.array(points.size());
  for (const Point& p : points) {
    if (extras > 0) {
      ctx.reply.array(extras + 1);
    }
    ctx.reply.bulk(p.member);
    if (withdist) {
      ctx.reply.bulk(geo::format_distance(p.dist));
    }
    if (withhash) {
      ctx.reply.integer(static_cast<int64_t>(p.score));
    }
    if (withcoord) {
      ctx.reply.array(2);
      reply_coord(ctx.reply, p.lon);
      reply_coord(ctx.reply, p.lat);
    }
  }
}

void cmd_georadius(CommandContext& ctx) { search_generic(ctx, 1, kFromCoords); }
void cmd_georadiusbymember(CommandContext& ctx) { search_generic(ctx, 1, kFromMember); }
void cmd_georadius_ro(CommandContext& ctx) { search_generic(ctx, 1, kFromCoords | kNoStore); }
void cmd_georadiusbymember_ro(CommandContext& ctx) {
  search_generic(ctx, 1, kFromMember | kNoStore);
}
void cmd_geosearch(CommandContext& ctx) { search_generic(ctx, 1, kSearch); }
void cmd_geosearchstore(CommandContext& ctx) { search_generic(ctx, 2, kSearch | kSearchStore); }

// GEORADIUS / GEORADIUSBYMEMBER keys: the source, and the key after STORE or STOREDIST.
void georadius_keys(std::span<const std::string_view> argv, size_t base, std::vector<size_t>& out) {
  out.push_back(1);
  for (size_t i = base; i + 1 < argv.size(); ++i) {
    if (strcasecmp_view(argv[i], "STORE") || strcasecmp_view(argv[i], "STOREDIST")) {
      out.push_back(i + 1);
      ++i;
    } else if (strcasecmp_view(argv[i], "COUNT")) {
      ++i;
    }
  }
}

void georadius_store_keys(std::span<const std::string_view> argv, std::vector<size_t>& out) {
  georadius_keys(argv, 6, out);
}

void georadiusbymember_store_keys(std::span<const std::string_view> argv,
                                  std::vector<size_t>& out) {
  georadius_keys(argv, 5, out);
}

}  // namespace

void register_geo(Table& t) {
  // clang-format off
  t.add({"GEOADD",               -5, kWrite | kDenyOom, keys(1, 1, 1), cmd_geoadd, "geo", "GEOADD key [NX|XX] [CH] longitude latitude member [longitude latitude member ...]", "Adds members at positions to a geo set (a sorted set scored by geohash)."});
  t.add({"GEODIST",              -4, kReadOnly, keys(1, 1, 1), cmd_geodist, "geo", "GEODIST key member1 member2 [M|KM|FT|MI]", "Returns the distance between two members of a geo set."});
  t.add({"GEOHASH",              -2, kReadOnly, keys(1, 1, 1), cmd_geohash, "geo", "GEOHASH key [member [member ...]]", "Returns the 11-character geohash strings of members of a geo set."});
  t.add({"GEOPOS",               -2, kReadOnly, keys(1, 1, 1), cmd_geopos, "geo", "GEOPOS key [member [member ...]]", "Returns the longitude and latitude of members of a geo set."});
  t.add({"GEOSEARCH",            -7, kReadOnly, keys(1, 1, 1), cmd_geosearch, "geo", "GEOSEARCH key (FROMMEMBER member | FROMLONLAT longitude latitude) (BYRADIUS radius M|KM|FT|MI | BYBOX width height M|KM|FT|MI) [ASC|DESC] [COUNT count [ANY]] [WITHCOORD] [WITHDIST] [WITHHASH]", "Returns the members of a geo set within a circle or box."});
  t.add({"GEOSEARCHSTORE",       -8, kWrite | kDenyOom, keys(1, 2, 1), cmd_geosearchstore, "geo", "GEOSEARCHSTORE destination source (FROMMEMBER member | FROMLONLAT longitude latitude) (BYRADIUS radius M|KM|FT|MI | BYBOX width height M|KM|FT|MI) [ASC|DESC] [COUNT count [ANY]] [STOREDIST]", "Stores the members of a geo set within a circle or box in destination; returns how many."});
  t.add({"GEORADIUS",            -6, kWrite | kDenyOom, key_finder(0, 0, 0, georadius_store_keys), cmd_georadius, "geo", "GEORADIUS key longitude latitude radius M|KM|FT|MI [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT count [ANY]] [ASC|DESC] [STORE key] [STOREDIST key]", "Returns (or stores) the members of a geo set within a radius of a position."});
  t.add({"GEORADIUSBYMEMBER",    -5, kWrite | kDenyOom, key_finder(0, 0, 0, georadiusbymember_store_keys), cmd_georadiusbymember, "geo", "GEORADIUSBYMEMBER key member radius M|KM|FT|MI [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT count [ANY]] [ASC|DESC] [STORE key] [STOREDIST key]", "Returns (or stores) the members of a geo set within a radius of a member."});
  t.add({"GEORADIUS_RO",         -6, kReadOnly, keys(1, 1, 1), cmd_georadius_ro, "geo", "GEORADIUS_RO key longitude latitude radius M|KM|FT|MI [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT count [ANY]] [ASC|DESC]", "GEORADIUS without the STORE options."});
  t.add({"GEORADIUSBYMEMBER_RO", -5, kReadOnly, keys(1, 1, 1), cmd_georadiusbymember_ro, "geo", "GEORADIUSBYMEMBER_RO key member radius M|KM|FT|MI [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT count [ANY]] [ASC|DESC]", "GEORADIUSBYMEMBER without the STORE options."});
  // clang-format on
}

}  // namespace hotkv
