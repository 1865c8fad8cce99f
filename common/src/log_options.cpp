#include "kport/common/log_options.h"

namespace kport::log {

void add_options(Options& o) {
  o.add("log-level", "KPORT_LOG_LEVEL", "info", "trace, debug, info, warn, error or off")
      .add("log-format", "KPORT_LOG_FORMAT", "text", "text (key=value) or json (one object per line); UTC timestamps");
}

Result<Settings> read_options(const Options& o) {
  Settings s;
  if (!parse_level(o.get("log-level"), s.level))
    return make_error(Errc::invalid_argument, "--log-level (from " + o.source("log-level") +
                                                  ") must be trace, debug, info, "
                                                  "warn, error or off, got '" +
                                                  o.get("log-level") + "'");
  if (!parse_format(o.get("log-format"), s.format))
    return make_error(Errc::invalid_argument, "--log-format (from " + o.source("log-format") +
                                                  ") must be text or json, got '" + o.get("log-format") + "'");
  return s;
}

}  // namespace kport::log
