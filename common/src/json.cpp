#include "gpulab/json.hpp"

#include <fmt/core.h>

namespace gpulab {

void print_json(const Json& doc) { fmt::print("{}\n", doc.dump(2)); }

}  // namespace gpulab
