// `redocly lint` (pinned in tests/openapi/package-lock.json, installed by
// deploy/install-deps.sh) over the document a real coordinator serves, with the
// recommended rules of tests/openapi/redocly.yaml: no error, and no more warnings than
// the budget below. Skipped where the linter is not installed, except under CI, where
// install-deps.sh should have installed it, so it fails.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "coordinator_fixture.h"

namespace kport::testing {
namespace json = boost::json;
namespace fs = std::filesystem;
namespace {

// info-license: the project names no license, so the document cannot either.
constexpr std::int64_t k_warning_budget = 1;

TEST_F(CoordinatorTest, OpenApiDocumentHasNoLintErrors) {
  const fs::path cli = fs::path(KPORT_OPENAPI_LINT_DIR) / "node_modules" / "@redocly" / "cli" / "bin" / "cli.js";
  if (!fs::exists(cli)) {
    if (std::getenv("CI")) FAIL() << cli << " is missing: deploy/install-deps.sh runs npm ci --prefix tests/openapi";
    GTEST_SKIP() << cli << " is missing: run npm ci --prefix tests/openapi";
  }
  auto doc = call_raw(client, "GET", url("/api/v1/openapi.json"), "");
  ASSERT_EQ(doc.status, 200) << doc.raw;
  const fs::path file = dir.path() / "openapi.json", report = dir.path() / "lint.json", log = dir.path() / "lint.log";
  std::ofstream(file) << doc.raw;
  // Telemetry and the update check would call out; the machines reach only registries.
  const std::string command = "REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true NO_UPDATE_NOTIFIER=1 '" +
                              std::string(KPORT_NODE) + "' '" + cli.string() + "' lint --config '" +
                              std::string(KPORT_OPENAPI_LINT_DIR) + "/redocly.yaml' --format=json '" + file.string() +
                              "' > '" + report.string() + "' 2> '" + log.string() + "'";
  const int rc = std::system(command.c_str());
  std::stringstream out, err;
  out << std::ifstream(report).rdbuf();
  err << std::ifstream(log).rdbuf();
  boost::system::error_code ec;
  auto result = json::parse(out.str(), ec);
  ASSERT_FALSE(ec) << "redocly did not answer JSON (exit " << rc << "):\n" << out.str() << "\n" << err.str();
  const auto& totals = result.at("totals");
  const std::int64_t errors = totals.at("errors").to_number<std::int64_t>();
  const std::int64_t warnings = totals.at("warnings").to_number<std::int64_t>();
  std::string problems;
  for (const auto& p : result.at("problems").as_array()) {
    problems += std::string(p.at("severity").as_string()) + " " + std::string(p.at("ruleId").as_string()) + ": " +
                std::string(p.at("message").as_string());
    if (const auto* loc = p.as_object().if_contains("location"); loc && loc->is_array() && !loc->as_array().empty())
      if (const auto* ptr = loc->as_array()[0].as_object().if_contains("pointer"))
        problems += " at " + std::string(ptr->as_string());
    problems += "\n";
  }
  std::cout << "redocly lint: " << errors << " errors, " << warnings << " warnings\n" << problems;
  EXPECT_EQ(errors, 0) << problems;
  EXPECT_LE(warnings, k_warning_budget) << problems;
}

}  // namespace
}  // namespace kport::testing
