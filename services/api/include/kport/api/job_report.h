// What a runner reports about the job attempt it holds, and what it publishes after a
// build: a log chunk (`JobLogAppend`, POST /api/v1/jobs/{id}/log; the log as answered,
// `JobLog`, is read by `kport logs`), the attempt's end
// (`JobCompletion`, POST /api/v1/jobs/{id}/complete), a batch of results (`ResultBatch`,
// POST /api/v1/jobs/{id}/results) or build records (`BuildRecordBatch`, POST
// /api/v1/jobs/{id}/builds), and the harness's kernel instances and variants
// (`KernelCatalogUpload`, PUT /api/v1/kernels, with the families its library's manifest
// declares: families.h). The runner writes them; the coordinator
// reads them and answers each (`JobLogAppended`, `JobCompleted`, `UploadStored`,
// `KernelCatalogStored`). The wire forms are the contracts the OpenAPI document describes
// (`JobLogInput`, `JobLog`, `JobCompleteInput`, `ResultsInput`, `BuildRecordsInput`, `KernelsInput`).
//
// Reading is strict: a field of the wrong type, an attempt out of range, a status kport
// does not know, a failure without a reason or an empty batch is an invalid_argument
// Error naming the field ("field 'attempt' must be the attempt number the claim returned
// (>= 1)", "field 'results[3].median_us' must be a number"); unknown fields are ignored.
// Values; no thread affinity.
#pragma once

#include <boost/json.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kport/api/build_record.h"
#include "kport/api/families.h"
#include "kport/api/fields.h"
#include "kport/api/result_upload.h"

