/* gpulab_hal.h — the backend ABI of the gpulab hardware-abstraction layer.
 *
 * Plain C11, so a vendor can build a backend with any C or C++ compiler from
 * this one file and nothing else. This header IS the binary contract between
 * the HAL core and every backend shared object; the rules that keep it stable:
 *
 *   1. A backend exports exactly one symbol, gpulab_hal_backend_register(),
 *      which returns a pointer to a static gpulab_hal_backend descriptor.
 *      Everything else in the backend is hidden (-fvisibility=hidden).
 *   2. The descriptor's first field is the ABI version (major << 16 | minor),
 *      the second its own size in bytes. The core reads those two first and
 *      refuses, before touching anything else, a backend whose major differs
 *      from its own or whose descriptor is smaller than the v2.0 layout.
 *   3. Same major, any minor: the core copies min(struct_size, sizeof) bytes
 *      of the descriptor into a zeroed one of its own, so fields a backend is
 *      too old to have read as zero/NULL ("not provided"), and fields a backend
 *      is too new for are ignored.
 *   4. Fixed-width integers only, enums as #defines with explicit values,
 *      reserved fields, and growth only at the END of a struct. Never reorder,
 *      never insert in the middle, never change a type: that is a new major.
 *   5. No exceptions, no C++ types, no ownership across the boundary. Every
 *      call returns a gpulab_hal_status and fills a caller-owned
 *      gpulab_hal_error with the code and a message for that very call.
 *
 * History:
 *   v1   (retired) { abi_version; name; dtypes; perf; matmul(float*) } — no
 *        size field, host pointers only. The core rejects it (major 1 != 2).
 *   v2.0 size field, capability masks, max_dim, reserved[8], buffers,
 *        matmul and softmax through argument structs, per-call errors.
 *   v2.1 appends describe_device() (what hardware the backend drives).
 *   v2.2 appends what a transformer decoder layer needs besides matmul:
 *        rmsnorm(), rope(), silu_mul() and paged_attention() (queries against
 *        K/V gathered through a block table), with OP bits 3..6. A v2.0/v2.1
 *        backend still loads; the core reads its v2.2 ops as not declared.
 */
#ifndef GPULAB_HAL_H
#define GPULAB_HAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- versions ---------------------------------------------------------- */
#define GPULAB_HAL_ABI_MAJOR 2u
#define GPULAB_HAL_ABI_MINOR 2u
#define GPULAB_HAL_MAKE_VERSION(major, minor) ((uint32_t)(((major) << 16) | (minor)))
#define GPULAB_HAL_VERSION_MAJOR(v) ((uint32_t)(v) >> 16)
#define GPULAB_HAL_VERSION_MINOR(v) ((uint32_t)(v) & 0xFFFFu)
#define GPULAB_HAL_ABI_VERSION GPULAB_HAL_MAKE_VERSION(GPULAB_HAL_ABI_MAJOR, GPULAB_HAL_ABI_MINOR)

/* The one symbol a backend exports. */
#define GPULAB_HAL_REGISTER_SYMBOL "gpulab_hal_backend_register"

/* ---- status codes (values are ABI: never renumber) --------------------- */
typedef int32_t gpulab_hal_status;
#define GPULAB_HAL_OK 0
#define GPULAB_HAL_ERR_INVALID_ARGUMENT 1 /* bad shape, NULL buffer, out-of-range copy */
#define GPULAB_HAL_ERR_UNSUPPORTED 2      /* op or dtype this backend does not do */
#define GPULAB_HAL_ERR_OUT_OF_MEMORY 3
#define GPULAB_HAL_ERR_NO_DEVICE 4        /* the hardware this backend drives is absent */
#define GPULAB_HAL_ERR_DEVICE 5           /* the vendor runtime reported a failure */
#define GPULAB_HAL_ERR_INTERNAL 6

/* ---- capabilities (bit flags; values are ABI) -------------------------- */
/* Element types. All tensors are dense and row-major.
 *   F32  IEEE binary32            F16  IEEE binary16 bits in a uint16_t
 *   BF16 upper half of a binary32 FP8  OCP E4M3 ("e4m3fn") in a uint8_t
 *   INT8 two's complement int8_t (reserved for a future op; no op uses it yet)
 * Matmul and softmax accumulate in at least binary32 and round the result to
 * the output dtype (round to nearest even). */
