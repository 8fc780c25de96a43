// The manifest names the log files that make up the data set, in replay order. Files are
// grouped in segments: the files of one segment were written side by side, one per shard of
// the layout in force then, and hold disjoint keys; segments replay one after the other. The
// manifest is replaced atomically (write a temporary, fsync, rename, fsync the directory), so
// a crash at any moment leaves either the old or the new one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hotkv/util/status.hpp"

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

// Parses the manifest text. Fails with kCorruption and the line at fault.
Result<Manifest> parse_manifest(const std::string& text);
std::string render_manifest(const Manifest& m);

// Reads `path`: no manifest (nullopt) if the file does not exist; kIoError if it cannot be
// read; kCorruption if it is invalid.
Result<std::optional<Manifest>> load_manifest(const std::string& path);
// Atomically replaces `path`. Fails with kIoError naming the step (create, write, fsync,
// rename) and the file.
Status store_manifest(const std::string& path, const Manifest& m);

// The string forms of load_manifest and store_manifest, for the log's writers that still take
// failures as text. read_manifest returns false with `error` empty if the file does not exist,
// false with `error` set if it is unreadable or invalid; write_manifest_atomic returns an empty
// string or the reason it failed.
bool read_manifest(const std::string& path, Manifest& out, std::string& error);
std::string write_manifest_atomic(const std::string& path, const Manifest& m);

// File name of shard `shard` in segment `seq`: "<prefix>.<seq>.<base|incr>.<shard>.aof".
std::string segment_file_name(const std::string& prefix, uint64_t seq, bool base, size_t shard);

}  // namespace hotkv
