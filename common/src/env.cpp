#include "kport/common/env.h"

#include <fstream>
#include <sstream>
#include <system_error>

#include "kport/common/clock.h"

namespace kport {

Result<ProcessOutput> Env::run_process(const std::vector<std::string>& argv, const ProcessOptions& options) {
  return kport::run_process(argv, options);
}

std::int64_t Env::now_unix_ms() { return kport::now_unix_ms(); }

Result<std::string> Env::read_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return make_error(Errc::not_found, path.string() + " does not exist");
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(Errc::internal, "cannot open " + path.string());
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return make_error(Errc::internal, "cannot read " + path.string());
  return buf.str();
}

Status Env::write_file(const std::filesystem::path& path, std::string_view bytes) {
  auto tmp = path;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return make_error(Errc::internal, "cannot create " + tmp.string());
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) return make_error(Errc::internal, "cannot write " + tmp.string() + " (disk full?)");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return make_error(Errc::internal, "cannot replace " + path.string() + ": " + ec.message());
  }
  return {};
}

Env& Env::system() {
  static Env env;
  return env;
}

}  // namespace kport
