// File helpers (see file_io.hpp).
#include "hotkv/util/file_io.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

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

Status write_file_atomically(const std::string& path, std::string_view data) {
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Status::io_error("cannot create " + tmp + ": " + std::strerror(errno));
  }
  if (!write_fully(fd, data)) {
    Status st = Status::io_error("cannot write " + tmp + ": " + std::strerror(errno));
    ::close(fd);
    return st;
  }
  if (::fsync(fd) != 0) {
    Status st = Status::io_error("cannot fsync " + tmp + ": " + std::strerror(errno));
    ::close(fd);
    return st;
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    return Status::io_error("cannot rename " + tmp + ": " + std::strerror(errno));
  }
  size_t slash = path.find_last_of('/');
  std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  int dfd = ::open(dir.empty() ? "/" : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return {};
}

}  // namespace hotkv
