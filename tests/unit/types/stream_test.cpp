// Unit tests for Stream, the value behind the X* commands: id parsing and generation, entry
// nodes (append, get, range, erase, trimming) checked against a std::map model, consumer
// groups and their PEL bookkeeping, clone, the Redis 7 lag and entries_read rules, and the
// memory cost of a million small entries.
#include "hotkv/types/stream.hpp"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <catch2/catch.hpp>

using hotkv::AddIdSpec;
using hotkv::Consumer;
using hotkv::ConsumerGroup;
using hotkv::EncodingLimits;
using hotkv::parse_add_id;
using hotkv::parse_stream_id;
using hotkv::Stream;
using hotkv::StreamId;

namespace {

constexpr StreamId kMax = StreamId::max();

void add(Stream& s, StreamId id, std::initializer_list<std::string_view> fv) {
  s.append(id, std::span<const std::string_view>(fv.begin(), fv.size()));
}

// Entries 1-0, 2-0, ... n-0 with {"f": "<i>"}.
void fill(Stream& s, uint64_t n) {
  for (uint64_t i = 1; i <= n; ++i) {
    std::string v = std::to_string(i);
    add(s, {i, 0}, {"f", v});
  }
}

std::vector<StreamId> ids_of(const Stream& s, StreamId start, StreamId end, bool reverse,
                             size_t count = 0) {
  std::vector<StreamId> ids;
  size_t visited = s.range(start, end, reverse, count, [&](StreamId id, auto) {
    ids.push_back(id);
    return true;
  });
  REQUIRE(visited == ids.size());
  return ids;
}

std::vector<StreamId> seq_ids(uint64_t from, uint64_t to) {
  std::vector<StreamId> ids;
  for (uint64_t i = from; i <= to; ++i) {
    ids.push_back({i, 0});
  }
  return ids;
}

std::vector<std::string> strings_of(std::span<const std::string_view> views) {
  return {views.begin(), views.end()};
}

// What XREADGROUP ... > does to a group in Redis 7 (streamReplyWithRange): deliver up to
// `count` entries after last_delivered_id and advance entries_read.
void read_group(Stream& s, ConsumerGroup& g, size_t count) {
  StreamId start = g.last_delivered_id;
  if (!start.increment()) {
    return;
  }
  std::vector<StreamId> ids = ids_of(s, start, kMax, false, count);
  for (StreamId id : ids) {
    bool tombstones = s.length() != 0 && !s.max_deleted_id().is_zero() &&
                      g.last_delivered_id <= s.max_deleted_id();
    if (g.entries_read != ConsumerGroup::kEntriesReadUnknown && !tombstones) {
      ++g.entries_read;
    } else if (s.entries_added() != 0) {
      g.entries_read = s.estimate_entries_read(id);
    }
    g.last_delivered_id = id;
  }
}

}  // namespace

TEST_CASE("Stream ids order by ms then seq and print as ms-seq", "[stream]") {
  REQUIRE(StreamId{1, 5} < StreamId{2, 0});
  REQUIRE(StreamId{2, 0} < StreamId{2, 1});
  REQUIRE(StreamId{3, 3} == StreamId{3, 3});
  REQUIRE(StreamId::min().is_zero());
  REQUIRE_FALSE(StreamId{0, 1}.is_zero());
  REQUIRE(StreamId{1526919030474, 55}.to_string() == "1526919030474-55");
  REQUIRE(kMax.to_string() == "18446744073709551615-18446744073709551615");
  std::string out = "id:";
  StreamId{0, 0}.append_to(out);
  REQUIRE(out == "id:0-0");

  SECTION("increment carries into ms and stops at max") {
    StreamId id{7, UINT64_MAX};
    REQUIRE(id.increment());
    REQUIRE(id == StreamId{8, 0});
    StreamId last = kMax;
    REQUIRE_FALSE(last.increment());
    REQUIRE(last == kMax);
  }
  SECTION("decrement borrows from ms and stops at min") {
    StreamId id{8, 0};
    REQUIRE(id.decrement());
    REQUIRE(id == StreamId{7, UINT64_MAX});
    StreamId first = StreamId::min();
    REQUIRE_FALSE(first.decrement());
    REQUIRE(first == StreamId::min());
  }
}

TEST_CASE("Stream id parsing accepts digits only and rejects overflow", "[stream]") {
  StreamId id{99, 99};

  SECTION("ms-seq sets both parts") {
    REQUIRE(parse_stream_id("1526919030474-55", 0, false, id));
    REQUIRE(id == StreamId{1526919030474, 55});
    REQUIRE(parse_stream_id("007-010", 0, false, id));
    REQUIRE(id == StreamId{7, 10});
  }
  SECTION("ms alone takes the missing sequence") {
    REQUIRE(parse_stream_id("5", 0, false, id));
    REQUIRE(id == StreamId{5, 0});
    REQUIRE(parse_stream_id("5", UINT64_MAX, false, id));
    REQUIRE(id == StreamId{5, UINT64_MAX});
  }
  SECTION("the largest values parse and one more overflows") {
    REQUIRE(parse_stream_id("18446744073709551615-18446744073709551615", 0, false, id));
    REQUIRE(id == kMax);
    StreamId before = id;
    REQUIRE_FALSE(parse_stream_id("18446744073709551616-0", 0, false, id));
    REQUIRE_FALSE(parse_stream_id("0-18446744073709551616", 0, false, id));
    REQUIRE_FALSE(parse_stream_id("99999999999999999999999", 0, false, id));
    REQUIRE(id == before);
  }
  SECTION("minus and plus are special only when allowed") {
    REQUIRE_FALSE(parse_stream_id("-", 0, false, id));
    REQUIRE_FALSE(parse_stream_id("+", 0, false, id));
    REQUIRE(parse_stream_id("-", 0, true, id));
    REQUIRE(id == StreamId::min());
    REQUIRE(parse_stream_id("+", 0, true, id));
    REQUIRE(id == kMax);
  }
  SECTION("signs spaces empty parts and junk are rejected") {
    for (std::string_view bad : {"", "-1", "+1", "1--1", "1-+1", " 1", "1 ", "1- 2", "1-", "-1-1",
                                 "1-2-3", "1.5", "0x10", "a-1", "1-a", "*", "1-*", "--", "++"}) {
      INFO(bad);
      REQUIRE_FALSE(parse_stream_id(bad, 0, true, id));
    }
    REQUIRE(id == StreamId{99, 99});
  }
  SECTION("overlong text is rejected like Redis's 128-byte buffer") {
    REQUIRE(parse_stream_id(std::string(126, '0') + "1", 0, false, id));
    REQUIRE(id == StreamId{1, 0});
    REQUIRE_FALSE(parse_stream_id(std::string(127, '0') + "1", 0, false, id));
  }
}