namespace kport::api {

// The attempt a call names: the one the claim returned (1..1000).
inline int read_job_attempt(Fields& f) {
  const std::int64_t attempt = f.integer("attempt");
  if (f.ok() && (attempt < 1 || attempt > 1000))
    f.fail("attempt", "must be the attempt number the claim returned (>= 1)");
  return f.ok() ? static_cast<int>(attempt) : 0;
}

// ---- the log ---------------------------------------------------------------------------

// A chunk of the attempt's log, appended to what it sent before (16 MiB at most).
struct JobLogAppend {
  int attempt = 0;
  std::string text;
};

inline boost::json::object to_json(const JobLogAppend& l) {
  return boost::json::object{{"attempt", l.attempt}, {"text", l.text}};
}

inline JobLogAppend read_job_log_append(Fields& f) {
  JobLogAppend l;
  l.attempt = read_job_attempt(f);
  l.text = f.str("text", 16u << 20);
  return l;
}

inline Result<JobLogAppend> parse_job_log_append(const boost::json::object& o, std::string where = "") {
  return parse_with(o, std::move(where), read_job_log_append);
}

// The log as the coordinator answers it (GET /api/v1/jobs/{id}/log?after=SEQ, read by
// `kport logs`): the chunks after `after`, in order, each with the attempt that sent it.
struct JobLogChunk {
  std::int64_t seq = 0;
  int attempt = 0;
  std::string text;
};

struct JobLog {
  std::int64_t job = 0;
  std::vector<JobLogChunk> chunks;
};

inline boost::json::object to_json(const JobLogChunk& c) {
  return boost::json::object{{"seq", c.seq}, {"attempt", c.attempt}, {"text", c.text}};
}

inline boost::json::object to_json(const JobLog& l) {
  return boost::json::object{{"job", l.job},
                             {"chunks", write_list(l.chunks, [](const JobLogChunk& c) { return to_json(c); })}};
}

inline JobLogChunk read_job_log_chunk(Fields& f) {
  JobLogChunk c;
  c.seq = f.integer("seq");
  auto attempt = f.opt_int("attempt", 0, 1000);
  if (!attempt && f.ok()) f.fail("attempt", "is required (an integer)");
  c.attempt = static_cast<int>(attempt.value_or(0));
  c.text = f.str("text", 16u << 20);
  return c;
}

inline JobLog read_job_log(Fields& f) {
  JobLog l;
  l.job = f.integer("job");
  l.chunks = read_list(f, "chunks", read_job_log_chunk);
  return l;
}

inline Result<JobLog> parse_job_log(const boost::json::object& o, std::string where = "") {
  return parse_with(o, std::move(where), read_job_log);
}

// ---- the end of an attempt -------------------------------------------------------------

// succeeded, or failed with its reason. `retry` marks a passing cause (a clone that timed
// out, a GPU that fell off the bus): the job backs off and runs again while attempts
// remain; without it the failure is permanent. On the wire a failure carries `reason` and
// `retry`; the reader also takes `retryable`, the newer name of `retry` (both given must
// agree), and a missing `status` as succeeded.
struct JobCompletion {
  int attempt = 0;
  bool succeeded = true;
  std::string reason;  // failed: required
  bool retry = false;  // failed: a passing cause
};

inline boost::json::object to_json(const JobCompletion& c) {
  boost::json::object o{{"attempt", c.attempt}, {"status", c.succeeded ? "succeeded" : "failed"}};
  if (!c.succeeded) {
    o["reason"] = c.reason;
    o["retry"] = c.retry;
  }
  return o;
}

inline JobCompletion read_job_completion(Fields& f) {
  JobCompletion c;
  c.attempt = read_job_attempt(f);
  const std::string status = f.opt_str("status", 16).value_or("succeeded");
  c.reason = f.opt_str("reason", 65536).value_or("");
  const bool retryable = f.boolean("retryable", false);
  const bool retry_alias = f.boolean("retry", false);
  if (!f.ok()) return c;
  const bool has_retryable = f.source().contains("retryable");
  if (has_retryable && f.source().contains("retry") && retryable != retry_alias) {
    f.fail_with(Error{Errc::invalid_argument, "fields 'retryable' and 'retry' disagree; send 'retryable' alone"});
    return c;
  }
  c.retry = has_retryable ? retryable : retry_alias;
  if (status != "succeeded" && status != "failed") {
    f.fail("status", "must be succeeded or failed");
    return c;
  }
  c.succeeded = status == "succeeded";
  if (!c.succeeded && c.reason.empty()) f.fail_with(Error{Errc::invalid_argument, "a failed job needs a 'reason'"});
  return c;
}

inline Result<JobCompletion> parse_job_completion(const boost::json::object& o, std::string where = "") {
  return parse_with(o, std::move(where), read_job_completion);
}

// ---- results and build records -----------------------------------------------------------

namespace detail {
// The batch under `key`: an array of 1..100000 records, each read by `read` and named by
// its index ("results[3].median_us").
template <typename Read>
auto read_batch(Fields& f, std::string_view key, Read read) -> decltype(read_list(f, key, read)) {
  const boost::json::array* a = f.array(key);
  if (!f.ok()) return {};
  if (!a || a->empty() || a->size() > 100000) {
    f.fail(key, "must be an array of 1..100000 records");
    return {};
  }
  return read_list(f, key, read);
}
}  // namespace detail

// Up to 100000 results of the attempt (the runner sends them 100 at a time).
struct ResultBatch {
  int attempt = 0;
  std::vector<ResultUpload> results;
};

inline boost::json::object to_json(const ResultBatch& b) {
  return boost::json::object{{"attempt", b.attempt},
                             {"results", write_list(b.results, [](const ResultUpload& r) { return to_json(r); })}};
}

inline ResultBatch read_result_batch(Fields& f) {
  ResultBatch b;
  b.attempt = read_job_attempt(f);
  if (!f.ok()) return b;
  b.results = detail::read_batch(f, "results", read_result_upload);
  return b;
}

inline Result<ResultBatch> parse_result_batch(const boost::json::object& o, std::string where = "") {
  return parse_with(o, std::move(where), read_result_batch);
}

// The build records of the attempt: one per (variant, target) it compiled.
struct BuildRecordBatch {
  int attempt = 0;
  std::vector<BuildRecordUpload> records;
};

inline boost::json::object to_json(const BuildRecordBatch& b) {
  return boost::json::object{{"attempt", b.attempt},
                             {"records", write_list(b.records, [](const BuildRecordUpload& r) { return to_json(r); })}};
}

inline BuildRecordBatch read_build_record_batch(Fields& f) {
  BuildRecordBatch b;
  b.attempt = read_job_attempt(f);
  if (!f.ok()) return b;
  b.records = detail::read_batch(f, "records", read_build_record);
  return b;
}

inline Result<BuildRecordBatch> parse_build_record_batch(const boost::json::object& o, std::string where = "") {
  return parse_with(o, std::move(where), read_build_record_batch);
}

// ---- the kernel catalog ----------------------------------------------------------------

// One kernel instance a harness contains, as its `list` prints it: `features` and
// `config` any JSON object or array, `dtypes` the dtypes it runs (absent: not said).
struct KernelInstanceUpload {
  std::string name, family, variant;
  std::optional<boost::json::value> features, config;
  std::optional<std::vector<std::string>> dtypes;
};

// A variant the harness knows, built or left out on its target, with its features.
struct KernelVariantUpload {
  std::string family, variant;
  std::optional<std::vector<std::string>> features;
};

// The instances (0..10000) and variants (0..1000) of a harness, and the families its
// library declares; one of them not empty.
struct KernelCatalogUpload {
  std::vector<KernelInstanceUpload> instances;
  std::vector<KernelVariantUpload> variants;
  std::optional<LibraryFamilies> library;
};

inline boost::json::object to_json(const KernelInstanceUpload& k) {
  boost::json::object o{{"name", k.name}, {"family", k.family}, {"variant", k.variant}};
  if (k.features) o["features"] = *k.features;
  if (k.dtypes) {
    boost::json::array d;
    for (const auto& x : *k.dtypes) d.emplace_back(x);
    o["dtypes"] = std::move(d);
  }
  if (k.config) o["config"] = *k.config;
  return o;
}

inline boost::json::object to_json(const KernelVariantUpload& v) {
  boost::json::object o{{"family", v.family}, {"variant", v.variant}};
  if (v.features) {
    boost::json::array names;
    for (const auto& x : *v.features) names.emplace_back(x);
    o["features"] = std::move(names);
  }
  return o;
}

// `instances` always, `variants` when there are some.
inline boost::json::object to_json(const KernelCatalogUpload& c) {
  boost::json::object o{
      {"instances", write_list(c.instances, [](const KernelInstanceUpload& k) { return to_json(k); })}};
  if (!c.variants.empty())
    o["variants"] = write_list(c.variants, [](const KernelVariantUpload& v) { return to_json(v); });
  if (c.library) o["library"] = to_json(*c.library);
  return o;
}

namespace detail {
inline std::optional<boost::json::value> opt_json(Fields& f, std::string_view key) {
  const boost::json::value* v = f.source().if_contains(key);
  if (!v || v->is_null()) return std::nullopt;
  return f.json_value(key);
}
}  // namespace detail

inline KernelInstanceUpload read_kernel_instance_upload(Fields& f) {
  KernelInstanceUpload k;
  k.name = f.str("name", 256);
  k.family = f.str("family", 64);
  k.variant = f.str("variant", 128);
  k.features = detail::opt_json(f, "features");
  k.config = detail::opt_json(f, "config");
  // Absent, null or empty: the publisher did not say which dtypes it runs.
  if (auto d = f.str_list("dtypes", 16); !d.empty()) k.dtypes = std::move(d);
  return k;
}

// A variant's features must be an array of strings ("variants[2].features must be an
// array of feature names").
inline KernelVariantUpload read_kernel_variant_upload(Fields& f, const std::string& where) {
  KernelVariantUpload v;
  if (const boost::json::value* features = f.source().if_contains("features")) {
    const bool names = features->is_array() && std::all_of(features->as_array().begin(), features->as_array().end(),
                                                           [](const boost::json::value& x) { return x.is_string(); });
    if (!names) {
      f.fail_with(Error{Errc::invalid_argument, where + ".features must be an array of feature names"});
      return v;
    }
    std::vector<std::string> list;
    for (const auto& x : features->as_array()) list.emplace_back(x.as_string());
    v.features = std::move(list);
  }
  v.family = f.str("family", 64);
  v.variant = f.str("variant", 128);
  return v;
}

inline KernelCatalogUpload read_kernel_catalog_upload(Fields& f) {
  KernelCatalogUpload c;
  const boost::json::array* instances = f.array("instances");
  const boost::json::array* variants = f.array("variants");
  if (!f.ok()) return c;
  bool has_library = false;
  auto library = read_object(f, "library", read_library_families, &has_library);
  if (!f.ok()) return c;
  if (has_library) c.library = std::move(library);
  if ((variants && variants->size() > 1000) || (instances && instances->size() > 10000) ||
      ((!instances || instances->empty()) && (!variants || variants->empty()) && !has_library)) {
    f.fail_with(Error{Errc::invalid_argument,
                      "give 'instances' (an array of 1..10000 instances), 'variants' (1..1000 variants) and/or "
                      "'library' (the families its manifest declares)"});
    return c;
  }
  // Each element named by its index, as the publisher's own list would.
  auto each = [&f](const boost::json::array* a, const char* key, auto read) {
    for (std::size_t i = 0; a && i < a->size() && f.ok(); ++i) {
      const std::string where = std::string(key) + "[" + std::to_string(i) + "]";
      if (!(*a)[i].is_object()) {
        f.fail_with(Error{Errc::invalid_argument, where + " must be an object"});
        return;
      }
      Fields item((*a)[i].as_object(), where);
      read(item, where);
      if (!item.ok()) f.fail_with(item.error());
    }
  };
  each(variants, "variants",
       [&c](Fields& item, const std::string& where) { c.variants.push_back(read_kernel_variant_upload(item, where)); });
  each(instances, "instances",
       [&c](Fields& item, const std::string&) { c.instances.push_back(read_kernel_instance_upload(item)); });
  return c;
}

inline Result<KernelCatalogUpload> parse_kernel_catalog_upload(const boost::json::object& o, std::string where = "") {
  return parse_with(o, std::move(where), read_kernel_catalog_upload);
}

// ---- the coordinator's answers ---------------------------------------------------------
//
// The coordinator writes these; the runner takes any JSON object as the acknowledgement
// (answers.h, parse_ack), so their readers serve tests and other clients. The wire forms
// are `JobLogAppended`, `JobCompleted`, `Stored` and `KernelsPublished`.

// A log chunk stored: the bytes appended.
struct JobLogAppended {
  std::int64_t job = 0;
  std::int64_t appended = 0;
};

inline boost::json::object to_json(const JobLogAppended& a) {
  return boost::json::object{{"job", a.job}, {"appended", a.appended}};
}

inline JobLogAppended read_job_log_appended(Fields& f) {
  JobLogAppended a;
  a.job = f.integer("job");
  a.appended = f.integer("appended");
  return a;
}

// An attempt ended: the job's status after it, whether the end was recorded before (a
// retried call), the jobs it unblocked, and when it goes back to the queue (a retryable
// failure with attempts left).
struct JobCompleted {
  std::int64_t job = 0;
  std::string status;
  bool duplicate = false;
  std::vector<std::int64_t> spawned;
  std::optional<std::int64_t> retry_in_ms;
};

inline boost::json::object to_json(const JobCompleted& c) {
  boost::json::array spawned;
  for (auto id : c.spawned) spawned.emplace_back(id);
  boost::json::object o{
      {"job", c.job}, {"status", c.status}, {"duplicate", c.duplicate}, {"spawned", std::move(spawned)}};
  if (c.retry_in_ms) o["retry_in_ms"] = *c.retry_in_ms;
  return o;
}

namespace detail {
// An array of ids (>= 1) under `key`, each named by its index when it is not one.
inline std::vector<std::int64_t> read_ids(Fields& f, std::string_view key) {
  std::vector<std::int64_t> out;
  const boost::json::array* a = f.array(key);
  for (std::size_t i = 0; a && i < a->size() && f.ok(); ++i) {
    if (!(*a)[i].is_int64() || (*a)[i].as_int64() < 1) {
      f.fail_with(
          Error{Errc::invalid_argument, "field '" + f.path(key) + "[" + std::to_string(i) + "]' must be an id (>= 1)"});
      break;
    }
    out.push_back((*a)[i].as_int64());
  }
  return out;
}
}  // namespace detail

inline JobCompleted read_job_completed(Fields& f) {
  JobCompleted c;
  c.job = f.integer("job");
  c.status = f.str("status", 32);
  c.duplicate = f.boolean("duplicate", false);
  c.spawned = detail::read_ids(f, "spawned");
  c.retry_in_ms = f.opt_int("retry_in_ms", 0, INT64_MAX);
  return c;
}

// A batch of results or build records stored: how many were new, how many the attempt
// had sent before, and every record's id in the batch's order.
struct UploadStored {
  std::int64_t stored = 0;
  std::int64_t duplicates = 0;
  std::vector<std::int64_t> ids;
};

inline boost::json::object to_json(const UploadStored& s) {
  boost::json::array ids;
  for (auto id : s.ids) ids.emplace_back(id);
  return boost::json::object{{"stored", s.stored}, {"duplicates", s.duplicates}, {"ids", std::move(ids)}};
}

inline UploadStored read_upload_stored(Fields& f) {
  UploadStored s;
  s.stored = f.integer("stored");
  s.duplicates = f.integer("duplicates");
  s.ids = detail::read_ids(f, "ids");
  return s;
}

// The kernel catalog stored: the instances and the variants upserted.
struct KernelCatalogStored {
  std::int64_t upserted = 0;
  std::int64_t variants = 0;
};

inline boost::json::object to_json(const KernelCatalogStored& k) {
  return boost::json::object{{"upserted", k.upserted}, {"variants", k.variants}};
}

inline KernelCatalogStored read_kernel_catalog_stored(Fields& f) {
  KernelCatalogStored k;
  k.upserted = f.integer("upserted");
  k.variants = f.integer("variants");
  return k;
}

}  // namespace kport::api
