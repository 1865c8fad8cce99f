// Enumerations stored in the kport database and their stable text forms.
//
// The text form is what the database stores and what the REST API shows; it never
// changes once released (add new values, do not rename). Parsing returns nullopt for
// unknown text. All functions are pure and thread-safe.
#pragma once

#include <optional>
#include <string_view>

namespace kport::db {

// Why a pipeline exists.
enum class PipelineReason { push, new_target, new_driver, new_gpu, manual };

enum class JobKind { build, check };

// Why a job exists (migration 0013): a commit's own build or check, a driver or GPU
// revalidation, a verdict's re-measure, a user's measure request. The coordinator sets
// it from the payload's typed purpose (kport::api::JobPurpose, the same names).
enum class JobPurpose { check, revalidate, remeasure, measure_request };

// Job lifecycle (see store.h, "Queue state machine"). `awaiting_runner` is never
// stored: it is reported for a queued check job while no online runner can take it.
enum class JobStatus { queued, awaiting_runner, running, succeeded, failed, cancelled };

// Derived from a pipeline's jobs: any running or partly done -> running, all queued ->
// queued, all done: any failed -> failed, else any cancelled -> cancelled, else succeeded.
enum class PipelineStatus { queued, running, succeeded, failed, cancelled };

enum class RunnerRole { build, gpu };

// Outcome of compiling one variant for one target.
enum class BuildStatus { ok, not_applicable, compile_error, timeout };

// Outcome of checking one kernel instance on a GPU.
enum class ResultStatus { passed, failed, crashed, timeout, unsupported };

std::string_view to_string(PipelineReason v) noexcept;
std::string_view to_string(JobKind v) noexcept;
std::string_view to_string(JobPurpose v) noexcept;
std::string_view to_string(JobStatus v) noexcept;
std::string_view to_string(PipelineStatus v) noexcept;
std::string_view to_string(RunnerRole v) noexcept;
std::string_view to_string(BuildStatus v) noexcept;
std::string_view to_string(ResultStatus v) noexcept;

std::optional<PipelineReason> parse_pipeline_reason(std::string_view s) noexcept;
std::optional<JobKind> parse_job_kind(std::string_view s) noexcept;
std::optional<JobPurpose> parse_job_purpose(std::string_view s) noexcept;
std::optional<JobStatus> parse_job_status(std::string_view s) noexcept;
std::optional<PipelineStatus> parse_pipeline_status(std::string_view s) noexcept;
std::optional<RunnerRole> parse_runner_role(std::string_view s) noexcept;
std::optional<BuildStatus> parse_build_status(std::string_view s) noexcept;
std::optional<ResultStatus> parse_result_status(std::string_view s) noexcept;

}  // namespace kport::db