TEST_CASE("XADD id parsing knows star and ms-star", "[stream]") {
  AddIdSpec spec;

  SECTION("star is a fully automatic id") {
    REQUIRE(parse_add_id("*", spec));
    REQUIRE(spec.kind == AddIdSpec::kAuto);
  }
  SECTION("ms-star fixes the ms and leaves the sequence automatic") {
    REQUIRE(parse_add_id("1526919030474-*", spec));
    REQUIRE(spec.kind == AddIdSpec::kAutoSeq);
    REQUIRE(spec.id.ms == 1526919030474);
    REQUIRE(parse_add_id("18446744073709551615-*", spec));
    REQUIRE(spec.id.ms == UINT64_MAX);
  }
  SECTION("explicit ids take seq 0 when it is missing") {
    REQUIRE(parse_add_id("12-7", spec));
    REQUIRE(spec.kind == AddIdSpec::kExplicit);
    REQUIRE(spec.id == StreamId{12, 7});
    REQUIRE(parse_add_id("12", spec));
    REQUIRE(spec.kind == AddIdSpec::kExplicit);
    REQUIRE(spec.id == StreamId{12, 0});
  }
  SECTION("malformed ids are rejected") {
    for (std::string_view bad : {"", "-", "+", "**", "*-1", "-*", "1-**", "1-*1", "x-*",
                                 "18446744073709551616-*", "1-2-*", " *", "+1-*"}) {
      INFO(bad);
      REQUIRE_FALSE(parse_add_id(bad, spec));
    }
  }
}

TEST_CASE("Auto ids follow the clock and never go backwards", "[stream]") {
  Stream s;
  StreamId id;

  SECTION("a fresh stream takes the clock with sequence 0") {
    REQUIRE(s.next_auto_id(1000, id));
    REQUIRE(id == StreamId{1000, 0});
    REQUIRE(s.next_auto_id(0, id));
    REQUIRE(id == StreamId{0, 1});
  }
  SECTION("a later clock restarts the sequence") {
    add(s, {1000, 5}, {"f", "v"});
    REQUIRE(s.next_auto_id(1001, id));
    REQUIRE(id == StreamId{1001, 0});
  }
  SECTION("the same ms or a clock gone backwards continues the last id") {
    add(s, {1000, 5}, {"f", "v"});
    REQUIRE(s.next_auto_id(1000, id));
    REQUIRE(id == StreamId{1000, 6});
    REQUIRE(s.next_auto_id(10, id));
    REQUIRE(id == StreamId{1000, 6});
  }
  SECTION("a full sequence moves to the next ms") {
    add(s, {1000, UINT64_MAX}, {"f", "v"});
    REQUIRE(s.next_auto_id(999, id));
    REQUIRE(id == StreamId{1001, 0});
  }
  SECTION("no id is left after max") {
    s.set_last_id(kMax);
    id = StreamId{1, 1};
    REQUIRE_FALSE(s.next_auto_id(UINT64_MAX, id));
    REQUIRE(id == StreamId{1, 1});
  }
}

TEST_CASE("Sequence-only auto ids continue or start the sequence", "[stream]") {
  Stream s;
  StreamId id;

  SECTION("an empty stream starts ms 0 at sequence 1") {
    REQUIRE(s.next_seq_id(0, id));
    REQUIRE(id == StreamId{0, 1});
    REQUIRE(s.next_seq_id(5, id));
    REQUIRE(id == StreamId{5, 0});
  }
  SECTION("the last ms continues its sequence and a later ms starts at 0") {
    add(s, {50, 3}, {"f", "v"});
    REQUIRE(s.next_seq_id(50, id));
    REQUIRE(id == StreamId{50, 4});
    REQUIRE(s.next_seq_id(51, id));
    REQUIRE(id == StreamId{51, 0});
  }
  SECTION("an earlier ms is refused") {
    add(s, {50, 3}, {"f", "v"});
    REQUIRE_FALSE(s.next_seq_id(49, id));
  }
  SECTION("a full sequence is refused") {
    add(s, {50, UINT64_MAX}, {"f", "v"});
    REQUIRE_FALSE(s.next_seq_id(50, id));
    s.set_last_id(kMax);
    REQUIRE_FALSE(s.next_seq_id(UINT64_MAX, id));
  }
}

