#include "json_out.h"

#include <unistd.h>

#include <cstdio>
#include <iostream>

namespace kport::harness {

Json error_json(const HarnessError& e) {
  Json doc;
  doc["error"] = {{"code", e.code}, {"message", e.message}};
  return doc;
}

void print_json(const Json& doc) {
  const int indent = isatty(STDOUT_FILENO) ? 2 : -1;
  std::cout << doc.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  std::cout.flush();
}

int report_error(const HarnessError& e) {
  print_json(error_json(e));
  return e.exit_code;
}

}  // namespace kport::harness
