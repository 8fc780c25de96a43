// File helpers (see file_io.hpp).
#include "hotkv/util/file_io.hpp"

#include <unistd.h>

#include <cerrno>

namespace hotkv {

bool write_fully(int fd, std::string_view data, size_t& done) {
  done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
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

bool pwrite_fully(int fd, std::string_view data, uint64_t offset, size_t& done) {
  done = 0;
  while (done < data.size()) {
    ssize_t n = ::pwrite(fd, data.data() + done, data.size() - done,
                         static_cast<off_t>(offset + done));
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

}  // namespace hotkv
