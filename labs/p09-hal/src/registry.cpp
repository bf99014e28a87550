#include "hal/registry.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <system_error>

#include "gpulab/file.hpp"

#ifndef GPULAB_HAL_BUILD_BACKEND_DIR
#define GPULAB_HAL_BUILD_BACKEND_DIR ""
#endif

namespace gpulab::hal {

namespace fs = std::filesystem;

// A manifest holds one library path (and maybe comments): 64 KiB is plenty.
constexpr std::size_t kMaxManifestBytes = std::size_t{64} << 10;

std::string_view reject_reason_name(RejectReason r) {
  switch (r) {
    case RejectReason::kBadManifest: return "bad-manifest";
    case RejectReason::kDlopenFailed: return "dlopen-failed";
    case RejectReason::kMissingSymbol: return "missing-symbol";
    case RejectReason::kNullDescriptor: return "null-descriptor";
    case RejectReason::kAbiMajorMismatch: return "abi-major-mismatch";
    case RejectReason::kDescriptorTooSmall: return "descriptor-too-small";
    case RejectReason::kInvalidDescriptor: return "invalid-descriptor";
    case RejectReason::kDuplicateName: return "duplicate-name";
    case RejectReason::kNoDevice: return "no-device";
    case RejectReason::kInitFailed: return "init-failed";
  }
  return "?";
}

std::string backend_file_name(std::string_view name) { return fmt::format("gpulab-hal-{}.so", name); }

fs::path build_backend_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path beside = exe.parent_path().parent_path() / "lib" / "hal-backends";
    if (fs::is_directory(beside, ec)) return beside;
  }
  return fs::path(GPULAB_HAL_BUILD_BACKEND_DIR);
}

namespace {
std::vector<fs::path> split_paths(const char* list) {
  std::vector<fs::path> out;
  if (list == nullptr) return out;
  std::string_view rest(list);
  while (!rest.empty()) {
    const auto colon = rest.find(':');
    const std::string_view item = rest.substr(0, colon);
    if (!item.empty()) out.emplace_back(std::string(item));
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return out;
}

std::vector<fs::path> sorted_entries(const fs::path& dir, const auto& keep) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (keep(it->path())) out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// "gpulab-hal-stale.so" -> "stale": a name for files whose descriptor cannot be trusted.
std::string name_from_file(const fs::path& p) {
  std::string stem = p.filename().string();
  if (stem.starts_with("gpulab-hal-")) stem.erase(0, 11);
  if (const auto dot = stem.find('.'); dot != std::string::npos) stem.erase(dot);
  return stem;
}

std::size_t op_index(Op o) { return static_cast<std::size_t>(std::countr_zero(bit(o))); }
std::size_t dtype_index(DType d) { return static_cast<std::size_t>(std::countr_zero(bit(d))); }
bool single_bit(std::uint32_t v) { return std::popcount(v) == 1; }
}  // namespace

DiscoveryOptions DiscoveryOptions::from_environment() {
  DiscoveryOptions o;
  o.paths = split_paths(std::getenv("GPULAB_HAL_BACKENDS"));
  const char* manifests = std::getenv("GPULAB_HAL_MANIFEST_DIR");
  o.manifest_dir = fs::path(manifests != nullptr ? manifests : "/etc/gpulab/hal.d");
  const char* no_build = std::getenv("GPULAB_HAL_NO_BUILD_DIR");
  if (no_build == nullptr || std::string_view(no_build) != "1") o.backend_dir = build_backend_dir();
  return o;
}

DiscoveryOptions DiscoveryOptions::only_dir(fs::path dir) {
  DiscoveryOptions o;
  o.backend_dir = std::move(dir);
  return o;
}

Registry::Registry() = default;

Registry::Registry(const DiscoveryOptions& options) { discover(options); }

Registry::~Registry() {
  // Reverse load order, like the ICD loader's shutdown: the last backend loaded
  // may depend on state an earlier one set up in the process.
  while (!loaded_.empty()) {
    std::unique_ptr<Backend> b = std::move(loaded_.back());
    loaded_.pop_back();
    if (b->desc_.shutdown != nullptr) b->desc_.shutdown(b->ctx_);
    void* handle = b->dl_handle_;
    const bool unloadable = (b->features() & GPULAB_HAL_FEATURE_NOT_UNLOADABLE) == 0;
    b.reset();
    if (handle != nullptr && unloadable) dlclose(handle);
  }
}

void Registry::discover(const DiscoveryOptions& options) {
  for (const fs::path& p : options.paths) load(p, Source::kEnvironment);

  std::error_code ec;
  if (options.manifest_dir && fs::is_directory(*options.manifest_dir, ec)) {
    const auto manifests = sorted_entries(*options.manifest_dir, [](const fs::path& p) {
      return p.extension() == ".hal";
    });
    for (const fs::path& manifest : manifests) {
      // A manifest is one line; the cap keeps a manifest that is a link to
      // /dev/zero or a huge file from eating memory during discovery.
      auto text = gpulab::read_text_file(manifest.string(), kMaxManifestBytes);
      if (!text) {
        reject({manifest, name_from_file(manifest), Source::kManifest, RejectReason::kBadManifest,
                text.error().message});
        continue;
      }
      const std::string line = text.value().substr(0, text.value().find('\n'));
      const auto first = line.find_first_not_of(" \t\r");
      const auto last = line.find_last_not_of(" \t\r");
      if (first == std::string::npos) {
        reject({manifest, name_from_file(manifest), Source::kManifest, RejectReason::kBadManifest,
                "manifest has no library path on its first line"});
        continue;
      }
      fs::path lib = line.substr(first, last - first + 1);
      // Like ocl-icd: an absolute path as is, a bare file name through the
      // dynamic loader's search path, anything else relative to the manifest.
      if (lib.is_relative() && lib.has_parent_path()) lib = manifest.parent_path() / lib;
      load(lib, Source::kManifest);
    }
  }

  if (options.backend_dir && fs::is_directory(*options.backend_dir, ec)) {
    const auto libs = sorted_entries(*options.backend_dir, [](const fs::path& p) {
      const std::string f = p.filename().string();
      return f.starts_with("gpulab-hal-") && p.extension() == ".so";
    });
    for (const fs::path& lib : libs) load(lib, Source::kBuildDir);
  }
}

void Registry::reject(Rejection r) { rejected_.push_back(std::move(r)); }

bool Registry::load(const fs::path& library, Source source) {
  const std::string file_name = name_from_file(library);
  // RTLD_NOW: an unresolved symbol fails here, at load, not in the middle of a
  // call. RTLD_LOCAL: one backend's symbols never satisfy another's.
  dlerror();
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    reject({library, file_name, source, RejectReason::kDlopenFailed,
            fmt::format("dlopen: {}", why != nullptr ? why : "unknown error")});
    return false;
  }
  // Set once the descriptor could be read: a backend that says it must not be
  // unloaded stays mapped even when rejected (e.g. cuda without a GPU).
  bool keep_mapped = false;
  auto fail = [&](RejectReason reason, std::string name, std::string message) {
    if (!keep_mapped) dlclose(handle);
    reject({library, std::move(name), source, reason, std::move(message)});
    return false;
  };

