#include "report.h"

#include <cstdlib>
#include <ctime>

#include "target_info.h"

namespace kport::harness {

Report::Report(const std::string& command, Json device) {
  char stamp[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  m_doc["schema_version"] = k_report_schema_version;
  m_doc["command"] = command;
  m_doc["target"] = target_info().target;
  m_doc["started_utc"] = stamp;
  m_doc["device"] = std::move(device);
  m_doc["results"] = Json::array();
}

void Report::add(Json result) { m_doc["results"].push_back(std::move(result)); }

Json Report::summary() const {
  Json counts = Json::object();
  for (const auto& r : m_doc["results"]) {
    const std::string v = r.value("verdict", "unknown");
    counts[v] = counts.value(v, 0) + 1;
  }
  return counts;
}

int Report::finish() {
  m_doc["summary"] = summary();
  print_json(m_doc);
  const Json& s = m_doc["summary"];
  if (s.value("error", 0) > 0) return k_exit_cuda;
  if (s.value("failed", 0) > 0) return k_exit_failed;
  return k_exit_ok;
}

void Report::abort(const HarnessError& e) {
  m_doc["summary"] = summary();
  m_doc["error"] = {{"code", e.code}, {"message", e.message}};
  print_json(m_doc);
  std::_Exit(e.exit_code);
}

}  // namespace kport::harness
