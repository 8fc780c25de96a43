// How every coroutine of the server awaits an asio operation: as a tuple of the error code and
// the result instead of an exception, since a closed socket or a cancelled timer is the normal
// end of a wait, not an error (asio 1.22 keeps as_tuple in asio::experimental).
#pragma once

#include <asio/experimental/as_tuple.hpp>
#include <asio/use_awaitable.hpp>

namespace hotkv {

inline constexpr auto kTuple = asio::experimental::as_tuple(asio::use_awaitable);

}  // namespace hotkv
