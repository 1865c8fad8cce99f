// Fuzz target for the runner's reading of the coordinator's answers (answers.h): every
// parser gets the same bytes. Beyond "never throws, never crashes", it checks that what a
// parser accepts holds what the runner relies on (a job with a positive id, an attempt
// >= 0, a hex commit, a target fit for a file name; a sha256 artifact; build records with
// ids and attempts in range; a URL without NUL), and that every Error is unavailable with
// a message.
//
// Built as a libFuzzer target with clang; with another compiler, runner_answers_corpus.cpp
// drives it over tests/fuzz/corpus/runner_answers and deterministic mutations of it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "kport/runner/answers.h"

namespace {

using namespace kport;
using namespace kport::runner;

void require(bool ok) {
  if (!ok) std::abort();
}

template <typename T>
void check_error(const Result<T>& r) {
  if (!r.ok()) require(r.error().code == Errc::unavailable && !r.error().message.empty());
}

bool hex(std::string_view s) {
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);

  std::optional<Lease> lease;
  auto claim = parse_claim(body, &lease);
  check_error(claim);
  if (claim.ok()) {
    require(!lease);
    if (*claim) {
      const ClaimedJob& j = **claim;
      require(j.id >= 1 && j.attempt >= 0 && !j.kind.empty());
      require(j.commit.size() >= 7 && j.commit.size() <= 64 && hex(j.commit));
      require(!j.target.empty() && j.target.find('/') == std::string::npos && j.target.find('&') == std::string::npos);
      require(!j.depends_on || *j.depends_on >= 1);
    }
  } else if (lease) {
    require(lease->job >= 1 && lease->attempt >= 0);
  }

  auto reg = parse_registration(body);
  check_error(reg);
  if (reg.ok()) require(!reg->token.empty() && reg->heartbeat_interval.count() >= 100);

  check_error(parse_heartbeat(body));
  check_error(parse_document(body, "fuzz"));
  auto ack = parse_ack(body, "fuzz");
  if (!ack.ok()) require(ack.error().code == Errc::unavailable);

  auto builds = parse_build_artifacts(body);
  check_error(builds);
  if (builds.ok())
    for (const auto& sha : *builds) require(sha.size() == 64 && hex(sha));

  auto page = parse_builds(body, "fuzz");
  check_error(page);
  if (page.ok())
    for (const auto& b : page->items) require(b.id >= 0 && b.attempt >= 0 && (!b.job || *b.job >= 1));

  auto url = parse_repository_url(body, "lib");
  check_error(url);
  if (url.ok() && *url) require(url->value().find('\0') == std::string::npos);

  auto repo = parse_pipeline_repo(body);
  check_error(repo);
  return 0;
}