#define GPULAB_HAL_DTYPE_F32 (1u << 0)
#define GPULAB_HAL_DTYPE_F16 (1u << 1)
#define GPULAB_HAL_DTYPE_BF16 (1u << 2)
#define GPULAB_HAL_DTYPE_FP8 (1u << 3)
#define GPULAB_HAL_DTYPE_INT8 (1u << 4)

/* Operations. BUFFER = buffer_alloc/free/copy_to_device/copy_to_host, which
 * every backend must provide; MATMUL and SOFTMAX are the compute ops. Softmax
 * is the operation-level op (curriculum Ch. 5: abstract at the altitude where
 * each backend can use its own fast path). */
#define GPULAB_HAL_OP_BUFFER (1u << 0)
#define GPULAB_HAL_OP_MATMUL (1u << 1)
#define GPULAB_HAL_OP_SOFTMAX (1u << 2)
/* v2.2: the decoder-layer ops (argument structs below). */
#define GPULAB_HAL_OP_RMSNORM (1u << 3)
#define GPULAB_HAL_OP_ROPE (1u << 4)
#define GPULAB_HAL_OP_SILU_MUL (1u << 5)
#define GPULAB_HAL_OP_PAGED_ATTENTION (1u << 6)
/* The op bits each minor can carry: the core drops bits a backend's
 * descriptor is too old to have a function for. */
#define GPULAB_HAL_OPS_V2_0 (GPULAB_HAL_OP_BUFFER | GPULAB_HAL_OP_MATMUL | GPULAB_HAL_OP_SOFTMAX)
#define GPULAB_HAL_OPS_V2_2                                                                  \
  (GPULAB_HAL_OPS_V2_0 | GPULAB_HAL_OP_RMSNORM | GPULAB_HAL_OP_ROPE | GPULAB_HAL_OP_SILU_MUL | \
   GPULAB_HAL_OP_PAGED_ATTENTION)

/* Feature flags: facts about the backend that do not change what it computes. */
#define GPULAB_HAL_FEATURE_HOST_MEMORY (1u << 0) /* buffers live in host RAM */
#define GPULAB_HAL_FEATURE_THREADED (1u << 1)    /* uses several CPU threads per call */
#define GPULAB_HAL_FEATURE_VENDOR_LIB (1u << 2)  /* wraps a vendor library (BLAS, cuBLAS, OpenCL) */
/* The core calls shutdown() but never dlcloses this backend (like the OpenCL
 * ICD loader's CL_PLATFORM_UNLOADABLE_KHR = false): for backends that pull in
 * vendor runtimes which register atexit handlers or keep global state (the
 * CUDA runtime, cuBLAS, an OpenCL ICD with an LLVM inside) and are not safe to
 * unload while the process lives. */
#define GPULAB_HAL_FEATURE_NOT_UNLOADABLE (1u << 3)

/* ---- errors ------------------------------------------------------------ */
typedef struct gpulab_hal_error {
  int32_t code;      /* the same value the call returned */
  uint32_t reserved; /* zero */
  char message[248]; /* NUL-terminated; empty on success */
} gpulab_hal_error;

/* An opaque buffer owned by one backend (host memory, cl_mem, a CUDA pointer). */
typedef struct gpulab_hal_buffer_s* gpulab_hal_buffer;

/* ---- operation arguments (versioned by struct_size; append-only) ------- */
/* C[m x n] = A[m x k] * B[k x n], all of `dtype`, row-major. m, n or k may be
 * zero: k == 0 writes zeros to C; m == 0 or n == 0 writes nothing. */
typedef struct gpulab_hal_matmul_args {
  uint32_t struct_size; /* sizeof(gpulab_hal_matmul_args) of the caller */
  uint32_t dtype;       /* one GPULAB_HAL_DTYPE_* bit */
  uint64_t m, n, k;
  gpulab_hal_buffer a, b, c;
} gpulab_hal_matmul_args;

/* out[r, :] = softmax(in[r, :]) for each of `rows` rows of `cols` elements,
 * computed stably (subtract the row maximum). in and out may be the same. */
