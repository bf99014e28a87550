#include "hal/backend.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <utility>

namespace gpulab::hal {

std::string_view source_name(Source s) {
  switch (s) {
    case Source::kEnvironment: return "env";
    case Source::kManifest: return "manifest";
    case Source::kBuildDir: return "build";
    case Source::kExplicit: return "explicit";
  }
  return "?";
}

std::string describe(const Request& r) {
  std::string s = fmt::format("{} {}", request_name(r.dtype), op_name(r.op));
  if (r.op == Op::kMatmul && (r.m || r.n || r.k)) s += fmt::format(" {}x{}x{}", r.m, r.n, r.k);
  if ((r.op == Op::kSoftmax || r.op == Op::kRmsNorm || r.op == Op::kRope || r.op == Op::kSiluMul) &&
      (r.m || r.n))
    s += fmt::format(" {}x{}", r.m, r.n);
  if (r.op == Op::kPagedAttention && (r.m || r.n || r.k)) s += fmt::format(" {}x{}x{}", r.m, r.n, r.k);
  return s;
}

// ---- DeviceBuffer -----------------------------------------------------------
DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : owner_(std::exchange(other.owner_, nullptr)),
      handle_(std::exchange(other.handle_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    release();
    owner_ = std::exchange(other.owner_, nullptr);
    handle_ = std::exchange(other.handle_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() { release(); }

Status DeviceBuffer::release() {
  Status s;
  if (owner_ != nullptr && handle_ != nullptr) s = owner_->free_buffer(handle_);
  owner_ = nullptr;
  handle_ = nullptr;
  bytes_ = 0;
  return s;
}

// ---- Backend ----------------------------------------------------------------
namespace {
[[gnu::noinline, gnu::cold]] Status failure_from(const gpulab_hal_error& e, gpulab_hal_status returned) {
  std::string msg(e.message, strnlen(e.message, sizeof e.message));
  return Status::failure(returned, std::move(msg));
}
// The success path stays inline: it is on every dispatched call.
inline Status from(const gpulab_hal_error& e, gpulab_hal_status returned) {
  if (returned == GPULAB_HAL_OK) [[likely]] return {};
  return failure_from(e, returned);
}
Status invalid(std::string msg) { return Status::failure(GPULAB_HAL_ERR_INVALID_ARGUMENT, std::move(msg)); }
Status unsupported(std::string msg) { return Status::failure(GPULAB_HAL_ERR_UNSUPPORTED, std::move(msg)); }

// a * b * c without overflow, or nullopt.
std::optional<std::uint64_t> mul(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  std::uint64_t ab, r;
  if (__builtin_mul_overflow(a, b, &ab) || __builtin_mul_overflow(ab, c, &r)) return std::nullopt;
  return r;
}
}  // namespace

Backend::~Backend() = default;

bool Backend::accepts(const Request& r) const { return why_not(r).empty(); }

std::string Backend::why_not(const Request& r) const {
  if (!declares(r.op)) return fmt::format("does not declare {}", op_name(r.op));
  if (r.op != Op::kBuffer && !declares(r.dtype))
    return fmt::format("does not declare {}", request_name(r.dtype));
  if (desc_.max_dim != 0) {
    const std::uint64_t biggest = std::max({r.m, r.n, r.k});
    if (biggest > desc_.max_dim)
      return fmt::format("dimension {} > max_dim {}", biggest, desc_.max_dim);
  }
  return {};
}

std::string Backend::device() const {
  if (desc_.describe_device == nullptr)
    return fmt::format("(ABI {}.{}: not reported)", abi_major(), abi_minor());
  char buf[256] = {};
  gpulab_hal_error err;
  gpulab_hal_clear_error(&err);
  const gpulab_hal_status st = desc_.describe_device(ctx_, buf, sizeof buf, &err);
  if (st != GPULAB_HAL_OK) return "(" + describe(from(err, st)) + ")";
  buf[sizeof buf - 1] = '\0';
  return buf;
}

Expected<DeviceBuffer> Backend::allocate(std::uint64_t bytes) const {
  gpulab_hal_error err;
  gpulab_hal_clear_error(&err);
  gpulab_hal_buffer h = nullptr;
  const gpulab_hal_status st = desc_.buffer_alloc(ctx_, bytes, &h, &err);
  if (st != GPULAB_HAL_OK) return Error{describe(from(err, st))};
  if (h == nullptr) return Error{fmt::format("{}: buffer_alloc returned OK and a NULL buffer", name_)};
  return DeviceBuffer(this, h, bytes);
}

Status Backend::free_buffer(gpulab_hal_buffer h) const {
  gpulab_hal_error err;
  gpulab_hal_clear_error(&err);
  return from(err, desc_.buffer_free(ctx_, h, &err));
}

Status Backend::upload(const DeviceBuffer& dst, const void* src, std::uint64_t bytes,
                       std::uint64_t dst_offset) const {
  if (dst.owner() != this) return invalid("buffer belongs to another backend");
  if (dst_offset > dst.bytes() || bytes > dst.bytes() - dst_offset)
    return invalid(fmt::format("copy of {} bytes at offset {} overruns a {}-byte buffer", bytes,
                               dst_offset, dst.bytes()));
  gpulab_hal_error err;
  gpulab_hal_clear_error(&err);
  return from(err, desc_.copy_to_device(ctx_, dst.handle(), dst_offset, src, bytes, &err));
}

Status Backend::download(void* dst, const DeviceBuffer& src, std::uint64_t bytes,
                         std::uint64_t src_offset) const {
  if (src.owner() != this) return invalid("buffer belongs to another backend");
  if (src_offset > src.bytes() || bytes > src.bytes() - src_offset)
    return invalid(fmt::format("copy of {} bytes at offset {} overruns a {}-byte buffer", bytes,
                               src_offset, src.bytes()));
  gpulab_hal_error err;
  gpulab_hal_clear_error(&err);
  return from(err, desc_.copy_to_host(ctx_, dst, src.handle(), src_offset, bytes, &err));
}

Status Backend::matmul(DType d, std::uint64_t m, std::uint64_t n, std::uint64_t k,
                       const DeviceBuffer& a, const DeviceBuffer& b, const DeviceBuffer& c) const {
  if (!declares(Op::kMatmul) || desc_.matmul == nullptr)
    return unsupported(fmt::format("backend {} does not declare matmul", name_));
  if (!declares(d)) return unsupported(fmt::format("backend {} does not declare {}", name_, flag_name(d)));
  const std::uint64_t es = element_size(d);
  const auto need_a = mul(m, k, es);
  const auto need_b = mul(k, n, es);
  const auto need_c = mul(m, n, es);
  if (!need_a || !need_b || !need_c) return invalid("matmul shape overflows 64 bits");
  for (const DeviceBuffer* buf : {&a, &b, &c})
    if (buf->owner() != this) return invalid("buffer belongs to another backend");
  if (a.bytes() < *need_a || b.bytes() < *need_b || c.bytes() < *need_c)
    return invalid(fmt::format("matmul {}x{}x{} needs buffers of {}, {} and {} bytes", m, n, k,
                               *need_a, *need_b, *need_c));
  gpulab_hal_matmul_args args{sizeof(gpulab_hal_matmul_args), bit(d), m, n, k,
                              a.handle(), b.handle(), c.handle()};
  gpulab_hal_error err;
  gpulab_hal_clear_error(&err);
  return from(err, desc_.matmul(ctx_, &args, &err));
}

Status Backend::softmax(DType d, std::uint64_t rows, std::uint64_t cols, const DeviceBuffer& in,
                        const DeviceBuffer& out) const {
  if (!declares(Op::kSoftmax) || desc_.softmax == nullptr)
    return unsupported(fmt::format("backend {} does not declare softmax", name_));
  if (!declares(d)) return unsupported(fmt::format("backend {} does not declare {}", name_, flag_name(d)));
  const auto need = mul(rows, cols, element_size(d));
  if (!need) return invalid("softmax shape overflows 64 bits");
  if (in.owner() != this || out.owner() != this) return invalid("buffer belongs to another backend");
  if (in.bytes() < *need || out.bytes() < *need)
    return invalid(fmt::format("softmax {}x{} needs buffers of {} bytes", rows, cols, *need));
  gpulab_hal_softmax_args args{sizeof(gpulab_hal_softmax_args), bit(d), rows, cols, in.handle(),
                               out.handle()};
  gpulab_hal_error err;
  gpulab_hal_clear_error(&err);
  return from(err, desc_.softmax(ctx_, &args, &err));
}

namespace {
// Allocates at least one byte so degenerate shapes still get real buffers.
Expected<DeviceBuffer> alloc_at_least_one(const Backend& b, std::uint64_t bytes) {
  return b.allocate(std::max<std::uint64_t>(bytes, 1));
}
}  // namespace

Status Backend::matmul_host(DType d, std::uint64_t m, std::uint64_t n, std::uint64_t k,
                            const void* a, const void* b, void* c) const {
  if (!declares(Op::kMatmul) || desc_.matmul == nullptr)
    return unsupported(fmt::format("backend {} does not declare matmul", name_));
  if (!declares(d)) return unsupported(fmt::format("backend {} does not declare {}", name_, flag_name(d)));
  const std::uint64_t es = element_size(d);
  const auto bytes_a = mul(m, k, es);
  const auto bytes_b = mul(k, n, es);
  const auto bytes_c = mul(m, n, es);
  if (!bytes_a || !bytes_b || !bytes_c) return invalid("matmul shape overflows 64 bits");
  auto A = alloc_at_least_one(*this, *bytes_a);
  if (!A) return Status::failure(GPULAB_HAL_ERR_OUT_OF_MEMORY, A.error().message);
  auto B = alloc_at_least_one(*this, *bytes_b);
  if (!B) return Status::failure(GPULAB_HAL_ERR_OUT_OF_MEMORY, B.error().message);
  auto C = alloc_at_least_one(*this, *bytes_c);
  if (!C) return Status::failure(GPULAB_HAL_ERR_OUT_OF_MEMORY, C.error().message);
  if (Status s = upload(A.value(), a, *bytes_a); !s.ok()) return s;
  if (Status s = upload(B.value(), b, *bytes_b); !s.ok()) return s;
  if (Status s = matmul(d, m, n, k, A.value(), B.value(), C.value()); !s.ok()) return s;
  return download(c, C.value(), *bytes_c);
}

Status Backend::softmax_host(DType d, std::uint64_t rows, std::uint64_t cols, const void* in,
                             void* out) const {
  if (!declares(Op::kSoftmax) || desc_.softmax == nullptr)
    return unsupported(fmt::format("backend {} does not declare softmax", name_));
  if (!declares(d)) return unsupported(fmt::format("backend {} does not declare {}", name_, flag_name(d)));
  const auto bytes = mul(rows, cols, element_size(d));
  if (!bytes) return invalid("softmax shape overflows 64 bits");
  auto I = alloc_at_least_one(*this, *bytes);
  if (!I) return Status::failure(GPULAB_HAL_ERR_OUT_OF_MEMORY, I.error().message);
  auto O = alloc_at_least_one(*this, *bytes);
  if (!O) return Status::failure(GPULAB_HAL_ERR_OUT_OF_MEMORY, O.error().message);
  if (Status s = upload(I.value(), in, *bytes); !s.ok()) return s;
  if (Status s = softmax(d, rows, cols, I.value(), O.value()); !s.ok()) return s;
  return download(out, O.value(), *bytes);
}

}  // namespace gpulab::hal