  dlerror();
  void* sym = dlsym(handle, GPULAB_HAL_REGISTER_SYMBOL);
  if (sym == nullptr) {
    return fail(RejectReason::kMissingSymbol, file_name,
                fmt::format("no {} symbol (not a gpulab HAL backend)", GPULAB_HAL_REGISTER_SYMBOL));
  }
  gpulab_hal_register_fn register_fn;
  static_assert(sizeof register_fn == sizeof sym);
  std::memcpy(&register_fn, &sym, sizeof sym);  // POSIX: data pointer -> function pointer
  const gpulab_hal_backend* raw = register_fn();
  if (raw == nullptr)
    return fail(RejectReason::kNullDescriptor, file_name, "register function returned NULL");

  // Rule 2: the version first, read on its own, before any other field.
  std::uint32_t version = 0;
  std::memcpy(&version, raw, sizeof version);
  const std::uint32_t major = GPULAB_HAL_VERSION_MAJOR(version);
  if (major != GPULAB_HAL_ABI_MAJOR) {
    return fail(RejectReason::kAbiMajorMismatch, file_name,
                fmt::format("abi v{} != core v{}", major, GPULAB_HAL_ABI_MAJOR));
  }
  std::uint32_t size = 0;
  std::memcpy(&size, reinterpret_cast<const unsigned char*>(raw) + sizeof version, sizeof size);
  if (size < GPULAB_HAL_DESCRIPTOR_SIZE_V2_0) {
    return fail(RejectReason::kDescriptorTooSmall, file_name,
                fmt::format("descriptor is {} bytes, ABI v2.0 needs at least {}", size,
                            GPULAB_HAL_DESCRIPTOR_SIZE_V2_0));
  }

  // Rule 3: copy what both sides know; the rest stays zero (= not provided).
  auto b = std::unique_ptr<Backend>(new Backend());
  std::memcpy(&b->desc_, raw, std::min<std::size_t>(size, sizeof(gpulab_hal_backend)));
  b->backend_struct_size_ = size;
  keep_mapped = (b->desc_.features & GPULAB_HAL_FEATURE_NOT_UNLOADABLE) != 0;
  b->path_ = library;
  b->source_ = source;
  const gpulab_hal_backend& d = b->desc_;

