// One loaded backend: its accepted descriptor (copied to the core's own v2.x
// layout, see gpulab_hal.h rule 3), its context, and typed wrappers around the
// function table. Owned by a Registry; Backend objects never move.
#pragma once

#include <gpulab_hal/gpulab_hal.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "gpulab/expected.hpp"
#include "hal/dtype.hpp"
#include "hal/layer_ops.hpp"
#include "hal/status.hpp"

namespace gpulab::hal {

class Backend;

// Where the loader found a backend, in discovery order.
enum class Source : std::uint32_t {
  kEnvironment,  // GPULAB_HAL_BACKENDS (like OCL_ICD_FILENAMES)
  kManifest,     // a manifest file in the manifest directory (like /etc/OpenCL/vendors/*.icd)
  kBuildDir,     // this build's own backend directory
  kExplicit,     // Registry::load() called by the program
};
std::string_view source_name(Source s);  // "env", "manifest", "build", "explicit"

// A buffer that lives on one backend; freed when destroyed. Move-only.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  ~DeviceBuffer();

  [[nodiscard]] gpulab_hal_buffer handle() const { return handle_; }
  [[nodiscard]] std::uint64_t bytes() const { return bytes_; }
  [[nodiscard]] const Backend* owner() const { return owner_; }
  Status release();  // frees now and reports what buffer_free said

 private:
  friend class Backend;
  DeviceBuffer(const Backend* owner, gpulab_hal_buffer handle, std::uint64_t bytes)
      : owner_(owner), handle_(handle), bytes_(bytes) {}
  const Backend* owner_ = nullptr;
  gpulab_hal_buffer handle_ = nullptr;
  std::uint64_t bytes_ = 0;
};

// What a routed call asks for: an op, a dtype and a shape. For matmul the shape
// is (m, n, k); for softmax, rmsnorm and silu_mul (rows = m, cols = n); for rope
// (rows = m, heads x head_dim = n); for paged attention (rows = m, context = n,
// head_dim = k); buffer ops ignore it. max_dim applies to m, n and k.
struct Request {
  Op op = Op::kMatmul;
  DType dtype = DType::kF32;
  std::uint64_t m = 0, n = 0, k = 0;
};
std::string describe(const Request& r);  // "FP16 matmul 64x64x64"

class Backend {
 public:
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;
  ~Backend();

  // Identity and declared capabilities (as the descriptor says; declarations
  // are tested by conformance, not trusted).
  [[nodiscard]] std::string_view name() const { return name_; }
  [[nodiscard]] std::string_view description() const { return description_; }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  [[nodiscard]] Source source() const { return source_; }
  [[nodiscard]] std::uint32_t abi_version() const { return desc_.abi_version; }
  [[nodiscard]] std::uint32_t abi_major() const { return GPULAB_HAL_VERSION_MAJOR(desc_.abi_version); }
  [[nodiscard]] std::uint32_t abi_minor() const { return GPULAB_HAL_VERSION_MINOR(desc_.abi_version); }
  [[nodiscard]] std::uint32_t struct_size() const { return backend_struct_size_; }
  [[nodiscard]] std::uint32_t dtypes() const { return desc_.dtypes; }
  [[nodiscard]] std::uint32_t ops() const { return desc_.ops; }
  [[nodiscard]] std::uint32_t perf_hint() const { return desc_.perf_hint; }
  [[nodiscard]] std::uint32_t features() const { return desc_.features; }
  [[nodiscard]] std::uint64_t max_dim() const { return desc_.max_dim; }
  [[nodiscard]] bool declares(DType d) const { return (desc_.dtypes & bit(d)) != 0; }
  [[nodiscard]] bool declares(Op o) const { return (desc_.ops & bit(o)) != 0; }
  // The descriptor has a non-NULL function for the op (buffer: all four).
  [[nodiscard]] bool has_function(Op o) const;
  // OK, or UNSUPPORTED naming what is missing: the op (with the backend's ABI,
  // "backend limited (ABI 2.1) does not declare rmsnorm") or the dtype.
  [[nodiscard]] Status usable(Op o, DType d) const;
  // Declares the op and the dtype, and the shape fits max_dim.
  [[nodiscard]] bool accepts(const Request& r) const;
  // Why accepts() is false ("does not declare FP16"); empty when it is true.
  [[nodiscard]] std::string why_not(const Request& r) const;
  // The device line from describe_device() (ABI >= 2.1), or "(ABI 2.0: not reported)".
  [[nodiscard]] std::string device() const;

