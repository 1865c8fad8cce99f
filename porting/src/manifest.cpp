// The manifest's reader. JSON is parsed here by a small strict parser rather than
// Boost.JSON so that every value keeps the line it is on (errors name it) and a key
// given twice in one object is an error rather than silently one of the two.
#include "kport/porting/manifest.h"

#include <boost/json.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <fstream>
#include <set>
#include <span>
#include <sstream>

#include "kport/common/utf8.h"
#include "kport/porting/catalog.h"
#include "kport/porting/op_shape.h"

namespace kport::porting {
namespace fs = std::filesystem;

namespace {

// One JSON value and the line it starts on.
struct Node {
  enum class Kind { null, boolean, number, string, array, object };
  Kind kind = Kind::null;
  int line = 1;
  bool boolean = false;
  bool integral = false;  // a number written without fraction or exponent that fits int64
  std::int64_t integer = 0;
  double number = 0;
  std::string text;
  std::vector<Node> items;
  struct Member;
  std::vector<Member> members;
};

struct Node::Member {
  std::string key;
  int line = 1;
  Node value;
};

std::string describe(char c) {
  if (c == '\n') return "a line break";
  if (static_cast<unsigned char>(c) < 0x20) return "a control character";
  return std::string("'") + c + "'";
}

class Parser {
 public:
  Parser(std::string_view text, std::string origin) : m_text(text), m_origin(std::move(origin)) {}

  Result<Node> document() {
    skip_space();
    Node root;
    if (auto st = value(root, 0); !st.ok()) return st.error();
    skip_space();
    if (m_at < m_text.size()) return fail("unexpected " + describe(m_text[m_at]) + " after the document");
    return root;
  }

 private:
  Error fail(const std::string& what) const {
    return Error{Errc::invalid_argument, m_origin + ":" + std::to_string(m_line) + ": invalid JSON: " + what};
  }
  bool at_end() const { return m_at >= m_text.size(); }
  void skip_space() {
    while (!at_end()) {
      char c = m_text[m_at];
      if (c == '\n') {
        ++m_line;
      } else if (c != ' ' && c != '\t' && c != '\r') {
        return;
      }
      ++m_at;
    }
  }
  std::string found() const { return at_end() ? "the end of the file" : describe(m_text[m_at]); }

  Status value(Node& out, int depth) {
    if (depth > 64) return fail("nested too deeply");
    if (at_end()) return fail("a value is missing at the end of the file");
    out.line = m_line;
    char c = m_text[m_at];
    if (c == '{') return object(out, depth);
    if (c == '[') return array(out, depth);
    if (c == '"') {
      out.kind = Node::Kind::string;
      return string(out.text);
    }
    if (c == '-' || (c >= '0' && c <= '9')) return number(out);
    for (auto [word, kind, b] :
         {std::tuple{"true", Node::Kind::boolean, true}, std::tuple{"false", Node::Kind::boolean, false},
          std::tuple{"null", Node::Kind::null, false}}) {
      std::string_view w(word);
      if (m_text.substr(m_at, w.size()) == w) {
        m_at += w.size();
        out.kind = kind;
        out.boolean = b;
        return {};
      }
    }
    return fail("expected a value, found " + found());
  }

  Status object(Node& out, int depth) {
    out.kind = Node::Kind::object;
    ++m_at;  // {
    skip_space();
    if (!at_end() && m_text[m_at] == '}') {
      ++m_at;
      return {};
    }
    for (;;) {
      skip_space();
      if (at_end() || m_text[m_at] != '"') return fail("expected a key in double quotes, found " + found());
      Node::Member m;
      m.line = m_line;
      KPORT_TRY(string(m.key));
      for (const auto& other : out.members)
        if (other.key == m.key)
          return Error{Errc::invalid_argument, m_origin + ":" + std::to_string(m.line) + ": key '" + m.key +
                                                   "' is given twice in one object (first at line " +
                                                   std::to_string(other.line) + ")"};
      skip_space();
      if (at_end() || m_text[m_at] != ':') return fail("expected ':' after the key '" + m.key + "', found " + found());
      ++m_at;
      skip_space();
      KPORT_TRY(value(m.value, depth + 1));
      out.members.push_back(std::move(m));
      skip_space();
      if (!at_end() && m_text[m_at] == ',') {
        ++m_at;
        continue;
      }
      if (!at_end() && m_text[m_at] == '}') {
        ++m_at;
        return {};
      }
      return fail("expected ',' or '}' after the value of '" + out.members.back().key + "', found " + found());
    }
  }

  Status array(Node& out, int depth) {
    out.kind = Node::Kind::array;
    ++m_at;  // [
    skip_space();
    if (!at_end() && m_text[m_at] == ']') {
      ++m_at;
      return {};
    }
    for (;;) {
      skip_space();
      Node item;
      KPORT_TRY(value(item, depth + 1));
      out.items.push_back(std::move(item));
      skip_space();
      if (!at_end() && m_text[m_at] == ',') {
        ++m_at;
        continue;
      }
      if (!at_end() && m_text[m_at] == ']') {
        ++m_at;
        return {};
      }
      return fail("expected ',' or ']' in an array, found " + found());
    }
  }

  static void append_utf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  Result<std::uint32_t> hex4() {
    if (m_at + 4 > m_text.size()) return fail("a \\u escape needs four hex digits");
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      char c = m_text[m_at++];
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= static_cast<std::uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f')
        v |= static_cast<std::uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        v |= static_cast<std::uint32_t>(c - 'A' + 10);
      else
        return fail("a \\u escape needs four hex digits");
    }
    return v;
  }

