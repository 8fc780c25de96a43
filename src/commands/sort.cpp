// SORT and SORT_RO: the elements of a list, set or sorted set, ordered by their own value or by
// other keys' values (BY weight_*, BY obj_*->field), optionally replaced by other keys' values
// (GET), cut by LIMIT and stored as a list (STORE).
//
// A BY or GET pattern with a '*' names keys no argument position names, and they may live on
// any shard: such a call declares it (CommandSpec::reaches_unnamed_keys) and the dispatcher
// runs it with every shard parked, where ctx.db(key) finds each of them. Without patterns SORT
// touches its key and the STORE destination only, and is routed like any keyed command.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/errors_values.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/types/hash.hpp"
#include "hotkv/types/list.hpp"
#include "hotkv/types/set.hpp"
#include "hotkv/types/zset.hpp"
#include "hotkv/util/notify.hpp"
#include "hotkv/util/numbers.hpp"

namespace hotkv {
namespace {

// Walks SORT's options after the key as Redis does: LIMIT takes two arguments, BY, GET and
// STORE one each, anything else none; fn(index_of_keyword, keyword_upper) for each keyword
// that has its arguments. Shared by the key finder and the pattern check, so both read the
// arguments exactly as the handler does.
template <class F>
void for_each_option(std::span<const std::string_view> argv, F&& fn) {
  for (size_t j = 2; j < argv.size(); ++j) {
    size_t left = argv.size() - j - 1;
    std::string_view a = argv[j];
    if (strcasecmp_view(a, "LIMIT") && left >= 2) {
      fn(j, "LIMIT");
      j += 2;
    } else if ((strcasecmp_view(a, "BY") || strcasecmp_view(a, "GET") ||
                strcasecmp_view(a, "STORE")) &&
               left >= 1) {
      fn(j, strcasecmp_view(a, "BY") ? "BY" : strcasecmp_view(a, "GET") ? "GET" : "STORE");
      ++j;
    }
  }
}

// The key to sort and the last STORE destination (Redis's sortGetKeys).
void sort_keys(std::span<const std::string_view> argv, std::vector<size_t>& out) {
  if (argv.size() < 2) {
    return;
  }
  out.push_back(1);
  size_t store = 0;
  for_each_option(argv, [&](size_t j, std::string_view word) {
    if (word == "STORE") {
      store = j + 1;
    }
  });
  if (store != 0) {
    out.push_back(store);
  }
}

// Whether a BY or GET pattern substitutes elements into key names ('*'): those keys are
// named by no argument position.
bool sort_uses_patterns(std::span<const std::string_view> argv) {
  bool found = false;
  for_each_option(argv, [&](size_t j, std::string_view word) {
    if ((word == "BY" || word == "GET") && argv[j + 1].find('*') != std::string_view::npos) {
      found = true;
    }
  });
  return found;
}

struct SortRequest {
  std::string_view by;  // empty: the elements themselves
  bool dont_sort = false;
  bool desc = false;
  bool alpha = false;
  int64_t limit_start = 0;
  int64_t limit_count = -1;
  std::vector<std::string_view> gets;
  std::optional<std::string_view> store;
};

bool parse_request_or_reply(CommandContext& ctx, bool read_only, SortRequest& req) {
  for (size_t j = 2; j < ctx.argc(); ++j) {
    size_t left = ctx.argc() - j - 1;
    std::string_view a = ctx.arg(j);
    if (strcasecmp_view(a, "ASC")) {
      req.desc = false;
    } else if (strcasecmp_view(a, "DESC")) {
      req.desc = true;
    } else if (strcasecmp_view(a, "ALPHA")) {
      req.alpha = true;
    } else if (strcasecmp_view(a, "LIMIT") && left >= 2) {
      if (!ctx.int_arg_or_reply(j + 1, req.limit_start) ||
          !ctx.int_arg_or_reply(j + 2, req.limit_count)) {
        return false;
      }
      j += 2;
    } else if (strcasecmp_view(a, "STORE") && left >= 1 && !read_only) {
      req.store = ctx.arg(++j);
    } else if (strcasecmp_view(a, "BY") && left >= 1) {
      req.by = ctx.arg(++j);
      // A pattern without '*' gives every element the same weight: keep the native order.
      req.dont_sort = req.by.find('*') == std::string_view::npos;
    } else if (strcasecmp_view(a, "GET") && left >= 1) {
      req.gets.push_back(ctx.arg(++j));
    } else {
      ctx.error(err::kSyntax);
      return false;
    }
  }
  return true;
}

// The value a BY/GET pattern yields for `element` (Redis's lookupKeyByPattern): "#" is the
// element itself; otherwise the first '*' is replaced by the element and the key read as a
// string, or, when "->field" follows the '*', as that field of a hash. A pattern without '*',
// a missing key or one of another type yields nothing.
std::optional<std::string> lookup_by_pattern(CommandContext& ctx, std::string_view pattern,
                                             std::string_view element) {
  if (pattern == "#") {
    return std::string(element);
  }
  size_t star = pattern.find('*');
  if (star == std::string_view::npos) {
    return std::nullopt;
  }
  std::string_view field;
  std::string_view key_tail = pattern.substr(star + 1);
  if (size_t arrow = key_tail.find("->");
      arrow != std::string_view::npos && arrow + 2 < key_tail.size()) {
    field = key_tail.substr(arrow + 2);
    key_tail = key_tail.substr(0, arrow);
  }
  std::string key;
  key.reserve(pattern.size() + element.size());
  key.append(pattern.substr(0, star)).append(element).append(key_tail);
  Value* v = ctx.db(key).find_read(key, ctx.now_ms);
  if (v == nullptr) {
    return std::nullopt;
  }
  if (!field.empty()) {
    if (v->type() != ValueType::kHash) {
      return std::nullopt;
    }
    const std::string* f = v->hash()->get(field);
    return f != nullptr ? std::optional<std::string>(*f) : std::nullopt;
  }
  if (v->type() != ValueType::kString) {
    return std::nullopt;
  }
  std::string scratch;
  return std::string(v->str(scratch));
}

// Redis reads weights with strtod: leading blanks, "inf" and hex floats are fine, trailing
// bytes, out-of-range values and NaN are not. The empty string reads as 0 as there.
std::optional<double> parse_weight(const std::string& s) {
  errno = 0;
  char* end = nullptr;
  double d = std::strtod(s.c_str(), &end);
  if (*end != '\0' || end != s.c_str() + s.size() || errno == ERANGE || std::isnan(d)) {
    return std::nullopt;
  }
  return d;
}

struct Item {
  std::string element;
  double score = 0;
  std::optional<std::string> by_value;  // ALPHA BY: the weight's bytes (nullopt: missing)
};

// The elements as SORT loads them: for a list or sorted set that is not sorted (BY with no
// '*'), just the LIMIT range in native order (reversed for DESC), and then the range is the
// whole vector; otherwise everything, in the container's order.
std::vector<Item> load_items(const Value* v, const SortRequest& req, int64_t& start, int64_t& end) {
  std::vector<Item> items;
  if (v == nullptr) {
    return items;
  }
  const auto total = static_cast<int64_t>(v->type() == ValueType::kList  ? v->list()->size()
                                          : v->type() == ValueType::kSet ? v->set()->size()
                                                                         : v->zset()->size());
  start = req.limit_start < 0 ? 0 : req.limit_start;
  end = req.limit_count < 0       ? total - 1
        : req.limit_count > total ? start + total - 1
                                  : start + req.limit_count - 1;
  if (start >= total) {
    start = total - 1;
    end = total - 2;
  }
  if (end >= total) {
    end = total - 1;
  }
  const bool ranged = req.dont_sort && v->type() != ValueType::kSet;
  if (ranged) {
    int64_t n = std::max<int64_t>(end - start + 1, 0);
    items.reserve(static_cast<size_t>(n));
    if (v->type() == ValueType::kList && n > 0) {
      const List& l = *v->list();
      auto take = [&](size_t, std::string_view e) {
        items.push_back({std::string(e), 0, std::nullopt});
        return static_cast<int64_t>(items.size()) < n;
      };
      if (req.desc) {
        l.for_each_reverse(static_cast<size_t>(total - 1 - start), take);
      } else {
        l.for_each(static_cast<size_t>(start), take);
      }
    } else if (n > 0) {
      const ZSet& z = *v->zset();
      const ZSet::Node* node = z.at_rank(static_cast<size_t>(req.desc ? total - 1 - start : start));
      for (int64_t i = 0; i < n && node != nullptr; ++i) {
        items.push_back({std::string(node->member()), 0, std::nullopt});
        node = req.desc ? node->prev() : node->next();
      }
    }
    start = 0;
    end = static_cast<int64_t>(items.size()) - 1;
    return items;
  }
  items.reserve(static_cast<size_t>(total));
  switch (v->type()) {
    case ValueType::kList:
      v->list()->for_each(0, [&](size_t, std::string_view e) {
        items.push_back({std::string(e), 0, std::nullopt});
        return true;
      });
      break;
    case ValueType::kSet:
      v->set()->for_each([&](std::string_view m) {
        items.push_back({std::string(m), 0, std::nullopt});
      });
      break;
    default:
      for (const ZSet::Node* n = v->zset()->first(); n != nullptr; n = n->next()) {
        items.push_back({std::string(n->member()), 0, std::nullopt});
      }
      break;
  }
  return items;
}

// Weighs and orders the items (Redis's sortCompare): numerically, ties broken by the
// elements' bytes; or ALPHA by the elements' bytes, or by the BY values' bytes with missing
// values first. Returns false when a numeric weight is not a double.
bool sort_items(CommandContext& ctx, const SortRequest& req, std::vector<Item>& items) {
  const bool by_pattern = !req.by.empty();
  for (Item& it : items) {
    std::optional<std::string> weight;
    if (by_pattern) {
      weight = lookup_by_pattern(ctx, req.by, it.element);
      if (!weight) {
        continue;  // a missing weight counts as 0 (numeric) or sorts first (ALPHA)
      }
    }
    if (req.alpha) {
      it.by_value = std::move(weight);
      continue;
    }
    std::optional<double> d = parse_weight(by_pattern ? *weight : it.element);
    if (!d) {
      return false;
    }
    it.score = *d;
  }
  auto compare = [&](const Item& a, const Item& b) {
    int cmp;
    if (!req.alpha) {
      cmp = a.score > b.score ? 1 : a.score < b.score ? -1 : a.element.compare(b.element);
    } else if (by_pattern) {
      if (!a.by_value || !b.by_value) {
        cmp = a.by_value.has_value() == b.by_value.has_value() ? 0 : !a.by_value ? -1 : 1;
      } else {
        cmp = a.by_value->compare(*b.by_value);
      }
    } else {
      cmp = a.element.compare(b.element);
    }
    return req.desc ? cmp > 0 : cmp < 0;
  };
  std::stable_sort(items.begin(), items.end(), compare);
  return true;
}

void sort_generic(CommandContext& ctx, bool read_only) {
  SortRequest req;
  if (!parse_request_or_reply(ctx, read_only, req)) {
    return;
  }
  Value* v = ctx.db(ctx.arg(1)).find_read(ctx.arg(1), ctx.now_ms);
  if (v != nullptr && v->type() != ValueType::kList && v->type() != ValueType::kSet &&
      v->type() != ValueType::kZSet) {
    ctx.error(err::kWrongType);
    return;
  }
  // A set has no order of its own: unsorted output from one would differ between a script's
  // run and its replay, or be stored in an arbitrary order, so it is sorted by bytes instead.
  if (req.dont_sort && v != nullptr && v->type() == ValueType::kSet &&
      (req.store || ctx.from_script)) {
    req.dont_sort = false;
    req.alpha = true;
    req.by = {};
  }
  int64_t start = 0;
  int64_t end = -1;
  std::vector<Item> items = load_items(v, req, start, end);
  if (!req.dont_sort && !sort_items(ctx, req, items)) {
    ctx.error(err::kSortScoreNotDouble);
    return;
  }
  const int64_t rows = std::max<int64_t>(end - start + 1, 0);
  const size_t per_row = req.gets.empty() ? 1 : req.gets.size();
  if (!req.store) {
    ctx.reply.array(static_cast<size_t>(rows) * per_row);
    for (int64_t j = start; j <= end; ++j) {
      const std::string& e = items[static_cast<size_t>(j)].element;
      if (req.gets.empty()) {
        ctx.reply.bulk(e);
      }
      for (std::string_view pattern : req.gets) {
        std::optional<std::string> got = lookup_by_pattern(ctx, pattern, e);
        if (got) {
          ctx.reply.bulk(*got);
        } else {
          ctx.reply.null();
        }
      }
    }
    return;
  }
  // STORE: the output as a list (a missing GET value stored as ""), replacing the
  // destination, or deleting it when there is nothing to store.
  const Config& config = ctx.engine.config();
  auto list = std::make_unique<List>(static_cast<int>(config.list_max_listpack_size.load()),
                                     config.list_compress_depth.load());
  for (int64_t j = start; j <= end; ++j) {
    const std::string& e = items[static_cast<size_t>(j)].element;
    if (req.gets.empty()) {
      list->push_back(e);
    }
    for (std::string_view pattern : req.gets) {
      list->push_back(lookup_by_pattern(ctx, pattern, e).value_or(std::string()));
    }
  }
  bool empty = list->empty();
  auto size = static_cast<int64_t>(list->size());
  ctx.store_or_delete(*req.store, Value::from_list(std::move(list)), empty, size, kNotifyList,
                      "sortstore");
}

void cmd_sort(CommandContext& ctx) { sort_generic(ctx, false); }
void cmd_sort_ro(CommandContext& ctx) { sort_generic(ctx, true); }

}  // namespace

void register_sort(Table& t) {
  // clang-format off
  CommandSpec sort{"SORT",    -2, kWrite | kDenyOom, key_finder(1, 1, 1, sort_keys), cmd_sort,    "generic", "SORT key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] [ASC|DESC] [ALPHA] [STORE destination]", "Sorts the elements in a list, a set, or a sorted set, optionally storing the result."};
  CommandSpec ro{"SORT_RO",   -2, kReadOnly,         key_finder(1, 1, 1, sort_keys), cmd_sort_ro, "generic", "SORT_RO key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] [ASC|DESC] [ALPHA]", "Returns the sorted elements of a list, a set, or a sorted set."};
  // clang-format on
  sort.reaches_unnamed_keys = sort_uses_patterns;
  ro.reaches_unnamed_keys = sort_uses_patterns;
  t.add(std::move(sort));
  t.add(std::move(ro));
}

}  // namespace hotkv
