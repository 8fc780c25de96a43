// COMMAND DOCS's argument trees, derived from the syntax strings of the command table (there is
// no second description of a command's arguments). The syntax grammar, as the table writes it:
//
//   UPPER        a token typed as is (NX, WITHSCORES, =, *)
//   lower        an argument (key, count, unix-time-seconds)
//   [ ... ]      optional; ( ... ) groups without making optional
//   a|b          tight '|' (no spaces): one of the items it joins (NX|XX, M|KM|FT|MI)
//   a b | c d    spaced '|': the group's alternatives are whole sequences (EX seconds | KEEPTTL)
//   [x ...]      a group ending in "..." repeats; "key [key ...]" is one repeated key
//
// Inside a group, a token followed by one argument is that argument with the token
// ("[BY pattern]"), a token followed by several is a block with the token ("[LIMIT offset
// count]"), as Redis 7's docs describe the same syntax.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hotkv {

struct DocArg {
  std::string name;   // lower case ("key", "nx", "offset_count")
  std::string type;   // key, string, integer, double, pattern, unix-time, pure-token, oneof, block
  std::string token;  // the word typed before it, if any ("EX", "LIMIT")
  bool optional = false;
  bool multiple = false;
  bool multiple_token = false;    // the token is repeated with each value (SORT's GET)
  std::vector<DocArg> arguments;  // oneof and block only

  bool operator==(const DocArg&) const = default;
};

struct SyntaxTree {
  bool ok = false;
  std::string error;  // why the syntax did not parse (unbalanced brackets ...)
  std::vector<DocArg> arguments;
};

// Parses `syntax` after its first `name_words` words (the command's name, e.g. 1 for "SET ...").
SyntaxTree parse_command_syntax(std::string_view syntax, size_t name_words = 1);

}  // namespace hotkv
