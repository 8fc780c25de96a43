// Replays an encoded append-only log into a TestServer as start-up would: every effect is
// applied to the shard owning its key. For the effect-logging tests of each value type.
#pragma once

#include <string>

#include "support/test_server.hpp"

namespace hotkv::test {

// REQUIREs that every record decodes and every op applies.
void replay(const std::string& log, TestServer& dst);

}  // namespace hotkv::test