  Status string(std::string& out) {
    ++m_at;  // "
    for (;;) {
      if (at_end()) return fail("a string is not closed");
      char c = m_text[m_at++];
      if (c == '"') return {};
      if (static_cast<unsigned char>(c) < 0x20) {
        --m_at;
        return fail("a string is not closed on its line (" + describe(c) + " inside it)");
      }
      if (c != '\\') {
        out += c;
        continue;
      }
      if (at_end()) return fail("a string is not closed");
      char e = m_text[m_at++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          auto cp = hex4();
          if (!cp.ok()) return cp.error();
          std::uint32_t v = *cp;
          if (v >= 0xD800 && v <= 0xDBFF) {
            if (m_text.substr(m_at, 2) != "\\u") return fail("a \\u escape of a high surrogate needs its pair");
            m_at += 2;
            auto low = hex4();
            if (!low.ok()) return low.error();
            if (*low < 0xDC00 || *low > 0xDFFF) return fail("a \\u escape of a high surrogate needs its pair");
            v = 0x10000 + ((v - 0xD800) << 10) + (*low - 0xDC00);
          } else if (v >= 0xDC00 && v <= 0xDFFF) {
            return fail("a \\u escape of a lone low surrogate");
          }
          append_utf8(out, v);
          break;
        }
        default: return fail(std::string("unknown escape '\\") + e + "' in a string");
      }
    }
  }

  Status number(Node& out) {
    out.kind = Node::Kind::number;
    const std::size_t start = m_at;
    auto digits = [&] {
      std::size_t n = 0;
      while (!at_end() && m_text[m_at] >= '0' && m_text[m_at] <= '9') {
        ++m_at;
        ++n;
      }
      return n;
    };
    if (m_text[m_at] == '-') ++m_at;
    if (!at_end() && m_text[m_at] == '0') {
      ++m_at;
      if (!at_end() && m_text[m_at] >= '0' && m_text[m_at] <= '9') return fail("a number has a leading zero");
    } else if (digits() == 0) {
      return fail("a number needs digits");
    }
    bool integral = true;
    if (!at_end() && m_text[m_at] == '.') {
      ++m_at;
      integral = false;
      if (digits() == 0) return fail("a number needs digits after its '.'");
    }
    if (!at_end() && (m_text[m_at] == 'e' || m_text[m_at] == 'E')) {
      ++m_at;
      integral = false;
      if (!at_end() && (m_text[m_at] == '+' || m_text[m_at] == '-')) ++m_at;
      if (digits() == 0) return fail("a number needs digits in its exponent");
    }
    const char* first = m_text.data() + start;
    const char* last = m_text.data() + m_at;
    auto [p, ec] = std::from_chars(first, last, out.number);
    if (ec != std::errc() || p != last) return fail("a number is out of range");
    if (integral) {
      auto [pi, eci] = std::from_chars(first, last, out.integer);
      out.integral = eci == std::errc() && pi == last;
    }
    return {};
  }

  std::string_view m_text;
  std::string m_origin;
  std::size_t m_at = 0;
  int m_line = 1;
};

// ---- validation ---------------------------------------------------------------------

const char* kind_name(Node::Kind k) {
  switch (k) {
    case Node::Kind::null: return "null";
    case Node::Kind::boolean: return "a boolean";
    case Node::Kind::number: return "a number";
    case Node::Kind::string: return "a string";
    case Node::Kind::array: return "an array";
    case Node::Kind::object: return "an object";
  }
  return "a value";
}

