#include "kport/porting/work_expr.h"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace kport::porting {

// Recursive descent straight to a postfix program: the expressions are a handful of
// tokens, read once per manifest, evaluated per result.
class WorkExprParser {
 public:
  WorkExprParser(std::string_view text, const std::vector<std::string>& names) : m_text(text), m_names(names) {}

  Result<WorkExpr> run() {
    WorkExpr out;
    out.m_text = std::string(m_text);
    skip();
    if (m_at == m_text.size()) return fail("the expression is empty (write one such as 2*m*n*k)");
    KPORT_TRY(expr(out.m_program));
    if (m_at != m_text.size())
      return fail("expected an operator (+, -, *, /) or the end, found '" + std::string(1, m_text[m_at]) + "'");
    return out;
  }

 private:
  using Op = WorkExpr::Op;
  static constexpr int k_max_depth = 32;

  Error fail(const std::string& what) const {
    return Error{Errc::invalid_argument, "at column " + std::to_string(m_at + 1) + ": " + what};
  }
  void skip() {
    while (m_at < m_text.size() && m_text[m_at] == ' ') ++m_at;
  }
  bool take(char c) {
    if (m_at < m_text.size() && m_text[m_at] == c) {
      ++m_at;
      skip();
      return true;
    }
    return false;
  }

  Status expr(std::vector<Op>& out) {
    KPORT_TRY(term(out));
    for (;;) {
      if (take('+')) {
        KPORT_TRY(term(out));
        out.push_back({Op::Kind::add, 0, {}});
      } else if (take('-')) {
        KPORT_TRY(term(out));
        out.push_back({Op::Kind::sub, 0, {}});
      } else {
        return {};
      }
    }
  }
  Status term(std::vector<Op>& out) {
    KPORT_TRY(factor(out));
    for (;;) {
      if (take('*')) {
        KPORT_TRY(factor(out));
        out.push_back({Op::Kind::mul, 0, {}});
      } else if (take('/')) {
        KPORT_TRY(factor(out));
        out.push_back({Op::Kind::div, 0, {}});
      } else {
        return {};
      }
    }
  }
  Status factor(std::vector<Op>& out) {
    if (m_at == m_text.size()) return fail("expected a number, a name or '(' but the expression ends");
    const char c = m_text[m_at];
    if (c == '(') {
      if (++m_depth > k_max_depth) return fail("parentheses nest deeper than 32");
      take('(');
      KPORT_TRY(expr(out));
      if (!take(')')) return fail("expected ')'");
      --m_depth;
      return {};
    }
    if (c >= '0' && c <= '9') {
      double v = 0;
      const std::size_t start = m_at;
      while (m_at < m_text.size() && m_text[m_at] >= '0' && m_text[m_at] <= '9') {
        v = v * 10 + (m_text[m_at++] - '0');
        if (m_at - start > 18) {
          m_at = start;
          return fail("the integer is longer than 18 digits");
        }
      }
      out.push_back({Op::Kind::number, v, {}});
      skip();
      return {};
    }
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') {
      const std::size_t start = m_at;
      while (m_at < m_text.size() && (std::isalnum(static_cast<unsigned char>(m_text[m_at])) || m_text[m_at] == '_'))
        ++m_at;
      std::string name(m_text.substr(start, m_at - start));
      skip();
      if ((name == "min" || name == "max") && m_at < m_text.size() && m_text[m_at] == '(') return call(name, out);
      if (name != k_bytes_per_elem && std::find(m_names.begin(), m_names.end(), name) == m_names.end()) {
        m_at = start;
        std::string known;
        for (const auto& n : m_names) known += n + ", ";
        return fail("unknown name '" + name + "' (the names are " + known + std::string(k_bytes_per_elem) + ")");
      }
      out.push_back({Op::Kind::name, 0, std::move(name)});
      return {};
    }
    return fail("expected a number, a name or '(', found '" + std::string(1, c) + "'");
  }
  // min( or max( has been read up to its parenthesis: its two arguments and the ')'.
  Status call(const std::string& fn, std::vector<Op>& out) {
    if (++m_depth > k_max_depth) return fail("parentheses nest deeper than 32");
    take('(');
    KPORT_TRY(expr(out));
    if (!take(',')) return fail("expected ',' between the two values of " + fn + "(a, b)");
    KPORT_TRY(expr(out));
    if (!take(')')) return fail("expected ')' after the two values of " + fn + "(a, b)");
    --m_depth;
    out.push_back({fn == "min" ? Op::Kind::min : Op::Kind::max, 0, {}});
    return {};
  }

  std::string_view m_text;
  const std::vector<std::string>& m_names;
  std::size_t m_at = 0;
  int m_depth = 0;
};

Result<WorkExpr> WorkExpr::parse(std::string_view text, const std::vector<std::string>& names) {
  if (text.size() > 256) return make_error(Errc::invalid_argument, "the expression is longer than 256 characters");
  return WorkExprParser(text, names).run();
}

std::optional<double> WorkExpr::eval(const std::function<std::optional<double>(std::string_view)>& value) const {
  std::vector<double> stack;
  for (const Op& op : m_program) {
    if (op.kind == Op::Kind::number || op.kind == Op::Kind::name) {
      std::optional<double> v = op.kind == Op::Kind::number ? std::optional<double>(op.number) : value(op.name);
      if (!v) return std::nullopt;
      stack.push_back(*v);
      continue;
    }
    if (stack.size() < 2) return std::nullopt;  // a program parse() wrote never gets here
    const double b = stack.back();
    stack.pop_back();
    double& a = stack.back();
    switch (op.kind) {
      case Op::Kind::add: a += b; break;
      case Op::Kind::sub: a -= b; break;
      case Op::Kind::mul: a *= b; break;
      case Op::Kind::min: a = std::min(a, b); break;
      case Op::Kind::max: a = std::max(a, b); break;
      default:
        if (b == 0) return std::nullopt;
        a /= b;
    }
  }
  if (stack.size() != 1 || !std::isfinite(stack.front())) return std::nullopt;
  return stack.front();
}

}  // namespace kport::porting
