// Fleet watch: every (GPU model, driver) a runner has reported is revalidated once. The
// coordinator decides what a revalidation checks and remembers which pairs it opened,
// so this only compares the two lists.
#include <set>

#include "impl.h"
#include "kport/api/repository.h"
#include "kport/api/revalidation.h"
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
  auto fleet = read_answer(*gpus, "GET /api/v1/gpus",
                           [](api::Fields& f) { return api::read_list(f, "items", api::read_gpu_model_info); });
  auto listed = fleet.ok() ? read_answer(*done, "GET /api/v1/revalidations", api::read_revalidation_list)
                           : Result<api::RevalidationList>(fleet.error());
  if (!listed.ok()) {
    report.errors.push_back("fleet: " + listed.error().message);
    return;
  }
  std::set<std::pair<std::string, std::string>> opened;
  for (const auto& r : listed->items) opened.insert({r.gpu_model, r.driver});
  for (const auto& g : *fleet) {
    for (const auto& d : g.drivers) {
      if (d.empty()) continue;
      std::pair<std::string, std::string> key{g.name, d};
      if (opened.count(key)) continue;
      const std::string path = "/api/v1/revalidations";
      auto r = api.post(path, api::to_json(api::RevalidationRequest{key.first, key.second}));
      auto answer = r.ok() ? read_answer(*r, "POST " + path, api::read_revalidation_answer)
                           : Result<api::RevalidationAnswer>(r.error());
      if (!answer.ok()) {
        report.errors.push_back("fleet: " + answer.error().message);
        continue;
      }
      const api::Revalidation& rv = answer->revalidation;
      log::info("revalidation", {{"gpu", key.first},
                                 {"driver", key.second},
                                 {"previous", rv.previous_driver.value_or("")},
                                 {"pipeline", rv.pipeline.value_or(0)}});
      report.revalidations.push_back(key.first + " " + key.second);
    }
  }
}

}  // namespace kport::watcher
