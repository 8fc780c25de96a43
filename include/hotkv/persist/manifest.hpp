// The manifest names the log files that make up the data set, in replay order. Files are
// grouped in segments: the files of one segment were written side by side, one per shard of
// the layout in force then, and hold disjoint keys; segments replay one after the other. The
// manifest is replaced atomically (write a temporary, fsync, rename, fsync the directory), so
// a crash at any moment leaves either the old or the new one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hotkv {

struct ManifestSegment {
  uint64_t seq = 0;
  bool base = false;  // a snapshot written by a rewrite (else an incremental log)
  size_t shards = 0;  // the shard count in force when it was written (its key layout)
  std::vector<std::string> files;  // files[i] holds shard i's records
};

struct Manifest {
  std::vector<ManifestSegment> segments;
  uint64_t next_seq() const { return segments.empty() ? 1 : segments.back().seq + 1; }
};

// Parses the manifest text. Returns an empty string or the reason it is invalid.
std::string parse_manifest(const std::string& text, Manifest& out);
std::string render_manifest(const Manifest& m);

// Reads `path`; returns false with `error` empty if it does not exist, false with `error` set
// if it is unreadable or invalid.
bool read_manifest(const std::string& path, Manifest& out, std::string& error);
// Atomically replaces `path`. Returns an empty string or the reason it failed.
std::string write_manifest_atomic(const std::string& path, const Manifest& m);

// File name of shard `shard` in segment `seq`: "<prefix>.<seq>.<base|incr>.<shard>.aof".
std::string segment_file_name(const std::string& prefix, uint64_t seq, bool base, size_t shard);

}  // namespace hotkv
