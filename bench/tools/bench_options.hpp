// "--name value" options for the benchmark drivers in bench/tools/: each option names the
// field of the driver's Options it sets, so a driver lists its options once instead of
// writing out the parse loop.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

namespace bench {

struct Option {
  std::string_view name;
  std::variant<std::string*, int*, int64_t*, double*> field;
};

// Sets the field of each "--name value" pair in argv[1..]. A missing value or an unknown name
// calls `usage_exit` with the reason (which exits). Range checks stay with the driver.
inline void parse_options(int argc, char** argv, std::initializer_list<Option> options,
                          void (*usage_exit)(const char*)) {
  for (int i = 1; i < argc; ++i) {
    std::string_view name = argv[i];
    if (i + 1 >= argc) {
      usage_exit("missing value");
      return;
    }
    const char* value = argv[++i];
    const Option* match = nullptr;
    for (const Option& o : options) {
      if (o.name == name) {
        match = &o;
      }
    }
    if (match == nullptr) {
      usage_exit("unknown option");
      return;
    }
    std::visit(
        [value](auto* field) {
          using Field = std::remove_pointer_t<decltype(field)>;
          if constexpr (std::is_same_v<Field, std::string>) {
            *field = value;
          } else if constexpr (std::is_same_v<Field, double>) {
            *field = std::atof(value);
          } else {
            *field = static_cast<Field>(std::atoll(value));
          }
        },
        match->field);
  }
}

}  // namespace bench