bool identifier(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  if (!(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

bool env_name(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// A relative path that stays inside the folder it is relative to.
bool inside_path(std::string_view s) {
  if (s.empty() || s.front() == '/') return false;
  const fs::path p(s);
  return std::none_of(p.begin(), p.end(), [](const fs::path& part) { return part == ".."; });
}

class Validator {
 public:
  explicit Validator(std::string origin) : m_origin(std::move(origin)) {}

  Error error(int line, const std::string& what) const {
    return Error{Errc::invalid_argument, m_origin + ":" + std::to_string(line) + ": " + what};
  }
  Error type_error(const Node& n, const std::string& path, const char* want) const {
    return error(n.line, "key '" + path + "' must be " + want + ", not " + kind_name(n.kind));
  }

  // Refuses members not in `known`, naming them and what is allowed.
  Status only(const Node& object, const std::string& path, std::initializer_list<std::string_view> known) const {
    return only(object, path, std::span<const std::string_view>(known.begin(), known.size()));
  }
  Status only(const Node& object, const std::string& path, std::span<const std::string_view> known) const {
    for (const auto& m : object.members) {
      if (std::find(known.begin(), known.end(), m.key) != known.end()) continue;
      std::string allowed;
      for (auto k : known) allowed += std::string(allowed.empty() ? "" : ", ") + std::string(k);
      return error(m.line, "unknown key '" + join(path, m.key) + "' (" + (path.empty() ? "the manifest" : path) +
                               " takes " + allowed + ")");
    }
    return {};
  }
  static const Node* member(const Node& object, std::string_view key) {
    for (const auto& m : object.members)
      if (m.key == key) return &m.value;
    return nullptr;
  }
  static int key_line(const Node& object, std::string_view key) {
    for (const auto& m : object.members)
      if (m.key == key) return m.line;
    return object.line;
  }
  static std::string join(const std::string& path, std::string_view key) {
    return path.empty() ? std::string(key) : path + "." + std::string(key);
  }
  static std::string index(const std::string& path, std::size_t i) { return path + "[" + std::to_string(i) + "]"; }

  Status want(const Node& n, const std::string& path, Node::Kind kind) const {
    if (n.kind != kind) return type_error(n, path, kind_name(kind));
    return {};
  }
  Result<std::string> string(const Node& n, const std::string& path, bool allow_empty = false) const {
    if (n.kind != Node::Kind::string) return type_error(n, path, "a string");
    if (!allow_empty && n.text.empty()) return error(n.line, "key '" + path + "' must not be empty");
    return n.text;
  }
  Result<std::vector<std::string>> strings(const Node& n, const std::string& path, bool unique) const {
    if (n.kind != Node::Kind::array) return type_error(n, path, "an array of strings");
    std::vector<std::string> out;
    for (std::size_t i = 0; i < n.items.size(); ++i) {
      auto s = string(n.items[i], index(path, i));
      if (!s.ok()) return s.error();
      if (unique && std::find(out.begin(), out.end(), *s) != out.end())
        return error(n.items[i].line, "key '" + index(path, i) + "': '" + *s + "' is listed twice");
      out.push_back(std::move(*s));
    }
    return out;
  }
  Result<double> positive(const Node& n, const std::string& path) const {
    if (n.kind != Node::Kind::number) return type_error(n, path, "a number");
    if (!(n.number > 0)) return error(n.line, "key '" + path + "' must be greater than 0");
    return n.number;
  }
  // A string of the build: its placeholders must be known ones.
  Result<std::string> build_string(const Node& n, const std::string& path, bool allow_empty = false) const {
    auto s = string(n, path, allow_empty);
    if (!s.ok()) return s;
    auto e = expand(*s, Placeholders{"sm_90a", "90a", "/b", "/s"});
    if (!e.ok()) return error(n.line, "key '" + path + "': " + e.error().message);
    return s;
  }

  Result<ManifestTolerance> tolerance(const Node& n, const std::string& path) const {
    KPORT_TRY(want(n, path, Node::Kind::object));
    KPORT_TRY(only(n, path, {"normwise", "max_abs_rel", "lse_abs"}));
    ManifestTolerance t;
    const Node* normwise = member(n, "normwise");
    if (!normwise) return error(n.line, "key '" + path + "' needs 'normwise' (the largest normwise relative error)");
    auto v = positive(*normwise, join(path, "normwise"));
    if (!v.ok()) return v.error();
    t.normwise = *v;
    for (auto [key, slot] : {std::pair{"max_abs_rel", &t.max_abs_rel}, std::pair{"lse_abs", &t.lse_abs}})
      if (const Node* x = member(n, key)) {
        auto p = positive(*x, join(path, key));
        if (!p.ok()) return p.error();
        *slot = *p;
      }
    return t;
  }
  Result<std::map<std::string, ManifestTolerance>> tolerances(const Node& n, const std::string& path,
                                                              const std::vector<std::string>& dtypes) const {
    KPORT_TRY(want(n, path, Node::Kind::object));
    std::map<std::string, ManifestTolerance> out;
    for (const auto& m : n.members) {
      if (std::find(dtypes.begin(), dtypes.end(), m.key) == dtypes.end()) {
        std::string allowed;
        for (const auto& d : dtypes) allowed += (allowed.empty() ? "" : ", ") + d;
        return error(m.line, "unknown key '" + join(path, m.key) + "': not a dtype of " + path + " (" + allowed + ")");
      }
      auto t = tolerance(m.value, join(path, m.key));
      if (!t.ok()) return t.error();
      out[m.key] = *t;
    }
    return out;
  }

  Status build(const Node& n, Manifest& out) const {
    KPORT_TRY(want(n, "build", Node::Kind::object));
    KPORT_TRY(only(n, "build", {"cmake", "command", "harness"}));
    const Node* cmake = member(n, "cmake");
    const Node* command = member(n, "command");
    if (cmake && command) return error(n.line, "key 'build' takes either 'cmake' or 'command', not both");
    if (!cmake && !command)
      return error(n.line, "key 'build' needs 'cmake' (a CMake project and target) or 'command' (argv) with 'harness'");
    if (cmake) {
      if (member(n, "harness"))
        return error(key_line(n, "harness"),
                     "key 'build.harness' goes with 'build.command'; a CMake build names it "
                     "in 'build.cmake.harness'");
      KPORT_TRY(want(*cmake, "build.cmake", Node::Kind::object));
      KPORT_TRY(only(*cmake, "build.cmake", {"source_dir", "target", "options", "harness", "variants_from"}));
      ManifestCmake c;
      c.line = cmake->line;
      const Node* target = member(*cmake, "target");
      if (!target)
        return error(cmake->line, "key 'build.cmake' needs 'target' (the CMake target that builds the harness)");
      auto t = build_string(*target, "build.cmake.target");
      if (!t.ok()) return t.error();
      c.target = *t;
      if (const Node* s = member(*cmake, "source_dir")) {
        auto v = string(*s, "build.cmake.source_dir");
        if (!v.ok()) return v.error();
        if (!inside_path(*v))
          return error(s->line,
                       "key 'build.cmake.source_dir' must be a path inside the library, relative to kport.json");
        c.source_dir = *v;
      }
      if (const Node* o = member(*cmake, "options")) {
        KPORT_TRY(want(*o, "build.cmake.options", Node::Kind::array));
        for (std::size_t i = 0; i < o->items.size(); ++i) {
          auto v = build_string(o->items[i], index("build.cmake.options", i));
          if (!v.ok()) return v.error();
          c.options.push_back(*v);
        }
      }
      if (const Node* h = member(*cmake, "harness")) {
        auto v = build_string(*h, "build.cmake.harness");
        if (!v.ok()) return v.error();
        c.harness = *v;
      }
      if (const Node* v = member(*cmake, "variants_from")) {
        auto s = string(*v, "build.cmake.variants_from");
        if (!s.ok()) return s.error();
        if (*s != "kport_kernel_variant")
          return error(v->line,
                       "key 'build.cmake.variants_from' must be \"kport_kernel_variant\" (the one CMake "
                       "helper whose calls kport reads), not \"" +
                           *s + "\"");
        c.variants_from = *s;
      }
      out.cmake = std::move(c);
      return {};
    }
    ManifestCommand c;
    c.line = command->line;
    if (command->kind != Node::Kind::array || command->items.empty())
      return error(command->line,
                   "key 'build.command' must be a non-empty array of strings (the program and its "
                   "arguments)");
    for (std::size_t i = 0; i < command->items.size(); ++i) {
      auto v = build_string(command->items[i], index("build.command", i), i > 0);
      if (!v.ok()) return v.error();
      c.argv.push_back(*v);
    }
    const Node* harness = member(n, "harness");
    if (!harness) return error(n.line, "key 'build' needs 'harness' (the program 'build.command' writes)");
    auto h = build_string(*harness, "build.harness");
    if (!h.ok()) return h.error();
    c.harness = *h;
    out.command = std::move(c);
    return {};
  }

  Status targets(const Node& n, Manifest& out) const {
    if (n.kind == Node::Kind::string) {
      if (n.text != "all")
        return error(n.line, "key 'targets' must be \"all\" or an array of nvcc targets such as [\"sm_90a\"]");
      out.all_targets = true;
      return {};
    }
    if (n.kind != Node::Kind::array || n.items.empty())
      return error(n.line, "key 'targets' must be \"all\" or a non-empty array of nvcc targets such as [\"sm_90a\"]");
    auto list = strings(n, "targets", true);
    if (!list.ok()) return list.error();
    for (std::size_t i = 0; i < list->size(); ++i)
      if (!parse_target_name((*list)[i]))
        return error(n.items[i].line, "key 'targets[" + std::to_string(i) + "]': '" + (*list)[i] +
                                          "' is not an nvcc target (sm_<number>[a|f], such as sm_90a)");
    out.targets = std::move(*list);
    return {};
  }

  Status variants(const Node& n, Manifest& out) const {
    KPORT_TRY(want(n, "variants", Node::Kind::array));
    std::vector<ManifestVariant> list;
    for (std::size_t i = 0; i < n.items.size(); ++i) {
      const Node& v = n.items[i];
      const std::string path = index("variants", i);
      KPORT_TRY(want(v, path, Node::Kind::object));
      KPORT_TRY(only(v, path, {"name", "family", "features", "sources"}));
      ManifestVariant mv;
      mv.line = v.line;
      for (auto [key, slot] : {std::pair{"name", &mv.name}, std::pair{"family", &mv.family}}) {
        const Node* x = member(v, key);
        if (!x) return error(v.line, "key '" + path + "' needs '" + key + "'");
        auto s = string(*x, join(path, key));
        if (!s.ok()) return s.error();
        if (!identifier(*s))
          return error(x->line, "key '" + join(path, key) + "': '" + *s +
                                    "' must be a name of letters, digits and '_' (not starting with a digit)");
        *slot = *s;
      }
      if (const Node* f = member(v, "features")) {
        auto s = strings(*f, join(path, "features"), true);
        if (!s.ok()) return s.error();
        mv.features = std::move(*s);
      }
      if (const Node* f = member(v, "sources")) {
        auto s = strings(*f, join(path, "sources"), true);
        if (!s.ok()) return s.error();
        for (std::size_t j = 0; j < s->size(); ++j)
          if (!inside_path((*s)[j]))
            return error(f->items[j].line, "key '" + index(join(path, "sources"), j) +
                                               "' must be a path inside the library, relative to kport.json");
        mv.sources = std::move(*s);
      }
      for (const auto& other : list)
        if (other.id() == mv.id())
          return error(v.line, "key '" + path + "': variant '" + mv.id() + "' is declared twice (first at line " +
                                   std::to_string(other.line) + ")");
      list.push_back(std::move(mv));
    }
    out.variants = std::move(list);
    return {};
  }

  Status families(const Node& n, Manifest& out) const {
    KPORT_TRY(want(n, "families", Node::Kind::array));
    for (std::size_t i = 0; i < n.items.size(); ++i) {
      const Node& f = n.items[i];
      const std::string path = index("families", i);
      KPORT_TRY(want(f, path, Node::Kind::object));
      KPORT_TRY(only(f, path,
                     {"name", "description", "dims", "dtypes", "tolerances", "flops", "bytes", "bound", "example",
                      "geometry", "requires"}));
      ManifestFamily mf;
      mf.line = f.line;
      const Node* name = member(f, "name");
      if (!name) return error(f.line, "key '" + path + "' needs 'name'");
      auto s = string(*name, join(path, "name"));
      if (!s.ok()) return s.error();
      if (!identifier(*s))
        return error(name->line, "key '" + join(path, "name") + "': '" + *s +
                                     "' must be a name of letters, digits and '_' (not starting with a digit)");
      mf.name = *s;
      for (const auto& other : out.families)
        if (other.name == mf.name)
          return error(f.line, "key '" + path + "': family '" + mf.name + "' is declared twice (first at line " +
                                   std::to_string(other.line) + ")");
      if (const Node* d = member(f, "description")) {
        auto t = string(*d, join(path, "description"), true);
        if (!t.ok()) return t.error();
        mf.description = *t;
      }
      const Node* dims = member(f, "dims");
      if (!dims)
        return error(f.line, "key '" + path + "' needs 'dims' (the shape's keys, such as [\"m\", \"n\", \"k\"])");
      if (dims->kind != Node::Kind::array || dims->items.empty())
        return error(dims->line, "key '" + join(path, "dims") + "' must be a non-empty array");
      for (std::size_t j = 0; j < dims->items.size(); ++j) {
        const Node& d = dims->items[j];
        const std::string dpath = index(join(path, "dims"), j);
        ManifestDim md;
        if (d.kind == Node::Kind::string) {
          md.name = d.text;
        } else if (d.kind == Node::Kind::object) {
          KPORT_TRY(
              only(d, dpath, {"name", "default", "min", "max", "exact", "weight", "align", "omit_default", "full_at"}));
          const Node* dn = member(d, "name");
          if (!dn) return error(d.line, "key '" + dpath + "' needs 'name'");
          auto t = string(*dn, join(dpath, "name"));
          if (!t.ok()) return t.error();
          md.name = *t;
          for (auto [key, slot] : {std::pair{"min", &md.min}, std::pair{"max", &md.max}})
            if (const Node* x = member(d, key)) {
              if (x->kind != Node::Kind::number || !x->integral || x->integer < 0 || x->integer > k_max_dim)
                return error(x->line, "key '" + join(dpath, key) + "' must be an integer in 0 .. 2^30");
              *slot = x->integer;
            }
          if (md.min > md.max)
            return error(d.line, "key '" + dpath + "': 'min' " + std::to_string(md.min) + " is above 'max' " +
                                     std::to_string(md.max));
          if (const Node* def = member(d, "default")) {
            if (def->kind != Node::Kind::number || !def->integral)
              return error(def->line, "key '" + join(dpath, "default") + "' must be an integer");
            if (def->integer < md.min || def->integer > md.max)
              return error(def->line, "key '" + join(dpath, "default") + "': " + std::to_string(def->integer) +
                                          " is outside " + std::to_string(md.min) + " .. " + std::to_string(md.max));
            md.default_value = def->integer;
          }
          if (const Node* omit = member(d, "omit_default")) {
            if (omit->kind != Node::Kind::boolean)
              return type_error(*omit, join(dpath, "omit_default"), "true or false");
            md.omit_default = omit->boolean;
            if (md.omit_default && !md.default_value)
              return error(omit->line, "key '" + join(dpath, "omit_default") +
                                           "': a dimension left out at its default needs a 'default'");
          }
          if (const Node* full = member(d, "full_at")) {
            auto full_name = string(*full, join(dpath, "full_at"));
            if (!full_name.ok()) return full_name.error();
            if (!md.default_value)
              return error(full->line,
                           "key '" + join(dpath, "full_at") +
                               "': a dimension whose value at another's means its default needs a 'default'");
            md.full_at = *full_name;
          }
          auto rule = dim_rule(d, dpath);
          if (!rule.ok()) return rule.error();
          md.rule = std::move(*rule);
        } else {
          return type_error(d, dpath, "a string or an object {name, default}");
        }
        if (!identifier(md.name))
          return error(d.line, "key '" + dpath + "': '" + md.name + "' must be a name of letters, digits and '_'");
        if (md.name == k_bytes_per_elem)
          return error(d.line, "key '" + dpath + "': '" + md.name +
                                   "' is the dtype's element size in work expressions, not a dimension");
        for (const auto& other : mf.dims)
          if (other.name == md.name)
            return error(d.line, "key '" + dpath + "': dimension '" + md.name + "' is listed twice");
        mf.dims.push_back(std::move(md));
      }
      const Node* dtypes = member(f, "dtypes");
      if (!dtypes) return error(f.line, "key '" + path + "' needs 'dtypes'");
      auto dt = strings(*dtypes, join(path, "dtypes"), true);
      if (!dt.ok()) return dt.error();
      if (dt->empty()) return error(dtypes->line, "key '" + join(path, "dtypes") + "' must not be empty");
      for (std::size_t j = 0; j < dt->size(); ++j)
        if (auto st = known_dtype(dtypes->items[j], index(join(path, "dtypes"), j)); !st.ok()) return st;
      mf.dtypes = std::move(*dt);
      if (const Node* t = member(f, "tolerances")) {
        auto tol = tolerances(*t, join(path, "tolerances"), mf.dtypes);
        if (!tol.ok()) return tol.error();
        mf.tolerances = std::move(*tol);
      }
      // How the family counts its work: expressions over its dimensions (work_expr.h).
      std::vector<std::string> names;
      for (const auto& d : mf.dims) names.push_back(d.name);
      for (auto [key, slot] : {std::pair{"flops", &mf.flops}, std::pair{"bytes", &mf.bytes}})
        if (const Node* x = member(f, key)) {
          auto text = string(*x, join(path, key));
          if (!text.ok()) return text.error();
          if (auto e = WorkExpr::parse(*text, names); !e.ok())
            return error(x->line, "key '" + join(path, key) + "': '" + *text + "' " + e.error().message);
          *slot = *text;
        }
      if (const Node* b = member(f, "bound")) {
        auto text = string(*b, join(path, "bound"));
        if (!text.ok()) return text.error();
        if (!parse_bound(*text))
          return error(b->line,
                       "key '" + join(path, "bound") + "' must be \"memory\" or \"compute\", not \"" + *text + "\"");
        mf.bound = *text;
      }
      if (const Node* g = member(f, "geometry")) {
        auto keys = geometry(*g, join(path, "geometry"), names);
        if (!keys.ok()) return keys.error();
        mf.geometry = std::move(*keys);
      }
      if (const Node* r = member(f, "requires")) {
        auto list = requirements(*r, join(path, "requires"), names);
        if (!list.ok()) return list.error();
        mf.requirements = std::move(*list);
      }
      out.families.push_back(std::move(mf));
      if (const Node* x = member(f, "example")) {
        KPORT_TRY(shape(*x, join(path, "example"), out.families.back().name, out));
        out.families.back().example = x->text;
      }
    }
    return {};
  }

  // A dimension's distance rule (`exact`, `weight`, `align`): the form here, with lines;
  // what holds by dim_rule_problem, the one rule check_family applies too.
  Result<Shape::DimRule> dim_rule(const Node& d, const std::string& dpath) const {
    Shape::DimRule out;
    if (const Node* x = member(d, "exact")) {
      if (x->kind != Node::Kind::boolean) return type_error(*x, join(dpath, "exact"), "true or false");
      out.exact = x->boolean;
    }
    if (const Node* x = member(d, "weight")) {
      if (x->kind != Node::Kind::number) return type_error(*x, join(dpath, "weight"), "a number");
      out.weight = x->number;
    }
    if (const Node* x = member(d, "align")) {
      const std::string apath = join(dpath, "align");
      if (x->kind != Node::Kind::array) return type_error(*x, apath, "an array of {multiple, penalty}");
      for (std::size_t k = 0; k < x->items.size(); ++k) {
        const Node& a = x->items[k];
        const std::string at = index(apath, k);
        KPORT_TRY(want(a, at, Node::Kind::object));
        KPORT_TRY(only(a, at, {"multiple", "penalty"}));
        const Node* m = member(a, "multiple");
        const Node* p = member(a, "penalty");
        if (!m || !p) return error(a.line, "key '" + at + "' needs 'multiple' and 'penalty'");
        if (m->kind != Node::Kind::number || !m->integral)
          return error(m->line, "key '" + join(at, "multiple") + "' must be an integer in 2 .. 2^30");
        if (p->kind != Node::Kind::number) return type_error(*p, join(at, "penalty"), "a number");
        out.alignments.push_back({m->integer, p->number});
      }
    }
    if (auto p = dim_rule_problem(out)) {
      const std::string first = p->key.substr(0, p->key.find_first_of(".["));
      const Node* at = member(d, first);
      return error(at ? at->line : d.line, "key '" + join(dpath, p->key) + "': " + p->what);
    }
    return out;
  }

  // A family's `geometry`: per dimension, the instance config keys of each role, a key
  // or an array of alternatives. The form is checked here, with lines; what it means
  // (dimensions, keys, a split's step) by geometry_problem, the one rule.
  // `requires`: [{dim, multiple, when, why}]; what holds by requirement_problem, the one
  // rule check_family applies too.
  Result<std::vector<ShapeRequirement>> requirements(const Node& n, const std::string& path,
                                                     const std::vector<std::string>& dims) const {
    KPORT_TRY(want(n, path, Node::Kind::array));
    if (n.items.size() > 8) return error(n.line, "key '" + path + "' must list at most 8 requirements");
    std::vector<ShapeRequirement> out;
    for (std::size_t i = 0; i < n.items.size(); ++i) {
      const Node& r = n.items[i];
      const std::string rpath = index(path, i);
      KPORT_TRY(want(r, rpath, Node::Kind::object));
      KPORT_TRY(only(r, rpath, {"dim", "multiple", "when", "why"}));
      ShapeRequirement req;
      const Node* dim = member(r, "dim");
      if (!dim) return error(r.line, "key '" + rpath + "' needs 'dim' (the dimension that must be a multiple)");
      auto name = string(*dim, join(rpath, "dim"));
      if (!name.ok()) return name.error();
      req.dim = *name;
      const Node* multiple = member(r, "multiple");
      if (!multiple) return error(r.line, "key '" + rpath + "' needs 'multiple'");
      if (multiple->kind != Node::Kind::number || !multiple->integral)
        return type_error(*multiple, join(rpath, "multiple"), "an integer");
      req.multiple = multiple->integer;
      if (const Node* when = member(r, "when")) {
        KPORT_TRY(want(*when, join(rpath, "when"), Node::Kind::object));
        for (const auto& m : when->members) {
          if (m.value.kind != Node::Kind::number || !m.value.integral)
            return type_error(m.value, join(join(rpath, "when"), m.key), "an integer");
          req.when.emplace_back(m.key, m.value.integer);
        }
      }
      if (const Node* why = member(r, "why")) {
        auto text = string(*why, join(rpath, "why"), true);
        if (!text.ok()) return text.error();
        req.why = *text;
      }
      if (auto p = requirement_problem(req, dims)) {
        const std::string key = p->key.substr(0, p->key.find('.'));
        const Node* at = member(r, key);
        return error(at ? at->line : r.line, "key '" + join(rpath, p->key) + "': " + p->what);
      }
      out.push_back(std::move(req));
    }
    return out;
  }

  Result<GeometryKeys> geometry(const Node& n, const std::string& path, const std::vector<std::string>& dims) const {
    KPORT_TRY(want(n, path, Node::Kind::object));
    GeometryKeys out;
    for (const auto& m : n.members) {
      const std::string dpath = join(path, m.key);
      KPORT_TRY(want(m.value, dpath, Node::Kind::object));
      std::array<std::string_view, std::size(k_dim_roles)> roles;
      for (std::size_t i = 0; i < roles.size(); ++i) roles[i] = k_dim_roles[i].first;
      KPORT_TRY(only(m.value, dpath, roles));
      DimKeys d;
      d.dim = m.key;
      for (auto [role, slot] : k_dim_roles)
        if (const Node* x = member(m.value, role)) {
          const std::string rpath = join(dpath, role);
          if (x->kind == Node::Kind::string) {
            (d.*slot).push_back(x->text);
          } else if (x->kind == Node::Kind::array) {
            if (x->items.empty()) return error(x->line, "key '" + rpath + "' must name at least one config key");
            auto list = strings(*x, rpath, true);
            if (!list.ok()) return list.error();
            d.*slot = std::move(*list);
          } else {
            return type_error(*x, rpath, "a config key (a string) or an array of them");
          }
        }
      out.dims.push_back(std::move(d));
    }
    if (auto p = geometry_problem(out, dims)) {
      const std::string dim = p->key.substr(0, p->key.find('.'));
      return error(key_line(n, dim), "key '" + join(path, p->key) + "': " + p->what);
    }
    return out;
  }

  Status known_dtype(const Node& n, const std::string& path) const {
    const auto& all = manifest_dtypes();
    if (std::find(all.begin(), all.end(), n.text) != all.end()) return {};
    std::string allowed;
    for (const auto& d : all) allowed += (allowed.empty() ? "" : ", ") + d;
    return error(n.line, "key '" + path + "': '" + n.text + "' is not a dtype kport knows (" + allowed + ")");
  }

  // One shape text against a family's dimensions.
  Status shape(const Node& n, const std::string& path, const std::string& family, const Manifest& m) const {
    auto text = string(n, path);
    if (!text.ok()) return text.error();
    if (const ManifestFamily* f = m.family(family)) {
      std::map<std::string, std::int64_t> given;
      std::stringstream in(*text);
      for (std::string item; std::getline(in, item, ',');) {
        auto eq = item.find('=');
        std::int64_t v = 0;
        const std::string key = item.substr(0, eq);
        auto [p, ec] = eq == std::string::npos ? std::from_chars_result{nullptr, std::errc::invalid_argument}
                                               : std::from_chars(item.data() + eq + 1, item.data() + item.size(), v);
        if (ec != std::errc() || p != item.data() + item.size())
          return error(n.line, "key '" + path + "': '" + *text + "' is not key=integer,... (at '" + item + "')");
        if (std::none_of(f->dims.begin(), f->dims.end(), [&](const ManifestDim& d) { return d.name == key; }))
          return error(n.line, "key '" + path + "': '" + key + "' is not a dimension of " + family);
        if (!given.emplace(key, v).second)
          return error(n.line, "key '" + path + "': '" + key + "' is given twice in '" + *text + "'");
      }
      for (const auto& d : f->dims)
        if (!d.default_value && !given.count(d.name))
          return error(n.line, "key '" + path + "': '" + *text + "' lacks '" + d.name + "'");
      return {};
    }
    return error(n.line, "key '" + path + "': no family '" + family + "' is declared in 'families'");
  }

  Status shapes(const Node& n, Manifest& out) const {
    KPORT_TRY(want(n, "shapes", Node::Kind::object));
    for (const auto& m : n.members) {
      const std::string path = join("shapes", m.key);
      if (!out.family(m.key))
        return error(m.line, "unknown key '" + path + "': no family '" + m.key +
                                 "' is declared in 'families' (a library declares each family it runs)");
      KPORT_TRY(want(m.value, path, Node::Kind::object));
      KPORT_TRY(only(m.value, path, {"check", "bench"}));
      ManifestShapes s;
      for (auto [key, slot] : {std::pair{"check", &s.check}, std::pair{"bench", &s.bench}})
        if (const Node* list = member(m.value, key)) {
          const std::string lpath = join(path, key);
          KPORT_TRY(want(*list, lpath, Node::Kind::array));
          for (std::size_t i = 0; i < list->items.size(); ++i) {
            KPORT_TRY(shape(list->items[i], index(lpath, i), m.key, out));
            slot->push_back(list->items[i].text);
          }
        }
      out.shapes[m.key] = std::move(s);
    }
    return {};
  }

  Status env(const Node& n, Manifest& out) const {
    KPORT_TRY(want(n, "env", Node::Kind::object));
    for (const auto& m : n.members) {
      const std::string path = join("env", m.key);
      if (!env_name(m.key))
        return error(m.line, "key '" + path + "': '" + m.key + "' is not an environment variable name");
      auto v = build_string(m.value, path, true);
      if (!v.ok()) return v.error();
      out.env[m.key] = *v;
    }
    return {};
  }

  Result<Manifest> manifest(const Node& root) const {
    if (root.kind != Node::Kind::object)
      return error(root.line, "the manifest must be a JSON object, not " + std::string(kind_name(root.kind)));
    KPORT_TRY(
        only(root, "",
             {"manifest_version", "name", "build", "targets", "variants", "families", "shapes", "tolerances", "env"}));
    Manifest m;
    m.origin = m_origin;
    const Node* version = member(root, "manifest_version");
    if (!version) return error(root.line, "the manifest needs 'manifest_version' (1)");
    if (version->kind != Node::Kind::number || !version->integral)
      return error(version->line, "key 'manifest_version' must be an integer");
    if (version->integer != k_manifest_version)
      return error(version->line, "manifest_version " + std::to_string(version->integer) +
                                      " is not one this kport reads (it reads " + std::to_string(k_manifest_version) +
                                      ")");
    m.manifest_version = static_cast<int>(version->integer);
    const Node* name = member(root, "name");
    if (!name) return error(root.line, "the manifest needs 'name' (the library's name)");
    auto n = string(*name, "name");
    if (!n.ok()) return n.error();
    if (n->size() > 128 || !std::all_of(n->begin(), n->end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
        }))
      return error(name->line, "key 'name': '" + *n + "' must be letters, digits, '-', '_' and '.' (128 at most)");
    m.name = *n;
    const Node* build_node = member(root, "build");
    if (!build_node) return error(root.line, "the manifest needs 'build' (how to build the harness of one target)");
    KPORT_TRY(build(*build_node, m));
    const Node* targets_node = member(root, "targets");
    if (!targets_node) return error(root.line, "the manifest needs 'targets' (\"all\" or nvcc targets to build)");
    KPORT_TRY(targets(*targets_node, m));
    if (const Node* v = member(root, "variants")) {
      if (m.cmake && !m.cmake->variants_from.empty())
        return error(key_line(root, "variants"),
                     "key 'variants': the variants come from the kport_kernel_variant calls "
                     "(build.cmake.variants_from); leave one of the two out");
      KPORT_TRY(variants(*v, m));
    }
    if (const Node* f = member(root, "families")) KPORT_TRY(families(*f, m));
    if (const Node* s = member(root, "shapes")) KPORT_TRY(shapes(*s, m));
    if (const Node* t = member(root, "tolerances")) {
      auto tol = tolerances(*t, "tolerances", manifest_dtypes());
      if (!tol.ok()) return tol.error();
      m.tolerances = std::move(*tol);
    }
    if (const Node* e = member(root, "env")) KPORT_TRY(env(*e, m));
    return m;
  }

 private:
  std::string m_origin;
};

}  // namespace

const std::vector<std::string>& manifest_dtypes() {
  static const std::vector<std::string> k = [] {
    std::vector<std::string> names;
    for (const auto& d : known_dtypes()) names.emplace_back(d.name);
    return names;
  }();
  return k;
}

OpFamily to_op_family(const ManifestFamily& f, const std::string& library, const std::string& repo) {
  OpFamily out;
  out.name = f.name;
  out.description = f.description;
  for (const auto& d : f.dims)
    out.dims.push_back({d.name, d.default_value, d.min, d.max, d.rule, d.omit_default, d.full_at});
  out.dtypes = f.dtypes;
  out.flops = f.flops;
  out.bytes = f.bytes;
  out.bound_hint = parse_bound(f.bound);
  out.example = f.example;
  out.geometry = f.geometry;
  out.requirements = f.requirements;
  out.library = library;
  out.repo = repo;
  return out;
}

std::vector<OpFamily> op_families_of(const Manifest& m, const std::string& repo) {
  std::vector<OpFamily> out;
  for (const auto& f : m.families) out.push_back(to_op_family(f, m.name, repo));
  return out;
}

bool Manifest::builds_target(std::string_view target) const {
  return all_targets || std::find(targets.begin(), targets.end(), target) != targets.end();
}

const ManifestFamily* Manifest::family(std::string_view family_name) const {
  for (const auto& f : families)
    if (f.name == family_name) return &f;
  return nullptr;
}

Result<Manifest> parse_manifest(std::string_view text, const std::string& origin) {
  if (!utf8::valid(text))
    return make_error(Errc::invalid_argument, origin + ":1: invalid JSON: the file is not valid UTF-8");
  Parser parser(text, origin);
  auto root = parser.document();
  if (!root.ok()) return std::move(root).error();
  return Validator(origin).manifest(*root);
}

Result<Manifest> load_manifest(const fs::path& file, const std::string& origin) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return make_error(Errc::not_found, "cannot read " + file.string());
  std::ostringstream s;
  s << in.rdbuf();
  return parse_manifest(s.str(), origin.empty() ? file.string() : origin);
}

std::string cuda_arch_of(std::string_view target) {
  return std::string(target.substr(0, 3) == "sm_" ? target.substr(3) : target);
}

Result<std::string> expand(std::string_view text, const Placeholders& values) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if ((c == '{' || c == '}') && i + 1 < text.size() && text[i + 1] == c) {
      out += c;
      ++i;
      continue;
    }
    if (c == '}') return make_error(Errc::invalid_argument, "a '}' without its '{' (write '}}' for a brace)");
    if (c != '{') {
      out += c;
      continue;
    }
    auto close = text.find('}', i);
    if (close == std::string_view::npos)
      return make_error(Errc::invalid_argument, "a '{' without its '}' (write '{{' for a brace)");
    const std::string_view name = text.substr(i + 1, close - i - 1);
    if (name == "target")
      out += values.target;
    else if (name == "arch")
      out += values.arch;
    else if (name == "build_dir")
      out += values.build_dir;
    else if (name == "source_dir")
      out += values.source_dir;
    else
      return make_error(Errc::invalid_argument, "unknown placeholder '{" + std::string(name) +
                                                    "}' (known: {target}, {arch}, {build_dir}, {source_dir})");
    i = close;
  }
  return out;
}

