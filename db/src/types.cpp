#include "kport/db/types.h"

#include <array>
#include <utility>

namespace kport::db {

namespace {

// One table per enum keeps to_string and parse in agreement by construction.
template <typename E, std::size_t N>
using Names = std::array<std::pair<E, std::string_view>, N>;

constexpr Names<PipelineReason, 5> k_reasons{{{PipelineReason::push, "push"},
                                              {PipelineReason::new_target, "new_target"},
                                              {PipelineReason::new_driver, "new_driver"},
                                              {PipelineReason::new_gpu, "new_gpu"},
                                              {PipelineReason::manual, "manual"}}};
constexpr Names<JobKind, 2> k_kinds{{{JobKind::build, "build"}, {JobKind::check, "check"}}};
constexpr Names<JobPurpose, 4> k_purposes{{{JobPurpose::check, "check"},
                                           {JobPurpose::revalidate, "revalidate"},
                                           {JobPurpose::remeasure, "remeasure"},
                                           {JobPurpose::measure_request, "measure_request"}}};
constexpr Names<JobStatus, 6> k_job_statuses{{{JobStatus::queued, "queued"},
                                              {JobStatus::awaiting_runner, "awaiting_runner"},
                                              {JobStatus::running, "running"},
                                              {JobStatus::succeeded, "succeeded"},
                                              {JobStatus::failed, "failed"},
                                              {JobStatus::cancelled, "cancelled"}}};
constexpr Names<PipelineStatus, 5> k_pipeline_statuses{{{PipelineStatus::queued, "queued"},
                                                        {PipelineStatus::running, "running"},
                                                        {PipelineStatus::succeeded, "succeeded"},
                                                        {PipelineStatus::failed, "failed"},
                                                        {PipelineStatus::cancelled, "cancelled"}}};
constexpr Names<RunnerRole, 2> k_roles{{{RunnerRole::build, "build"}, {RunnerRole::gpu, "gpu"}}};
constexpr Names<BuildStatus, 4> k_build_statuses{{{BuildStatus::ok, "ok"},
                                                  {BuildStatus::not_applicable, "not_applicable"},
                                                  {BuildStatus::compile_error, "compile_error"},
                                                  {BuildStatus::timeout, "timeout"}}};
constexpr Names<ResultStatus, 5> k_result_statuses{{{ResultStatus::passed, "passed"},
                                                    {ResultStatus::failed, "failed"},
                                                    {ResultStatus::crashed, "crashed"},
                                                    {ResultStatus::timeout, "timeout"},
                                                    {ResultStatus::unsupported, "unsupported"}}};

template <typename E, std::size_t N>
std::string_view name_of(const Names<E, N>& names, E v) noexcept {
  for (const auto& [e, n] : names)
    if (e == v) return n;
  return "unknown";
}

template <typename E, std::size_t N>
std::optional<E> parse_in(const Names<E, N>& names, std::string_view s) noexcept {
  for (const auto& [e, n] : names)
    if (n == s) return e;
  return std::nullopt;
}

}  // namespace

std::string_view to_string(PipelineReason v) noexcept { return name_of(k_reasons, v); }
std::string_view to_string(JobKind v) noexcept { return name_of(k_kinds, v); }
std::string_view to_string(JobPurpose v) noexcept { return name_of(k_purposes, v); }
std::string_view to_string(JobStatus v) noexcept { return name_of(k_job_statuses, v); }
std::string_view to_string(PipelineStatus v) noexcept { return name_of(k_pipeline_statuses, v); }
std::string_view to_string(RunnerRole v) noexcept { return name_of(k_roles, v); }
std::string_view to_string(BuildStatus v) noexcept { return name_of(k_build_statuses, v); }
std::string_view to_string(ResultStatus v) noexcept { return name_of(k_result_statuses, v); }

std::optional<PipelineReason> parse_pipeline_reason(std::string_view s) noexcept { return parse_in(k_reasons, s); }
std::optional<JobKind> parse_job_kind(std::string_view s) noexcept { return parse_in(k_kinds, s); }
std::optional<JobPurpose> parse_job_purpose(std::string_view s) noexcept { return parse_in(k_purposes, s); }
std::optional<JobStatus> parse_job_status(std::string_view s) noexcept { return parse_in(k_job_statuses, s); }
std::optional<PipelineStatus> parse_pipeline_status(std::string_view s) noexcept {
  return parse_in(k_pipeline_statuses, s);
}
std::optional<RunnerRole> parse_runner_role(std::string_view s) noexcept { return parse_in(k_roles, s); }
std::optional<BuildStatus> parse_build_status(std::string_view s) noexcept { return parse_in(k_build_statuses, s); }
std::optional<ResultStatus> parse_result_status(std::string_view s) noexcept { return parse_in(k_result_statuses, s); }

}  // namespace kport::db
