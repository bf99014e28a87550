// YAML topology files: libyaml parses the document, and it is turned into the
// same JSON value the JSON reader validates, so both formats share one set of
// field checks and error messages.
#pragma once

#include <string>

#include "gpulab/expected.hpp"
#include "gpulab/json.hpp"

namespace topo {

// True when this build has libyaml.
bool yaml_supported();

// Plain scalars become numbers or booleans when they read as one; quoted
// scalars stay strings. Errors carry libyaml's line and problem.
gpulab::Expected<gpulab::Json> yaml_to_json(const std::string& text);

}  // namespace topo
