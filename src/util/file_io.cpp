// File helpers (see file_io.hpp).
#include "hotkv/util/file_io.hpp"

#include <unistd.h>

#include <cerrno>

namespace hotkv {

namespace {

// Calls `write_some(pointer, length, offset_so_far)` until all of `data` is written,
// retrying short writes and EINTR.
template <class WriteSome>
bool write_all(std::string_view data, size_t& done, WriteSome write_some) {
  done = 0;
  while (done < data.size()) {
    ssize_t n = write_some(data.data() + done, data.size() - done, done);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

bool write_fully(int fd, std::string_view data, size_t& done) {
  return write_all(data, done,
                   [fd](const char* p, size_t n, size_t) { return ::write(fd, p, n); });
}

bool pwrite_fully(int fd, std::string_view data, uint64_t offset, size_t& done) {
  return write_all(data, done, [fd, offset](const char* p, size_t n, size_t so_far) {
    return ::pwrite(fd, p, n, static_cast<off_t>(offset + so_far));
  });
}

}  // namespace hotkv