TEST_CASE("Appended entries can be read back by id", "[stream]") {
  Stream s;
  REQUIRE(s.length() == 0);
  REQUIRE_FALSE(s.first_entry_id());
  REQUIRE_FALSE(s.last_entry_id());
  REQUIRE(s.node_count() == 0);

  std::string big(3000, 'x');
  std::string binary("a\0b\xff", 4);
  add(s, {1, 0}, {"name", "ada", "age", "36"});
  add(s, {1, 1}, {"name", "bob", "age", "41"});  // the master fields again
  add(s, {1, 2}, {"age", "7", "name", "cy"});    // same names, other order
  add(s, {5, 0}, {"name", "dee"});               // fewer fields
  add(s, {5, UINT64_MAX}, {"", ""});             // empty strings
  add(s, {UINT64_MAX - 1, 0}, {binary, big});    // far id, binary, large value
  add(s, {UINT64_MAX, UINT64_MAX}, {"name", "last", "age", "0"});

  REQUIRE(s.length() == 7);
  REQUIRE(s.entries_added() == 7);
  REQUIRE(s.last_id() == kMax);
  REQUIRE(s.first_entry_id() == StreamId{1, 0});
  REQUIRE(s.last_entry_id() == kMax);

  std::vector<std::string_view> out;
  REQUIRE(s.get({1, 0}, out));
  REQUIRE(strings_of(out) == std::vector<std::string>{"name", "ada", "age", "36"});
  REQUIRE(s.get({1, 1}, out));
  REQUIRE(strings_of(out) == std::vector<std::string>{"name", "bob", "age", "41"});
  REQUIRE(s.get({1, 2}, out));
  REQUIRE(strings_of(out) == std::vector<std::string>{"age", "7", "name", "cy"});
  REQUIRE(s.get({5, 0}, out));
  REQUIRE(strings_of(out) == std::vector<std::string>{"name", "dee"});
  REQUIRE(s.get({5, UINT64_MAX}, out));
  REQUIRE(strings_of(out) == std::vector<std::string>{"", ""});
  REQUIRE(s.get({UINT64_MAX - 1, 0}, out));
  REQUIRE(strings_of(out) == std::vector<std::string>{binary, big});
  REQUIRE(s.get(kMax, out));
  REQUIRE(strings_of(out) == std::vector<std::string>{"name", "last", "age", "0"});

  REQUIRE_FALSE(s.get({0, 0}, out));
  REQUIRE_FALSE(s.get({1, 3}, out));
  REQUIRE_FALSE(s.get({4, 0}, out));
  REQUIRE_FALSE(s.get({UINT64_MAX, 0}, out));
}