  // Buffers.
  [[nodiscard]] Expected<DeviceBuffer> allocate(std::uint64_t bytes) const;
  Status upload(const DeviceBuffer& dst, const void* src, std::uint64_t bytes,
                std::uint64_t dst_offset = 0) const;
  Status download(void* dst, const DeviceBuffer& src, std::uint64_t bytes,
                  std::uint64_t src_offset = 0) const;

  // Compute ops on buffers of this backend. An undeclared op or dtype returns
  // GPULAB_HAL_ERR_UNSUPPORTED without calling the backend; buffers that are too
  // small or belong to another backend return GPULAB_HAL_ERR_INVALID_ARGUMENT.
  Status matmul(DType d, std::uint64_t m, std::uint64_t n, std::uint64_t k, const DeviceBuffer& a,
                const DeviceBuffer& b, const DeviceBuffer& c) const;
  Status softmax(DType d, std::uint64_t rows, std::uint64_t cols, const DeviceBuffer& in,
                 const DeviceBuffer& out) const;

  // ABI 2.2 decoder-layer ops (gpulab_hal.h says what each computes). A
  // backend built against ABI 2.0 or 2.1, or one that does not declare the op,
  // gets GPULAB_HAL_ERR_UNSUPPORTED naming the op and its ABI, without a call.
  // index buffers (positions, seq_ids, block_table) hold int32.
  Status rmsnorm(DType d, std::uint64_t rows, std::uint64_t cols, float eps, const DeviceBuffer& in,
                 const DeviceBuffer& weight, const DeviceBuffer& out) const;
  Status rope(DType d, const RopeShape& s, const DeviceBuffer& x, const DeviceBuffer& positions,
              const DeviceBuffer& cos_table, const DeviceBuffer& sin_table) const;
  Status silu_mul(DType d, std::uint64_t rows, std::uint64_t cols, const DeviceBuffer& in,
                  const DeviceBuffer& out) const;
  Status paged_attention(DType d, const AttentionShape& s, const DeviceBuffer& q,
                         const DeviceBuffer& k_cache, const DeviceBuffer& v_cache,
                         const DeviceBuffer& block_table, const DeviceBuffer& seq_ids,
                         const DeviceBuffer& positions, const DeviceBuffer& out) const;

  // Host-memory conveniences: allocate, upload, run, download, free. Inputs and
  // outputs are encoded in `d` (see hal::encode / hal::decode).
  Status matmul_host(DType d, std::uint64_t m, std::uint64_t n, std::uint64_t k, const void* a,
                     const void* b, void* c) const;
  Status softmax_host(DType d, std::uint64_t rows, std::uint64_t cols, const void* in,
                      void* out) const;

  // The escape hatch: the raw descriptor (core layout) and context, for a direct
  // call that bypasses the wrappers (the dispatch-overhead bench uses it).
  [[nodiscard]] const gpulab_hal_backend& descriptor() const { return desc_; }
  [[nodiscard]] void* context() const { return ctx_; }

 private:
  friend class Registry;
  friend class DeviceBuffer;
  Backend() = default;
  Status free_buffer(gpulab_hal_buffer h) const;

  std::string name_;
  std::string description_;
  std::filesystem::path path_;
  Source source_ = Source::kExplicit;
  gpulab_hal_backend desc_{};          // zero-filled, then min(struct_size, sizeof) bytes copied in
  std::uint32_t backend_struct_size_ = 0;
  void* ctx_ = nullptr;
  void* dl_handle_ = nullptr;  // dlclose()d by the Registry, after shutdown()
};

}  // namespace gpulab::hal
