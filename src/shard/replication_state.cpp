#include "hotkv/shard/replication_state.hpp"

#include <unistd.h>

#include <fstream>
#include <sstream>

#include "hotkv/util/file_io.hpp"

namespace hotkv {
namespace {

std::string position_path(const std::string& dir) { return dir + "/replication-position"; }

}  // namespace

Status save_replication_position(const std::string& dir, const ReplicationPosition& p) {
  std::ostringstream out;
  out << p.replid << ' ' << p.offset << ' ' << p.db << ' ' << p.source << '\n';
  return write_file_atomically(position_path(dir), out.str());
}

std::optional<ReplicationPosition> take_replication_position(const std::string& dir) {
  const std::string path = position_path(dir);
  std::ifstream in(path);
  if (!in) {
    return std::nullopt;
  }
  ReplicationPosition p;
  bool ok = static_cast<bool>(in >> p.replid >> p.offset >> p.db >> p.source);
  in.close();
  ::unlink(path.c_str());
  if (!ok || p.replid.size() != 40) {
    return std::nullopt;
  }
  return p;
}

}  // namespace hotkv
