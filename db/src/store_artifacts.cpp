// Artifacts: blobs in a content-addressed directory (<dir>/<aa>/<sha256>), metadata in
// the artifacts table. The blob is in place and synced before its row commits, so a
// row never names a missing file; a blob without a row (crash in between) is harmless
// and is adopted by the next upload of the same content.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "impl.h"
#include "kport/common/crypto.h"
#include "queue_ops.h"
#include "rows.h"

namespace kport::db {

using detail::Connection;
namespace fs = std::filesystem;

namespace {

Error io_error(const std::string& what, const std::string& path) {
  return make_error(Errc::unavailable, what + " " + path + ": " + std::strerror(errno));
}

// Writes data to a temp file next to `dest`, fsyncs it and renames it into place.
Status write_blob(const fs::path& dest, std::string_view data) {
  std::error_code ec;
  fs::create_directories(dest.parent_path(), ec);
  if (ec) return make_error(Errc::unavailable, "cannot create " + dest.parent_path().string() + ": " + ec.message());
  const std::string tmp = dest.string() + ".tmp." + crypto::random_token("", 6);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return io_error("cannot create", tmp);
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      Error e = io_error("cannot write", tmp);
      ::close(fd);
      ::unlink(tmp.c_str());
      return e;
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    Error e = io_error("cannot sync", tmp);
    ::unlink(tmp.c_str());
    return e;
  }
  if (::rename(tmp.c_str(), dest.c_str()) != 0) {
    Error e = io_error("cannot move blob to", dest.string());
    ::unlink(tmp.c_str());
    return e;
  }
  return {};
}

Result<std::string> hash_file(const std::string& path, std::int64_t& size) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error(Errc::invalid_argument, "cannot read " + path + ": " + std::strerror(errno));
  crypto::Sha256 h;
  char buf[1 << 16];
  size = 0;
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      return make_error(Errc::unavailable, "cannot read " + path + ": " + std::strerror(errno));
    }
    if (n == 0) break;
    h.update(buf, static_cast<std::size_t>(n));
    size += n;
  }
  ::close(fd);
  return crypto::to_hex(h.finish());
}

}  // namespace

namespace {

// The holder rule for an upload into a job; nothing for an operator's upload.
Status check_writer(Connection& c, const std::optional<JobWriter>& w, std::int64_t now) {
  if (!w) return {};
  auto job = detail::holder_job(c, w->job_id, w->runner_id, w->attempt, now);
  if (!job) return std::move(job).error();
  return {};
}

Result<Artifact> record_artifact(Store::Impl& impl, Artifact a, const std::optional<JobWriter>& writer = std::nullopt) {
  return impl.write<Artifact>([&](Connection& c) -> Result<Artifact> {
    // Again in the transaction: the lease may have ended while the blob was written.
    KPORT_TRY(check_writer(c, writer, impl.now()));
    auto ins = c.prepare(
        "INSERT OR IGNORE INTO artifacts(sha256, size, name, kind, path, created_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    if (!ins) return std::move(ins).error();
    KPORT_TRY(ins->bind_all(a.sha256, a.size, a.name, a.kind, a.path, a.created_ms).run());
    auto get = c.prepare(std::string(detail::k_artifact_select) + " WHERE sha256 = ?1");
    if (!get) return std::move(get).error();
    get->bind(1, a.sha256);
    auto row = detail::collect_one<Artifact>(*get, detail::read_artifact);
    if (!row) return std::move(row).error();
    return std::move(**row);
  });
}

Status check_upload(const Options& o, std::string_view expected) {
  if (o.artifact_dir.empty())
    return make_error(Errc::unavailable, "artifact storage is not configured (no artifact directory)");
  if (!crypto::is_sha256_hex(expected))
    return make_error(Errc::invalid_argument,
                      "artifact sha256 \"" + std::string(expected) + "\" is not 64 lowercase hex digits");
  return {};
}

fs::path blob_path(const Options& o, const std::string& sha) {
  return fs::path(o.artifact_dir) / sha.substr(0, 2) / sha;
}

}  // namespace

Result<Artifact> Store::put_artifact(std::string_view name, std::string_view kind, std::string_view expected_sha256,
                                     std::string_view data, std::optional<JobWriter> writer) {
  KPORT_TRY(check_upload(m_impl->options, expected_sha256));
  // Before the blob is written, so a runner without the lease leaves nothing on disk.
  if (writer) {
    auto held = m_impl->read<bool>([&](Connection& c) -> Result<bool> {
      KPORT_TRY(check_writer(c, writer, m_impl->now()));
      return true;
    });
    if (!held) return std::move(held).error();
  }
  const std::string sha = crypto::sha256_hex(data);
  if (sha != expected_sha256)
    return make_error(Errc::unprocessable, "artifact \"" + std::string(name) + "\" content hashes to " + sha +
                                               ", not the declared " + std::string(expected_sha256));
  const fs::path dest = blob_path(m_impl->options, sha);
  std::error_code ec;
  if (!fs::exists(dest, ec)) KPORT_TRY(write_blob(dest, data));
  return record_artifact(*m_impl,
                         Artifact{sha, static_cast<std::int64_t>(data.size()), std::string(name), std::string(kind),
                                  dest.string(), m_impl->now()},
                         writer);
}

Result<Artifact> Store::put_artifact_file(std::string_view name, std::string_view kind,
                                          std::string_view expected_sha256, const std::string& file) {
  KPORT_TRY(check_upload(m_impl->options, expected_sha256));
  std::int64_t size = 0;
  auto sha = hash_file(file, size);
  if (!sha) return std::move(sha).error();
  if (*sha != expected_sha256)
    return make_error(Errc::unprocessable, "artifact \"" + std::string(name) + "\" content hashes to " + *sha +
                                               ", not the declared " + std::string(expected_sha256));
  const fs::path dest = blob_path(m_impl->options, *sha);
  std::error_code ec;
  fs::create_directories(dest.parent_path(), ec);
  if (fs::exists(dest, ec)) {
    fs::remove(file, ec);
  } else if (::rename(file.c_str(), dest.c_str()) != 0) {
    // Another filesystem: copy through a synced temp file instead.
    fs::path tmp = dest;
    tmp += ".tmp." + crypto::random_token("", 6);
    fs::copy_file(file, tmp, ec);
    if (ec) return make_error(Errc::unavailable, "cannot copy " + file + " into the artifact store: " + ec.message());
    fs::rename(tmp, dest, ec);
    if (ec) return make_error(Errc::unavailable, "cannot move blob to " + dest.string() + ": " + ec.message());
    fs::remove(file, ec);
  }
  return record_artifact(*m_impl,
                         Artifact{*sha, size, std::string(name), std::string(kind), dest.string(), m_impl->now()});
}

Result<std::optional<Artifact>> Store::get_artifact(std::string_view sha256) {
  return m_impl->read<std::optional<Artifact>>([&](Connection& c) -> Result<std::optional<Artifact>> {
    auto s = c.prepare(std::string(detail::k_artifact_select) + " WHERE sha256 = ?1");
    if (!s) return std::move(s).error();
    s->bind(1, sha256);
    return detail::collect_one<Artifact>(*s, detail::read_artifact);
  });
}

}  // namespace kport::db
