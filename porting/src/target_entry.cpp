// TargetEntry's one member function lives apart from the catalog's loader so that the
// planner, and with it selection's provisional candidates, builds into kport::selection
// without the catalog's JSON and toolkit probing.
#include <algorithm>

#include "kport/porting/catalog.h"

namespace kport::porting {

bool TargetEntry::has(std::string_view feature) const {
  return std::binary_search(features.begin(), features.end(), feature);
}

}  // namespace kport::porting