TEST_CASE("Nodes hold up to kNodeEntries entries and about 4 KB", "[stream]") {
  Stream s;

  SECTION("small entries fill nodes by count") {
    fill(s, 1000);
    REQUIRE(s.node_count() == 1000 / Stream::kNodeEntries);
    add(s, {1001, 0}, {"f", "v"});
    REQUIRE(s.node_count() == 1000 / Stream::kNodeEntries + 1);
  }
  SECTION("large entries open a node before it passes 4 KB") {
    std::string value(1500, 'v');
    for (uint64_t i = 1; i <= 10; ++i) {
      add(s, {i, 0}, {"f", value});
    }
    REQUIRE(s.node_count() == 5);  // two 1.5 KB entries fit in 4 KB but three do not
    std::string huge(100'000, 'h');
    add(s, {11, 0}, {"f", huge});
    add(s, {12, 0}, {"f", "small"});
    REQUIRE(s.node_count() == 7);  // the huge entry sits alone
    std::vector<std::string_view> out;
    REQUIRE(s.get({11, 0}, out));
    REQUIRE(out[1] == huge);
    REQUIRE(ids_of(s, {0, 0}, kMax, false) == seq_ids(1, 12));
  }
}

TEST_CASE("stream-node-max-entries and -bytes size the nodes, 0 meaning no limit", "[stream]") {
  Stream s;
  std::vector<std::string_view> fv = {"xitem", "v"};
  SECTION("ten entries a node, then the consecutive LIMIT trims of Redis's suite") {
    EncodingLimits ten;
    ten.stream_node_max_entries = 10;
    for (uint64_t i = 1; i <= 101; ++i) {
      s.append({i, 0}, fv, ten);
    }
    REQUIRE(s.node_count() == 11);
    // MAXLEN ~ 55 LIMIT 30: whole nodes only, and no more than 30 entries.
    REQUIRE(s.trim_maxlen(55, true, 30) == 30);
    REQUIRE(s.length() == 71);
    s.append({102, 0}, fv, ten);
    REQUIRE(s.trim_maxlen(55, true, 30) == 10);
    REQUIRE(s.length() == 62);
  }
  SECTION("a LIMIT below a node's entries trims nothing") {
    EncodingLimits two;
    two.stream_node_max_entries = 2;
    for (uint64_t i = 1; i <= 3; ++i) {
      s.append({i, 0}, fv, two);
    }
    REQUIRE(s.trim_maxlen(0, true, 1) == 0);
    REQUIRE(s.trim_maxlen(0, true, 2) == 2);
  }
  SECTION("no limits: one node until the counters' cap") {
    EncodingLimits none;
    none.stream_node_max_entries = 0;
    none.stream_node_max_bytes = 0;
    for (uint64_t i = 1; i <= 1000; ++i) {
      s.append({i, 0}, fv, none);
    }
    REQUIRE(s.node_count() == 1);
  }
}

TEST_CASE("Range walks entries forward and backward across nodes", "[stream]") {
  Stream s;
  fill(s, 1000);  // ten nodes

  SECTION("the whole stream in both directions") {
    REQUIRE(ids_of(s, StreamId::min(), kMax, false) == seq_ids(1, 1000));
    std::vector<StreamId> reversed = seq_ids(1, 1000);
    std::reverse(reversed.begin(), reversed.end());
    REQUIRE(ids_of(s, StreamId::min(), kMax, true) == reversed);
  }
  SECTION("bounds are inclusive and may fall between entries") {
    REQUIRE(ids_of(s, {95, 0}, {105, 0}, false) == seq_ids(95, 105));
    REQUIRE(ids_of(s, {94, 1}, {104, UINT64_MAX}, false) == seq_ids(95, 104));
    REQUIRE(ids_of(s, {100, 0}, {101, 0}, true) == std::vector<StreamId>{{101, 0}, {100, 0}});
    REQUIRE(ids_of(s, {100, 1}, {100, 5}, false).empty());
    REQUIRE(ids_of(s, {100, 1}, {100, 5}, true).empty());
  }
  SECTION("count stops the walk") {
    REQUIRE(ids_of(s, {98, 0}, kMax, false, 5) == seq_ids(98, 102));
    REQUIRE(ids_of(s, StreamId::min(), {103, 0}, true, 5) ==
            std::vector<StreamId>{{103, 0}, {102, 0}, {101, 0}, {100, 0}, {99, 0}});
    REQUIRE(ids_of(s, {999, 0}, kMax, false, 5) == seq_ids(999, 1000));
  }
  SECTION("the callback can stop the walk") {
    size_t visited = s.range(StreamId::min(), kMax, false, 0, [](StreamId id, auto) {
      return id < StreamId{150, 0};
    });
    REQUIRE(visited == 150);
  }
  SECTION("ranges outside the stream or inverted are empty") {
    REQUIRE(ids_of(s, {1001, 0}, kMax, false).empty());
    REQUIRE(ids_of(s, {1001, 0}, kMax, true).empty());
    REQUIRE(ids_of(s, StreamId::min(), {0, UINT64_MAX}, false).empty());
    REQUIRE(ids_of(s, StreamId::min(), {0, UINT64_MAX}, true).empty());
    REQUIRE(ids_of(s, {500, 0}, {400, 0}, false).empty());
    REQUIRE(ids_of(s, {500, 0}, {400, 0}, true).empty());
  }
  SECTION("fields come with each entry") {
    std::vector<std::string> values;
    s.range({199, 0}, {201, 0}, false, 0, [&](StreamId, std::span<const std::string_view> fv) {
      REQUIRE(fv.size() == 2);
      REQUIRE(fv[0] == "f");
      values.emplace_back(fv[1]);
      return true;
    });
    REQUIRE(values == std::vector<std::string>{"199", "200", "201"});
  }
  SECTION("a cursor seeks to the nearest live entry") {
    Stream::Cursor c = s.seek({250, 1}, false);
    REQUIRE(c.valid());
    REQUIRE(c.id() == StreamId{251, 0});
    REQUIRE(c.fields()[1] == "251");
    c.next();
    REQUIRE(c.id() == StreamId{252, 0});
    c = s.seek({250, 1}, true);
    REQUIRE(c.id() == StreamId{250, 0});
    c.next();
    REQUIRE(c.id() == StreamId{249, 0});
    REQUIRE(c.fields()[1] == "249");
    c = s.seek(StreamId::min(), true);
    REQUIRE_FALSE(c.valid());
    c = s.seek(kMax, false);
    REQUIRE_FALSE(c.valid());
    c.next();
    REQUIRE_FALSE(c.valid());
  }
}

TEST_CASE("Range skips deleted entries", "[stream]") {
  Stream s;
  fill(s, 300);
  for (uint64_t i = 96; i <= 105; ++i) {
    REQUIRE(s.erase({i, 0}));  // across the first node boundary
  }
  REQUIRE(s.erase({1, 0}));
  REQUIRE(s.erase({300, 0}));

  SECTION("forward") {
    std::vector<StreamId> want = seq_ids(90, 95);
    for (StreamId id : seq_ids(106, 110)) {
      want.push_back(id);
    }
    REQUIRE(ids_of(s, {90, 0}, {110, 0}, false) == want);
    REQUIRE(ids_of(s, {96, 0}, kMax, false, 1) == std::vector<StreamId>{{106, 0}});
    REQUIRE(ids_of(s, {96, 0}, {105, 0}, false).empty());
  }
  SECTION("reverse") {
    REQUIRE(ids_of(s, {90, 0}, {105, 0}, true, 2) == std::vector<StreamId>{{95, 0}, {94, 0}});
    REQUIRE(ids_of(s, StreamId::min(), kMax, true, 1) == std::vector<StreamId>{{299, 0}});
    REQUIRE(ids_of(s, StreamId::min(), {1, 0}, true).empty());
  }
  SECTION("first and last skip the deleted edges") {
    REQUIRE(s.first_entry_id() == StreamId{2, 0});
    REQUIRE(s.last_entry_id() == StreamId{299, 0});
    REQUIRE(s.length() == 288);
  }
}

TEST_CASE("Erase flags entries and frees nodes left empty", "[stream]") {
  Stream s;
  fill(s, 250);  // nodes of 100, 100 and 50
  REQUIRE(s.node_count() == 3);

  REQUIRE(s.erase({150, 0}));
  REQUIRE_FALSE(s.erase({150, 0}));
  REQUIRE_FALSE(s.erase({150, 1}));
  REQUIRE_FALSE(s.erase({999, 0}));
  REQUIRE_FALSE(s.erase({0, 5}));
  REQUIRE(s.length() == 249);
  REQUIRE(s.max_deleted_id() == StreamId{150, 0});
  std::vector<std::string_view> out;
  REQUIRE_FALSE(s.get({150, 0}, out));

  REQUIRE(s.erase({20, 0}));
  REQUIRE(s.max_deleted_id() == StreamId{150, 0});  // the largest XDEL-ed id stays

  for (uint64_t i = 101; i <= 200; ++i) {
    s.erase({i, 0});
  }
  REQUIRE(s.node_count() == 2);  // the middle node is gone
  REQUIRE(s.length() == 149);
  REQUIRE(s.max_deleted_id() == StreamId{200, 0});
  REQUIRE(ids_of(s, {99, 0}, {202, 0}, false) ==
          std::vector<StreamId>{{99, 0}, {100, 0}, {201, 0}, {202, 0}});
  REQUIRE(ids_of(s, {99, 0}, {202, 0}, true) ==
          std::vector<StreamId>{{202, 0}, {201, 0}, {100, 0}, {99, 0}});

  for (uint64_t i = 201; i <= 250; ++i) {
    s.erase({i, 0});
  }
  REQUIRE(s.node_count() == 1);
  REQUIRE(s.last_entry_id() == StreamId{100, 0});
  REQUIRE(s.last_id() == StreamId{250, 0});  // the last id never goes back
  add(s, {251, 0}, {"f", "251"});
  REQUIRE(s.last_entry_id() == StreamId{251, 0});
  REQUIRE(s.get({251, 0}, out));
  REQUIRE(out[1] == "251");

  for (uint64_t i = 1; i <= 251; ++i) {
    s.erase({i, 0});
  }
  REQUIRE(s.length() == 0);
  REQUIRE(s.node_count() == 0);
  REQUIRE_FALSE(s.first_entry_id());
  REQUIRE(s.entries_added() == 251);
}

TEST_CASE("Trimming by maxlen removes the oldest entries", "[stream]") {
  Stream s;
  fill(s, 1000);

  SECTION("exact trimming reaches the length inside a node") {
    REQUIRE(s.trim_maxlen(555, false, 0) == 445);
    REQUIRE(s.length() == 555);
    REQUIRE(s.first_entry_id() == StreamId{446, 0});
    REQUIRE(s.node_count() == 6);
    REQUIRE(ids_of(s, StreamId::min(), {450, 0}, false) == seq_ids(446, 450));
    REQUIRE(s.max_deleted_id().is_zero());
    REQUIRE(s.trim_maxlen(555, false, 0) == 0);
  }
  SECTION("exact trimming ignores the limit") {
    REQUIRE(s.trim_maxlen(555, false, 10) == 445);
    REQUIRE(s.length() == 555);
  }
  SECTION("approximate trimming removes whole nodes only") {
    REQUIRE(s.trim_maxlen(555, true, 0) == 400);
    REQUIRE(s.length() == 600);
    REQUIRE(s.first_entry_id() == StreamId{401, 0});
    REQUIRE(s.node_count() == 6);
    REQUIRE(s.trim_maxlen(555, true, 0) == 0);
    REQUIRE(s.trim_maxlen(500, true, 0) == 100);
  }
  SECTION("approximate trimming stops before passing the limit") {
    REQUIRE(s.trim_maxlen(0, true, 250) == 200);
    REQUIRE(s.length() == 800);
    REQUIRE(s.trim_maxlen(0, true, 99) == 0);
  }
  SECTION("live counts decide for nodes with deleted entries") {
    for (uint64_t i = 1; i <= 50; ++i) {
      s.erase({i, 0});
    }
    // The first node has 50 live entries; dropping it leaves 900 >= 900.
    REQUIRE(s.trim_maxlen(900, true, 0) == 50);
    REQUIRE(s.first_entry_id() == StreamId{101, 0});
    REQUIRE(s.max_deleted_id() == StreamId{50, 0});
  }
  SECTION("maxlen 0 empties the stream") {
    REQUIRE(s.trim_maxlen(0, false, 0) == 1000);
    REQUIRE(s.length() == 0);
    REQUIRE(s.node_count() == 0);
    REQUIRE(s.last_id() == StreamId{1000, 0});
    REQUIRE(s.entries_added() == 1000);
  }
}

TEST_CASE("Trimming by minid removes entries below the id", "[stream]") {
  Stream s;
  fill(s, 1000);

  SECTION("exact trimming stops at the first id not below minid") {
    REQUIRE(s.trim_minid({446, 0}, false, 0) == 445);
    REQUIRE(s.first_entry_id() == StreamId{446, 0});
    REQUIRE(s.trim_minid({445, 7}, false, 0) == 0);
    REQUIRE(s.trim_minid({446, 1}, false, 1) == 1);
    REQUIRE(s.first_entry_id() == StreamId{447, 0});
    REQUIRE(s.max_deleted_id().is_zero());
  }
  SECTION("approximate trimming removes whole nodes only") {
    REQUIRE(s.trim_minid({446, 0}, true, 0) == 400);
    REQUIRE(s.first_entry_id() == StreamId{401, 0});
    REQUIRE(s.trim_minid({501, 0}, true, 0) == 100);  // the node's last id 500 is below
    REQUIRE(s.trim_minid({600, 0}, true, 0) == 0);
  }
  SECTION("approximate trimming stops before passing the limit") {
    REQUIRE(s.trim_minid(kMax, true, 350) == 300);
    REQUIRE(s.length() == 700);
  }
  SECTION("a node whose deleted tail reaches minid is freed with its live entries") {
    for (uint64_t i = 51; i <= 100; ++i) {
      s.erase({i, 0});
    }
    REQUIRE(s.node_count() == 10);
    REQUIRE(s.trim_minid({60, 0}, false, 0) == 50);
    REQUIRE(s.node_count() == 9);
    REQUIRE(s.first_entry_id() == StreamId{101, 0});
  }
  SECTION("minid past the end empties the stream") {
    REQUIRE(s.trim_minid(kMax, false, 0) == 1000);
    REQUIRE(s.length() == 0);
    REQUIRE(s.node_count() == 0);
  }
}

TEST_CASE("Stream operations agree with a std::map model", "[stream]") {
  std::mt19937_64 rng(20240611);
  Stream s;
  std::map<StreamId, std::vector<std::string>> model;
  StreamId next{1, 0};
  auto pick = [&](uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n - 1)(rng); };
  // Half the time an id that is (or was) in the model, else anything up to just past the end.
  auto random_id = [&]() {
    if (!model.empty() && pick(2) == 0) {
      StreamId id = std::next(model.begin(), static_cast<long>(pick(model.size())))->first;
      return pick(4) == 0 ? StreamId{id.ms, id.seq + 1} : id;
    }
    return StreamId{pick(next.ms + 2), pick(4) == 0 ? pick(4) : 0};
  };

  for (int round = 0; round < 40; ++round) {
    for (int op = 0; op < 200; ++op) {
      uint64_t kind = pick(100);
      if (kind < 85) {
        std::vector<std::string> fv;
        uint64_t shape = pick(4);
        if (shape == 0) {
          fv = {"a", std::to_string(op), "b", std::string(pick(300), 'x')};
        } else if (shape == 1) {
          fv = {"b", "1", "a", ""};
        } else {
          fv = {"order", std::to_string(pick(1'000'000))};
        }
        std::vector<std::string_view> views(fv.begin(), fv.end());
        s.append(next, views);
        model[next] = fv;
        next = pick(3) == 0 ? StreamId{next.ms + pick(5000), pick(3)}
                            : StreamId{next.ms, next.seq + 1 + pick(2)};
        if (next <= s.last_id()) {
          next = s.last_id();
          next.increment();
        }
      } else if (kind < 99) {
        StreamId id = random_id();
        bool erased = s.erase(id);
        REQUIRE(erased == (model.erase(id) == 1));
      } else {
        size_t removed = 0;
        bool approx = pick(2) == 0;
        size_t limit = approx ? pick(300) : 0;
        // Trim rarely and a quarter at most, so the stream grows across dozens of nodes.
        if (pick(2) == 0) {
          removed = s.trim_maxlen(model.size() - pick(model.size() / 4 + 1), approx, limit);
        } else if (model.empty() || pick(8) == 0) {
          removed = s.trim_minid(random_id(), approx, limit);
        } else {
          auto it = std::next(model.begin(), static_cast<long>(pick(model.size() / 4 + 1)));
          StreamId minid = it == model.end() ? s.last_id() : it->first;
          removed = s.trim_minid(minid, approx, limit);
        }
        REQUIRE(removed <= model.size());
        model.erase(model.begin(), std::next(model.begin(), static_cast<long>(removed)));
      }
    }
    REQUIRE(s.length() == model.size());
    if (model.empty()) {
      REQUIRE_FALSE(s.first_entry_id());
      continue;
    }
    REQUIRE(s.first_entry_id() == model.begin()->first);
    REQUIRE(s.last_entry_id() == model.rbegin()->first);

    std::vector<StreamId> want;
    for (const auto& [id, fv] : model) {
      want.push_back(id);
    }
    REQUIRE(ids_of(s, StreamId::min(), kMax, false) == want);
    std::vector<StreamId> reversed(want.rbegin(), want.rend());
    REQUIRE(ids_of(s, StreamId::min(), kMax, true) == reversed);

    for (int probe = 0; probe < 50; ++probe) {
      StreamId a = random_id();
      StreamId b = random_id();
      if (b < a) {
        std::swap(a, b);
      }
      size_t count = pick(4) == 0 ? 0 : pick(20) + 1;
      bool reverse = pick(2) == 0;
      std::vector<StreamId> expected;
      if (reverse) {
        for (auto it = model.upper_bound(b); it != model.begin();) {
          --it;
          if (it->first < a || (count != 0 && expected.size() == count)) {
            break;
          }
          expected.push_back(it->first);
        }
      } else {
        for (auto it = model.lower_bound(a); it != model.end() && it->first <= b; ++it) {
          if (count != 0 && expected.size() == count) {
            break;
          }
          expected.push_back(it->first);
        }
      }
      REQUIRE(ids_of(s, a, b, reverse, count) == expected);

      std::vector<std::string_view> out;
      auto it = model.find(a);
      REQUIRE(s.get(a, out) == (it != model.end()));
      if (it != model.end()) {
        REQUIRE(strings_of(out) == it->second);
      }
    }
  }
}