typedef struct gpulab_hal_softmax_args {
  uint32_t struct_size;
  uint32_t dtype;
  uint64_t rows, cols;
  gpulab_hal_buffer in, out;
} gpulab_hal_softmax_args;

/* ---- v2.2: decoder-layer ops ------------------------------------------- */
/* Shared rules of the four ops below. Every tensor of `dtype` is dense and
 * row-major unless a stride says otherwise; every computation is done in at
 * least binary32 and each result rounded once to `dtype` (round to nearest
 * even). Index tensors (positions, seq_ids, block_table) are int32_t. An
 * index outside its documented range is GPULAB_HAL_ERR_INVALID_ARGUMENT on a
 * backend that can read it before computing (host-memory backends); a device
 * backend that cannot writes NaN into the affected output row instead. No
 * backend ever reads or writes outside a buffer. A zero count (rows == 0,
 * heads == 0) writes nothing and returns OK. */

/* out[r, c] = in[r, c] * weight[c] / sqrt(mean over c of in[r, c]^2 + eps)
 * for `rows` rows of `cols` elements. weight has `cols` elements of `dtype`.
 * eps is finite and >= 0. in and out may be the same buffer. */
typedef struct gpulab_hal_rmsnorm_args {
  uint32_t struct_size; /* sizeof(gpulab_hal_rmsnorm_args) of the caller */
  uint32_t dtype;
  uint64_t rows, cols;
  float eps;
  uint32_t reserved; /* zero */
  gpulab_hal_buffer in, weight, out;
} gpulab_hal_rmsnorm_args;

/* Rotary position embedding, in place, interleaved pairs (GPT-J / Llama
 * "rotate every two"). x holds `rows` rows of `row_stride` elements; in row r
 * the `heads` heads of `head_dim` elements start at element `x_offset`, so the
 * query and key parts of a fused QKV row are rotated where they lie:
 *   v = x + r * row_stride + x_offset + h * head_dim,  p = positions[r],
 *   c = cos_table[p * head_dim/2 + i],  s = sin_table[p * head_dim/2 + i],
 *   (v[2i], v[2i+1]) <- (v[2i] * c - v[2i+1] * s,  v[2i] * s + v[2i+1] * c)
 * for i < head_dim/2. head_dim is even; x_offset + heads * head_dim <=
 * row_stride. positions: `rows` int32 in [0, max_position). The tables are
 * binary32 whatever `dtype` is (max_position x head_dim/2 each): the caller
 * computes the angles once, so every backend rotates by the same numbers. */
typedef struct gpulab_hal_rope_args {
  uint32_t struct_size;
  uint32_t dtype; /* of x */
  uint64_t rows, heads, head_dim;
  uint64_t row_stride, x_offset;
  uint64_t max_position;
  gpulab_hal_buffer x, positions, cos_table, sin_table;
} gpulab_hal_rope_args;

/* The gated MLP's activation: out[r, i] = silu(in[r, i]) * in[r, cols + i],
 * silu(g) = g / (1 + e^-g). `in` is rows x 2*cols, each row [gate | up] (the
 * output of one fused gate-and-up projection, vLLM's SiluAndMul layout);
 * out is rows x cols. */
typedef struct gpulab_hal_silu_mul_args {
  uint32_t struct_size;
  uint32_t dtype;
  uint64_t rows, cols;
  gpulab_hal_buffer in, out;
} gpulab_hal_silu_mul_args;

