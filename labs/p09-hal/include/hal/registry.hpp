// The HAL core: discovers backend shared objects like the OpenCL ICD loader,
// dlopens each once (RTLD_NOW), accepts or rejects it with a reason, keeps the
// capability routing table, and unloads in reverse order.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/expected.hpp"
#include "hal/backend.hpp"
#include "hal/dtype.hpp"

namespace gpulab::hal {

// Why a backend file was not loaded. Every reason is tested.
enum class RejectReason : std::uint32_t {
  kBadManifest,         // a manifest without a library path on its first line, or unreadable
                        // (a directory, a device, larger than 64 KiB)
  kDlopenFailed,        // not a loadable shared object (dlerror() says why)
  kMissingSymbol,       // no gpulab_hal_backend_register
  kNullDescriptor,      // the register function returned NULL
  kAbiMajorMismatch,    // "abi v1 != core v2"
  kDescriptorTooSmall,  // struct_size below the v2.0 layout
  kInvalidDescriptor,   // no name, a missing BUFFER function, or a declared op whose function is NULL
  kDuplicateName,       // a backend of that name is already loaded
  kNoDevice,            // init() returned GPULAB_HAL_ERR_NO_DEVICE (e.g. CUDA without a GPU)
  kInitFailed,          // init() returned another error
};
std::string_view reject_reason_name(RejectReason r);  // "abi-major-mismatch", ...

struct Rejection {
  std::filesystem::path path;
  std::string name;  // from the descriptor when it could be read safely; else the file stem
  Source source = Source::kExplicit;
  RejectReason reason = RejectReason::kDlopenFailed;
  std::string message;  // "abi v1 != core v2", "dlsym: ... undefined symbol ..."
};

// Where to look, in this order (the ICD loader's order): explicit paths from
// the environment, then manifest files, then the build's backend directory.
struct DiscoveryOptions {
  std::vector<std::filesystem::path> paths;            // each a backend .so
  std::optional<std::filesystem::path> manifest_dir;   // *.hal files: first line = library path
  std::optional<std::filesystem::path> backend_dir;    // every gpulab-hal-*.so in it, by name

  // GPULAB_HAL_BACKENDS="a.so:b.so" → paths; GPULAB_HAL_MANIFEST_DIR (default
  // /etc/gpulab/hal.d, skipped when absent) → manifest_dir; build_backend_dir()
  // → backend_dir unless GPULAB_HAL_NO_BUILD_DIR=1.
  static DiscoveryOptions from_environment();
  // Only this directory (tests, and programs given --backend-dir).
  static DiscoveryOptions only_dir(std::filesystem::path dir);
};

// Where this build puts its backends: <dir of the running program>/../lib/hal-backends
// when that exists, else the build tree's lib/hal-backends (compiled in).
std::filesystem::path build_backend_dir();
// "gpulab-hal-<name>.so": the file name every backend target gets.
std::string backend_file_name(std::string_view name);

class Registry {
 public:
  Registry();
  explicit Registry(const DiscoveryOptions& options);  // discover(options)
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;
  // shutdown() each context, then dlclose, in reverse load order; a backend
  // with GPULAB_HAL_FEATURE_NOT_UNLOADABLE is shut down but stays mapped.
  ~Registry();

  // Enumerates and loads everything `options` names.
  void discover(const DiscoveryOptions& options);
  // Loads one library; true when accepted. A rejection is recorded, never thrown.
  bool load(const std::filesystem::path& library, Source source = Source::kExplicit);

  [[nodiscard]] const std::vector<std::unique_ptr<Backend>>& backends() const { return loaded_; }
  [[nodiscard]] const std::vector<Rejection>& rejected() const { return rejected_; }
  [[nodiscard]] const Backend* find(std::string_view name) const;

  // Union of the dtypes the loaded (not quarantined) backends declare for `op`.
  [[nodiscard]] std::uint32_t dtypes_for(Op op) const;

  // The accepting backend with the largest perf hint (ties: load order),
  // skipping quarantined ones. Error text when none accepts, e.g.
  // "no loaded backend supports FP8 matmul" (nobody declares it) or, when some
  // backend declares it but cannot take this request, the shape and each reason:
  // "no loaded backend supports FP32 matmul 4096x4096x4096 (limited: dimension 4096 > max_dim 1024)".
  [[nodiscard]] Expected<const Backend*> route(const Request& r) const {
    if (const Backend* b = select(r)) return b;
    return refuse(r);
  }
  // route()'s hot path without the error text: the chosen backend, or nullptr
  // where route() would refuse. A table lookup and a max_dim check per candidate.
  [[nodiscard]] const Backend* select(const Request& r) const noexcept;
  // The named backend if it accepts `r` (a pinned call); else why not.
  [[nodiscard]] Expected<const Backend*> pin(std::string_view name, const Request& r) const;

  // Takes a backend out of routing (a conformance gate: "declared FP16, failed");
  // pin() still reaches it. Unknown names are ignored.
  void quarantine(std::string_view name, std::string reason);
  [[nodiscard]] std::optional<std::string> quarantine_reason(std::string_view name) const;

 private:
  void rebuild_routes();
  [[nodiscard]] Error refuse(const Request& r) const;  // route()'s slow path: the refusal text
  void reject(Rejection r);

  std::vector<std::unique_ptr<Backend>> loaded_;
  std::vector<Rejection> rejected_;
  std::vector<std::pair<std::string, std::string>> quarantined_;
  // routes_[op][dtype]: accepting backends, best first (perf hint desc, load order).
  static constexpr std::size_t kOps = std::size(kAllOps), kDTypes = 5;
  std::array<std::array<std::vector<const Backend*>, kDTypes>, kOps> routes_{};
};

inline const Backend* Registry::select(const Request& r) const noexcept {
  const std::uint32_t op = bit(r.op), dt = bit(r.dtype);
  if (!std::has_single_bit(op) || !std::has_single_bit(dt)) return nullptr;
  const auto oi = static_cast<std::size_t>(std::countr_zero(op));
  const auto di = static_cast<std::size_t>(std::countr_zero(dt));
  if (oi >= kOps || di >= kDTypes) return nullptr;
  for (const Backend* b : routes_[oi][di]) {
    const std::uint64_t limit = b->max_dim();
    if (limit == 0 || (r.m <= limit && r.n <= limit && r.k <= limit)) return b;
  }
  return nullptr;
}

}  // namespace gpulab::hal
