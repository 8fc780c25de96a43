// struct for scripts (lua_struct.hpp): binary packing by a format string, as the struct
// library Redis bundles. No Debian package carries it for Lua 5.1, and it is small: a format
// is read one option at a time, each option a fixed-size integer, a float, or a string.
#include "hotkv/scripting/lua_struct.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

extern "C" {
#include <lauxlib.h>
#include <lua.h>
}

namespace hotkv {
namespace {

constexpr int kMaxIntSize = 32;  // i<n> / I<n>: at most this many bytes

struct Header {
  bool little = true;  // x86-64 is little-endian; '=' restores it
  size_t align = 1;    // '!' sets it; 1: no padding
};

// Reads an optional number after an option; `def` when there is none.
size_t read_size(std::string_view fmt, size_t& i, size_t def) {
  if (i >= fmt.size() || !std::isdigit(static_cast<unsigned char>(fmt[i]))) {
    return def;
  }
  size_t n = 0;
  while (i < fmt.size() && std::isdigit(static_cast<unsigned char>(fmt[i])) && n < 100000) {
    n = n * 10 + static_cast<size_t>(fmt[i++] - '0');
  }
  return n;
}

// The size of option `opt` (0 for strings whose length comes from the data).
size_t option_size(lua_State* L, char opt, std::string_view fmt, size_t& i) {
  switch (opt) {
    case 'B':
    case 'b':
    case 'x':
      return 1;
    case 'H':
    case 'h':
      return sizeof(short);
    case 'L':
    case 'l':
      return sizeof(long);
    case 'T':
      return sizeof(size_t);
    case 'J':
    case 'j':
      return sizeof(lua_Integer);
    case 'f':
      return sizeof(float);
    case 'd':
      return sizeof(double);
    case 'c':
      return read_size(fmt, i, 1);
    case 'i':
    case 'I': {
      size_t n = read_size(fmt, i, sizeof(int));
      if (n < 1 || n > kMaxIntSize) {
        luaL_error(L, "integral size %d is larger than limit of %d", static_cast<int>(n),
                   kMaxIntSize);
      }
      return n;
    }
    default:
      return 0;
  }
}

bool is_integer_option(char opt) { return std::strchr("bBhHlLTjJiI", opt) != nullptr && opt; }

// Padding before an item of `size` bytes at offset `at`.
size_t padding(const Header& h, size_t at, size_t size) {
  size_t a = size < h.align ? size : h.align;
  if (a <= 1 || (a & (a - 1)) != 0) {
    return 0;
  }
  return (a - (at & (a - 1))) & (a - 1);
}

// Handles the options that change the header; true if `opt` was one.
bool header_option(lua_State* L, char opt, std::string_view fmt, size_t& i, Header& h) {
  switch (opt) {
    case ' ':
      return true;
    case '>':
      h.little = false;
      return true;
    case '<':
    case '=':
      h.little = true;
      return true;
    case '!': {
      size_t a = read_size(fmt, i, 8);
      if (a == 0 || (a & (a - 1)) != 0) {
        luaL_error(L, "alignment %d is not a power of 2", static_cast<int>(a));
      }
      h.align = a;
      return true;
    }
    default:
      return false;
  }
}

// A float or double in the byte order asked for (the machine's is little-endian).
template <class T>
void put_float(std::string& out, T v, bool little) {
  char buf[sizeof v];
  std::memcpy(buf, &v, sizeof v);
  if (!little) {
    std::reverse(buf, buf + sizeof v);
  }
  out.append(buf, sizeof v);
}

template <class T>
T read_float(const char* at, bool little) {
  char buf[sizeof(T)];
  std::memcpy(buf, at, sizeof buf);
  if (!little) {
    std::reverse(buf, buf + sizeof buf);
  }
  T v;
  std::memcpy(&v, buf, sizeof v);
  return v;
}

void put_int(std::string& out, uint64_t v, size_t size, bool little, bool negative) {
  char buf[kMaxIntSize];
  for (size_t k = 0; k < size; ++k) {
    // Bytes beyond eight carry the sign.
    unsigned char byte = k < 8 ? static_cast<unsigned char>(v >> (8 * k))
                               : static_cast<unsigned char>(negative ? 0xff : 0);
    buf[little ? k : size - 1 - k] = static_cast<char>(byte);
  }
  out.append(buf, size);
}

int struct_pack(lua_State* L) {
  std::string_view fmt = luaL_checkstring(L, 1);
  Header h;
  std::string out;
  int arg = 2;
  for (size_t i = 0; i < fmt.size();) {
    char opt = fmt[i++];
    if (header_option(L, opt, fmt, i, h)) {
      continue;
    }
    size_t size = option_size(L, opt, fmt, i);
    out.append(padding(h, out.size(), size), '\0');
    if (is_integer_option(opt)) {
      {
        lua_Number n = luaL_checknumber(L, arg++);
        bool negative = n < 0;
        uint64_t v =
            negative ? static_cast<uint64_t>(static_cast<int64_t>(n)) : static_cast<uint64_t>(n);
        put_int(out, v, size, h.little, negative);
      }
      continue;
    }
    switch (opt) {
      case 'x':
        out.push_back('\0');
        break;
      case 'f':
        put_float(out, static_cast<float>(luaL_checknumber(L, arg++)), h.little);
        break;
      case 'd':
        put_float(out, static_cast<double>(luaL_checknumber(L, arg++)), h.little);
        break;
      case 'c':
      case 's': {
        size_t len = 0;
        const char* s = luaL_checklstring(L, arg++, &len);
        if (opt == 's') {
          out.append(s, len);
          out.push_back('\0');
        } else {
          if (size == 0) {
            size = len;  // c0: the whole string
          }
          luaL_argcheck(L, len >= size, arg - 1, "string too short");
          out.append(s, size);
        }
        break;
      }
      default:
        return luaL_error(L, "invalid format option '%c'", opt);
    }
  }
  lua_pushlstring(L, out.data(), out.size());
  return 1;
}

int struct_unpack(lua_State* L) {
  std::string_view fmt = luaL_checkstring(L, 1);
  size_t len = 0;
  const char* data = luaL_checklstring(L, 2, &len);
  lua_Integer start = luaL_optinteger(L, 3, 1);
  luaL_argcheck(L, start > 0, 3, "offset must be 1 or greater");
  size_t pos = static_cast<size_t>(start) - 1;
  Header h;
  int pushed = 0;
  lua_Number last = 0;  // the last number read: the length of a following c0
  for (size_t i = 0; i < fmt.size();) {
    char opt = fmt[i++];
    if (header_option(L, opt, fmt, i, h)) {
      continue;
    }
    size_t size = option_size(L, opt, fmt, i);
    pos += padding(h, pos, size);
    if (opt == 'c' && size == 0) {
      luaL_argcheck(L, pushed > 0 && last >= 0, 1, "format 'c0' needs a previous size");
      size = static_cast<size_t>(last);
      lua_pop(L, 1);  // the length is not returned
      --pushed;
    }
    if (opt != 's') {
      luaL_argcheck(L, pos + size <= len, 2, "data string too short");
    }
    luaL_checkstack(L, 2, "too many results");
    if (is_integer_option(opt)) {
      {
        uint64_t v = 0;
        for (size_t k = 0; k < size && k < 8; ++k) {
          auto byte = static_cast<unsigned char>(data[pos + (h.little ? k : size - 1 - k)]);
          v |= static_cast<uint64_t>(byte) << (8 * k);
        }
        bool is_signed = std::islower(static_cast<unsigned char>(opt)) != 0;
        lua_Number n;
        if (is_signed && size < 8 && (v >> (8 * size - 1)) != 0) {
          n = static_cast<lua_Number>(static_cast<int64_t>(v | (~uint64_t{0} << (8 * size))));
        } else if (is_signed) {
          n = static_cast<lua_Number>(static_cast<int64_t>(v));
        } else {
          n = static_cast<lua_Number>(v);
        }
        lua_pushnumber(L, n);
        last = n;
      }
      pos += size;
      ++pushed;
      continue;
    }
    switch (opt) {
      case 'x':
        pos += 1;
        continue;
      case 'f':
        last = read_float<float>(data + pos, h.little);
        lua_pushnumber(L, last);
        break;
      case 'd':
        last = read_float<double>(data + pos, h.little);
        lua_pushnumber(L, last);
        break;
      case 'c':
        lua_pushlstring(L, data + pos, size);
        break;
      case 's': {
        const void* end = pos < len ? std::memchr(data + pos, '\0', len - pos) : nullptr;
        luaL_argcheck(L, end != nullptr, 2, "unfinished string in data");
        size = static_cast<size_t>(static_cast<const char*>(end) - (data + pos)) + 1;
        lua_pushlstring(L, data + pos, size - 1);
        break;
      }
      default:
        return luaL_error(L, "invalid format option '%c'", opt);
    }
    pos += size;
    ++pushed;
  }
  lua_pushinteger(L, static_cast<lua_Integer>(pos + 1));
  return pushed + 1;
}

int struct_size(lua_State* L) {
  std::string_view fmt = luaL_checkstring(L, 1);
  Header h;
  size_t total = 0;
  for (size_t i = 0; i < fmt.size();) {
    char opt = fmt[i++];
    if (header_option(L, opt, fmt, i, h)) {
      continue;
    }
    size_t size = option_size(L, opt, fmt, i);
    if (opt == 's' || (opt == 'c' && size == 0)) {
      return luaL_argerror(L, 1, "options 'c0' - 's' have undefined sizes");
    }
    if (size == 0) {
      return luaL_error(L, "invalid format option '%c'", opt);
    }
    total += padding(h, total, size) + size;
  }
  lua_pushinteger(L, static_cast<lua_Integer>(total));
  return 1;
}

}  // namespace

void open_struct(lua_State* L) {
  lua_newtable(L);
  const luaL_Reg fns[] = {
      {"pack", struct_pack}, {"unpack", struct_unpack}, {"size", struct_size}, {nullptr, nullptr}};
  for (const luaL_Reg* f = fns; f->name != nullptr; ++f) {
    lua_pushcfunction(L, f->func);
    lua_setfield(L, -2, f->name);
  }
  lua_setglobal(L, "struct");
}

}  // namespace hotkv
