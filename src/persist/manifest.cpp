// Manifest text format (see manifest.hpp and docs/aof-format.md):
//   # comment
//   segment <seq> <base|incr> <shards>
//   file <name>            (one line per shard, in shard order)
#include "hotkv/persist/manifest.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "hotkv/util/file_io.hpp"

namespace hotkv {

Result<Manifest> parse_manifest(const std::string& text) {
  Manifest out;
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty() || line[0] == '#') {
      continue;
    }
    std::istringstream words(line);
    std::string kind;
    words >> kind;
    if (kind == "segment") {
      ManifestSegment seg;
      std::string type;
      if (!(words >> seg.seq >> type >> seg.shards) || (type != "base" && type != "incr") ||
          seg.shards == 0 || seg.shards > 16384) {
        return Status::corruption("line " + std::to_string(lineno) + ": bad segment line");
      }
      if (!out.segments.empty() && seg.seq <= out.segments.back().seq) {
        return Status::corruption("line " + std::to_string(lineno) + ": segments out of order");
      }
      seg.base = type == "base";
      out.segments.push_back(std::move(seg));
    } else if (kind == "file") {
      std::string name;
      if (out.segments.empty() || !(words >> name) || name.find('/') != std::string::npos) {
        return Status::corruption("line " + std::to_string(lineno) + ": bad file line");
      }
      out.segments.back().files.push_back(name);
    } else {
      return Status::corruption("line " + std::to_string(lineno) + ": unknown directive '" + kind + "'");
    }
  }
  for (const auto& seg : out.segments) {
    if (seg.files.size() != seg.shards) {
      return Status::corruption("segment " + std::to_string(seg.seq) + " lists " +
                                std::to_string(seg.files.size()) + " files for " +
                                std::to_string(seg.shards) + " shards");
    }
  }
  return out;
}

std::string render_manifest(const Manifest& m) {
  std::string out = "# HotKV append-only log manifest: segments replay in order\n";
  for (const auto& seg : m.segments) {
    out += "segment " + std::to_string(seg.seq) + (seg.base ? " base " : " incr ") +
           std::to_string(seg.shards) + "\n";
    for (const auto& f : seg.files) {
      out += "file " + f + "\n";
    }
  }
  return out;
}

Result<std::optional<Manifest>> load_manifest(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    if (errno == ENOENT) {
      return std::optional<Manifest>();
    }
    return Status::io_error(std::string("cannot read: ") + std::strerror(errno));
  }
  std::stringstream ss;
  ss << in.rdbuf();
  Result<Manifest> parsed = parse_manifest(ss.str());
  if (!parsed.is_ok()) {
    return parsed.status();
  }
  return std::optional<Manifest>(std::move(parsed).value());
}

Status store_manifest(const std::string& path, const Manifest& m) {
  return write_file_atomically(path, render_manifest(m));
}

bool read_manifest(const std::string& path, Manifest& out, std::string& error) {
  error.clear();
  Result<std::optional<Manifest>> loaded = load_manifest(path);
  if (!loaded.is_ok()) {
    error = loaded.status().message();
    return false;
  }
  if (!loaded.value().has_value()) {
    return false;
  }
  out = std::move(*loaded.value());
  return true;
}

std::string write_manifest_atomic(const std::string& path, const Manifest& m) {
  return store_manifest(path, m).message();
}

std::string segment_file_name(const std::string& prefix, uint64_t seq, bool base, size_t shard) {
  return prefix + "." + std::to_string(seq) + (base ? ".base." : ".incr.") +
         std::to_string(shard) + ".aof";
}

}  // namespace hotkv
