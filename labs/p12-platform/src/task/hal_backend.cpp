#include "platform/task/hal_backend.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "gpulab/errors.hpp"

namespace gpulab::platform::task {

namespace {

std::string loaded_list(const hal::Registry& reg) {
  std::vector<std::string> names;
  for (const auto& b : reg.backends()) names.emplace_back(b->name());
  return names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace

HalBackend::HalBackend(const std::string& name, const std::vector<std::string>& companions) {
  const hal::DiscoveryOptions all = hal::DiscoveryOptions::from_environment();
  std::vector<std::string> files{hal::backend_file_name(name)};
  for (const auto& c : companions) files.push_back(hal::backend_file_name(c));
  const auto wanted = [&](const std::filesystem::path& p) {
    return std::find(files.begin(), files.end(), p.filename().string()) != files.end();
  };
  // The narrow pass, in discovery's order: environment paths, then the build dir.
  registry_ = std::make_unique<hal::Registry>();
  for (const auto& p : all.paths)
    if (wanted(p)) registry_->load(p, hal::Source::kEnvironment);
  if (all.backend_dir)
    for (const auto& f : files) {
      std::error_code ec;
      if (std::filesystem::exists(*all.backend_dir / f, ec))
        registry_->load(*all.backend_dir / f, hal::Source::kBuildDir);
    }
  const auto named = [&](const hal::Rejection& r) {
    return r.name == name || r.name == "gpulab-hal-" + name;
  };
  const auto rejected_here = [&] {
    return std::any_of(registry_->rejected().begin(), registry_->rejected().end(), named);
  };
  if (registry_->find(name) == nullptr && !rejected_here()) {
    registry_.reset();  // unload before loading everything again
    registry_ = std::make_unique<hal::Registry>(all);
  }
  backend_ = registry_->find(name);
  if (backend_ != nullptr) return;
  for (const hal::Rejection& r : registry_->rejected()) {
    if (!named(r)) continue;
    // A backend that is installed but has nothing to run on: a skip, not an error.
    if (r.reason == hal::RejectReason::kNoDevice || r.reason == hal::RejectReason::kInitFailed)
      throw Unsupported(fmt::format("backend '{}' cannot run here: {}", name, r.message));
    throw UsageError(fmt::format("backend '{}' was rejected ({}: {}); loaded backends: {}", name,
                                 hal::reject_reason_name(r.reason), r.message,
                                 loaded_list(*registry_)));
  }
  throw UsageError(
      fmt::format("unknown backend '{}'; loaded backends: {}", name, loaded_list(*registry_)));
}

const hal::Backend& HalBackend::other(const std::string& name) const {
  const hal::Backend* b = registry_->find(name);
  if (b == nullptr)
    throw UsageError(fmt::format("backend '{}' is needed but did not load; loaded backends: {}",
                                 name, loaded_list(*registry_)));
  return *b;
}

std::vector<std::string> HalBackend::loaded_names() const {
  std::vector<std::string> names;
  for (const auto& b : registry_->backends()) names.emplace_back(b->name());
  return names;
}

void matmul_f32(const hal::Backend& b, std::uint64_t m, std::uint64_t n, std::uint64_t k,
                const float* a, const float* bm, float* c) {
  // F32 on the ABI is host binary32, so the arrays go across without encoding.
  const hal::Status s = b.matmul_host(hal::DType::kF32, m, n, k, a, bm, c);
  if (!s.ok())
    throw RunError(
        fmt::format("{} FP32 matmul {}x{}x{} failed: {}", b.name(), m, n, k, hal::describe(s)));
}

}  // namespace gpulab::platform::task
