// The logging options every kport service declares the same way:
//   --log-level trace|debug|info|warn|error|off   [env KPORT_LOG_LEVEL] (default info)
//   --log-format text|json                        [env KPORT_LOG_FORMAT] (default text)
// Both formats stamp each line in UTC (ISO-8601 with Z), as the API speaks.
#pragma once

#include "kport/common/log.h"
#include "kport/common/options.h"
#include "kport/common/result.h"

namespace kport::log {

void add_options(Options& o);
// Reads the options add_options declared; invalid_argument names the option and the
// accepted values.
Result<Settings> read_options(const Options& o);

}  // namespace kport::log
