#include "kport/porting/work_expr.h"

#include <gtest/gtest.h>

#include <map>

namespace kport::porting {
namespace {

const std::vector<std::string> k_gemm = {"m", "n", "k"};

std::optional<double> eval(std::string_view text, const std::map<std::string, double>& values,
                           const std::vector<std::string>& names = k_gemm) {
  auto e = WorkExpr::parse(text, names);
  EXPECT_TRUE(e.ok()) << text << ": " << e.error().message;
  if (!e.ok()) return std::nullopt;
  return e->eval([&](std::string_view name) -> std::optional<double> {
    auto it = values.find(std::string(name));
    return it == values.end() ? std::nullopt : std::optional<double>(it->second);
  });
}

std::string refusal(std::string_view text) {
  auto e = WorkExpr::parse(text, k_gemm);
  EXPECT_FALSE(e.ok()) << text;
  if (e.ok()) return "(parsed)";
  EXPECT_EQ(e.error().code, Errc::invalid_argument);
  return e.error().message;
}

}  // namespace

TEST(WorkExpr, MultipliesBeforeItAddsAndParenthesesGroup) {
  EXPECT_DOUBLE_EQ(*eval("2*m*n*k", {{"m", 3}, {"n", 4}, {"k", 5}}), 120);
  EXPECT_DOUBLE_EQ(*eval("m*k + k*n + m*n", {{"m", 2}, {"n", 3}, {"k", 4}}), 8 + 12 + 6);
  EXPECT_DOUBLE_EQ(*eval("(m*k + k*n + m*n) * bytes_per_elem", {{"m", 2}, {"n", 3}, {"k", 4}, {"bytes_per_elem", 2}}),
                   52);
  EXPECT_DOUBLE_EQ(*eval("1 + 2 * 3", {}), 7);
  EXPECT_DOUBLE_EQ(*eval("(1 + 2) * 3", {}), 9);
  EXPECT_DOUBLE_EQ(*eval("10 - 2 - 3", {}), 5) << "left to right";
  EXPECT_DOUBLE_EQ(*eval("m / 2 / 2", {{"m", 16}}), 4);
  EXPECT_DOUBLE_EQ(*eval("4*m*m/(1 + k)", {{"m", 4}, {"k", 1}}), 32);
}

TEST(WorkExpr, NoValueWhereANameHasNoneOrTheArithmeticFails) {
  EXPECT_FALSE(eval("2*m*n*k", {{"m", 3}, {"n", 4}}));
  EXPECT_FALSE(eval("m*bytes_per_elem", {{"m", 3}})) << "an unknown dtype has no element size";
  EXPECT_FALSE(eval("m / (n - n)", {{"m", 1}, {"n", 2}})) << "a division by zero";
  EXPECT_FALSE(eval("m*m*m*m*m*m*m*m*m*m*m*m*m*m*m*m*m*m*m*m*m*m*m*m*m*m*m*m*m*m*m*m*m*m", {{"m", 1e10}}))
      << "a result that is not finite";
}

TEST(WorkExpr, TheTextIsKeptAsWritten) {
  auto e = WorkExpr::parse(" 2 * m ", k_gemm);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->text(), " 2 * m ");
}

TEST(WorkExpr, ABrokenExpressionIsRefusedNamingTheColumnAndWhatWasExpected) {
  EXPECT_EQ(refusal(""), "at column 1: the expression is empty (write one such as 2*m*n*k)");
  EXPECT_EQ(refusal("   "), "at column 4: the expression is empty (write one such as 2*m*n*k)");
  EXPECT_EQ(refusal("2*q"), "at column 3: unknown name 'q' (the names are m, n, k, bytes_per_elem)");
  EXPECT_EQ(refusal("2*"), "at column 3: expected a number, a name or '(' but the expression ends");
  EXPECT_EQ(refusal("(m+n"), "at column 5: expected ')'");
  EXPECT_EQ(refusal("m n"), "at column 3: expected an operator (+, -, *, /) or the end, found 'n'");
  EXPECT_EQ(refusal("m^2"), "at column 2: expected an operator (+, -, *, /) or the end, found '^'");
  EXPECT_EQ(refusal("-m"), "at column 1: expected a number, a name or '(', found '-'");
  EXPECT_EQ(refusal("1.5*m"), "at column 2: expected an operator (+, -, *, /) or the end, found '.'");
  EXPECT_EQ(refusal("1234567890123456789"), "at column 1: the integer is longer than 18 digits");
  EXPECT_EQ(refusal(std::string(40, '(') + "m" + std::string(40, ')')),
            "at column 33: parentheses nest deeper than 32");
  EXPECT_EQ(refusal(std::string(300, 'm')), "the expression is longer than 256 characters");
}

// A grouped gemm's rows per group are min(m, valid): m when valid is left at its default
// (every row), valid in the masked layout.
TEST(WorkExpr, MinAndMaxTakeTwoValues) {
  const std::vector<std::string> grouped = {"g", "m", "n", "k", "valid"};
  const char* flops = "2*g*min(m,valid)*n*k";
  EXPECT_DOUBLE_EQ(*eval(flops, {{"g", 8}, {"m", 256}, {"n", 2}, {"k", 3}, {"valid", 64}}, grouped), 2.0 * 8 * 64 * 6);
  EXPECT_DOUBLE_EQ(*eval(flops, {{"g", 8}, {"m", 256}, {"n", 2}, {"k", 3}, {"valid", 1 << 30}}, grouped),
                   2.0 * 8 * 256 * 6);
  EXPECT_DOUBLE_EQ(*eval("max(m, n) - min(m, n)", {{"m", 3}, {"n", 10}}), 7);
  EXPECT_DOUBLE_EQ(*eval("min(m + 1, 2 * (n + 1))", {{"m", 9}, {"n", 3}}), 8);
  EXPECT_DOUBLE_EQ(*eval(" min ( m , n ) ", {{"m", 4}, {"n", 5}}), 4);
  EXPECT_FALSE(eval("min(m, n)", {{"m", 4}})) << "a value without one";
  EXPECT_EQ(refusal("min(m)"), "at column 6: expected ',' between the two values of min(a, b)");
  EXPECT_EQ(refusal("max(m, n"), "at column 9: expected ')' after the two values of max(a, b)");
  EXPECT_EQ(refusal("min*2"), "at column 1: unknown name 'min' (the names are m, n, k, bytes_per_elem)");
}

}  // namespace kport::porting
