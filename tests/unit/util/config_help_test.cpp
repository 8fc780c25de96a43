// Unit tests for the settings' help (util/config_help.hpp): every setting of the registry is
// described, every description names a real setting, aliases point at a described setting,
// and docs/settings.md is what the table renders.
#include "hotkv/util/config_help.hpp"

#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "hotkv/util/config.hpp"

using hotkv::Config;

TEST_CASE("every setting has a meaning and every meaning a setting", "[config][docs]") {
  Config c;
  for (const std::string& name : c.names()) {
    INFO(name);
    const hotkv::SettingHelp* h = hotkv::setting_help(name);
    REQUIRE(h != nullptr);
    if (h->alias_of.empty()) {
      CHECK(!h->meaning.empty());
    } else {
      const hotkv::SettingHelp* target = hotkv::setting_help(h->alias_of);
      REQUIRE(target != nullptr);
      CHECK(target->alias_of.empty());
    }
  }
  for (const hotkv::SettingHelp& h : hotkv::settings_help()) {
    INFO(h.name);
    CHECK(c.exists(h.name));
  }
}

TEST_CASE("the settings table is in name order, so lookups find every entry", "[config]") {
  auto all = hotkv::settings_help();
  for (size_t i = 1; i < all.size(); ++i) {
    INFO(all[i].name);
    CHECK(all[i - 1].name < all[i].name);
  }
  CHECK(hotkv::setting_help("no-such-setting") == nullptr);
}

TEST_CASE("a setting's help line gives its meaning, default and whether it can change",
          "[config]") {
  Config c;
  std::string port = hotkv::describe_setting(c, "port");
  CHECK(port.find("config: port: ") == 0);
  CHECK(port.find("default 6379") != std::string::npos);
  CHECK(hotkv::describe_setting(c, "databases").find("fixed at start-up") != std::string::npos);
  std::string timeout = hotkv::describe_setting(c, "timeout");
  CHECK(timeout.find("CONFIG SET can change it") != std::string::npos);
  CHECK(hotkv::describe_setting(c, "slaveof") == "config: slaveof: older name of replicaof");
  CHECK(hotkv::describe_setting(c, "threads").find("number of cores") != std::string::npos);
}

TEST_CASE("docs/settings.md matches the settings", "[config][docs]") {
  std::ifstream in(HOTKV_SOURCE_DIR "/docs/settings.md");
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  // Regenerate with: build/hotkv --settings-markdown > docs/settings.md
  CHECK(ss.str() == hotkv::render_settings_markdown(Config()));
}
