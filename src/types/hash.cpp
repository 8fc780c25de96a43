// Hash encodings and conversion (see hash.hpp).
#include "hotkv/types/hash.hpp"

namespace hotkv {

std::unique_ptr<Hash> Hash::clone() const {
  auto out = std::make_unique<Hash>();
  out->encoding_ = encoding_;
  if (listpack()) {
    out->pairs_ = pairs_;
  } else {
    for_each(
        [&](const std::string& f, const std::string& v) { out->dict_.insert_or_assign(f, v); });
  }
  return out;
}

std::vector<Hash::Pair>::iterator Hash::find_pair(std::string_view field) {
  auto it = pairs_.begin();
  for (; it != pairs_.end(); ++it) {
    if (it->first == field) {
      break;
    }
  }
  return it;
}

const std::string* Hash::get(std::string_view field) const {
  if (!listpack()) {
    return dict_.find(field);
  }
  for (const auto& p : pairs_) {
    if (p.first == field) {
      return &p.second;
    }
  }
  return nullptr;
}

bool Hash::set(std::string_view field, std::string_view value, const EncodingLimits& limits) {
  if (listpack() && (field.size() > limits.hash_max_listpack_value ||
                     value.size() > limits.hash_max_listpack_value)) {
    convert_to_hashtable();
  }
  if (!listpack()) {
    auto [v, inserted] = dict_.try_emplace(field);
    v->assign(value.data(), value.size());
    return inserted;
  }
  auto it = find_pair(field);
  bool added = it == pairs_.end();
  if (added) {
    pairs_.emplace_back(std::string(field), std::string(value));
  } else {
    it->second.assign(value.data(), value.size());
  }
  // After an update too: a listpack already past a lowered limit converts at its next write.
  if (pairs_.size() > limits.hash_max_listpack_entries) {
    convert_to_hashtable();
  }
  return added;
}

bool Hash::erase(std::string_view field) {
  if (!listpack()) {
    return dict_.erase(field);
  }
  auto it = find_pair(field);
  if (it == pairs_.end()) {
    return false;
  }
  pairs_.erase(it);
  return true;
}

void Hash::convert_to_hashtable() {
  if (!listpack()) {
    return;
  }
  for (auto& [f, v] : pairs_) {
    dict_.insert_or_assign(f, std::move(v));
  }
  pairs_.clear();
  pairs_.shrink_to_fit();
  encoding_ = Encoding::kHashtable;
}

size_t Hash::memory_bytes() const {
  static const size_t inline_capacity = std::string().capacity();
  auto heap = [](const std::string& s) {
    return s.capacity() > inline_capacity ? s.capacity() + 1 : 0;
  };
  size_t bytes = sizeof(Hash);
  if (listpack()) {
    bytes += pairs_.capacity() * sizeof(Pair);
    for (const auto& [f, v] : pairs_) {
      bytes += heap(f) + heap(v);
    }
    return bytes;
  }
  bytes += dict_.memory_bytes();
  dict_.for_each([&](std::string_view, std::string& v) { bytes += heap(v); });
  return bytes;
}

}  // namespace hotkv
