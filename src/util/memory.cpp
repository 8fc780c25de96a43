// The counting allocator (see memory.hpp). glibc lets a program supply malloc, free, calloc,
// realloc and the aligned variants itself; these forward to jemalloc (Debian's libjemalloc,
// through its own entry points mallocx and friends) and count the size class each call hands
// out or takes back.
//
// Why jemalloc rather than glibc's malloc: jemalloc keeps objects of one size class together
// in slabs of their own, whatever order they were allocated in, and large buffers in extents
// of their own. With glibc, the 16 KiB input buffer of each connection sat between that
// connection's small objects, so when many connections went idle and gave their buffers back,
// the small objects that stayed (a socket's reactor state, a registry entry) pinned a page
// each and RSS could not come down (docs/performance.md, "Idle connections and memory").
// Redis uses jemalloc for the same reason.
//
// Why count here rather than ask the allocator (jemalloc's stats.allocated, glibc's
// mallinfo2): those need a refresh that takes locks or walks free lists, too costly for the
// maxmemory check of every write; a thread-local add per call is not.
#include "hotkv/util/memory.hpp"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <new>
#include <string_view>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HOTKV_COUNTING_MALLOC 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define HOTKV_COUNTING_MALLOC 0
#endif
#endif
#ifndef HOTKV_COUNTING_MALLOC
#define HOTKV_COUNTING_MALLOC 1
#endif

#if HOTKV_COUNTING_MALLOC
// jemalloc's non-standard API (declared here rather than through <jemalloc/jemalloc.h>, whose
// declarations of malloc and friends would stand beside the definitions below).
extern "C" {
void* mallocx(size_t size, int flags);
void* rallocx(void* p, size_t size, int flags);
void dallocx(void* p, int flags);
size_t sallocx(const void* p, int flags);
int mallctl(const char* name, void* oldp, size_t* oldlenp, void* newp, size_t newlen);
void malloc_stats_print(void (*write)(void*, const char*), void* opaque, const char* opts);
}
#endif

