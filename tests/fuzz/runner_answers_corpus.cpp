// Drives a libFuzzer target without libFuzzer (a compiler other than clang), so CI runs
// it either way: every file of the corpus directories given, then a fixed number of
// deterministic mutations of each (bytes flipped, cut, repeated, spliced with JSON
// tokens and with other seeds), from a fixed seed so a failure reproduces. An exception
// or a failed invariant (abort) fails the test; the input is written out first, as
// crash-<n> in the working directory, and named on stderr.
//
// Usage: runner_answers_corpus [--mutations N] CORPUS_DIR...
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

const char* const k_tokens[] = {"{",
                                "}",
                                "[",
                                "]",
                                ",",
                                ":",
                                "\"",
                                "null",
                                "true",
                                "false",
                                "0",
                                "-1",
                                "1.5",
                                "1e308",
                                "-0.0",
                                "18446744073709551615",
                                "9223372036854775808",
                                "\"job\"",
                                "\"id\"",
                                "\"kind\"",
                                "\"attempt\"",
                                "\"commit\"",
                                "\"target\"",
                                "\"token\"",
                                "\"items\"",
                                "\"artifact\"",
                                "\"payload\"",
                                "\\u0000",
                                "\\ud800",
                                "<html>",
                                "\xff\xfe",
                                "\x00"};

std::string mutate(std::string s, const std::vector<std::string>& seeds, std::mt19937_64& rng) {
  auto pick = [&](std::size_t n) { return n == 0 ? std::size_t{0} : static_cast<std::size_t>(rng() % n); };
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    const std::size_t at = pick(s.size() + 1);
    switch (rng() % 6) {
      case 0:
        if (!s.empty()) s[pick(s.size())] ^= static_cast<char>(1u << (rng() % 8));
        break;
      case 1: s.erase(at, pick(s.size() - at + 1)); break;
      case 2: {
        const char* t = k_tokens[pick(sizeof k_tokens / sizeof *k_tokens)];
        s.insert(at, t, t[0] == '\0' ? 1 : std::strlen(t));
        break;
      }
      case 3: s.insert(at, s.substr(pick(s.size() + 1), pick(16))); break;
      case 4: {
        const std::string& other = seeds[pick(seeds.size())];
        s = s.substr(0, at) + other.substr(pick(other.size() + 1));
        break;
      }
      default:
        if (!s.empty()) s[pick(s.size())] = static_cast<char>(rng());
        break;
    }
  }
  return s;
}

bool run_one(const std::string& input, std::size_t n) {
  {
    // Written before the run: an abort leaves it behind to reproduce with.
    std::ofstream("crash-" + std::to_string(n) + ".tmp", std::ios::binary) << input;
  }
  try {
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(input.data()), input.size());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "input %zu threw: %s (kept as crash-%zu)\n", n, e.what(), n);
    std::filesystem::rename("crash-" + std::to_string(n) + ".tmp", "crash-" + std::to_string(n));
    return false;
  }
  std::filesystem::remove("crash-" + std::to_string(n) + ".tmp");
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  long mutations = 2000;
  std::vector<std::string> seeds;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--mutations" && i + 1 < argc) {
      mutations = std::strtol(argv[++i], nullptr, 10);
      continue;
    }
    std::error_code ec;
    for (const auto& f : std::filesystem::directory_iterator(argv[i], ec)) {
      std::ifstream in(f.path(), std::ios::binary);
      std::stringstream s;
      s << in.rdbuf();
      seeds.push_back(s.str());
    }
    if (ec) {
      std::fprintf(stderr, "cannot read corpus %s: %s\n", argv[i], ec.message().c_str());
      return 2;
    }
  }
  if (seeds.empty()) {
    std::fprintf(stderr, "usage: %s [--mutations N] CORPUS_DIR... (no seed inputs found)\n", argv[0]);
    return 2;
  }
  std::mt19937_64 rng(0x6b706f7274ULL);
  std::size_t n = 0, failed = 0;
  for (const auto& s : seeds) failed += run_one(s, n++) ? 0 : 1;
  for (const auto& s : seeds)
    for (long m = 0; m < mutations; ++m) failed += run_one(mutate(s, seeds, rng), n++) ? 0 : 1;
  std::printf("%zu inputs (%zu seeds), %zu failed\n", n, seeds.size(), failed);
  return failed == 0 ? 0 : 1;
}
