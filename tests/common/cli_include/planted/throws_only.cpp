// Fixture for common.cli-include-check-catches-a-plant: includes cli.hpp only to throw.
#include "gpulab/cli.hpp"

void refuse() { throw gpulab::UsageError("--size: must be positive"); }