namespace hotkv {
namespace {

// The process-wide total and its peak. Constant-initialized: allocations made before main
// (static constructors, the loader) are counted too.
std::atomic<int64_t> g_used{0};
std::atomic<int64_t> g_peak{0};
// This thread's allocations minus frees not yet folded into g_used. A plain thread_local of
// the executable: no constructor, no lazy initialization, so it is safe inside malloc.
thread_local int64_t t_pending = 0;
// The flags this thread's allocations take (ClientLifetimeAllocations sets the arena).
[[maybe_unused]] thread_local int t_alloc_flags = 0;
[[maybe_unused]] thread_local int t_lifetime_depth = 0;

void raise_peak(int64_t now) {
  int64_t peak = g_peak.load(std::memory_order_relaxed);
  while (now > peak && !g_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

[[maybe_unused]] inline void account(int64_t delta) {
  int64_t pending = t_pending + delta;
  if (pending >= kFoldBytes || pending <= -kFoldBytes) {
    int64_t now = g_used.fetch_add(pending, std::memory_order_relaxed) + pending;
    t_pending = 0;
    if (pending > 0) {
      raise_peak(now);
    }
    return;
  }
  t_pending = pending;
}

#if HOTKV_COUNTING_MALLOC
// What an allocation occupies: its size class (jemalloc keeps no header beside it).
inline int64_t chunk_bytes(void* p) {
  return p == nullptr ? 0 : static_cast<int64_t>(sallocx(p, 0));
}
#endif

}  // namespace

#if HOTKV_COUNTING_MALLOC

uint64_t used_memory_bytes() {
  int64_t v = g_used.load(std::memory_order_relaxed);
  return v > 0 ? static_cast<uint64_t>(v) : 0;
}

uint64_t used_memory_bytes_here() {
  int64_t v = g_used.load(std::memory_order_relaxed) + t_pending;
  return v > 0 ? static_cast<uint64_t>(v) : 0;
}

bool counting_allocator_active() { return true; }

#else

}  // namespace hotkv

// Under a sanitizer its own allocator replaces malloc (and glibc's arenas, which mallinfo2
// reads, stay nearly empty); it keeps the count of bytes the program holds, which eviction
// and its tests need to run there too.
extern "C" size_t __sanitizer_get_current_allocated_bytes();

namespace hotkv {

uint64_t used_memory_bytes() {
  auto v = static_cast<int64_t>(__sanitizer_get_current_allocated_bytes());
  raise_peak(v);
  return static_cast<uint64_t>(v);
}

uint64_t used_memory_bytes_here() { return used_memory_bytes(); }

bool counting_allocator_active() { return true; }

#endif

void fold_thread_memory() {
  if (t_pending != 0) {
    g_used.fetch_add(t_pending, std::memory_order_relaxed);
    t_pending = 0;
  }
}

uint64_t used_memory_peak_bytes() {
  int64_t used = static_cast<int64_t>(used_memory_bytes());
  raise_peak(used);
  return static_cast<uint64_t>(g_peak.load(std::memory_order_relaxed));
}

void reset_used_memory_peak() {
  g_peak.store(static_cast<int64_t>(used_memory_bytes()), std::memory_order_relaxed);
}

#if HOTKV_COUNTING_MALLOC

namespace {
uint64_t jemalloc_stat(const char* name) {
  size_t value = 0;
  size_t len = sizeof(value);
  return mallctl(name, &value, &len, nullptr, 0) == 0 ? value : 0;
}
}  // namespace

std::string allocator_name() {
  const char* version = nullptr;
  size_t len = sizeof(version);
  if (mallctl("version", static_cast<void*>(&version), &len, nullptr, 0) != 0 || version == nullptr) {
    return "jemalloc";
  }
  std::string_view v(version);
  return "jemalloc-" + std::string(v.substr(0, v.find('-')));  // "5.3.0-0-g54eaed1..." -> 5.3.0
}

void release_free_memory() {
  // "arena.<MALLCTL_ARENAS_ALL>.purge": every arena hands its unused dirty pages back now
  // rather than when they decay (10 s by default).
  mallctl("arena.4096.purge", nullptr, nullptr, nullptr, 0);
}

AllocatorFigures allocator_figures() {
  // The statistics are a snapshot taken when the epoch advances.
  uint64_t epoch = 1;
  size_t len = sizeof(epoch);
  mallctl("epoch", &epoch, &len, &epoch, len);
  return {jemalloc_stat("stats.allocated"), jemalloc_stat("stats.active"),
          jemalloc_stat("stats.resident")};
}

namespace {
// The arena of client-lifetime objects (made on first use; 0 if jemalloc could not make one:
// they then come from the thread's arena like any other allocation).
int client_lifetime_flags() {
  static const int flags = [] {
    unsigned arena = 0;
    size_t len = sizeof(arena);
    if (mallctl("arenas.create", &arena, &len, nullptr, 0) != 0) {
      return 0;
    }
    constexpr int kTcacheNone = 1 << 8;  // MALLOCX_TCACHE_NONE
    return static_cast<int>((arena + 1) << 20) | kTcacheNone;  // MALLOCX_ARENA(arena)
  }();
  return flags;
}
}  // namespace

ClientLifetimeAllocations::ClientLifetimeAllocations() {
  if (t_lifetime_depth++ == 0) {
    t_alloc_flags = client_lifetime_flags();
  }
}

ClientLifetimeAllocations::~ClientLifetimeAllocations() {
  if (--t_lifetime_depth == 0) {
    t_alloc_flags = 0;
  }
}

std::string allocator_report() {
  std::string out;
  malloc_stats_print([](void* to, const char* text) { static_cast<std::string*>(to)->append(text); },
                     &out, nullptr);
  return out;
}

#else

ClientLifetimeAllocations::ClientLifetimeAllocations() = default;
ClientLifetimeAllocations::~ClientLifetimeAllocations() = default;

std::string allocator_name() { return "libc"; }

void release_free_memory() { malloc_trim(0); }

AllocatorFigures allocator_figures() {
  struct mallinfo2 mi = mallinfo2();
  // glibc has no figure of its own for resident bytes; the caller uses RSS (0 here).
  return {mi.uordblks + mi.hblkhd, mi.arena + mi.hblkhd, 0};
}

std::string allocator_report() {
  char* buf = nullptr;
  size_t len = 0;
  FILE* f = open_memstream(&buf, &len);
  if (f == nullptr) {
    return "Stats not available: no memory for the report\n";
  }
  malloc_info(0, f);  // XML: each arena's free chunks and totals
  fclose(f);
  std::string out(buf, len);
  free(buf);  // NOLINT: open_memstream's buffer is malloc'ed
  return out;
}

#endif

}  // namespace hotkv

#if HOTKV_COUNTING_MALLOC

// Every allocation of the process reaches these definitions first, since the executable's
// symbols come first; glibc's own functions that allocate (strdup, getline, ...) call them
// too. glibc's manual lists what a replacement malloc must define: malloc, free, calloc,
// realloc, and the aligned and usable-size variants, all of which are here.
// jemalloc's settings, read at its start. oversize_threshold: allocations of 1 MiB and more
// (the hash tables of big keyspaces, large values) come from an arena that returns their pages
// as soon as they are freed. By default that is from 8 MiB; below, a table freed when its
// keyspace doubled stayed resident until it decayed (10 s), and a load of 1,000,000 keys
// measured 56 B per key instead of 53 (scripts/memory_per_key.py).
const char* malloc_conf = "oversize_threshold:1048576";

namespace {
constexpr int kMallocxZero = 0x40;  // MALLOCX_ZERO
int mallocx_align(size_t alignment) { return __builtin_ctzl(alignment); }  // MALLOCX_LG_ALIGN
}  // namespace

extern "C" {

void* malloc(size_t size) noexcept {
  // jemalloc's mallocx does not accept 0 bytes; malloc(0) must still return a unique pointer.
  void* p = mallocx(size == 0 ? 1 : size, hotkv::t_alloc_flags);
  if (p == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  hotkv::account(hotkv::chunk_bytes(p));
  return p;
}

void free(void* p) noexcept {
  if (p != nullptr) {
    hotkv::account(-hotkv::chunk_bytes(p));
    dallocx(p, 0);
  }
}

void* calloc(size_t n, size_t size) noexcept {
  size_t bytes = 0;
  if (__builtin_mul_overflow(n, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  void* p = mallocx(bytes == 0 ? 1 : bytes, kMallocxZero | hotkv::t_alloc_flags);
  if (p == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  hotkv::account(hotkv::chunk_bytes(p));
  return p;
}

void* realloc(void* p, size_t size) noexcept {
  if (p == nullptr) {
    return malloc(size);
  }
  if (size == 0) {
    free(p);
    return nullptr;
  }
  int64_t before = hotkv::chunk_bytes(p);
  void* out = rallocx(p, size, 0);
  if (out == nullptr) {
    errno = ENOMEM;  // p is left as it was
    return nullptr;
  }
  hotkv::account(hotkv::chunk_bytes(out) - before);
  return out;
}

void* memalign(size_t alignment, size_t size) noexcept {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    errno = EINVAL;
    return nullptr;
  }
  void* p = mallocx(size == 0 ? 1 : size, mallocx_align(alignment) | hotkv::t_alloc_flags);
  if (p == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  hotkv::account(hotkv::chunk_bytes(p));
  return p;
}

void* aligned_alloc(size_t alignment, size_t size) noexcept { return memalign(alignment, size); }

int posix_memalign(void** out, size_t alignment, size_t size) noexcept {
  if (alignment % sizeof(void*) != 0 || (alignment & (alignment - 1)) != 0) {
    return EINVAL;
  }
  void* p = memalign(alignment, size);
  if (p == nullptr) {
    return ENOMEM;
  }
  *out = p;
  return 0;
}

void* valloc(size_t size) noexcept { return memalign(static_cast<size_t>(sysconf(_SC_PAGESIZE)), size); }

void* pvalloc(size_t size) noexcept {
  auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return memalign(page, (size + page - 1) / page * page);
}

size_t malloc_usable_size(void* p) noexcept { return p == nullptr ? 0 : sallocx(p, 0); }
}  // extern "C"

// libjemalloc also defines operator new and delete, which allocate without calling malloc;
// these, in the executable, come first and send every C++ allocation through the counting
// malloc and free above, as libstdc++'s own do.
namespace {
void* new_bytes(size_t size, size_t alignment) {
  for (;;) {
    void* p = alignment == 0 ? malloc(size) : memalign(alignment, size);
    if (p != nullptr) {
      return p;
    }
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) {
      throw std::bad_alloc();
    }
    handler();
  }
}
void* new_bytes_nothrow(size_t size, size_t alignment) noexcept {
  try {
    return new_bytes(size, alignment);
  } catch (...) {
    return nullptr;
  }
}
size_t aligned(std::align_val_t a) { return std::max(static_cast<size_t>(a), sizeof(void*)); }
}  // namespace

void* operator new(size_t size) { return new_bytes(size, 0); }
void* operator new[](size_t size) { return new_bytes(size, 0); }
void* operator new(size_t size, const std::nothrow_t&) noexcept { return new_bytes_nothrow(size, 0); }
void* operator new[](size_t size, const std::nothrow_t&) noexcept {
  return new_bytes_nothrow(size, 0);
}
void* operator new(size_t size, std::align_val_t a) { return new_bytes(size, aligned(a)); }
void* operator new[](size_t size, std::align_val_t a) { return new_bytes(size, aligned(a)); }
void* operator new(size_t size, std::align_val_t a, const std::nothrow_t&) noexcept {
  return new_bytes_nothrow(size, aligned(a));
}
void* operator new[](size_t size, std::align_val_t a, const std::nothrow_t&) noexcept {
  return new_bytes_nothrow(size, aligned(a));
}
void operator delete(void* p) noexcept { free(p); }
void operator delete[](void* p) noexcept { free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { free(p); }
void operator delete(void* p, size_t) noexcept { free(p); }
void operator delete[](void* p, size_t) noexcept { free(p); }
void operator delete(void* p, std::align_val_t) noexcept { free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { free(p); }

#endif
