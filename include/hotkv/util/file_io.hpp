// Small POSIX file helpers shared by the log writer, the manifest and the rewrite child.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "hotkv/util/status.hpp"

namespace hotkv {

// Writes all of `data` to fd, retrying short writes and EINTR. `done` reports how many bytes
// were written even on failure. Returns false with errno set on error. Async-signal-safe apart
// from errno, so the forked rewrite child may use it.
bool write_fully(int fd, std::string_view data, size_t& done);

inline bool write_fully(int fd, std::string_view data) {
  size_t done = 0;
  return write_fully(fd, data, done);
}

// The same at a given file offset (pwrite), for a file written in place.
bool pwrite_fully(int fd, std::string_view data, uint64_t offset, size_t& done);

// Replaces the file at `path` with `data` so that a crash leaves either the old or the new
// file whole: written to path + ".tmp", fsynced, renamed over, and the directory fsynced.
Status write_file_atomically(const std::string& path, std::string_view data);

}  // namespace hotkv