TEST_CASE("Consumer groups are created once and kept in name order", "[stream]") {
  Stream s;
  ConsumerGroup* g = s.create_group("beta", {5, 0}, 3);
  REQUIRE(g != nullptr);
  REQUIRE(g->last_delivered_id == StreamId{5, 0});
  REQUIRE(g->entries_read == 3);
  REQUIRE(s.create_group("beta", {0, 0}, -1) == nullptr);
  REQUIRE(s.find_group("beta") == g);
  REQUIRE(s.create_group("alpha", {0, 0}, ConsumerGroup::kEntriesReadUnknown) != nullptr);
  REQUIRE(s.create_group("gamma", {0, 0}, 0) != nullptr);
  REQUIRE(s.find_group("delta") == nullptr);

  std::vector<std::string> names;
  for (const auto& [name, group] : s.groups()) {
    names.push_back(name);
  }
  REQUIRE(names == std::vector<std::string>{"alpha", "beta", "gamma"});

  REQUIRE(s.destroy_group("beta"));
  REQUIRE_FALSE(s.destroy_group("beta"));
  REQUIRE(s.find_group("beta") == nullptr);
  REQUIRE(s.groups().size() == 2);
  REQUIRE(s.create_group("beta", {0, 0}, 0) != nullptr);
}

