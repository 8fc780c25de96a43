// What every setting of the configuration registry does, for `hotkv --help` and the generated
// docs/settings.md (`hotkv --settings-markdown`). One table, next to the registry rather than
// inside it, so a setting's meaning is written once and a unit test can check that no setting
// is left without one.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace hotkv {

class Config;

struct SettingHelp {
  std::string_view name;
  // Set for an older spelling (slave-*, *-ziplist-*, lua-time-limit): the setting it names.
  std::string_view alias_of;
  std::string_view meaning;
  // Shown instead of the registry's default when that needs words ("number of cores").
  std::string_view default_note;
};

// Every described setting, in name order.
std::span<const SettingHelp> settings_help();
// The entry for `name`, or nullptr.
const SettingHelp* setting_help(std::string_view name);

// One line for --help: the meaning, the default and whether CONFIG SET may change it.
std::string describe_setting(const Config& defaults, std::string_view name);

// docs/settings.md: a table of every setting, generated from the registry and this table.
std::string render_settings_markdown(const Config& defaults);

}  // namespace hotkv
