// JSON forms of the store's records, as the REST API shows and accepts them.
// Field names are the API's contract (see openapi.cpp); all functions are pure.
#pragma once

#include <boost/json.hpp>

#include "body_fields.h"
#include "kport/api/bringup.h"
#include "kport/api/build_record.h"
#include "kport/api/job.h"
#include "kport/api/job_report.h"
#include "kport/api/pipeline.h"
#include "kport/api/repository.h"
#include "kport/api/result_upload.h"
#include "kport/api/runner_protocol.h"
#include "kport/db/queries.h"
#include "kport/db/records.h"
#include "kport/porting/selection.h"

namespace kport::coordinator {

// The answers kport::api types (their one JSON mapping is there; to_json is api::to_json
// of these). Times ISO 8601 UTC, none when unset.
api::TargetInfo to_target_info(const db::Target& t);
api::GpuModelInfo to_gpu_model_info(const db::GpuModel& g);
api::RepositoryInfo to_repository_info(const db::Repository& r);
api::PipelineInfo to_pipeline_info(const db::Pipeline& p);
api::BuildRecordInfo to_build_record_info(const db::BuildRecord& b);
boost::json::value to_json(const db::Target& t);
boost::json::value to_json(const db::GpuModel& g);
boost::json::value to_json(const db::KernelInstance& k);
boost::json::value to_json(const db::Repository& r);
boost::json::value to_json(const db::Commit& c);
boost::json::value to_json(const db::Pipeline& p);
boost::json::value to_json(const db::Job& j);
// A job as every answer shows it (kport::api::JobInfo; times ISO 8601 UTC, null when unset).
api::JobInfo to_job_info(const db::Job& j);
// A runner as every answer shows it (kport::api::RunnerInfo).
api::RunnerInfo to_runner_info(const db::Runner& r);
boost::json::value to_json(const db::Runner& r);
boost::json::value to_json(const db::Artifact& a);
boost::json::value to_json(const db::BuildRecord& b);
boost::json::value to_json(const db::ResultRecord& r);
boost::json::value to_json(const db::CommitSummary& s);
boost::json::value to_json(const db::QueueStats& q);

template <typename T>
boost::json::value page_to_json(const db::Page<T>& page) {
  boost::json::array items;
  for (const auto& it : page.items) items.push_back(to_json(it));
  boost::json::object out{{"items", std::move(items)}};
  out["next_cursor"] = page.next_cursor ? boost::json::value(*page.next_cursor) : nullptr;
  return out;
}

template <typename T>
boost::json::value list_to_json(const std::vector<T>& items) {
  boost::json::array out;
  for (const auto& it : items) out.push_back(to_json(it));
  return boost::json::object{{"items", std::move(out)}};
}

// Request bodies. Each reads what it needs from `f` and leaves errors in it.
// A registration's capabilities (kport::api::RunnerCapabilities) as stored.
db::RunnerCapabilities to_caps(const api::RunnerCapabilities& c);
// A result upload (kport::api::ResultUpload, the one mapping of the wire form) as stored.
db::ResultRecord to_record(const api::ResultUpload& u);
db::ResultRecord result_from_json(Fields& f);
// A build record upload (kport::api::BuildRecordUpload) as stored.
db::BuildRecord to_build_record(const api::BuildRecordUpload& u);
// PUT /api/v1/kernels's instances and variants (kport::api::KernelCatalogUpload) as
// stored: features and config as JSON text, "{}" when the upload had none.
db::KernelInstance to_kernel_instance(const api::KernelInstanceUpload& u);
db::KernelVariant to_kernel_variant(const api::KernelVariantUpload& u);

}  // namespace kport::coordinator
