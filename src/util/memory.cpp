// The counting allocator (see memory.hpp). glibc lets a program supply malloc, free, calloc,
// realloc and the aligned variants itself; these forward to glibc's own (__libc_malloc and
// friends, which it exports for that purpose) and count the chunk each call hands out or takes
// back, as malloc_usable_size reports it plus the 8-byte header glibc keeps in front of it.
//
// Why not mallinfo2(): it walks every arena's free lists under the arena locks (milliseconds
// on a fragmented heap), so it cannot be asked on every write; and what it calls "in use" is
// each arena's size minus its binned free chunks, which also counts chunks parked in the
// per-thread caches, fast-bin fragments held for reuse and the untouched tail of the arenas
// grown during a pipelined load, none of which the data set holds (docs/operations.md has the
// measurement).
#include "hotkv/util/memory.hpp"

#include <malloc.h>

#include <atomic>
#include <cerrno>
#include <cstddef>

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

namespace hotkv {
namespace {

// The process-wide total and its peak. Constant-initialized: allocations made before main
// (static constructors, the loader) are counted too.
std::atomic<int64_t> g_used{0};
std::atomic<int64_t> g_peak{0};
// This thread's allocations minus frees not yet folded into g_used. A plain thread_local of
// the executable: no constructor, no lazy initialization, so it is safe inside malloc.
thread_local int64_t t_pending = 0;

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

[[maybe_unused]] inline int64_t chunk_bytes(void* p) {
  return p == nullptr ? 0 : static_cast<int64_t>(malloc_usable_size(p) + sizeof(size_t));
}

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

}  // namespace hotkv

#if HOTKV_COUNTING_MALLOC

// glibc's allocator under the names it exports for programs that wrap it.
extern "C" {
void* __libc_malloc(size_t size);
void __libc_free(void* p);
void* __libc_calloc(size_t n, size_t size);
void* __libc_realloc(void* p, size_t size);
void* __libc_memalign(size_t alignment, size_t size);
void* __libc_valloc(size_t size);
void* __libc_pvalloc(size_t size);

void* malloc(size_t size) noexcept {
  void* p = __libc_malloc(size);
  hotkv::account(hotkv::chunk_bytes(p));
  return p;
}

void free(void* p) noexcept {
  if (p != nullptr) {
    hotkv::account(-hotkv::chunk_bytes(p));
    __libc_free(p);
  }
}

void* calloc(size_t n, size_t size) noexcept {
  void* p = __libc_calloc(n, size);
  hotkv::account(hotkv::chunk_bytes(p));
  return p;
}

void* realloc(void* p, size_t size) noexcept {
  int64_t before = hotkv::chunk_bytes(p);
  void* out = __libc_realloc(p, size);
  if (out != nullptr || size == 0) {
    // realloc(p, 0) frees p; a failed realloc leaves p as it was.
    hotkv::account(hotkv::chunk_bytes(out) - before);
  }
  return out;
}

void* memalign(size_t alignment, size_t size) noexcept {
  void* p = __libc_memalign(alignment, size);
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

void* valloc(size_t size) noexcept {
  void* p = __libc_valloc(size);
  hotkv::account(hotkv::chunk_bytes(p));
  return p;
}

void* pvalloc(size_t size) noexcept {
  void* p = __libc_pvalloc(size);
  hotkv::account(hotkv::chunk_bytes(p));
  return p;
}
}  // extern "C"

#endif
