// Helpers shared by the inventory family (inventory.cpp: items, reserves, carts, audit;
// inventory_holds.cpp: commit, release, extend, hold inspection and the timing wheel's hold
// expiry). Every hold transition goes through one function here that mutates the item, logs
// the effect, schedules the next deadline and publishes the events, so a command and the
// timing wheel move stock in exactly the same way. Internal to src/commands.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "hotkv/commands/errors_inventory.hpp"
#include "hotkv/types/inventory.hpp"

namespace hotkv {

struct CommandContext;
class Engine;
class Shard;

// Looks up key for an inventory command (`read` counts a keyspace hit or miss). Replies
// WRONGTYPE and returns false if the key holds another type; otherwise `out` is the item, or
// nullptr if the key does not exist.
bool inventory_lookup_or_reply(CommandContext& ctx, std::string_view key, bool read,
                               Inventory*& out);
// As above, but a missing key is an error too ("ERR no such key").
bool existing_inventory_or_reply(CommandContext& ctx, std::string_view key, Inventory*& out);

// Parses argv[i] as a TTL in milliseconds: a positive integer whose deadline from now does
// not overflow. Replies "ERR invalid expire time in '<cmd>' command" otherwise.
bool ttl_arg_or_reply(CommandContext& ctx, size_t i, int64_t& ttl_ms);
// Parses argv[i] as a positive quantity; replies kNotInteger or kQtyPositive otherwise.
bool qty_arg_or_reply(CommandContext& ctx, size_t i, int64_t& qty);

// INV.RESERVE's arguments after the key (hold_id qty ttl_ms [OWNER id]), parsed without
// replying, so that another thread can check them before it answers for the item's shard.
// Returns the error reply's text, in the order the command checks (empty: valid).
struct ReserveArgs {
  int64_t qty = 0;
  int64_t ttl_ms = 0;
  std::string_view owner;  // empty: no OWNER
};
std::string_view parse_reserve_args(std::span<const std::string_view> argv, int64_t now_ms,
                                    ReserveArgs& out);

// The state a hold is in at ctx.now_ms: a held hold whose deadline passed is expired even if
// nobody processed it yet.
HoldState effective_state(const Hold& h, int64_t now_ms);

// The error replies naming what happened to a hold. `key` and `id` are clipped to 128 bytes.
std::string hold_exists_error(std::string_view key, std::string_view id, HoldState state);
std::string no_hold_error(std::string_view key, std::string_view id);
// -COMMITTED, -RELEASED or -EXPIRED for a settled hold.
std::string settled_error(std::string_view id, HoldState state);
std::string soldout_error(std::string_view key, int64_t available, int64_t qty);

// After the item's shard answered SOLDOUT for key: gives the item a SoldOutBeacon, if it has
// no live one, and posts it to every thread's SoldOutIndex, so that their clients' next
// refused reserves are answered where they are read (inventory_soldout.cpp). Only for an item
// without a deadline, on a single-shard execution of a server with several shards.
void offer_soldout_beacon(CommandContext& ctx, std::string_view key, Inventory& inv);

// Transitions with all their consequences: mutate the item, log the op effect, schedule the
// hold's next wheel entry (its deadline, or its purge), publish the keyspace notification
// (class d) and the EVENTS stream entry, plus sold-out / back-in-stock when crossed.
//
// A new live hold. REQUIRES inv.check_reserve(...) == kOk.
void reserve_hold(CommandContext& ctx, std::string_view key, Inventory& inv, std::string_view id,
                  int64_t qty, std::string_view owner, int64_t expires_at_ms);
// Ends a live hold (commit, release or expiry). The record is kept until now +
// inventory-hold-retention-ms. REQUIRES a live hold with this id, to != kHeld.
void settle_hold(CommandContext& ctx, std::string_view key, Inventory& inv, std::string_view id,
                 HoldState to);
// Moves a live hold's deadline to at_ms. REQUIRES a live hold with this id.
void extend_hold(CommandContext& ctx, std::string_view key, Inventory& inv, std::string_view id,
                 int64_t at_ms);
// If the hold under id is live and due, expires it now and returns true.
bool expire_if_due(CommandContext& ctx, std::string_view key, Inventory& inv, std::string_view id);
// Publishes an item-level event (inv.created, inv.restock) and the edge events.
void publish_item_event(CommandContext& ctx, std::string_view key, const Inventory& inv,
                        const char* event);
void publish_edges(CommandContext& ctx, std::string_view key, const Inventory& inv, uint8_t edges);

// The timing wheel's side (inventory_holds.cpp): fires up to max_items due hold entries of
// `shard` at now_ms -- expiring holds whose deadline passed, purging records whose retention
// ended, ignoring stale entries -- as one log record, written before returning. nullopt while
// the data set loads. Runs on the shard's thread (Shard::HoldExpiryHook).
std::optional<size_t> expire_due_holds(Engine& engine, Shard& shard, int64_t now_ms,
                                       size_t max_items);
// Installs expire_due_holds on every shard (an EngineInit registered by register_inventory).
void install_inventory_expiry(Engine& engine);

// Handlers defined in inventory_holds.cpp, registered by register_inventory.
void cmd_inv_commit(CommandContext& ctx);
void cmd_inv_release(CommandContext& ctx);
void cmd_inv_extend(CommandContext& ctx);
void cmd_inv_hold(CommandContext& ctx);
void cmd_inv_holds(CommandContext& ctx);

}  // namespace hotkv
