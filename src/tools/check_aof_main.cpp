// hotkv-check-aof: verifies an append-only log directory without starting the server. It reads
// the manifest, decodes every file, and reports records, effects, cross-shard operations that
// are incomplete, torn tails and damage. With --fix it truncates a torn tail (or, after asking,
// a damaged file at the damage) so the server can start again. For each file it also prints the
// range of record sequence numbers (records of the format before them are counted apart) and
// says if the numbers ever go back, which a healthy log never does.
//
// With --resp it instead prints the log as the Redis commands that rebuild its data set
// (effect_commands.hpp), ready for `redis-cli --pipe`: segments in manifest order, each
// segment's shard files merged so that every cross-shard operation comes once, where it falls
// in every shard's writes.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>

#include <CLI/CLI.hpp>

#include "hotkv/persist/manifest.hpp"
#include "hotkv/persist/record.hpp"
#include "hotkv/shard/effect_commands.hpp"
#include "hotkv/shard/effect_registry.hpp"

namespace {

bool read_whole_file(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  out = std::move(ss).str();
  return true;
}

// --resp: the data set as commands on stdout. Returns the exit code: 0, 1 if some effect
// could not be translated or the log is damaged (what could be read is still printed), 2 if
// a file cannot be read.
int print_resp(const std::string& dir, const hotkv::Manifest& manifest) {
  hotkv::CommandStreamState state;
  std::string out;
  int rc = 0;
  uint64_t operations = 0;
  for (const auto& seg : manifest.segments) {
    std::vector<std::vector<hotkv::Record>> shards(seg.files.size());
    for (size_t i = 0; i < seg.files.size(); ++i) {
      std::string path = dir + "/" + seg.files[i];
      std::string data;
      if (!read_whole_file(path, data)) {
        std::fprintf(stderr, "%s: cannot open\n", path.c_str());
        return 2;
      }
      hotkv::RecordDecoder dec(data);
      hotkv::Record r;
      hotkv::DecodeStatus st;
      while ((st = dec.next(r)) == hotkv::DecodeStatus::kOk) {
        shards[i].push_back(std::move(r));
        r = hotkv::Record{};
      }
      if (st == hotkv::DecodeStatus::kCorrupt) {
        std::fprintf(stderr, "%s: damaged at offset %zu (%s): printing what precedes it\n",
                     path.c_str(), dec.offset(), dec.error().c_str());
        rc = 1;
      }
    }
    size_t left = hotkv::merge_shard_logs(shards, [&](std::span<const hotkv::Record* const> op) {
      std::string error;
      if (!hotkv::operation_to_resp(op, state, out, error)) {
        std::fprintf(stderr, "record seq %llu: %s: skipped\n",
                     static_cast<unsigned long long>(op[0]->seq), error.c_str());
        rc = 1;
      }
      ++operations;
      if (out.size() >= (1u << 20)) {
        std::fwrite(out.data(), 1, out.size(), stdout);
        out.clear();
      }
    });
    if (left > 0) {
      // An incomplete cross-shard operation (a crash while writing its parts): never
      // acknowledged, and replay drops it and what follows it in its files, as here.
      std::fprintf(stderr,
                   "segment %llu: %zu record(s) left out: an incomplete cross-shard "
                   "operation and what its shards logged after it (replay drops them too)\n",
                   static_cast<unsigned long long>(seg.seq), left);
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
  std::fprintf(stderr, "%llu operations\n", static_cast<unsigned long long>(operations));
  return rc;
}

// What -v prints for one effect: its kind (an op by its registered name), database, slot, key.
void print_effect(const hotkv::Effect& e) {
  static constexpr const char* kKinds[] = {"?",     "put",    "del",   "expire",
                                           "flush", "op",     "select", "swapdb"};
  std::string what = static_cast<size_t>(e.kind) < std::size(kKinds)
                         ? kKinds[static_cast<size_t>(e.kind)]
                         : "?";
  if (e.kind == hotkv::EffectKind::kOp) {
    const hotkv::EffectOp* op = hotkv::find_effect_op(e.op);
    what = op != nullptr ? std::string(op->name) : "unknown op " + std::to_string(e.op);
  }
  // Keys may hold any byte: show at most 64, unprintable ones as '.'.
  std::string key = e.key.substr(0, 64);
  for (char& c : key) {
    if (c < 0x20 || c > 0x7e) {
      c = '.';
    }
  }
  std::printf("  %s db=%u slot=%d key=%s%s\n", what.c_str(), e.db,
              e.slot == hotkv::kNoSlot ? -1 : static_cast<int>(e.slot), key.c_str(),
              e.key.size() > 64 ? "..." : "");
}

struct FileReport {
  std::string path;
  uint64_t size = 0;
  uint64_t valid = 0;
  uint64_t records = 0;
  uint64_t effects = 0;
  uint64_t v1_records = 0;  // records of the format without sequence numbers
  uint64_t first_seq = 0;
  uint64_t last_seq = 0;
  uint64_t seq_backwards = 0;  // records whose number is below the one before
  hotkv::DecodeStatus end = hotkv::DecodeStatus::kEnd;
  std::string error;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Verify (and with --fix repair) a HotKV append-only log directory"};
  std::string dir;
  std::string manifest_name = "appendonly.aof.manifest";
  bool fix = false;
  bool yes = false;
  bool verbose = false;
  app.add_option("dir", dir, "the append-only directory (e.g. ./data/appendonlydir)")->required();
  app.add_option("--manifest", manifest_name, "manifest file name inside dir");
  app.add_flag("--fix", fix, "truncate a torn tail; with --yes also truncate at damage");
  app.add_flag("-y,--yes", yes, "do not ask before truncating at damage");
  app.add_flag("-v,--verbose", verbose, "print every record and its effects");
  bool resp = false;
  app.add_flag("--resp", resp,
               "print the data set as Redis commands (RESP) for redis-cli --pipe, nothing else");
  CLI11_PARSE(app, argc, argv);

  hotkv::Manifest manifest;
  std::string error;
  if (!hotkv::read_manifest(dir + "/" + manifest_name, manifest, error)) {
    std::fprintf(stderr, "cannot read manifest %s/%s: %s\n", dir.c_str(), manifest_name.c_str(),
                 error.empty() ? "no such file" : error.c_str());
    return 2;
  }
  if (resp) {
    return print_resp(dir, manifest);
  }
  std::map<uint64_t, std::pair<uint32_t, uint32_t>> txns;  // id -> (seen, needed)
  std::vector<FileReport> reports;
  bool damaged = false;
  for (const auto& seg : manifest.segments) {
    for (const auto& name : seg.files) {
      FileReport rep;
      rep.path = dir + "/" + name;
      std::ifstream in(rep.path, std::ios::binary);
      if (!in) {
        std::fprintf(stderr, "%s: cannot open\n", rep.path.c_str());
        return 2;
      }
      std::ostringstream ss;
      ss << in.rdbuf();
      std::string data = std::move(ss).str();
      rep.size = data.size();
      hotkv::RecordDecoder dec(data);
      hotkv::Record r;
      while ((rep.end = dec.next(r)) == hotkv::DecodeStatus::kOk) {
        ++rep.records;
        rep.effects += r.effects.size();
        if (r.version == hotkv::kRecordV1) {
          ++rep.v1_records;
        } else {
          if (rep.first_seq == 0) {
            rep.first_seq = r.seq;
          } else if (r.seq < rep.last_seq) {
            ++rep.seq_backwards;
          }
          rep.last_seq = r.seq;
        }
        if (r.txn_id != 0) {
          auto& t = txns[r.txn_id];
          ++t.first;
          t.second = r.parts;
        }
        if (verbose) {
          std::printf("%s @%zu v%u seq=%llu txn=%llu parts=%u effects=%zu\n", name.c_str(),
                      dec.offset(), r.version, static_cast<unsigned long long>(r.seq),
                      static_cast<unsigned long long>(r.txn_id), r.parts, r.effects.size());
          for (const auto& e : r.effects) {
            print_effect(e);
          }
        }
      }
      rep.valid = dec.offset();
      rep.error = dec.error();
      damaged = damaged || rep.end == hotkv::DecodeStatus::kCorrupt;
      reports.push_back(rep);
    }
  }
  uint64_t incomplete = 0;
  for (const auto& [id, t] : txns) {
    if (t.first < t.second) {
      ++incomplete;
    }
  }
  std::printf("manifest: %zu segment(s)\n", manifest.segments.size());
  for (const auto& rep : reports) {
    const char* state = rep.end == hotkv::DecodeStatus::kEnd    ? "ok"
                        : rep.end == hotkv::DecodeStatus::kTorn ? "TORN TAIL"
                                                                : "DAMAGED";
    std::printf("%s: %llu bytes, %llu records, %llu effects: %s", rep.path.c_str(),
                static_cast<unsigned long long>(rep.size),
                static_cast<unsigned long long>(rep.records),
                static_cast<unsigned long long>(rep.effects), state);
    if (rep.first_seq != 0) {
      std::printf(", seq %llu..%llu", static_cast<unsigned long long>(rep.first_seq),
                  static_cast<unsigned long long>(rep.last_seq));
    }
    if (rep.v1_records != 0) {
      std::printf(", %llu version 1 records (no seq)",
                  static_cast<unsigned long long>(rep.v1_records));
    }
    if (rep.seq_backwards != 0) {
      std::printf(", WARNING: seq goes back %llu times",
                  static_cast<unsigned long long>(rep.seq_backwards));
    }
    if (rep.end != hotkv::DecodeStatus::kEnd) {
      std::printf(" at offset %llu (%s)", static_cast<unsigned long long>(rep.valid),
                  rep.error.c_str());
    } else if (rep.valid < rep.size) {
      // Zeros written ahead of the records (appendfsync always): the log ends before them.
      std::printf(" (log ends at offset %llu; %llu bytes of zeros written ahead follow)",
                  static_cast<unsigned long long>(rep.valid),
                  static_cast<unsigned long long>(rep.size - rep.valid));
    }
    std::printf("\n");
  }
  std::printf("cross-shard operations: %zu, incomplete: %llu (dropped on load)\n", txns.size(),
              static_cast<unsigned long long>(incomplete));
  bool needs_fix = false;
  for (const auto& rep : reports) {
    if (rep.end == hotkv::DecodeStatus::kEnd) {
      continue;
    }
    needs_fix = true;
    if (!fix) {
      continue;
    }
    if (rep.end == hotkv::DecodeStatus::kCorrupt && !yes) {
      std::printf("truncate %s at offset %llu, losing %llu bytes after the damage? [y/N] ",
                  rep.path.c_str(), static_cast<unsigned long long>(rep.valid),
                  static_cast<unsigned long long>(rep.size - rep.valid));
      std::string answer;
      std::getline(std::cin, answer);
      if (answer != "y" && answer != "Y") {
        std::printf("left unchanged\n");
        continue;
      }
    }
    if (::truncate(rep.path.c_str(), static_cast<off_t>(rep.valid)) != 0) {
      std::perror(rep.path.c_str());
      return 2;
    }
    std::printf("truncated %s to %llu bytes\n", rep.path.c_str(),
                static_cast<unsigned long long>(rep.valid));
  }
  if (!needs_fix) {
    std::printf("AOF is valid\n");
    return 0;
  }
  return fix ? 0 : 1;
}
