// `licensectl demo`: the whole lifecycle of one licence, run through the real
// files and code paths in a scratch directory, on simulated dates and two
// synthetic machines. Each scenario states the outcome it expects and is
// checked against what the library actually returned.
//
// The demo's vendor keys come from fixed seeds so the printed table is the
// same on every run; real keys come from `licensectl keygen`.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace licensing {

struct DemoRow {
  std::string scenario;
  std::string date;      // simulated system date
  std::string expected;  // a state name, or REJECTED for input refused as malformed
  std::string got;
  int exit_code = 0;     // what `licensectl status` would exit with
  std::string detail;    // the message a user would see
  [[nodiscard]] bool pass() const { return expected == got; }
};

std::vector<DemoRow> run_demo(const std::filesystem::path& workdir);

}  // namespace licensing
