// The syntax-string parser behind COMMAND DOCS (see command_docs.hpp for the grammar).
#include "hotkv/commands/command_docs.hpp"

#include <algorithm>
#include <cctype>
#include <optional>

namespace hotkv {
namespace {

enum class Tok { kWord, kOpen, kClose, kOpenParen, kCloseParen, kTightPipe, kSpacedPipe, kDots };

struct Token {
  Tok kind;
  std::string text;
};

std::vector<Token> tokenize(std::string_view s) {
  std::vector<Token> out;
  size_t i = 0;
  auto space = [&](size_t at) { return at >= s.size() || s[at] == ' '; };
  while (i < s.size()) {
    char c = s[i];
    if (c == ' ') {
      ++i;
    } else if (c == '[' || c == ']' || c == '(' || c == ')') {
      out.push_back({c == '['   ? Tok::kOpen
                     : c == ']' ? Tok::kClose
                     : c == '(' ? Tok::kOpenParen
                                : Tok::kCloseParen,
                     std::string(1, c)});
      ++i;
    } else if (c == '|') {
      // "NX|XX" joins two items; "EX seconds | KEEPTTL" separates whole alternatives.
      bool tight = i > 0 && !space(i - 1) && !space(i + 1);
      out.push_back({tight ? Tok::kTightPipe : Tok::kSpacedPipe, "|"});
      ++i;
    } else {
      size_t end = i;
      while (end < s.size() && std::string_view(" []()|").find(s[end]) == std::string_view::npos) {
        ++end;
      }
      std::string word(s.substr(i, end - i));
      out.push_back({word == "..." ? Tok::kDots : Tok::kWord, word});
      i = end;
    }
  }
  return out;
}

// What an argument holds, from its name: the docs only need it for display, and the names
// the table uses are few.
std::string type_of(const std::string& name) {
  static const char* kKeys[] = {"key",     "destination", "source", "dst",  "src",       "newkey",
                                "destkey", "sourcekey",   "key1",   "key2", "stream_key"};
  static const char* kIntegers[] = {"count",
                                    "numkeys",
                                    "offset",
                                    "index",
                                    "db",
                                    "destination-db",
                                    "seconds",
                                    "milliseconds",
                                    "numreplicas",
                                    "decrement",
                                    "total",
                                    "qty",
                                    "ttl_ms",
                                    "n",
                                    "ms",
                                    "delta",
                                    "period_ms",
                                    "burst",
                                    "cost",
                                    "limit",
                                    "weight",
                                    "rank",
                                    "len",
                                    "min-match-len",
                                    "num-matches",
                                    "max_burst",
                                    "count_per_period",
                                    "period",
                                    "quantity",
                                    "protover",
                                    "index1",
                                    "index2",
                                    "port",
                                    "bit",
                                    "ttl",
                                    "frequency",
                                    "start",
                                    "end",
                                    "stop",
                                    "numreplicas",
                                    "entries-added",
                                    "min-idle-time"};
  static const char* kDoubles[] = {"longitude", "latitude", "radius", "width",
                                   "height",    "score",    "timeout"};
  auto in = [&](const auto& list) {
    return std::find(std::begin(list), std::end(list), name) != std::end(list);
  };
  if (in(kKeys)) {
    return "key";
  }
  if (in(kIntegers)) {
    return "integer";
  }
  if (in(kDoubles)) {
    return "double";
  }
  if (name == "pattern") {
    return "pattern";
  }
  if (name.rfind("unix-time", 0) == 0) {
    return "unix-time";
  }
  return "string";
}

DocArg word_arg(const std::string& word) {
  DocArg a;
  bool upper = std::none_of(word.begin(), word.end(), [](char c) { return std::islower(c); });
  if (upper) {
    a.type = "pure-token";
    a.token = word;
    for (char c : word) {
      a.name.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    }
  } else {
    a.name = word;
    a.type = type_of(word);
  }
  return a;
}

std::string joined_names(const std::vector<DocArg>& args) {
  std::string name;
  for (const DocArg& a : args) {
    name += (name.empty() ? "" : "_") + a.name;
  }
  return name;
}

// One alternative of a group (a sequence of items) as one argument: itself when alone, a
// token with its one argument, or a block (with the token in front when there is one).
DocArg sequence_arg(std::vector<DocArg> seq) {
  if (seq.size() == 1) {
    return std::move(seq[0]);
  }
  DocArg block;
  block.type = "block";
  if (seq[0].type == "pure-token" && !seq[0].optional && !seq[0].multiple) {
    // The argument may repeat after its one token ("WEIGHTS weight [weight ...]").
    if (seq.size() == 2 && !seq[1].optional && seq[1].token.empty() &&
        seq[1].type != "pure-token" && seq[1].type != "block") {
      DocArg a = std::move(seq[1]);
      a.token = seq[0].token;
      return a;
    }
    block.token = seq[0].token;
    seq.erase(seq.begin());
  }
  block.name = joined_names(seq);
  block.arguments = std::move(seq);
  return block;
}

DocArg stripped(DocArg a) {
  a.optional = false;
  a.multiple = false;
  a.multiple_token = false;
  return a;
}

class Parser {
 public:
  explicit Parser(std::vector<Token> toks) : toks_(std::move(toks)) {}