TEST_CASE("Pending entries stay in sync between the group and its consumers", "[stream]") {
  Stream s;
  ConsumerGroup& g = *s.create_group("g", {0, 0}, 0);
  bool created = false;
  Consumer& alice = g.get_or_create_consumer("alice", 100, &created);
  REQUIRE(created);
  REQUIRE(alice.name == "alice");
  REQUIRE(alice.seen_time_ms == 100);
  REQUIRE(alice.active_time_ms == -1);
  REQUIRE(&g.get_or_create_consumer("alice", 200, &created) == &alice);
  REQUIRE_FALSE(created);
  REQUIRE(alice.seen_time_ms == 100);
  Consumer& bob = g.get_or_create_consumer("bob", 300);
  REQUIRE(g.find_consumer("bob") == &bob);
  REQUIRE(g.find_consumer("carol") == nullptr);

  g.set_pending({1, 0}, alice, 1000, 1);
  g.set_pending({2, 0}, alice, 1000, 1);
  g.set_pending({3, 0}, bob, 1000, 1);
  REQUIRE(g.pel.size() == 3);
  REQUIRE(alice.pending.size() == 2);
  REQUIRE(alice.pending.at({1, 0}) == &g.pel.at({1, 0}));

  SECTION("set_pending moves an entry to its new consumer") {
    auto& entry = g.set_pending({1, 0}, bob, 2000, 2);
    REQUIRE(&entry == &g.pel.at({1, 0}));
    REQUIRE(entry.consumer == &bob);
    REQUIRE(entry.delivery_time_ms == 2000);
    REQUIRE(entry.delivery_count == 2);
    REQUIRE(g.pel.size() == 3);
    REQUIRE(alice.pending.count({1, 0}) == 0);
    REQUIRE(bob.pending.at({1, 0}) == &entry);
    REQUIRE(bob.pending.size() == 2);

    g.set_pending({1, 0}, bob, 3000, 3);
    REQUIRE(bob.pending.size() == 2);
    REQUIRE(g.pel.at({1, 0}).delivery_count == 3);
  }
  SECTION("ack removes an entry from the group and its consumer") {
    REQUIRE(g.ack({2, 0}));
    REQUIRE_FALSE(g.ack({2, 0}));
    REQUIRE_FALSE(g.ack({9, 0}));
    REQUIRE(g.pel.size() == 2);
    REQUIRE(alice.pending.size() == 1);
    REQUIRE(alice.pending.count({2, 0}) == 0);
  }
  SECTION("delete_consumer drops its pending entries") {
    REQUIRE(g.delete_consumer("alice") == 2);
    REQUIRE(g.delete_consumer("alice") == -1);
    REQUIRE(g.find_consumer("alice") == nullptr);
    REQUIRE(g.pel.size() == 1);
    REQUIRE(g.pel.count({3, 0}) == 1);
    REQUIRE(g.delete_consumer("bob") == 1);
    REQUIRE(g.pel.empty());
    REQUIRE(g.consumers.empty());
  }
}

