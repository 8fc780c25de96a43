// Sold-out answers on every thread. In a flash sale nearly every request after the first
// seconds is a reserve of an item that has none left; the item lives on one shard, and a
// client read by another thread would pay a round trip to that shard for each SOLDOUT. Once
// the item's shard has answered SOLDOUT, it gives the item a SoldOutBeacon and posts it to
// every thread, and from then on each thread refuses such reserves itself, exactly when the
// item's shard would have (types/soldout_beacon.hpp says why that is exact). Anything the
// beacon cannot prove (stock came back, the hold id or the owner may exist, arguments the
// command would reject) goes to the item's shard as before.
#pragma once

#include <span>
#include <string_view>

#include "hotkv/resp/writer.hpp"

namespace hotkv {

class Engine;
class Shard;
struct CommandSpec;

// On the client's thread, for a command routed to another shard: if it is an INV.RESERVE that
// the beacon proves would be refused with SOLDOUT, writes that reply, counts it as the command
// (commandstats, INFO's inv_rejected_soldout and inv_soldout_answered_here) and returns true.
// Otherwise changes nothing and returns false.
bool answer_soldout_here(const CommandSpec& spec, std::span<const std::string_view> argv,
                         Engine& engine, Shard& here, ReplyWriter& reply);

// After a write command that is not an inventory command ran on its keys' shard (or with it
// parked): a key with a beacon may now hold something else, or a deadline, so its beacon dies
// and every thread forgets it. Inventory commands keep their item's beacon current instead.
void forget_soldout_beacons(const CommandSpec& spec, std::span<const std::string_view> argv,
                            Engine& engine, Shard& shard, bool multi_shard);
// The same for one key of `home` (a key a script's undo put back as it was).
void forget_soldout_beacon(Engine& engine, Shard& home, std::string_view key);

}  // namespace hotkv