Result<fs::path> find_library(const fs::path& checkout, const std::string& subdir) {
  std::error_code ec;
  if (!subdir.empty()) return checkout / subdir;
  if (fs::exists(checkout / k_manifest_file, ec)) return checkout;
  const fs::path kernels = checkout / "kernels";
  if (fs::exists(kernels / k_manifest_file, ec) || fs::exists(kernels / "cmake" / "kport_kernels.cmake", ec))
    return kernels;
  return make_error(Errc::not_found,
                    "the checkout has no kport.json at its root (the library manifest, docs/MANIFEST.md), nor a "
                    "kernels/ tree with one or with cmake/kport_kernels.cmake");
}

Result<std::vector<ListedVariant>> parse_list_variants(std::string_view list_json) {
  boost::system::error_code ec;
  auto doc = boost::json::parse(list_json, ec);
  if (ec || !doc.is_object()) return make_error(Errc::invalid_argument, "`list` did not print a JSON object");
  const auto* vs = doc.as_object().if_contains("variants");
  if (!vs || !vs->is_array()) return make_error(Errc::invalid_argument, "`list` printed no 'variants' array");
  std::vector<ListedVariant> out;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < vs->as_array().size(); ++i) {
    const auto& v = vs->as_array()[i];
    const std::string at = "`list` variants[" + std::to_string(i) + "]";
    const auto* o = v.if_object();
    const auto* id = o ? o->if_contains("variant") : nullptr;
    if (!id || !id->is_string()) return make_error(Errc::invalid_argument, at + " has no string 'variant'");
    const std::string full(id->as_string());
    const auto dot = full.find('.');
    if (dot == std::string::npos || dot == 0 || dot + 1 == full.size())
      return make_error(Errc::invalid_argument, at + ": '" + full + "' is not family.variant");
    if (!seen.insert(full).second)
      return make_error(Errc::invalid_argument, at + ": variant '" + full + "' is listed twice");
    ListedVariant lv;
    lv.spec.family = full.substr(0, dot);
    lv.spec.variant = full.substr(dot + 1);
    if (const auto* f = o->if_contains("features")) {
      if (f->is_array()) {
        for (const auto& x : f->as_array())
          if (x.is_string()) lv.spec.features.emplace_back(x.as_string());
      } else if (f->is_string()) {
        const std::string text(f->as_string());
        for (std::size_t p = 0; p <= text.size();) {
          auto end = std::min(text.find(',', p), text.size());
          if (end > p) lv.spec.features.push_back(text.substr(p, end - p));
          p = end + 1;
        }
      }
    }
    const auto* status = o->if_contains("status");
    lv.status = status && status->is_string() ? std::string(status->as_string()) : "built";
    // What kport publishes of each instance must be there.
    if (const auto* instances = o->if_contains("instances")) {
      if (!instances->is_array()) return make_error(Errc::invalid_argument, at + ": 'instances' is not an array");
      for (std::size_t j = 0; j < instances->as_array().size(); ++j) {
        const auto* inst = instances->as_array()[j].if_object();
        const std::string where = at + ".instances[" + std::to_string(j) + "]";
        if (!inst) return make_error(Errc::invalid_argument, where + " is not an object");
        for (const char* key : {"name", "family", "variant"})
          if (const auto* x = inst->if_contains(key); !x || !x->is_string() || x->as_string().empty())
            return make_error(Errc::invalid_argument, where + " has no string '" + key + "'");
      }
    }
    if (const auto* r = o->if_contains("reason"); r && r->is_string()) lv.reason = std::string(r->as_string());
    out.push_back(std::move(lv));
  }
  return out;
}

}  // namespace kport::porting
