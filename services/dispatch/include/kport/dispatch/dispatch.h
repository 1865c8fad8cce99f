// kport-dispatch: which kernel instance to run for (op, dtype, shape) on one GPU model,
// answered offline from a snapshot of kport's measured answers, by the same rule as
// GET /api/v1/best (porting::select_best, linked in as kport::selection).
//
// A snapshot (GET /api/v1/dispatch/snapshot?gpu=MODEL, schema_version 2) carries the
// current figure of every (op, dtype, shape, instance) measured on one GPU model, with
// the commits and drivers they come from. Loading it validates it completely (JSON,
// schema version, every field, the checksum) and, where the caller asks, its age and
// commit; then it precomputes, per (op, dtype), the timed shapes and the winner of each.
// A lookup maps the query to the nearest timed shape (Shape::distance, ties to the
// larger problem) and returns that shape's winner, or, from another shape, ranks that
// shape's figures moved to the query by each instance's waves of tiles over the GPU's
// SMs (porting/wave_model.h; the snapshot carries the SM count and the instances'
// geometries): no allocation, no I/O.
//
// What the API would answer *provisional* or *unranked* (no measured evidence for the
// op and dtype on this GPU model, or none comparable to the shape) is Status::unknown,
// and a shape whose every instance failed is Status::no_best; a shape the family's
// declared requirements rule out (gemm_fp8's K with block scales, the table's `requires`)
// is Status::ruled_out, as the API refuses it: never a silent default. A query is a shape as
// the API writes it (its answer's `query.shape`): every dimension given, one the family
// leaves out at its default left out (the grouped gemms' `valid` at m, or at its default, is
// the contiguous shape, without `valid`); another spelling of it finds no layout or no
// comparable shape, Status::unknown, never another case's answer.
//
// Thread-safety: a Snapshot is immutable after load; lookups from any number of threads
// are safe. Answers point into the Snapshot and stay valid while it lives (a moved
// Snapshot keeps them valid).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace kport::dispatch {

inline constexpr int k_schema_version = 2;

// ---- errors ----------------------------------------------------------------------------

enum class ErrorCode {
  io,              // the file could not be read
  bad_json,        // not JSON, or not the document expected (wrong types)
  schema_version,  // a schema_version this library does not read
  missing_field,   // a required field is absent
  bad_value,       // a field holds a value out of its domain (a shape that does not parse, ...)
  checksum,        // the bytes are not those the coordinator served
  stale,           // older than the caller's max age
  wrong_commit,    // its newest commit is not the one the caller expects
  wrong_gpu,       // for another GPU model than the caller expects
};
const char* error_code_name(ErrorCode code) noexcept;

struct Error {
  ErrorCode code = ErrorCode::bad_json;
  std::string message;  // what was wrong, where, and what to do
};

// A value or an Error.
template <typename T>
class Expected {
 public:
  Expected(T value) : m_v(std::in_place_index<0>, std::move(value)) {}      // NOLINT: implicit by design
  Expected(Error error) : m_v(std::in_place_index<1>, std::move(error)) {}  // NOLINT
  bool ok() const noexcept { return m_v.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }
  T& value() & { return std::get<0>(m_v); }
  const T& value() const& { return std::get<0>(m_v); }
  T&& value() && { return std::get<0>(std::move(m_v)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  const Error& error() const& { return std::get<1>(m_v); }

 private:
  std::variant<T, Error> m_v;
};

// ---- answers ---------------------------------------------------------------------------

enum class Status {
  exact,      // measured at this very shape
  nearest,    // measured; the nearest timed shape answers (matched_shape says which)
  no_best,    // measured, but every instance at the nearest measured shape failed or was not timed
  unknown,    // no measured evidence for (op, dtype) on this GPU model, or none comparable to the shape
  bad_query,  // the shape is not key=value,... with non-negative integers and unique lowercase keys
  ruled_out,  // the family's requirements rule the shape out for every instance (the API's 422)
};
const char* status_name(Status s) noexcept;

struct Answer {
  Status status = Status::unknown;
  std::string_view instance;  // exact / nearest only
  std::string_view variant;
  std::string_view matched_shape;  // canonical; exact, nearest and no_best
  double distance = 0;             // Shape::distance from the query to matched_shape
  double median_us = 0;            // the winner's figure at matched_shape
  double stddev_us = 0;
  bool tie = false;            // another instance is within measured noise of the winner there
  bool unstable = false;       // the winner's figure is flagged unstable (faster beyond noise all the same)
  std::int64_t result_id = 0;  // the winner's result, for GET /api/v1/results/{id}
  // nearest: the winner's figure moved to the query by its waves of tiles (or by problem
  // size), what ranked it; the API's ranking[].estimate_us.
  bool estimated = false;
  double estimate_us = 0;

  bool found() const noexcept { return status == Status::exact || status == Status::nearest; }
};

// ---- snapshots -------------------------------------------------------------------------

struct LoadOptions {
  // Refuse a snapshot generated more than this many seconds before now_ms (stale), or
  // more than five minutes after it (the clocks disagree).
  std::optional<std::int64_t> max_age_s;
  // Refuse a snapshot whose newest commit (commits().front()) is not this one (a full
  // sha or a prefix of at least 7 hex digits).
  std::optional<std::string> expect_commit;
  // Refuse a snapshot of another GPU model.
  std::optional<std::string> expect_gpu;
  // "Now" for max_age_s, in Unix milliseconds; 0: the system clock.
  std::int64_t now_ms = 0;
};

struct TableInfo {  // one (op, dtype) of a snapshot
  std::string op, dtype;
  std::size_t figures = 0;             // current figures, any status
  std::size_t timed_shapes = 0;        // shapes with at least one ranking figure
  std::size_t shapes = 0;              // all shapes measured (timed or not)
  std::vector<std::string> instances;  // winners of some timed shape, sorted
};

class Snapshot {
 public:
  // Validates and indexes a snapshot document; the error names the field and the fix.
  static Expected<Snapshot> parse(std::string_view text, const LoadOptions& options = {});
  static Expected<Snapshot> load_file(const std::string& path, const LoadOptions& options = {});

  Snapshot(Snapshot&&) noexcept;
  Snapshot& operator=(Snapshot&&) noexcept;
  ~Snapshot();

  // The instance for (op, dtype, shape), shape as "m=4096,n=4096,k=4096" (any key
  // order). Never allocates, never throws.
  Answer lookup(std::string_view op, std::string_view dtype, std::string_view shape) const noexcept;

  // A (op, dtype) table resolved once, for callers that look up many shapes of it.
  class Table;
  const Table* table(std::string_view op, std::string_view dtype) const noexcept;  // nullptr: unknown
  Answer lookup(const Table& table, std::string_view shape) const noexcept;

  const std::string& gpu_model() const noexcept;
  const std::string& arch() const noexcept;
  std::int64_t generated_at_ms() const noexcept;
  const std::vector<std::string>& commits() const noexcept;  // newest first
  const std::vector<std::string>& drivers() const noexcept;
  std::vector<TableInfo> tables() const;

  struct Impl;  // opaque: what a loaded snapshot holds

 private:
  explicit Snapshot(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> m_impl;
};

}  // namespace kport::dispatch