TEST_CASE("Clone makes an independent deep copy", "[stream]") {
  Stream s;
  fill(s, 150);
  s.erase({10, 0});
  ConsumerGroup& g = *s.create_group("g", {3, 0}, 3);
  Consumer& alice = g.get_or_create_consumer("alice", 5);
  alice.active_time_ms = 7;
  Consumer& bob = g.get_or_create_consumer("bob", 6);
  g.set_pending({1, 0}, alice, 100, 1);
  g.set_pending({2, 0}, bob, 200, 4);
  g.set_pending({3, 0}, alice, 300, 2);

  std::unique_ptr<Stream> copy = s.clone();
  REQUIRE(copy->length() == 149);
  REQUIRE(copy->last_id() == s.last_id());
  REQUIRE(copy->max_deleted_id() == StreamId{10, 0});
  REQUIRE(copy->entries_added() == 150);
  REQUIRE(copy->node_count() == s.node_count());
  REQUIRE(ids_of(*copy, StreamId::min(), kMax, false) == ids_of(s, StreamId::min(), kMax, false));

  ConsumerGroup* cg = copy->find_group("g");
  REQUIRE(cg != nullptr);
  REQUIRE(cg != &g);
  REQUIRE(cg->last_delivered_id == StreamId{3, 0});
  REQUIRE(cg->entries_read == 3);
  Consumer* calice = cg->find_consumer("alice");
  Consumer* cbob = cg->find_consumer("bob");
  REQUIRE(calice != nullptr);
  REQUIRE(calice != &alice);
  REQUIRE(calice->seen_time_ms == 5);
  REQUIRE(calice->active_time_ms == 7);
  REQUIRE(cg->pel.size() == 3);
  REQUIRE(cg->pel.at({1, 0}).consumer == calice);
  REQUIRE(cg->pel.at({2, 0}).consumer == cbob);
  REQUIRE(cg->pel.at({2, 0}).delivery_count == 4);
  REQUIRE(cg->pel.at({3, 0}).delivery_time_ms == 300);
  REQUIRE(calice->pending.size() == 2);
  REQUIRE(calice->pending.at({3, 0}) == &cg->pel.at({3, 0}));
  REQUIRE(cbob->pending.at({2, 0}) == &cg->pel.at({2, 0}));

  SECTION("changing the copy leaves the original alone") {
    add(*copy, {151, 0}, {"f", "new"});
    copy->erase({1, 0});
    copy->trim_maxlen(10, false, 0);
    cg->ack({1, 0});
    cg->set_pending({3, 0}, *cbob, 400, 3);
    cg->delete_consumer("alice");
    REQUIRE(s.length() == 149);
    REQUIRE(s.last_id() == StreamId{150, 0});
    std::vector<std::string_view> out;
    REQUIRE(s.get({1, 0}, out));
    REQUIRE(out[1] == "1");
    REQUIRE(g.pel.size() == 3);
    REQUIRE(alice.pending.size() == 2);
    REQUIRE(g.pel.at({3, 0}).consumer == &alice);
  }
  SECTION("destroying the original leaves the copy whole") {
    s = Stream();
    REQUIRE(s.length() == 0);
    std::vector<std::string_view> out;
    REQUIRE(copy->get({150, 0}, out));
    REQUIRE(out[1] == "150");
    REQUIRE(cg->pel.at({1, 0}).consumer->name == "alice");
  }
}

TEST_CASE("Moving a stream carries its entries and groups", "[stream]") {
  Stream s;
  fill(s, 120);
  s.create_group("g", {0, 0}, 0);
  Stream moved(std::move(s));
  REQUIRE(moved.length() == 120);
  REQUIRE(moved.find_group("g") != nullptr);
  Stream assigned;
  assigned = std::move(moved);
  REQUIRE(assigned.length() == 120);
  REQUIRE(ids_of(assigned, {119, 0}, kMax, false) == seq_ids(119, 120));
}

TEST_CASE("Entries read estimates follow Redis 7", "[stream]") {
  Stream s;

  SECTION("a stream that never had entries counts 0") {
    REQUIRE(s.estimate_entries_read({5, 0}) == 0);
  }
  SECTION("an emptied stream counts everything up to its last id") {
    fill(s, 3);
    s.trim_maxlen(0, false, 0);
    REQUIRE(s.estimate_entries_read({0, 0}) == 3);
    REQUIRE(s.estimate_entries_read({3, 0}) == 3);
    REQUIRE(s.estimate_entries_read({4, 0}) == -1);
  }
  SECTION("without tombstones the first and last ids and anything before are known") {
    fill(s, 10);
    s.trim_maxlen(6, false, 0);  // entries 5..10 of 10 added
    REQUIRE(s.estimate_entries_read({10, 0}) == 10);
    REQUIRE(s.estimate_entries_read({5, 0}) == 5);
    REQUIRE(s.estimate_entries_read({4, 0}) == 4);
    REQUIRE(s.estimate_entries_read({0, 0}) == 4);
    REQUIRE(s.estimate_entries_read({7, 0}) == -1);   // inside: unknown
    REQUIRE(s.estimate_entries_read({11, 0}) == -1);  // future: unknown
  }
  SECTION("a tombstone after the id makes it unknown") {
    fill(s, 10);
    s.erase({7, 0});
    REQUIRE(s.estimate_entries_read({1, 0}) == -1);
    REQUIRE(s.estimate_entries_read({6, 0}) == -1);
    REQUIRE(s.estimate_entries_read({0, 0}) == -1);  // 0-0 skips the check but is inside
    REQUIRE(s.estimate_entries_read({10, 0}) == 10);
    REQUIRE(s.estimate_entries_read({8, 0}) == -1);
  }
  SECTION("tombstones behind the first entry do not matter") {
    fill(s, 10);
    s.erase({2, 0});
    s.trim_minid({5, 0}, false, 0);
    REQUIRE(s.max_deleted_id() == StreamId{2, 0});
    REQUIRE(s.estimate_entries_read({5, 0}) == 5);
    REQUIRE(s.estimate_entries_read({3, 0}) == 4);
    REQUIRE(s.estimate_entries_read({0, 0}) == 4);
  }
}

