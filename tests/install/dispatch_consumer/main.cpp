// Embeds kport-dispatch the way a framework would: load the snapshot once, look up
// shapes, refuse a damaged snapshot. Exits non-zero on any surprise.
#include <kport/dispatch/dispatch.h>

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: dispatch_consumer SNAPSHOT\n");
    return 2;
  }
  auto snap = kport::dispatch::Snapshot::load_file(argv[1]);
  if (!snap) {
    std::fprintf(stderr, "refused: %s\n", snap.error().message.c_str());
    return 1;
  }
  auto big = snap->lookup("gemm", "bf16", "m=4000,n=4000,k=4000");
  auto small = snap->lookup("gemm", "bf16", "m=1,n=1024,k=1024");
  auto none = snap->lookup("gemm", "fp32", "m=1,n=1024,k=1024");
  std::printf("%s %s %s\n", std::string(big.instance).c_str(), std::string(small.instance).c_str(),
              kport::dispatch::status_name(none.status));
  if (big.status != kport::dispatch::Status::nearest || big.instance != "gemm.wgmma_tma.big") return 1;
  if (small.status != kport::dispatch::Status::exact || small.instance != "gemm.mma_sync.small") return 1;
  if (none.status != kport::dispatch::Status::unknown) return 1;
  auto broken = kport::dispatch::Snapshot::parse("{\"schema_version\":1}");
  if (broken.ok()) return 1;
  return 0;
}