/* Causal attention of query rows against K/V kept in paged blocks (the P07
 * paged-KV model: a pool of `num_blocks` blocks of `block_size` token slots;
 * each sequence's block table maps its logical block j -> a physical block).
 * One call serves a whole batch: decode rows and chunked-prefill rows of
 * different sequences mixed. For query row r < rows and query head h < q_heads:
 *   s = seq_ids[r] in [0, num_seqs),  p = positions[r] in
 *   [0, max_blocks_per_seq * block_size): the row's token position,
 *   g = h / (q_heads / kv_heads): grouped KV heads (q_heads % kv_heads == 0),
 *   for t = 0..p (causal: a query sees itself and everything before it):
 *     b = block_table[s * max_blocks_per_seq + t / block_size] in [0, num_blocks)
 *     K_t = k_cache + ((b * block_size + t % block_size) * kv_heads + g) * head_dim
 *     V_t likewise in v_cache
 *   w_t = softmax over t of (scale * dot(q_rh, K_t)), max-subtracted
 *   out[r, h, :] = sum_t w_t * V_t
 * q_rh = q + r * q_row_stride + q_offset + h * head_dim (q may be a fused QKV
 * row); out is dense rows x q_heads x head_dim. k_cache and v_cache are
 * num_blocks x block_size x kv_heads x head_dim of `dtype` (one layer). The
 * K/V of positions 0..p must already be in the cache (written with
 * copy_to_device at their slot's offset), including the row's own. Block
 * table entries past a sequence's last block are never read. scale is finite
 * (usually 1/sqrt(head_dim)). */
typedef struct gpulab_hal_paged_attention_args {
  uint32_t struct_size;
  uint32_t dtype;
  uint64_t rows;
  uint64_t q_heads, kv_heads, head_dim;
  uint64_t q_row_stride, q_offset;
  uint64_t num_blocks, block_size;
  uint64_t num_seqs, max_blocks_per_seq;
  float scale;
  uint32_t reserved; /* zero */
  gpulab_hal_buffer q, k_cache, v_cache;
  gpulab_hal_buffer block_table, seq_ids, positions; /* int32 */
  gpulab_hal_buffer out;
} gpulab_hal_paged_attention_args;

/* ---- the descriptor ---------------------------------------------------- */
typedef struct gpulab_hal_backend {
  /* v2.0 — identity and capabilities */
  uint32_t abi_version;    /* GPULAB_HAL_ABI_VERSION the backend was built against: FIRST */
  uint32_t struct_size;    /* sizeof(gpulab_hal_backend) the backend was built against */
  const char* name;        /* short, unique among loaded backends: "cpu_ref" */
  const char* description; /* one line for humans */
  uint32_t dtypes;         /* GPULAB_HAL_DTYPE_* mask the backend declares */
  uint32_t ops;            /* GPULAB_HAL_OP_* mask */
  uint32_t perf_hint;      /* relative speed; the router prefers larger (cpu_ref = 1) */
  uint32_t features;       /* GPULAB_HAL_FEATURE_* mask */
  uint64_t max_dim;        /* largest m, n, k, rows or cols accepted; 0 = no limit */
  uint32_t reserved[8];    /* zero; future fields take these before the struct grows */

  /* v2.0 — function table. init() runs once after the core accepted the
   * descriptor; a backend whose hardware is missing returns
   * GPULAB_HAL_ERR_NO_DEVICE and is then reported, not used. */
  gpulab_hal_status (*init)(void** ctx, gpulab_hal_error* err);
  void (*shutdown)(void* ctx);
  gpulab_hal_status (*buffer_alloc)(void* ctx, uint64_t bytes, gpulab_hal_buffer* out,
                                    gpulab_hal_error* err);
  gpulab_hal_status (*buffer_free)(void* ctx, gpulab_hal_buffer buffer, gpulab_hal_error* err);
  gpulab_hal_status (*copy_to_device)(void* ctx, gpulab_hal_buffer dst, uint64_t dst_offset,
                                      const void* src, uint64_t bytes, gpulab_hal_error* err);
  gpulab_hal_status (*copy_to_host)(void* ctx, void* dst, gpulab_hal_buffer src,
                                    uint64_t src_offset, uint64_t bytes, gpulab_hal_error* err);
  gpulab_hal_status (*matmul)(void* ctx, const gpulab_hal_matmul_args* args,
                              gpulab_hal_error* err);
  gpulab_hal_status (*softmax)(void* ctx, const gpulab_hal_softmax_args* args,
                               gpulab_hal_error* err);

  /* v2.1 — appended. Writes a NUL-terminated line naming the device. */
  gpulab_hal_status (*describe_device)(void* ctx, char* out, uint32_t out_size,
                                       gpulab_hal_error* err);

  /* v2.2 — appended. Each is NULL unless `ops` declares it. */
  gpulab_hal_status (*rmsnorm)(void* ctx, const gpulab_hal_rmsnorm_args* args,
                               gpulab_hal_error* err);
  gpulab_hal_status (*rope)(void* ctx, const gpulab_hal_rope_args* args, gpulab_hal_error* err);
  gpulab_hal_status (*silu_mul)(void* ctx, const gpulab_hal_silu_mul_args* args,
                                gpulab_hal_error* err);
  gpulab_hal_status (*paged_attention)(void* ctx, const gpulab_hal_paged_attention_args* args,
                                       gpulab_hal_error* err);
} gpulab_hal_backend;

