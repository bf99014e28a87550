// --once --json: the same exposition as one JSON document, for scripts that
// would rather not parse the text format.
#pragma once

#include <map>
#include <string>

#include "gpulab/json.hpp"
#include "gpulab/prom_text.hpp"

namespace exporter {

// {"sources": {"nvml": false, ...},
//  "families": [{"name", "type", "help", "series": [{"labels": {...}, "value": v}
//                 | {"labels", "buckets": [{"le": 0.1, "count": n}, ..., {"le": "+Inf", ...}],
//                    "sum", "count"}]}]}
// Non-finite values are strings ("+Inf", "-Inf", "NaN"), as JSON has no number for them.
gpulab::Json exposition_json(const gpulab::prom::Exposition& e,
                             const std::map<std::string, bool>& sources);

}  // namespace exporter
