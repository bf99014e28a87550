// An environment variable set (or, with nullptr, unset) for the life of the
// object and restored after: for code that reads its settings from the
// environment when it initialises (a HAL backend's init(), a library loaded
// later), in tests and benchmarks. Not thread-safe, like setenv() itself.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace gpulab {

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace gpulab
