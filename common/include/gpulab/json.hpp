// JSON output: every program's --json prints exactly one document on stdout.
#pragma once

#include <nlohmann/json.hpp>

namespace gpulab {

using Json = nlohmann::ordered_json;  // keys stay in the order the lab wrote them

void print_json(const Json& doc);

}  // namespace gpulab
