// The curriculum's walkthrough and the extension demos, produced by driving
// the real plugin servers through the mock kubelet over Unix sockets in a
// temporary directory.
#pragma once

#include <string>

#include "gpulab/json.hpp"

namespace device_plugin {

struct DemoReport {
  std::string text;
  gpulab::Json json;
  bool passed = true;  // every check behind a printed claim held
};

// whole (4 units) / timeslice (16) / mig (28) and each mode's isolation line.
DemoReport walkthrough();
// MIG geometry, health transitions, feature labels, preferred allocation, MPS.
DemoReport extensions();

// A fresh directory under $TMPDIR (or /tmp), removed with its contents by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace device_plugin
