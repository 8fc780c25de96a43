// One registration function per command family; each family file ends in its own.
#pragma once

namespace hotkv {

class Table;

void register_server(Table& t);   // server administration: INFO, CONFIG, COMMAND, ...
void register_command(Table& t);  // COMMAND: the command table's own description
void register_latency(Table& t);  // LATENCY: the latency monitor and command histograms
void register_slowlog(Table& t);  // SLOWLOG: the slow log
void register_monitor(Table& t);  // MONITOR
void register_strings(Table& t);  // strings and counters
void register_keys(Table& t);     // generic key commands
void register_memory(Table& t);   // MEMORY: one key's usage and the server's memory figures
void register_modules(Table& t);  // MODULE: none can be loaded
void register_databases(Table& t);  // DBSIZE, FLUSHDB, FLUSHALL, SWAPDB, MOVE
void register_expire(Table& t);   // TTLs
void register_persistence(Table& t);  // BGREWRITEAOF, SAVE, BGSAVE, LASTSAVE
void register_replication(Table& t);  // REPLICAOF, SLAVEOF, ROLE, REPLCONF
void register_replication_sync(Table& t);  // SYNC, PSYNC, WAIT
void register_acl(Table& t);  // ACL: users, their permissions and ACL LOG
void register_connection(Table& t);  // HELLO, AUTH, CLIENT, SELECT, QUIT, RESET
void register_streams(Table& t);  // streams, consumer groups and XINFO
void register_pubsub(Table& t);      // SUBSCRIBE, PUBLISH, PUBSUB, ...
void register_ratelimit(Table& t);  // GCRA.LIMIT and CL.THROTTLE
void register_inventory(Table& t);  // INV.*: stock items, holds, carts and audit
void register_transactions(Table& t);  // MULTI, EXEC, DISCARD, WATCH, UNWATCH
void register_scripting(Table& t);  // EVAL, EVALSHA, SCRIPT
void register_functions(Table& t);  // FUNCTION, FCALL, FCALL_RO
void register_sets(Table& t);       // sets and set algebra
void register_hashes(Table& t);     // HSET, HGET, HSCAN, HRANDFIELD, ...
void register_zsets(Table& t);      // sorted sets
void register_geo(Table& t);        // GEOADD, GEOSEARCH, ... (sorted sets scored by geohash)
void register_lists(Table& t);      // lists, their moves and blocking pops
void register_bitmaps(Table& t);    // SETBIT, BITCOUNT, BITOP, BITFIELD, ... and LCS
void register_sort(Table& t);       // SORT, SORT_RO
void register_effect_apply(Table& t);  // HOTKV.EFFECT: effects a replica applies
void register_dump(Table& t);       // DUMP, RESTORE
void register_hyperloglog(Table& t);  // PFADD, PFCOUNT, PFMERGE, PFDEBUG, PFSELFTEST

}  // namespace hotkv