  if (d.name == nullptr || d.name[0] == '\0' || strnlen(d.name, 64) == 64)
    return fail(RejectReason::kInvalidDescriptor, file_name, "descriptor has no name (or one of 64+ characters)");
  b->name_ = d.name;
  b->description_ = d.description != nullptr ? d.description : "";
  if (d.buffer_alloc == nullptr || d.buffer_free == nullptr || d.copy_to_device == nullptr ||
      d.copy_to_host == nullptr)
    return fail(RejectReason::kInvalidDescriptor, b->name_, "a buffer function is NULL");
  // A descriptor of v2.1 or older has no slot for a v2.2 op: whatever those
  // bits say, it cannot provide one, so they read as not declared.
  if (size <= GPULAB_HAL_DESCRIPTOR_SIZE_V2_1) b->desc_.ops &= GPULAB_HAL_OPS_V2_0;
  for (Op o : kAllOps) {
    if (o != Op::kBuffer && (d.ops & bit(o)) != 0 && !b->has_function(o))
      return fail(RejectReason::kInvalidDescriptor, b->name_,
                  fmt::format("declares {} but its function is NULL", op_name(o)));
  }

  if (const Backend* other = find(b->name_)) {
    return fail(RejectReason::kDuplicateName, b->name_,
                fmt::format("a backend named {} is already loaded from {}", b->name_,
                            other->path().string()));
  }

  if (d.init != nullptr) {
    gpulab_hal_error err;
    gpulab_hal_clear_error(&err);
    void* ctx = nullptr;
    const gpulab_hal_status st = d.init(&ctx, &err);
    if (st != GPULAB_HAL_OK) {
      std::string msg(err.message, strnlen(err.message, sizeof err.message));
      if (msg.empty()) msg = status_name(st);
      return fail(st == GPULAB_HAL_ERR_NO_DEVICE ? RejectReason::kNoDevice : RejectReason::kInitFailed,
                  b->name_, std::move(msg));
    }
    b->ctx_ = ctx;
  }
  b->dl_handle_ = handle;
  loaded_.push_back(std::move(b));
  rebuild_routes();
  return true;
}

const Backend* Registry::find(std::string_view name) const {
  for (const auto& b : loaded_)
    if (b->name() == name) return b.get();
  return nullptr;
}

std::uint32_t Registry::dtypes_for(Op op) const {
  std::uint32_t mask = 0;
  for (std::size_t d = 0; d < kDTypes; ++d)
    if (!routes_[op_index(op)][d].empty()) mask |= 1u << d;
  return mask;
}

void Registry::rebuild_routes() {
  for (auto& per_op : routes_)
    for (auto& list : per_op) list.clear();
  for (const auto& b : loaded_) {
    if (quarantine_reason(b->name())) continue;
    for (Op o : kAllOps) {
      if (!b->declares(o)) continue;
      for (std::size_t d = 0; d < kDTypes; ++d)
        if (o == Op::kBuffer || (b->dtypes() & (1u << d)) != 0) routes_[op_index(o)][d].push_back(b.get());
    }
  }
  for (auto& per_op : routes_)
    for (auto& list : per_op)
      std::stable_sort(list.begin(), list.end(), [](const Backend* x, const Backend* y) {
        return x->perf_hint() > y->perf_hint();
      });
}

Error Registry::refuse(const Request& r) const {
  if (!single_bit(bit(r.op)) || !single_bit(bit(r.dtype)) || op_index(r.op) >= kOps ||
      dtype_index(r.dtype) >= kDTypes)
    return Error{"invalid request: one op and one dtype"};
  // Refused: say why, naming each backend that declares the op and dtype.
  std::string why;
  for (const auto& b : loaded_) {
    if (!b->declares(r.op) || (r.op != Op::kBuffer && !b->declares(r.dtype))) continue;
    std::string reason;
    if (auto q = quarantine_reason(b->name())) {
      reason = "quarantined: " + *q;
    } else {
      reason = b->why_not(r);
    }
    why += fmt::format("{}{}: {}", why.empty() ? "" : "; ", b->name(), reason);
  }
  // Nobody declares it: name the op and dtype. Someone does but cannot take
  // it (shape, quarantine): name the shape too, and each one's reason.
  if (why.empty()) return Error{fmt::format("no loaded backend supports {} {}", request_name(r.dtype), op_name(r.op))};
  return Error{fmt::format("no loaded backend supports {} ({})", describe(r), why)};
}

Expected<const Backend*> Registry::pin(std::string_view name, const Request& r) const {
  const Backend* b = find(name);
  if (b == nullptr) return Error{fmt::format("no loaded backend is named {}", name)};
  if (std::string why = b->why_not(r); !why.empty())
    return Error{fmt::format("backend {} cannot run {}: {}", name, describe(r), why)};
  return b;
}

void Registry::quarantine(std::string_view name, std::string reason) {
  if (find(name) == nullptr) return;
  for (auto& [n, why] : quarantined_) {
    if (n == name) {
      why = std::move(reason);
      return;
    }
  }
  quarantined_.emplace_back(std::string(name), std::move(reason));
  rebuild_routes();
}

std::optional<std::string> Registry::quarantine_reason(std::string_view name) const {
  for (const auto& [n, why] : quarantined_)
    if (n == name) return why;
  return std::nullopt;
}

}  // namespace gpulab::hal