  // A group up to `close` (or the end): its alternatives, and whether it ends in "...".
  struct Group {
    std::vector<std::vector<DocArg>> alternatives;
    bool repeats = false;
  };

  std::optional<Group> group(std::optional<Tok> close) {
    Group g;
    g.alternatives.emplace_back();
    while (true) {
      if (pos_ >= toks_.size()) {
        if (close) {
          return fail("unbalanced bracket");
        }
        break;
      }
      const Token& t = toks_[pos_];
      if (close && t.kind == *close) {
        ++pos_;
        break;
      }
      if (t.kind == Tok::kSpacedPipe) {
        ++pos_;
        g.alternatives.emplace_back();
        continue;
      }
      if (t.kind == Tok::kDots) {
        ++pos_;
        g.repeats = true;
        continue;
      }
      auto item = joined_item();
      if (!item) {
        return std::nullopt;
      }
      push(g.alternatives.back(), std::move(*item));
    }
    for (const auto& alt : g.alternatives) {
      // Only a command without arguments has an empty (top-level, single) sequence.
      if (alt.empty() && (close || g.alternatives.size() > 1)) {
        return fail("empty alternative");
      }
    }
    return g;
  }

  bool at_end() const { return pos_ >= toks_.size(); }
  const std::string& error() const { return error_; }

  static DocArg group_arg(Group g) {
    DocArg a;
    if (g.alternatives.size() == 1) {
      a = sequence_arg(std::move(g.alternatives[0]));
    } else {
      a.type = "oneof";
      for (auto& alt : g.alternatives) {
        a.arguments.push_back(sequence_arg(std::move(alt)));
      }
      a.name = joined_names(a.arguments);
    }
    if (g.repeats) {
      a.multiple = true;
      a.multiple_token = !a.token.empty();
    }
    return a;
  }

 private:
  // "X [X ...]" is one repeated X: when an optional repeated item follows what it repeats,
  // the two become one required repeated item.
  static void push(std::vector<DocArg>& seq, DocArg item) {
    if (item.optional && item.multiple) {
      DocArg bare = stripped(item);
      for (size_t k = 1; k <= std::min<size_t>(seq.size(), 4); ++k) {
        std::vector<DocArg> tail(seq.end() - static_cast<std::ptrdiff_t>(k), seq.end());
        DocArg prev = sequence_arg(std::move(tail));
        if (prev == bare) {
          seq.resize(seq.size() - k);
          item.optional = false;
          break;
        }
      }
    }
    seq.push_back(std::move(item));
  }

  // One item, or several joined by tight pipes (a oneof).
  std::optional<DocArg> joined_item() {
    auto first = primary();
    if (!first) {
      return std::nullopt;
    }
    if (pos_ >= toks_.size() || toks_[pos_].kind != Tok::kTightPipe) {
      return first;
    }
    DocArg oneof;
    oneof.type = "oneof";
    oneof.arguments.push_back(std::move(*first));
    while (pos_ < toks_.size() && toks_[pos_].kind == Tok::kTightPipe) {
      ++pos_;
      auto next = primary();
      if (!next) {
        return std::nullopt;
      }
      oneof.arguments.push_back(std::move(*next));
    }
    oneof.name = joined_names(oneof.arguments);
    return oneof;
  }

  std::optional<DocArg> primary() {
    if (pos_ >= toks_.size()) {
      return fail("missing item");
    }
    const Token& t = toks_[pos_++];
    switch (t.kind) {
      case Tok::kWord:
        return word_arg(t.text);
      case Tok::kOpen:
      case Tok::kOpenParen: {
        auto g = group(t.kind == Tok::kOpen ? Tok::kClose : Tok::kCloseParen);
        if (!g) {
          return std::nullopt;
        }
        DocArg a = group_arg(std::move(*g));
        a.optional = a.optional || t.kind == Tok::kOpen;
        return a;
      }
      default:
        return fail("unexpected '" + t.text + "'");
    }
  }

  std::nullopt_t fail(std::string why) {
    if (error_.empty()) {
      error_ = std::move(why);
    }
    return std::nullopt;
  }

  std::vector<Token> toks_;
  size_t pos_ = 0;
  std::string error_;
};

}  // namespace

SyntaxTree parse_command_syntax(std::string_view syntax, size_t name_words) {
  std::vector<Token> toks = tokenize(syntax);
  size_t skip = std::min(name_words, toks.size());
  for (size_t i = 0; i < skip; ++i) {
    if (toks[i].kind != Tok::kWord) {
      return {false, "the syntax does not start with the command's name", {}};
    }
  }
  Parser p(std::vector<Token>(toks.begin() + static_cast<std::ptrdiff_t>(skip), toks.end()));
  auto g = p.group(std::nullopt);
  if (!g) {
    return {false, p.error(), {}};
  }
  if (g->repeats) {
    return {false, "\"...\" outside a group", {}};
  }
  SyntaxTree tree{true, "", {}};
  if (g->alternatives.size() == 1) {
    // The top level stays a flat sequence, as Redis lists a command's arguments.
    tree.arguments = std::move(g->alternatives[0]);
  } else {
    tree.arguments.push_back(Parser::group_arg(std::move(*g)));
  }
  return tree;
}

}  // namespace hotkv