/* The v2.0 layout ends where describe_device begins: the smallest descriptor
 * the core accepts. */
#define GPULAB_HAL_DESCRIPTOR_SIZE_V2_0 ((uint32_t)offsetof(gpulab_hal_backend, describe_device))
/* The v2.1 layout ends where rmsnorm begins: a descriptor this size or
 * smaller has none of the v2.2 ops. */
#define GPULAB_HAL_DESCRIPTOR_SIZE_V2_1 ((uint32_t)offsetof(gpulab_hal_backend, rmsnorm))

#if defined(__cplusplus)
#define GPULAB_HAL_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define GPULAB_HAL_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif
/* The layout on LP64 (x86-64, aarch64 Linux) — the platforms backends ship for. */
#if UINTPTR_MAX == 0xFFFFFFFFFFFFFFFFu
GPULAB_HAL_STATIC_ASSERT(sizeof(gpulab_hal_error) == 256, "gpulab_hal_error layout");
GPULAB_HAL_STATIC_ASSERT(offsetof(gpulab_hal_backend, struct_size) == 4, "version then size");
GPULAB_HAL_STATIC_ASSERT(offsetof(gpulab_hal_backend, max_dim) == 40, "capabilities layout");
GPULAB_HAL_STATIC_ASSERT(offsetof(gpulab_hal_backend, init) == 80, "function table starts at 80");
GPULAB_HAL_STATIC_ASSERT(offsetof(gpulab_hal_backend, describe_device) == 144, "v2.0 is 144 bytes");
GPULAB_HAL_STATIC_ASSERT(offsetof(gpulab_hal_backend, rmsnorm) == 152, "v2.1 is 152 bytes");
GPULAB_HAL_STATIC_ASSERT(sizeof(gpulab_hal_backend) == 184, "v2.2 is 184 bytes");
GPULAB_HAL_STATIC_ASSERT(sizeof(gpulab_hal_matmul_args) == 56, "matmul args layout");
GPULAB_HAL_STATIC_ASSERT(sizeof(gpulab_hal_softmax_args) == 40, "softmax args layout");
GPULAB_HAL_STATIC_ASSERT(sizeof(gpulab_hal_rmsnorm_args) == 56, "rmsnorm args layout");
GPULAB_HAL_STATIC_ASSERT(sizeof(gpulab_hal_rope_args) == 88, "rope args layout");
GPULAB_HAL_STATIC_ASSERT(sizeof(gpulab_hal_silu_mul_args) == 40, "silu_mul args layout");
GPULAB_HAL_STATIC_ASSERT(sizeof(gpulab_hal_paged_attention_args) == 152, "paged attention args layout");
#endif

/* ---- the entry point --------------------------------------------------- */
#if defined(_WIN32)
#define GPULAB_HAL_EXPORT __declspec(dllexport)
#else
#define GPULAB_HAL_EXPORT __attribute__((visibility("default")))
#endif

/* Defined by each backend; returns its static descriptor (never NULL). */
GPULAB_HAL_EXPORT const gpulab_hal_backend* gpulab_hal_backend_register(void);
typedef const gpulab_hal_backend* (*gpulab_hal_register_fn)(void);

/* ---- helpers for backend authors (static inline: nothing is exported) -- */
static inline void gpulab_hal_clear_error(gpulab_hal_error* err) {
  if (err) {
    err->code = GPULAB_HAL_OK;
    err->reserved = 0;
    err->message[0] = '\0';
  }
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static inline gpulab_hal_status gpulab_hal_fail(gpulab_hal_error* err, gpulab_hal_status code,
                                                const char* fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    err->code = code;
    err->reserved = 0;
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
  }
  return code;
}

