// Fuzz target for the append-only log reader (persist/record, persist/manifest) and the loader
// that replays a log at start-up (shard/persistence).
//
// Byte 0 picks the mode (its low four bits), the rest is the data:
//   0, 4: a log file as found on disk, decoded record by record;
//   1, 5-12: the same with every frame's CRC-32C recomputed first, so mutations reach the
//      record bodies instead of stopping at the checksum;
//   2: as 1, then written to a temporary append-only directory with a manifest naming it and
//      loaded by the server's own loader (Persistence::load_and_open) into a fresh engine;
//   3, 13-15: a manifest's text.
// Checks, besides no crash, no sanitizer report and no hang: a decoded record written back with
// encode_record decodes to the same record; a parsed manifest rendered and parsed again gives the
// same manifest; damage is reported with a text and an offset inside the data.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <thread>

#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <spdlog/spdlog.h>

#include "hotkv/persist/manifest.hpp"
#include "hotkv/persist/record.hpp"
#include "hotkv/shard/engine.hpp"
#include "hotkv/shard/persistence.hpp"
#include "hotkv/shard/shard.hpp"
#include "hotkv/util/crc32c.hpp"
#include "support/test_server.hpp"

namespace {

using namespace hotkv;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "persist_log_fuzz: %s\n", what);
  std::abort();
}

uint32_t load_u32(const std::string& s, size_t at) {
  uint32_t v = 0;
  std::memcpy(&v, s.data() + at, 4);  // little-endian host, as the format
  return v;
}

// Rewrites the CRC of every whole frame, front to back, as a writer would have.
void fix_checksums(std::string& log) {
  size_t pos = 0;
  while (pos + kRecordFrame <= log.size()) {
    const uint32_t len = load_u32(log, pos);
    if (len == 0 || log.size() - pos - kRecordFrame < len) {
      return;
    }
    const uint32_t crc = crc32c(std::string_view(log).substr(pos + kRecordFrame, len));
    std::memcpy(log.data() + pos + 4, &crc, 4);
    pos += kRecordFrame + len;
  }
}

bool same_effect(const Effect& a, const Effect& b) {
  return a.kind == b.kind && a.key == b.key && a.is_int == b.is_int && a.integer == b.integer &&
         a.str == b.str && a.at_ms == b.at_ms && a.op == b.op && a.args == b.args &&
         a.db == b.db && a.db2 == b.db2 && a.slot == b.slot;
}

void decode_log(const std::string& log) {
  RecordDecoder dec(log);
  Record r;
  DecodeStatus st;
  while ((st = dec.next(r)) == DecodeStatus::kOk) {
    if (dec.offset() > log.size()) {
      fail("a record ends past the data");
    }
    // A version 1 `select` carries a u32 database, version 2 a u16 (the databases setting is
    // at most 1024): such a record cannot be written again, and the loader refuses it by its
    // databases check ("holds keys of database N, but databases is 16").
    if (std::any_of(r.effects.begin(), r.effects.end(),
                    [](const Effect& e) { return e.db > 0xFFFF || e.db2 > 0xFFFF; })) {
      continue;
    }
    std::string again;
    encode_record(r, again);
    RecordDecoder dec2(again);
    Record r2;
    if (dec2.next(r2) != DecodeStatus::kOk) {
      fail("a decoded record, encoded again, does not decode");
    }
    if (r2.txn_id != r.txn_id || r2.parts != r.parts || r2.effects.size() != r.effects.size()) {
      fail("a decoded record, encoded again, decodes to another header");
    }
    for (size_t i = 0; i < r.effects.size(); ++i) {
      if (!same_effect(r.effects[i], r2.effects[i])) {
        fail("a decoded record, encoded again, decodes to another effect");
      }
    }
  }
  if (dec.offset() > log.size()) {
    fail("the decoder stopped past the data");
  }
  if ((st == DecodeStatus::kTorn || st == DecodeStatus::kCorrupt) && dec.error().empty()) {
    fail("damage reported without a text");
  }
}

void check_manifest(const std::string& text) {
  Result<Manifest> m = parse_manifest(text);
  if (!m.is_ok()) {
    return;
  }
  const std::string rendered = render_manifest(m.value());
  Result<Manifest> again = parse_manifest(rendered);
  if (!again.is_ok()) {
    fail("a rendered manifest does not parse");
  }
  if (render_manifest(again.value()) != rendered) {
    fail("a rendered manifest parses to another manifest");
  }
}

// A temporary directory for this process, emptied after every load.
const std::string& scratch_dir() {
  // Never destroyed: the exit handler that removes the directory runs after static destructors.
  static const std::string* dir = [] {
    char path[] = "/tmp/hotkv_fuzz_aof_XXXXXX";
    if (::mkdtemp(path) == nullptr) {
      fail("cannot create a temporary directory");
    }
    std::atexit([] { std::filesystem::remove_all(scratch_dir()); });
    return new std::string(path);
  }();
  return *dir;
}

void load_log(const std::string& log) {
  const std::string& dir = scratch_dir();
  const std::string aof_dir = dir + "/appendonlydir";
  std::filesystem::create_directories(aof_dir);
  {
    std::ofstream(aof_dir + "/appendonly.aof.manifest")
        << "segment 1 incr 1\nfile appendonly.aof.1.incr.0.aof\n";
    std::ofstream(aof_dir + "/appendonly.aof.1.incr.0.aof", std::ios::binary) << log;
  }
  {
    test::TestServer server(1);
    Config& cfg = server.config();
    for (auto [name, value] : {std::pair{"appendonly", "yes"}, {"dir", dir.c_str()},
                               {"appendfsync", "no"}}) {
      if (!cfg.set(name, value, true).is_ok()) {
        fail("cannot configure the append-only log");
      }
    }
    // The loader applies effects on the shard's own thread, as at start-up. The shard's timers
    // keep its io_context busy, so the thread is stopped rather than left to run out of work.
    asio::io_context& io = server.engine().shard(0).io();
    io.restart();
    auto work = asio::make_work_guard(io);
    std::thread shard_thread([&io] { io.run(); });
    {
      Persistence persistence(server.engine());
      server.engine().set_persistence(&persistence);
      server.engine().set_loading(true);
      std::string err = persistence.load_and_open();
      server.engine().set_loading(false);
      (void)err;  // a refusal is an outcome like any other; only crashes and reports count
      persistence.close();
      io.stop();
      shard_thread.join();
      server.engine().set_persistence(nullptr);
    }
  }
  std::filesystem::remove_all(aof_dir);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // The loader logs every torn tail and refusal; thousands of runs per second need no log.
  spdlog::set_level(spdlog::level::off);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) {
    return 0;
  }
  std::string body(reinterpret_cast<const char*>(data) + 1, size - 1);
  // A whole load (an engine, a thread, files) costs about as much as a thousand decodes: one
  // input in sixteen takes that path.
  const uint8_t mode = data[0] & 15;
  if (mode == 3 || mode >= 13) {
    check_manifest(body);
    return 0;
  }
  if (mode != 0 && mode != 4) {
    fix_checksums(body);
  }
  decode_log(body);
  if (mode == 2) {
    load_log(body);
  }
  return 0;
}
