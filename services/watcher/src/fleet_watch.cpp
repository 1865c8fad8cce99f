// Fleet watch: every (GPU model, driver) a runner has reported is revalidated once. The
// coordinator decides what a revalidation checks and remembers which pairs it opened,
// so this only compares the two lists.
#include <set>

#include "impl.h"
#include "kport/common/log.h"

namespace kport::watcher {
namespace json = boost::json;

void Watcher::Impl::watch_fleet(Report& report) {
  auto gpus = api.get("/api/v1/gpus");
  auto done = gpus.ok() ? api.get("/api/v1/revalidations") : Result<json::value>(gpus.error());
  if (!done.ok()) {
    report.errors.push_back("fleet: " + done.error().message);
    return;
  }
  std::set<std::pair<std::string, std::string>> opened;
  for (const auto& r : items(*done)) opened.insert({str(r, "gpu_model"), str(r, "driver")});
  for (const auto& g : items(*gpus)) {
    const auto* drivers = g.is_object() ? g.as_object().if_contains("drivers") : nullptr;
    if (!drivers || !drivers->is_array()) continue;
    for (const auto& d : drivers->as_array()) {
      if (!d.is_string() || d.as_string().empty()) continue;
      std::pair<std::string, std::string> key{str(g, "name"), std::string(d.as_string())};
      if (opened.count(key)) continue;
      auto r = api.post("/api/v1/revalidations", json::object{{"gpu_model", key.first}, {"driver", key.second}});
      if (!r.ok()) {
        report.errors.push_back("fleet: " + r.error().message);
        continue;
      }
      log::info("revalidation", {{"gpu", key.first},
                                 {"driver", key.second},
                                 {"previous", str(*r, "previous_driver")},
                                 {"pipeline", num(*r, "pipeline")}});
      report.revalidations.push_back(key.first + " " + key.second);
    }
  }
}

}  // namespace kport::watcher