TEST_CASE("Lag follows Redis 7 with tombstones and trimming", "[stream]") {
  Stream s;

  SECTION("empty streams lag 0") {
    ConsumerGroup& g = *s.create_group("g1", {0, 0}, ConsumerGroup::kEntriesReadUnknown);
    REQUIRE(s.lag(g) == 0);
    add(s, {1, 0}, {"data", "a"});
    s.erase({1, 0});
    REQUIRE(s.max_deleted_id() == StreamId{1, 0});
    REQUIRE(s.lag(g) == 0);
  }
  SECTION("reads count down the lag and new entries add to it") {
    fill(s, 5);
    ConsumerGroup& g = *s.create_group("g1", {0, 0}, ConsumerGroup::kEntriesReadUnknown);
    REQUIRE(s.lag(g) == 5);
    read_group(s, g, 1);
    REQUIRE(g.entries_read == 1);
    REQUIRE(s.lag(g) == 4);
    read_group(s, g, 10);
    REQUIRE(g.entries_read == 5);
    REQUIRE(s.lag(g) == 0);
    add(s, {6, 0}, {"f", "6"});
    REQUIRE(g.entries_read == 5);
    REQUIRE(s.lag(g) == 1);
  }
  SECTION("XDEL makes the lag unknown until the group passes the tombstone") {
    fill(s, 5);
    s.erase({3, 0});
    ConsumerGroup& g1 = *s.create_group("g1", {0, 0}, ConsumerGroup::kEntriesReadUnknown);
    ConsumerGroup& g2 = *s.create_group("g2", {0, 0}, ConsumerGroup::kEntriesReadUnknown);
    REQUIRE(s.lag(g1) == -1);
    for (int i = 0; i < 3; ++i) {
      read_group(s, g1, 1);
      REQUIRE(g1.entries_read == -1);
      REQUIRE(s.lag(g1) == -1);
    }
    read_group(s, g1, 1);
    REQUIRE(g1.last_delivered_id == StreamId{5, 0});
    REQUIRE(g1.entries_read == 5);
    REQUIRE(s.lag(g1) == 0);
    add(s, {6, 0}, {"f", "6"});
    REQUIRE(s.lag(g1) == 1);

    s.trim_minid({3, 0}, false, 0);
    REQUIRE(s.lag(g1) == 1);
    REQUIRE(g2.entries_read == -1);
    REQUIRE(s.lag(g2) == 3);  // the group and the tombstone are both behind the first entry
    s.trim_minid({5, 0}, false, 0);
    REQUIRE(s.lag(g1) == 1);
    REQUIRE(s.lag(g2) == 2);
  }
  SECTION("a tombstone after the group's last id invalidates its counter") {
    ConsumerGroup& g = *s.create_group("g1", {0, 0}, ConsumerGroup::kEntriesReadUnknown);
    add(s, {1, 0}, {"data", "a"});
    read_group(s, g, 0);
    REQUIRE(g.entries_read == 1);
    add(s, {2, 0}, {"data", "c"});
    add(s, {3, 0}, {"data", "d"});
    s.erase({2, 0});
    REQUIRE(s.lag(g) == -1);  // 2-0 lies after last id 1-0 but before the first entry
    s.erase({1, 0});
    REQUIRE(g.entries_read == 1);
    REQUIRE(s.lag(g) == 1);  // now the group and the tombstone are behind the first entry
    read_group(s, g, 0);
    REQUIRE(g.entries_read == 3);
    REQUIRE(s.lag(g) == 0);
  }
  SECTION("trimming does not record tombstones") {
    ConsumerGroup& g = *s.create_group("g1", {0, 0}, ConsumerGroup::kEntriesReadUnknown);
    fill(s, 5);
    read_group(s, g, 1);
    REQUIRE(g.entries_read == 1);
    REQUIRE(s.lag(g) == 4);
    s.trim_maxlen(1, false, 0);
    REQUIRE(s.max_deleted_id().is_zero());
    REQUIRE(s.lag(g) == 1);
    s.trim_maxlen(0, false, 0);
    REQUIRE(s.lag(g) == 0);
  }
  SECTION("a known counter with no tombstone ahead is used as is") {
    fill(s, 10);
    ConsumerGroup& g = *s.create_group("g1", {4, 0}, 4);
    REQUIRE(s.lag(g) == 6);
    s.erase({2, 0});
    REQUIRE(s.lag(g) == 6);  // the tombstone is behind the group
    s.erase({6, 0});
    REQUIRE(s.lag(g) == -1);  // ahead of the group, inside the stream: unknown
  }
}

TEST_CASE("A million small entries cost a few bytes each", "[stream]") {
  Stream s;
  constexpr uint64_t kEntries = 1'000'000;
  const uint64_t base_ms = 1'700'000'000'000;
  char value[7] = {};
  bool ids_ok = true;
  for (uint64_t i = 0; i < kEntries; ++i) {
    uint64_t order = 100'000 + (i * 7919) % 900'000;
    for (int d = 5; d >= 0; --d) {
      value[d] = static_cast<char>('0' + order % 10);
      order /= 10;
    }
    StreamId id;
    ids_ok = ids_ok && s.next_auto_id(base_ms + i / 3, id);  // a few entries per millisecond
    std::string_view fv[2] = {"order", std::string_view(value, 6)};
    s.append(id, fv);
  }
  REQUIRE(ids_ok);
  REQUIRE(s.length() == kEntries);
  REQUIRE(s.node_count() == kEntries / Stream::kNodeEntries);
  double per_entry = static_cast<double>(s.memory_bytes()) / static_cast<double>(s.length());
  INFO("bytes per entry: " << per_entry);
  REQUIRE(per_entry < 16.0);
  std::vector<std::string_view> out;
  REQUIRE(s.get({base_ms + 333'333, 0}, out));
  REQUIRE(out[0] == "order");
  REQUIRE(out[1].size() == 6);
}
