// The formatters of the error catalogue (errors.hpp and errors_<family>.hpp): the texts that
// name a command, an argument or a reason, built in one place so their wording is Redis's.
#include "hotkv/commands/errors.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "hotkv/commands/errors_scripting.hpp"
#include "hotkv/commands/errors_server.hpp"
#include "hotkv/commands/errors_streams.hpp"
#include "hotkv/commands/errors_values.hpp"
#include "hotkv/commands/errors_inventory.hpp"
#include "hotkv/util/strings.hpp"

namespace hotkv::err {
namespace {

// "ERR <a><b><c>...", for the texts made of fixed parts and arguments.
template <typename... Parts>
std::string text(Parts&&... parts) {
  std::string out;
  (out.append(std::string_view(parts)), ...);
  return out;
}

}  // namespace

std::string_view clip(std::string_view s) { return s.substr(0, std::min(s.size(), kMaxQuoted)); }

std::string unknown_command(std::span<const std::string_view> argv) {
  std::string msg = text("ERR unknown command '", clip(argv[0]), "', with args beginning with: ");
  for (size_t i = 1; i < argv.size(); ++i) {
    msg.append("'").append(clip(argv[i])).append("' ");
  }
  return msg;
}

std::string wrong_arity(std::string_view command) {
  return text("ERR wrong number of arguments for '", ascii_lower(command), "' command");
}

std::string subcommand_arity(std::string_view command, std::string_view sub) {
  return text("ERR wrong number of arguments for '", ascii_lower(command), "|",
              ascii_lower(sub), "' command");
}

std::string unknown_subcommand(std::string_view command, std::string_view sub) {
  return text("ERR unknown subcommand '", clip(sub), "'. Try ", ascii_upper(command), " HELP.");
}

std::string subcommand_syntax(std::string_view command, std::string_view sub) {
  return text("ERR unknown subcommand or wrong number of arguments for '", clip(sub), "'. Try ",
              ascii_upper(command), " HELP.");
}

std::string invalid_expire(std::string_view command) {
  return text("ERR invalid expire time in '", ascii_lower(command), "' command");
}

std::string from_status(const Status& st) { return "ERR " + st.message(); }

// ---- server (errors_server.hpp)

std::string misconf_aof(int error_number) {
  return text("MISCONF Errors writing to the AOF file: ", std::strerror(error_number));
}

std::string subscribed_context(std::string_view command) {
  return text("ERR Can't execute '", ascii_lower(command),
              "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in "
              "this context");
}

std::string config_rewrite_failed(const Status& st) {
  if (st.code() == StatusCode::kRefused) {
    return text("ERR ", st.message());
  }
  return text("ERR Rewriting config file: ", st.message());
}

std::string unrecognized_replconf(std::string_view option) {
  return text("ERR Unrecognized REPLCONF option: ", option);
}

std::string hello_option(std::string_view option) {
  return text("ERR Syntax error in HELLO option '", option, "'");
}

std::string unknown_client_type(std::string_view type) {
  return text("ERR Unknown client type '", type, "'");
}

std::string no_such_user(std::string_view user) {
  return text("ERR No such user '", user, "'");
}

std::string client_attribute_chars(std::string_view attribute) {
  return text("ERR ", attribute, " cannot contain spaces, newlines or special characters.");
}

std::string unrecognized_option(std::string_view option) {
  return text("ERR Unrecognized option '", option, "'");
}

std::string config_set_unknown(std::string_view name) {
  return text("ERR Unknown option or number of arguments for CONFIG SET - '", name, "'");
}

std::string config_set_failed(std::string_view name, const Status& st) {
  return text("ERR CONFIG SET failed (possibly related to argument '", ascii_lower(name), "') - ",
              st.message());
}

std::string latency_no_samples(std::string_view event) {
  return text("ERR No samples available for event '", event, "'");
}

// ---- values (errors_values.hpp)

std::string unsupported_option(std::string_view option) {
  return text("ERR Unsupported option ", option);
}

std::string at_least_one_key(std::string_view command) {
  return text("ERR at least 1 input key is needed for '", ascii_lower(command), "' command");
}

std::string unknown_pfdebug(std::string_view sub) {
  return text("ERR Unknown PFDEBUG subcommand '", sub, "'");
}

std::string invalid_lon_lat(double lon, double lat) {
  char buf[128];
  std::snprintf(buf, sizeof(buf), "ERR invalid longitude,latitude pair %f,%f", lon, lat);
  return buf;
}

std::string geo_store_with_extras(bool geosearchstore) {
  return text("ERR ", geosearchstore ? "GEOSEARCHSTORE" : "STORE option in GEORADIUS",
              " is not compatible with WITHDIST, WITHHASH and WITHCOORD options");
}

std::string geo_one_origin(std::string_view command) {
  return text("ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for ", command);
}

std::string geo_one_shape(std::string_view command) {
  return text("ERR exactly one of BYRADIUS and BYBOX can be specified for ", command);
}

// ---- streams (errors_streams.hpp)

std::string nogroup_key_or_group(std::string_view key, std::string_view group) {
  return text("NOGROUP No such key '", key, "' or consumer group '", group, "'");
}

std::string nogroup_for_key(std::string_view group, std::string_view key) {
  return text("NOGROUP No such consumer group '", group, "' for key name '", key, "'");
}

std::string xread_unbalanced(bool group) {
  return text("ERR Unbalanced '", group ? "xreadgroup" : "xread",
              "' list of streams: for each stream key an ID or '", group ? ">" : "$",
              "' must be specified.");
}

std::string xclaim_option(std::string_view option) {
  return text("ERR Unrecognized XCLAIM option '", option, "'");
}

// ---- scripting (errors_scripting.hpp)

std::string function_option(std::string_view option) {
  return text("ERR Unknown option given: ", option);
}

std::string function_argument(std::string_view argument) {
  return text("ERR Unknown argument ", clip(argument));
}

std::string call_with_block(std::string_view command) {
  return text("ERR ", command.substr(0, 64),
              " command is not allowed with BLOCK option from scripts");
}

std::string compile_script(std::string_view message) {
  return text("ERR Error compiling script (new function): ", message);
}

std::string compile_function(std::string_view message) {
  return text("ERR Error compiling function: ", message);
}

std::string register_functions(std::string_view message) {
  return text("ERR Error registering functions: ", message);
}

std::string script_runtime(std::string_view message) { return text("ERR ", message); }

std::string shebang_engine(std::string_view engine) {
  return text("ERR Unexpected engine in script shebang: ", engine);
}

std::string shebang_option(std::string_view option) {
  return text("ERR Unknown lua shebang option: ", option);
}

std::string shebang_flag(std::string_view flag) {
  return text("ERR Unexpected flag in script shebang: ", flag);
}

std::string engine_not_found(std::string_view engine) {
  return text("ERR Engine '", engine, "' not found");
}

std::string metadata_value(std::string_view word) {
  return text("ERR Invalid metadata value given: ", word);
}

std::string library_exists(std::string_view name, bool quoted) {
  return quoted ? text("ERR Library '", name, "' already exists")
                : text("ERR Library ", name, " already exists");
}

std::string function_exists(std::string_view name) {
  return text("ERR Function ", name, " already exists");
}

std::string cannot_write(std::string_view file, int error_number) {
  return text("ERR cannot write ", file, ": ", std::strerror(error_number));
}

// ---- inventory and rate limits (errors_inventory.hpp)

std::string must_be_positive(std::string_view what) {
  return text("ERR ", what, " must be a positive integer");
}

std::string events_stream_slot(std::string_view events, std::string_view key) {
  return text("ERR the EVENTS stream '", clip(events), "' must be in the same hash slot as '",
              clip(key), "': give both the same {hash tag}");
}

std::string restock_below_settled(int64_t total, int64_t held_and_sold) {
  return text("ERR restock would leave total ", std::to_string(total), " below held + sold (",
              std::to_string(held_and_sold), ")");
}

std::string item_twice_in_cart(std::string_view key) {
  return text("ERR item '", clip(key), "' appears twice in the cart");
}

std::string hold_is_held(std::string_view id) {
  return text("ERR hold '", clip(id), "' is held");
}

std::string hold_committed(std::string_view id) {
  return text("COMMITTED hold '", clip(id), "' was already committed");
}

std::string hold_released(std::string_view id) {
  return text("RELEASED hold '", clip(id), "' was already released");
}

std::string hold_expired(std::string_view id) {
  return text("EXPIRED hold '", clip(id), "' expired before this call");
}

std::string soldout(std::string_view key, int64_t available, int64_t qty) {
  return text("SOLDOUT not enough stock for '", clip(key), "': ", std::to_string(available),
              " available, ", std::to_string(qty), " requested");
}

std::string hold_exists(std::string_view key, std::string_view id, std::string_view state) {
  return text("HOLDEXISTS hold '", clip(id), "' of '", clip(key), "' already exists (", state,
              ")");
}

std::string no_hold(std::string_view key, std::string_view id) {
  return text("NOHOLD no hold '", clip(id), "' for '", clip(key), "'");
}

std::string owner_limit(std::string_view key, std::string_view owner, int64_t held,
                        int64_t bought, int64_t qty, int64_t limit) {
  std::string has = "holds " + std::to_string(held);
  if (bought > 0) {
    has += " and bought " + std::to_string(bought);
  }
  return text("OWNERLIMIT owner '", clip(owner), "' ", has, " of '", clip(key),
              "' and asked for ", std::to_string(qty), " more; the limit is ",
              std::to_string(limit));
}

}  // namespace hotkv::err
