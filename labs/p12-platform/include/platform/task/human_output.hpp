// The human rendering of gpulab-task's events: streamed rows while the job
// runs (a long training run shows progress as it goes), then a summary table
// and a PASS line. With --json the same events are printed as JSON lines instead.
#pragma once

#include <cstdio>

#include "gpulab/json.hpp"

namespace gpulab::platform::task {

class HumanPrinter {
 public:
  explicit HumanPrinter(std::FILE* out) : out_(out) {}
  void print(const gpulab::Json& event);

 private:
  std::FILE* out_;
  bool header_done_ = false;
};

// One JSON object per line, flushed, so a reader on a pipe sees each event as it happens.
void print_json_line(std::FILE* out, const gpulab::Json& event);

}  // namespace gpulab::platform::task