/* Bytes per element of one dtype bit; 0 for none or several bits. */
static inline uint64_t gpulab_hal_dtype_size(uint32_t dtype) {
  switch (dtype) {
    case GPULAB_HAL_DTYPE_F32: return 4;
    case GPULAB_HAL_DTYPE_F16: return 2;
    case GPULAB_HAL_DTYPE_BF16: return 2;
    case GPULAB_HAL_DTYPE_FP8: return 1;
    case GPULAB_HAL_DTYPE_INT8: return 1;
    default: return 0;
  }
}

/* Round-to-nearest-even conversions between binary32 and the narrow dtypes,
 * for backends that compute in binary32 and for clients that build inputs. */
static inline uint32_t gpulab_hal_f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}
static inline float gpulab_hal_f32_from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static inline uint16_t gpulab_hal_f32_to_f16(float f) {
  const uint32_t x = gpulab_hal_f32_bits(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t exp = (x >> 23) & 0xFFu;
  uint32_t mant = x & 0x7FFFFFu;
  int32_t e;
  if (exp == 0xFFu) return (uint16_t)(sign | 0x7C00u | (mant ? 0x200u : 0u));
  e = (int32_t)exp - 127 + 15;
  if (e >= 31) return (uint16_t)(sign | 0x7C00u);
  if (e <= 0) { /* binary16 subnormal (or zero) */
    uint32_t shift, r, rem, halfway;
    if (e < -10) return (uint16_t)sign;
    mant |= 0x800000u;
    shift = (uint32_t)(14 - e);
    r = mant >> shift;
    rem = mant & ((1u << shift) - 1u);
    halfway = 1u << (shift - 1u);
    if (rem > halfway || (rem == halfway && (r & 1u))) ++r;
    return (uint16_t)(sign | r);
  }
  {
    uint32_t r = ((uint32_t)e << 10) | (mant >> 13);
    const uint32_t rem = mant & 0x1FFFu;
    if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r; /* a carry into the exponent is right */
    return (uint16_t)(sign | r);
  }
}

static inline float gpulab_hal_f16_to_f32(uint16_t h) {
  const uint32_t sign = ((uint32_t)h & 0x8000u) << 16;
  const uint32_t exp = ((uint32_t)h >> 10) & 0x1Fu;
  uint32_t mant = (uint32_t)h & 0x3FFu;
  if (exp == 0) {
    uint32_t e = 113; /* 127 - 14 */
    if (mant == 0) return gpulab_hal_f32_from_bits(sign);
    while ((mant & 0x400u) == 0) { /* normalise the subnormal */
      mant <<= 1;
      --e;
    }
    return gpulab_hal_f32_from_bits(sign | (e << 23) | ((mant & 0x3FFu) << 13));
  }
  if (exp == 31) return gpulab_hal_f32_from_bits(sign | 0x7F800000u | (mant << 13));
  return gpulab_hal_f32_from_bits(sign | ((exp - 15u + 127u) << 23) | (mant << 13));
}

static inline uint16_t gpulab_hal_f32_to_bf16(float f) {
  const uint32_t x = gpulab_hal_f32_bits(f);
  if ((x & 0x7F800000u) == 0x7F800000u && (x & 0x7FFFFFu)) return (uint16_t)((x >> 16) | 0x40u);
  return (uint16_t)((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

static inline float gpulab_hal_bf16_to_f32(uint16_t b) {
  return gpulab_hal_f32_from_bits((uint32_t)b << 16);
}

/* OCP FP8 E4M3 ("e4m3fn"): bias 7, no infinities, S.1111.111 is NaN, max 448. */
static inline float gpulab_hal_fp8_to_f32(uint8_t v) {
  const uint32_t sign = ((uint32_t)v & 0x80u) << 24;
  const uint32_t exp = ((uint32_t)v >> 3) & 0xFu;
  uint32_t mant = (uint32_t)v & 0x7u;
  if (exp == 0xFu && mant == 0x7u) return gpulab_hal_f32_from_bits(0x7FC00000u);
  if (exp == 0) {
    uint32_t e = 121; /* 127 - 6 */
    if (mant == 0) return gpulab_hal_f32_from_bits(sign);
    while ((mant & 0x8u) == 0) {
      mant <<= 1;
      --e;
    }
    return gpulab_hal_f32_from_bits(sign | (e << 23) | ((mant & 0x7u) << 20));
  }
  return gpulab_hal_f32_from_bits(sign | ((exp - 7u + 127u) << 23) | (mant << 20));
}

static inline uint8_t gpulab_hal_f32_to_fp8(float f) {
  const uint32_t x = gpulab_hal_f32_bits(f);
  const uint8_t sign = (uint8_t)((x >> 24) & 0x80u);
  const uint32_t ax = x & 0x7FFFFFFFu;
  uint32_t exp, mant, r, shift, rem, halfway;
  int32_t e;
  if (ax > 0x7F800000u) return 0x7Fu;                 /* NaN */
  if (ax >= 0x43E00000u) return (uint8_t)(sign | 0x7Eu); /* >= 448 (and inf): saturate */
  exp = ax >> 23;
  mant = ax & 0x7FFFFFu;
  e = (int32_t)exp - 127 + 7;
  if (e <= 0) { /* E4M3 subnormal: value = m/8 * 2^-6 */
    if (e < -3) return sign; /* below half the smallest subnormal */
    mant |= 0x800000u;
    shift = (uint32_t)(21 - e);
    r = mant >> shift;
    rem = mant & ((1u << shift) - 1u);
    halfway = 1u << (shift - 1u);
    if (rem > halfway || (rem == halfway && (r & 1u))) ++r;
    return (uint8_t)(sign | r);
  }
  r = ((uint32_t)e << 3) | (mant >> 20);
  rem = mant & 0xFFFFFu;
  if (rem > 0x80000u || (rem == 0x80000u && (r & 1u))) ++r;
  if (r > 0x7Eu) r = 0x7Eu; /* rounding up past 448 saturates */
  return (uint8_t)(sign | r);
}

/* Element `i` of a buffer of `dtype` as binary32, and the reverse. */
static inline float gpulab_hal_load(uint32_t dtype, const void* base, uint64_t i) {
  const unsigned char* p = (const unsigned char*)base;
  switch (dtype) {
    case GPULAB_HAL_DTYPE_F32: {
      float f;
      memcpy(&f, p + i * 4u, 4);
      return f;
    }
    case GPULAB_HAL_DTYPE_F16: {
      uint16_t h;
      memcpy(&h, p + i * 2u, 2);
      return gpulab_hal_f16_to_f32(h);
    }
    case GPULAB_HAL_DTYPE_BF16: {
      uint16_t h;
      memcpy(&h, p + i * 2u, 2);
      return gpulab_hal_bf16_to_f32(h);
    }
    case GPULAB_HAL_DTYPE_FP8: return gpulab_hal_fp8_to_f32(p[i]);
    case GPULAB_HAL_DTYPE_INT8: return (float)(int8_t)p[i];
    default: return 0.0f;
  }
}

static inline void gpulab_hal_store(uint32_t dtype, void* base, uint64_t i, float v) {
  unsigned char* p = (unsigned char*)base;
  switch (dtype) {
    case GPULAB_HAL_DTYPE_F32: memcpy(p + i * 4u, &v, 4); break;
    case GPULAB_HAL_DTYPE_F16: {
      const uint16_t h = gpulab_hal_f32_to_f16(v);
      memcpy(p + i * 2u, &h, 2);
      break;
    }
    case GPULAB_HAL_DTYPE_BF16: {
      const uint16_t h = gpulab_hal_f32_to_bf16(v);
      memcpy(p + i * 2u, &h, 2);
      break;
    }
    case GPULAB_HAL_DTYPE_FP8: p[i] = gpulab_hal_f32_to_fp8(v); break;
    case GPULAB_HAL_DTYPE_INT8: {
      const float c = v < -128.0f ? -128.0f : (v > 127.0f ? 127.0f : v);
      p[i] = (uint8_t)(int8_t)(c < 0 ? c - 0.5f : c + 0.5f);
      break;
    }
    default: break;
  }
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GPULAB_HAL_H */
