// hotkv: parses flags and the config file (flags win), sets up logging, prints the banner and
// runs the server until SIGINT/SIGTERM/SHUTDOWN.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "hotkv/commands/table.hpp"
#include "hotkv/server/server.hpp"
#include "hotkv/util/config.hpp"
#include "hotkv/util/config_help.hpp"

namespace {

spdlog::level::level_enum to_spdlog_level(const std::string& level) {
  if (level == "debug") {
    return spdlog::level::debug;
  }
  if (level == "verbose") {
    return spdlog::level::debug;
  }
  if (level == "warning") {
    return spdlog::level::warn;
  }
  if (level == "nothing") {
    return spdlog::level::off;
  }
  return spdlog::level::info;
}

}  // namespace

int main(int argc, char** argv) {
  // A write past RLIMIT_FSIZE must fail with EFBIG (answered with -MISCONF), not kill us.
  std::signal(SIGXFSZ, SIG_IGN);
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"HotKV: a Redis-protocol, shard-per-core, in-memory inventory server"};
  std::string config_file;
  bool commands_markdown = false;
  bool settings_markdown = false;
  app.add_option("-c,--config", config_file, "redis.conf-style file of `name value` lines");
  app.add_flag("--commands-markdown", commands_markdown,
               "print docs/commands.md generated from the command table and exit");
  app.add_flag("--settings-markdown", settings_markdown,
               "print docs/settings.md generated from the settings and exit");
  // Every setting of the configuration registry is also a flag named after it; a flag
  // overrides the config file. Its help says what it does and its default.
  std::map<std::string, std::optional<std::string>> flags;
  const hotkv::Config defaults;
  for (const std::string& name : defaults.names()) {
    // Given twice, the last one wins, as redis-server takes repeated options.
    app.add_option("--" + name, flags[name], hotkv::describe_setting(defaults, name))
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  }
  CLI11_PARSE(app, argc, argv);

  if (settings_markdown) {
    std::cout << hotkv::render_settings_markdown(defaults);
    return 0;
  }

  if (commands_markdown) {
    std::cout << hotkv::render_commands_markdown(hotkv::command_table());
    return 0;
  }

  hotkv::Config config;
  if (!config_file.empty()) {
    hotkv::Status st = config.load_file(config_file);
    if (!st.is_ok()) {
      std::fprintf(stderr, "hotkv: bad config file: %s\n", st.message().c_str());
      return 1;
    }
  }
  for (const auto& [name, value] : flags) {
    if (value) {
      hotkv::Status st = config.set(name, *value, true);
      if (!st.is_ok()) {
        std::fprintf(stderr, "hotkv: bad value for --%s: %s\n", name.c_str(),
                     st.message().c_str());
        return 1;
      }
    }
  }

  std::string logfile = config.logfile();
  if (!logfile.empty()) {
    try {
      spdlog::set_default_logger(spdlog::basic_logger_mt("hotkv", logfile));
    } catch (const spdlog::spdlog_ex& e) {
      std::fprintf(stderr, "hotkv: cannot open logfile %s: %s\n", logfile.c_str(), e.what());
      return 1;
    }
  } else {
    spdlog::set_default_logger(spdlog::stderr_color_mt("hotkv"));
  }
  spdlog::set_pattern("%P:%t %d %b %Y %H:%M:%S.%e %^%l%$ %v");
  spdlog::flush_on(spdlog::level::info);
  spdlog::set_level(to_spdlog_level(config.loglevel()));
  config.set_loglevel_hook([](const std::string& l) { spdlog::set_level(to_spdlog_level(l)); });

  hotkv::Server server(config);
  std::string err = server.listen();
  if (!err.empty()) {
    std::fprintf(stderr, "hotkv: %s\n", err.c_str());
    return 1;
  }
  spdlog::info("HotKV {} starting: pid={} port={} tls-port={} bind={} threads={} config={}",
               HOTKV_VERSION, ::getpid(), server.port(), server.tls_port(), config.bind(),
               config.threads.load(), config_file.empty() ? "(none)" : config_file);
  if (server.port() != 0) {
    spdlog::info("Ready to accept connections tcp");
  }
  if (server.tls_port() != 0) {
    spdlog::info("Ready to accept connections tls");
  }
  return server.run();
}
