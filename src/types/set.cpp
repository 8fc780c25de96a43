// Set encodings and the intset -> hashtable conversion (see set.hpp).
#include "hotkv/types/set.hpp"

#include <algorithm>
#include <charconv>

#include "hotkv/util/numbers.hpp"

namespace hotkv {

namespace set_detail {

size_t format_int(int64_t v, char* buf) {
  auto r = std::to_chars(buf, buf + 21, v);
  return static_cast<size_t>(r.ptr - buf);
}

}  // namespace set_detail

std::unique_ptr<Set> Set::clone() const {
  auto out = std::make_unique<Set>(encoding_);
  if (encoding_ == Encoding::kIntset) {
    out->ints_ = ints_;
    return out;
  }
  for_each([&](std::string_view m) { out->table_.try_emplace(m); });
  return out;
}

const char* Set::encoding_name(Encoding e) {
  return e == Encoding::kIntset ? "intset" : "hashtable";
}

const char* Set::encoding_name() const { return encoding_name(encoding_); }

bool Set::contains(std::string_view member) const {
  if (encoding_ == Encoding::kHashtable) {
    return table_.find(member) != nullptr;
  }
  int64_t v = 0;
  return is_canonical_int64(member, v) && std::binary_search(ints_.begin(), ints_.end(), v);
}

bool Set::add(std::string_view member, const EncodingLimits& limits) {
  if (encoding_ == Encoding::kIntset) {
    int64_t v = 0;
    if (is_canonical_int64(member, v)) {
      auto it = std::lower_bound(ints_.begin(), ints_.end(), v);
      if (it != ints_.end() && *it == v) {
        return false;
      }
      if (ints_.size() < limits.set_max_intset_entries) {
        ints_.insert(it, v);
        return true;
      }
    }
    // A non-integer member, or one integer too many: Redis converts before adding.
    convert_to_hashtable();
  }
  return table_.try_emplace(member).second;
}

bool Set::remove(std::string_view member) {
  if (encoding_ == Encoding::kHashtable) {
    return table_.erase(member);
  }
  int64_t v = 0;
  if (!is_canonical_int64(member, v)) {
    return false;
  }
  auto it = std::lower_bound(ints_.begin(), ints_.end(), v);
  if (it == ints_.end() || *it != v) {
    return false;
  }
  ints_.erase(it);
  return true;
}

std::vector<std::string> Set::members() const {
  std::vector<std::string> out;
  out.reserve(size());
  for_each([&](std::string_view m) { out.emplace_back(m); });
  return out;
}

void Set::convert_to_hashtable() {
  char buf[24];
  for (int64_t v : ints_) {
    table_.try_emplace(std::string_view(buf, set_detail::format_int(v, buf)));
  }
  ints_.clear();
  ints_.shrink_to_fit();
  encoding_ = Encoding::kHashtable;
}

size_t Set::memory_bytes() const {
  return sizeof(Set) + ints_.capacity() * sizeof(int64_t) +
         (encoding_ == Encoding::kHashtable ? table_.memory_bytes() : 0);
}

}  // namespace hotkv
