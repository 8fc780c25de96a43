#include "hotkv/shard/replication_feed.hpp"

#include <spdlog/spdlog.h>

#include "hotkv/shard/replication.hpp"

namespace hotkv {

ReplicationFeed::ReplicationFeed(Replication& replication, size_t shards)
    : repl_(replication), carry_(shards), blocked_on_(shards, 0), queued_(shards) {}

void ReplicationFeed::on_records(size_t shard, std::string_view records) {
  // Decoding allocates and is the larger part of the work: it happens before the lock. Only
  // the thread flushing this shard touches its carry (the shard's, or a coordinator while the
  // shard is parked).
  std::string& carry = carry_[shard];
  std::string joined;
  std::string_view data = records;
  if (!carry.empty()) {
    joined = std::move(carry);
    joined.append(records);
    carry.clear();
    data = joined;
  }
  std::vector<Record> decoded;
  RecordDecoder decoder(data);
  for (;;) {
    Record r;
    DecodeStatus st = decoder.next(r);
    if (st == DecodeStatus::kOk) {
      decoded.push_back(std::move(r));
      continue;
    }
    if (st == DecodeStatus::kTorn) {
      carry.assign(data.substr(decoder.offset()));
    } else if (st == DecodeStatus::kCorrupt) {
      spdlog::error("replication feed: shard {} wrote a record that does not decode: {}", shard,
                    decoder.error());
    }
    break;
  }
  if (decoded.empty()) {
    return;
  }
  std::lock_guard lock(mu_);
  for (Record& r : decoded) {
    if (blocked_on_[shard] != 0) {
      queued_[shard].push_back(std::move(r));
    } else {
      take(shard, std::move(r));
    }
  }
  if (!out_.empty()) {
    data_end_ = repl_.feed(out_);
    out_.clear();
  }
}

void ReplicationFeed::take(size_t shard, Record&& r) {
  if (r.parts <= 1 || r.txn_id == 0) {
    const Record* one[] = {&r};
    emit(one);
    return;
  }
  uint64_t txn = r.txn_id;
  Pending& p = waiting_[txn];
  p.parts = r.parts;
  p.records.push_back(std::move(r));
  p.shards.push_back(shard);
  if (p.records.size() < p.parts) {
    blocked_on_[shard] = txn;
    return;
  }
  Pending done = std::move(p);
  waiting_.erase(txn);
  std::vector<const Record*> parts;
  for (const Record& part : done.records) {
    parts.push_back(&part);
  }
  emit(parts);
  // The shards that waited for this operation go on with what they queued behind it.
  for (size_t s : done.shards) {
    if (blocked_on_[s] != txn) {
      continue;
    }
    blocked_on_[s] = 0;
    while (!queued_[s].empty() && blocked_on_[s] == 0) {
      Record next = std::move(queued_[s].front());
      queued_[s].pop_front();
      take(s, std::move(next));
    }
  }
}

void ReplicationFeed::emit(std::span<const Record* const> parts) {
  std::string error;
  if (!operation_to_resp(parts, state_, out_, error)) {
    if (dropped_++ == 0) {
      spdlog::error("replication feed: an effect has no command form, left out: {}", error);
    }
  }
}

void ReplicationFeed::feed_command(const CommandArgv& argv) {
  std::lock_guard lock(mu_);
  std::string resp;
  append_resp_command(argv, resp);
  repl_.feed(resp);
}

void ReplicationFeed::ping_if_due(int64_t now_ms, int64_t period_s) {
  if (repl_.is_replica() || repl_.channels() == 0) {
    return;  // a replica's replicas get its master's PINGs
  }
  std::lock_guard lock(mu_);
  if (now_ms - last_ping_ms_ < period_s * 1000) {
    return;
  }
  last_ping_ms_ = now_ms;
  std::string resp;
  append_resp_command({"PING"}, resp);
  repl_.feed(resp);
}

void ReplicationFeed::request_acks() {
  std::lock_guard lock(mu_);
  if (repl_.offset() == getack_at_) {
    return;  // the last GETACK is still the stream's end: its answers will do
  }
  std::string resp;
  append_resp_command({"REPLCONF", "GETACK", "*"}, resp);
  getack_at_ = repl_.feed(resp);
}

void ReplicationFeed::restart_database_tracking() {
  std::lock_guard lock(mu_);
  state_.db = -1;
}

uint64_t ReplicationFeed::data_end() const {
  std::lock_guard lock(mu_);
  // Bytes a replica's link passed on (on a replica) are all data.
  return repl_.is_replica() ? repl_.offset() : data_end_;
}

uint64_t ReplicationFeed::dropped() const {
  std::lock_guard lock(mu_);
  return dropped_;
}

}  // namespace hotkv
