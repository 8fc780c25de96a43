// HOTKV_ASSERT checks an invariant in every build type (not only with NDEBUG unset): a broken
// invariant in a store of stock counts must stop the process loudly, not corrupt data quietly.
// Keep the checked expressions cheap; they run on the data path.
#pragma once

#include <cstdio>
#include <cstdlib>

#define HOTKV_ASSERT(cond)                                                              \
  do {                                                                                  \
    if (__builtin_expect(!(cond), 0)) {                                                 \
      std::fprintf(stderr, "hotkv: invariant failed at %s:%d: %s\n", __FILE__, __LINE__, \
                   #cond);                                                              \
      std::abort();                                                                     \
    }                                                                                   \
  } while (0)
