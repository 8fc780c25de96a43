// An inventory item's body in HotKV's private DUMP object type (kRdbTypeInventory), after the
// type byte value_dump.cpp writes and reads. redis-server knows no such type and refuses the
// payload with "Bad data format"; between HotKV servers it carries the whole item: total and
// sold counts, the sold-out state, the limits (MAXPEROWNER, MAXHOLD, the events stream and
// its size), every hold record (live ones with their absolute deadline, settled ones with how
// and when they ended and when they are purged) and the units each owner bought.
//
// Layout: a format version (1), total, sold, sold-out flag, max per owner, max hold ms,
// events key, max events, the hold records (id, owner, qty, created, expires, state,
// settled, purge; times as 8-byte signed ms) and the owners' bought units.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "hotkv/persist/rdb_format.hpp"
#include "hotkv/types/inventory.hpp"

namespace hotkv {

// The object type byte: outside every range Redis uses (object types 0-25, opcodes 243-255).
inline constexpr uint8_t kRdbTypeInventory = 200;

void append_inventory_body(std::string& out, const Inventory& inv);

// nullptr when the bytes are short or the item they describe breaks an invariant (negative
// or inconsistent counters, live holds taking more than is available, a repeated hold id, an
// unknown state or version).
std::unique_ptr<Inventory> read_inventory_body(RdbReader& in);

}  // namespace hotkv
