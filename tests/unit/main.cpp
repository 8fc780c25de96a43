// The Catch2 entry point for hotkv_tests; every *_test.cpp under tests/unit adds its cases.
// GCC 12 reports a false -Wmaybe-uninitialized inside <regex>, which Catch2's main pulls in.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
#pragma GCC diagnostic pop
