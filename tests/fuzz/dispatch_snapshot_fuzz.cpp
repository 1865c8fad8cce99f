// Fuzz target for kport-dispatch's snapshot loading and lookups. Each input is loaded as
// given (a mutation almost always breaks the checksum, which must then be the error) and
// once more re-signed, so the field checks and the index see the mutated content too.
// Beyond "never throws, never crashes": an error has a message; a loaded snapshot answers
// lookups of every kind of query with a status that holds what callers rely on (an
// instance and a matched shape exactly when found, a matched shape for no_best).
//
// Built as a libFuzzer target with clang; with another compiler, runner_answers_corpus.cpp
// (a generic driver) runs it over tests/fuzz/corpus/dispatch_snapshot and mutations of it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "checksum.h"
#include "kport/dispatch/dispatch.h"

namespace {

using namespace kport::dispatch;

void require(bool ok) {
  if (!ok) std::abort();
}

void exercise(std::string_view text) {
  auto snap = Snapshot::parse(text);
  if (!snap.ok()) {
    require(!snap.error().message.empty());
    return;
  }
  const char* shapes[] = {"m=4096,n=4096,k=4096",
                          "m=1,n=1024,k=1024",
                          "m=0,n=1,k=1",
                          "b=1,h=16,l=4096,d=128,causal=1",
                          "b=2,h=8,l=100,d=64,causal=0",
                          "rows=128,cols=1024",
                          "rows=1,cols=1",
                          "x=1",
                          "",
                          "m=1,m=2"};
  for (const auto& t : snap->tables())
    for (const char* s : shapes) {
      Answer a = snap->lookup(t.op, t.dtype, s);
      require(a.found() == !a.instance.empty());
      if (a.found() || a.status == Status::no_best) require(!a.matched_shape.empty() && a.distance >= 0);
      if (a.status == Status::exact) require(a.distance == 0);
      const auto* table = snap->table(t.op, t.dtype);
      require(table != nullptr);
      require(snap->lookup(*table, s).status == a.status);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  exercise(text);
  std::string_view served(text);
  served = served.substr(0, served.find_last_not_of(" \t\r\n") + 1);
  auto at = detail::find_checksum_digits(served);
  if (at && *at != std::string_view::npos) {
    std::string signed_text(served);
    signed_text.replace(*at, 16, detail::hex16(detail::fnv1a64_masked(signed_text, *at)));
    exercise(signed_text);
  }
  return 0;
}
