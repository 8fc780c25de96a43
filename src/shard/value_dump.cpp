#include "hotkv/shard/value_dump.hpp"

#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "hotkv/persist/packed_containers.hpp"
#include "hotkv/persist/rdb_format.hpp"
#include "hotkv/shard/inventory_dump.hpp"
#include "hotkv/shard/stream_dump.hpp"
#include "hotkv/types/encoding_limits.hpp"
#include "hotkv/types/hash.hpp"
#include "hotkv/types/inventory.hpp"
#include "hotkv/types/list.hpp"
#include "hotkv/types/set.hpp"
#include "hotkv/types/stream.hpp"
#include "hotkv/types/zset.hpp"
#include "hotkv/util/config.hpp"
#include "hotkv/util/numbers.hpp"

namespace hotkv {
namespace {

// RDB object types (Redis 7.0's rdb.h numbering).
enum RdbType : uint8_t {
  kString = 0,
  kList = 1,
  kSet = 2,
  kZSet = 3,
  kHash = 4,
  kZSet2 = 5,
  kSetIntset = 11,
  kStreamListpacks = 15,  // Redis 5 to 6.2
  kHashListpack = 16,
  kZSetListpack = 17,
  kListQuicklist2 = 18,
  kStreamListpacks2 = 19,  // Redis 7.0
};
// A LIST_QUICKLIST_2 node holds one element as it is, or a listpack of several.
constexpr uint64_t kQuicklistPlain = 1;
constexpr uint64_t kQuicklistPacked = 2;

std::unique_ptr<ZSet> new_zset(const Config& c) {
  return std::make_unique<ZSet>(static_cast<size_t>(c.zset_max_listpack_entries.load()),
                                static_cast<size_t>(c.zset_max_listpack_value.load()));
}

std::unique_ptr<List> new_list(const Config& c) {
  return std::make_unique<List>(static_cast<int>(c.list_max_listpack_size.load()),
                                c.list_compress_depth.load());
}

// Adds a member and its score; false for a NaN score or a repeated member (Redis refuses
// both as corrupt).
bool add_scored(ZSet& z, std::string_view member, double score) {
  return !std::isnan(score) && z.set(member, score);
}

std::optional<Value> read_object(RdbReader& in, uint8_t type, const Config& config) {
  const EncodingLimits limits = EncodingLimits::from(config);
  std::string a;
  std::string b;
  uint64_t n = 0;
  switch (type) {
    case kString:
      if (!in.read_string(a)) {
        return std::nullopt;
      }
      return Value::from_string(a);
    case kList: {
      if (!in.read_length(n) || n == 0) {
        return std::nullopt;
      }
      auto l = new_list(config);
      for (uint64_t i = 0; i < n; ++i) {
        if (!in.read_string(a)) {
          return std::nullopt;
        }
        l->push_back(a);
      }
      return Value::from_list(std::move(l));
    }
    case kListQuicklist2: {
      if (!in.read_length(n) || n == 0) {
        return std::nullopt;
      }
      auto l = new_list(config);
      std::vector<std::string> items;
      for (uint64_t i = 0; i < n; ++i) {
        uint64_t container = 0;
        if (!in.read_length(container) || !in.read_string(a)) {
          return std::nullopt;
        }
        if (container == kQuicklistPlain) {
          l->push_back(a);
          continue;
        }
        items.clear();
        if (container != kQuicklistPacked || !listpack_entries(a, items) || items.empty()) {
          return std::nullopt;
        }
        for (const std::string& e : items) {
          l->push_back(e);
        }
      }
      return Value::from_list(std::move(l));
    }
    case kSet: {
      if (!in.read_length(n) || n == 0) {
        return std::nullopt;
      }
      auto s = std::make_unique<Set>();
      for (uint64_t i = 0; i < n; ++i) {
        if (!in.read_string(a) || !s->add(a, limits)) {
          return std::nullopt;  // short, or a repeated member
        }
      }
      return Value::from_set(std::move(s));
    }
    case kSetIntset: {
      std::vector<int64_t> members;
      if (!in.read_string(a) || !intset_members(a, members) || members.empty()) {
        return std::nullopt;
      }
      auto s = std::make_unique<Set>();
      for (int64_t m : members) {
        if (!s->add(std::to_string(m), limits)) {
          return std::nullopt;
        }
      }
      return Value::from_set(std::move(s));
    }
    case kHash: {
      if (!in.read_length(n) || n == 0) {
        return std::nullopt;
      }
      auto h = std::make_unique<Hash>();
      for (uint64_t i = 0; i < n; ++i) {
        if (!in.read_string(a) || !in.read_string(b) || !h->set(a, b, limits)) {
          return std::nullopt;
        }
      }
      return Value::from_hash(std::move(h));
    }
    case kHashListpack: {
      std::vector<std::string> items;
      if (!in.read_string(a) || !listpack_entries(a, items) || items.empty() ||
          items.size() % 2 != 0) {
        return std::nullopt;
      }
      auto h = std::make_unique<Hash>();
      for (size_t i = 0; i < items.size(); i += 2) {
        if (!h->set(items[i], items[i + 1], limits)) {
          return std::nullopt;
        }
      }
      return Value::from_hash(std::move(h));
    }
    case kZSet:
    case kZSet2: {
      if (!in.read_length(n) || n == 0) {
        return std::nullopt;
      }
      auto z = new_zset(config);
      for (uint64_t i = 0; i < n; ++i) {
        double score = 0;
        bool ok = in.read_string(a) &&
                  (type == kZSet2 ? in.read_binary_double(score) : in.read_text_double(score));
        if (!ok || !add_scored(*z, a, score)) {
          return std::nullopt;
        }
      }
      return Value::from_zset(std::move(z));
    }
    case kZSetListpack: {
      std::vector<std::string> items;
      if (!in.read_string(a) || !listpack_entries(a, items) || items.empty() ||
          items.size() % 2 != 0) {
        return std::nullopt;
      }
      auto z = new_zset(config);
      for (size_t i = 0; i < items.size(); i += 2) {
        std::optional<double> score = parse_double(items[i + 1]);
        if (!score || !add_scored(*z, items[i], *score)) {
          return std::nullopt;
        }
      }
      return Value::from_zset(std::move(z));
    }
    case kStreamListpacks:
    case kStreamListpacks2: {
      std::unique_ptr<Stream> s = read_stream_body(in, type == kStreamListpacks, limits);
      if (s == nullptr) {
        return std::nullopt;
      }
      return Value::from_stream(std::move(s));
    }
    case kRdbTypeInventory: {
      std::unique_ptr<Inventory> inv = read_inventory_body(in);
      if (inv == nullptr) {
        return std::nullopt;
      }
      return Value::from_inventory(std::move(inv));
    }
    default:
      return std::nullopt;  // modules, pre-7.0 ziplists and zipmaps: not read here
  }
}

}  // namespace

bool dump_object(const Value& v, std::string& out, const EncodingLimits& limits) {
  std::string scratch;
  switch (v.type()) {
    case ValueType::kString:
      out.push_back(static_cast<char>(kString));
      rdb_append_string(out, v.str(scratch));
      break;
    case ValueType::kList: {
      const List& l = *v.list();
      out.push_back(static_cast<char>(kList));
      rdb_append_length(out, l.size());
      l.for_each(0, [&](size_t, std::string_view e) {
        rdb_append_string(out, e);
        return true;
      });
      break;
    }
    case ValueType::kSet: {
      const Set& s = *v.set();
      out.push_back(static_cast<char>(kSet));
      rdb_append_length(out, s.size());
      s.for_each([&](std::string_view m) { rdb_append_string(out, m); });
      break;
    }
    case ValueType::kHash: {
      const Hash& h = *v.hash();
      out.push_back(static_cast<char>(kHash));
      rdb_append_length(out, h.size());
      h.for_each([&](const std::string& f, const std::string& val) {
        rdb_append_string(out, f);
        rdb_append_string(out, val);
      });
      break;
    }
    case ValueType::kZSet: {
      const ZSet& z = *v.zset();
      out.push_back(static_cast<char>(kZSet2));
      rdb_append_length(out, z.size());
      for (const ZSet::Node* n = z.first(); n != nullptr; n = n->next()) {
        rdb_append_string(out, n->member());
        rdb_append_binary_double(out, n->score());
      }
      break;
    }
    case ValueType::kStream:
      out.push_back(static_cast<char>(kStreamListpacks2));
      append_stream_body(out, *v.stream(), limits);
      break;
    case ValueType::kInventory:
      out.push_back(static_cast<char>(kRdbTypeInventory));
      append_inventory_body(out, *v.inventory());
      break;
    default:
      return false;
  }
  return true;
}

std::optional<Value> read_object_body(RdbReader& in, uint8_t type, const Config& config) {
  return read_object(in, type, config);
}

std::optional<std::string> dump_value(const Value& v, const EncodingLimits& limits) {
  std::string out;
  if (!dump_object(v, out, limits)) {
    return std::nullopt;
  }
  rdb_seal_payload(out);
  return out;
}

std::optional<Value> restore_value(std::string_view payload, const Config& config,
                                   RestoreError& error) {
  std::string_view body;
  if (!rdb_open_payload(payload, body)) {
    error = RestoreError::kChecksum;
    return std::nullopt;
  }
  RdbReader in(body);
  uint8_t type = 0;
  std::optional<Value> v;
  if (in.read_byte(type)) {
    v = read_object(in, type, config);
  }
  if (!v || !in.at_end()) {
    error = RestoreError::kBadFormat;
    return std::nullopt;
  }
  error = RestoreError::kNone;
  return v;
}

}  // namespace hotkv
