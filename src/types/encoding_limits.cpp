// Encoding thresholds read from the configuration (see encoding_limits.hpp).
#include "hotkv/types/encoding_limits.hpp"

#include "hotkv/util/config.hpp"

namespace hotkv {

EncodingLimits EncodingLimits::from(const Config& config) {
  EncodingLimits l;
  // CONFIG SET keeps them all within 0..INT64_MAX.
  l.hash_max_listpack_entries =
      static_cast<size_t>(config.hash_max_listpack_entries.load(std::memory_order_relaxed));
  l.hash_max_listpack_value =
      static_cast<size_t>(config.hash_max_listpack_value.load(std::memory_order_relaxed));
  l.set_max_intset_entries =
      static_cast<size_t>(config.set_max_intset_entries.load(std::memory_order_relaxed));
  l.stream_node_max_entries =
      static_cast<size_t>(config.stream_node_max_entries.load(std::memory_order_relaxed));
  l.stream_node_max_bytes =
      static_cast<size_t>(config.stream_node_max_bytes.load(std::memory_order_relaxed));
  l.list_fill = static_cast<int>(config.list_max_listpack_size.load(std::memory_order_relaxed));
  l.list_compress_depth = config.list_compress_depth.load(std::memory_order_relaxed);
  return l;
}

}  // namespace hotkv
