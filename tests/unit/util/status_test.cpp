// Unit tests for Status and Result<T>: success carries nothing, a failure keeps its code and
// message, context is prefixed, and a Result holds exactly one of a value or a failure.
#include "hotkv/util/status.hpp"

#include <catch2/catch.hpp>
#include <memory>
#include <string>

using namespace hotkv;

namespace {
Result<int> parse_small(std::string_view s) {
  if (s.size() != 1 || s[0] < '0' || s[0] > '9') {
    return Status::invalid_argument("not a digit: " + std::string(s));
  }
  return s[0] - '0';
}
}  // namespace

TEST_CASE("A default Status is success and says OK", "[status]") {
  Status s;
  REQUIRE(s.is_ok());
  REQUIRE(s.code() == StatusCode::kOk);
  REQUIRE(s.message().empty());
  REQUIRE(s.to_string() == "OK");
  REQUIRE(Status::ok().is_ok());
}

TEST_CASE("A failed Status keeps its code and message", "[status]") {
  SECTION("each factory sets its own code") {
    REQUIRE(Status::invalid_argument("x").code() == StatusCode::kInvalidArgument);
    REQUIRE(Status::not_found("x").code() == StatusCode::kNotFound);
    REQUIRE(Status::conflict("x").code() == StatusCode::kConflict);
    REQUIRE(Status::refused("x").code() == StatusCode::kRefused);
    REQUIRE(Status::io_error("x").code() == StatusCode::kIoError);
    REQUIRE(Status::corruption("x").code() == StatusCode::kCorruption);
  }
  SECTION("the message and the printed form") {
    Status s = Status::corruption("bad line 3");
    REQUIRE_FALSE(s.is_ok());
    REQUIRE(s.message() == "bad line 3");
    REQUIRE(s.to_string() == "Corruption: bad line 3");
  }
  SECTION("context goes in front of the message, and ok stays ok") {
    Status s = Status::io_error("No such file").with_context("/tmp/x.conf");
    REQUIRE(s.code() == StatusCode::kIoError);
    REQUIRE(s.message() == "/tmp/x.conf: No such file");
    REQUIRE(Status::ok().with_context("anything").is_ok());
  }
  SECTION("code names are stable") {
    REQUIRE(status_code_name(StatusCode::kInvalidArgument) == "InvalidArgument");
    REQUIRE(status_code_name(StatusCode::kOk) == "OK");
  }
}

TEST_CASE("A Result holds a value or the failure", "[status]") {
  SECTION("a value") {
    Result<int> r = parse_small("7");
    REQUIRE(r.is_ok());
    REQUIRE(r.status().is_ok());
    REQUIRE(r.value() == 7);
    REQUIRE(r.value_or(-1) == 7);
  }
  SECTION("a failure") {
    Result<int> r = parse_small("x7");
    REQUIRE_FALSE(r.is_ok());
    REQUIRE(r.status().code() == StatusCode::kInvalidArgument);
    REQUIRE(r.status().message() == "not a digit: x7");
    REQUIRE(r.value_or(-1) == -1);
  }
  SECTION("a move-only value moves out") {
    Result<std::unique_ptr<int>> r = std::make_unique<int>(5);
    REQUIRE(r.is_ok());
    std::unique_ptr<int> p = std::move(r).value();
    REQUIRE(*p == 5);
  }
  SECTION("a string value is not mistaken for a message") {
    Result<std::string> r = std::string("hello");
    REQUIRE(r.is_ok());
    REQUIRE(r.value() == "hello");
  }
}
