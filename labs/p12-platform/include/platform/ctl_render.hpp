// gpulabctl's human output, from the API's JSON (so what it prints is exactly
// what the API said, and the same functions are unit-tested on fixed JSON).
#pragma once

#include <string>

#include "gpulab/json.hpp"

namespace platform {

std::string render_nodes(const gpulab::Json& nodes);
std::string render_jobs(const gpulab::Json& jobs);
std::string render_job(const gpulab::Json& job);  // describe: the job, its placement and tasks
std::string render_top(const gpulab::Json& jobs, const gpulab::Json& nodes, const gpulab::Json& licence);

}  // namespace platform
