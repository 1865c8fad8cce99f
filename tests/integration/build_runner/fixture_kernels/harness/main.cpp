// Fixture harness: `list` prints the variants built into it, one instance each, in the
// shape of kport-harness list.
#include <cstdio>
#include <string>

#include "target_info.h"

int main(int argc, char** argv) {
  using kport::harness::target_info;
  if (argc < 2 || std::string(argv[1]) != "list") {
    std::printf("{\"usage\":\"list\"}\n");
    return 0;
  }
  const auto& info = target_info();
  std::string out = "{\"target\":\"" + info.target + "\",\"variants\":[";
  bool first = true;
  for (const auto& v : info.built) {
    auto dot = v.id.find('.');
    std::string family = v.id.substr(0, dot), variant = v.id.substr(dot + 1);
    out += std::string(first ? "" : ",") + "{\"variant\":\"" + v.id +
           "\",\"status\":\"built\",\"instances\":[{\"name\":\"" + v.id + ".default\",\"family\":\"" + family +
           "\",\"variant\":\"" + variant + "\",\"features\":[\"" + v.features +
           "\"],\"dtypes\":[\"fp32\"],\"config\":{\"block\":128}}]}";
    first = false;
  }
  out += "]}";
  std::printf("%s\n", out.c_str());
  return 0;
}
