// kport: a thin edge over kport::cli.
#include <exception>
#include <iostream>

#include "kport/cli/cli.h"

int main(int argc, char** argv) {
  try {
    return kport::cli::run(argc, argv, std::cout, std::cerr);
  } catch (const std::exception& e) {  // a malformed answer from the server
    std::cerr << "kport: unexpected answer from the coordinator: " << e.what() << "\n";
    return kport::cli::k_exit_unavailable;
  }
}
