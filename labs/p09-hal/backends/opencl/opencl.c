/* opencl — a real vendor-style backend: buffers are cl_mem objects, matmul and
 * softmax are OpenCL C kernels compiled at first use, and every call goes
 * through the ICD loader (libOpenCL.so) to whatever OpenCL implementation is
 * installed. Here that is PoCL, which compiles the kernels with LLVM and runs
 * them on the CPU; on a machine with a GPU ICD the same .so runs on the GPU.
 * It prefers a GPU device, then any device. F32 only. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdlib.h>
#include <string.h>

#include <gpulab_hal/gpulab_hal.h>
#include <gpulab_hal/gpulab_hal_layer_checks.h>

#include "../common/copy_check.h"

/* F32 matmul, tiled for a CPU OpenCL (PoCL) as much as for a GPU. Each
 * work-group of LX x LY work-items computes a TM x TN tile of C: it copies a
 * TK-deep slice of A and of B into local memory — on PoCL that is the packing
 * step of a CPU GEMM — and each work-item keeps a 6 x 16 block of C in twelve
 * float8 registers, the fast backend's micro-kernel (ROWS spells the six rows
 * out: PoCL keeps an array of accumulators in memory, named variables in
 * registers). The accumulators are copied into fresh variables for each slice:
 * values live across a barrier sit in PoCL's per-work-item context arrays,
 * values inside one barrier region in registers. Interior tiles copy with
 * float4 loads; tiles on the edge of A, B or k copy element by element with
 * zero fill, so any m, n, k works. Every element of C sums its k products in
 * order p = 0..k-1 with one fma each, like the old one-element-per-work-item
 * kernel: the summation order, and so the error bound, is unchanged.
 * LX, LY, TK and CONTIGUOUS_COPY come from ensure_program(). */
enum { kMatmulRM = 6, kMatmulWN = 16 }; /* C elements per work-item: must match ROWS and WN */
static const char* const kMatmulSource =
    "#define WN 16\n"
    "#define TM (6 * LY)\n"
    "#define TN (WN * LX)\n"
    "#define ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)\n"
    "#if CONTIGUOUS_COPY\n"
    "#define FIRST(total) (lid * ((total) / (LX * LY)))\n"
    "#define END(total) ((lid + 1) * ((total) / (LX * LY)))\n"
    "#define STEP_BY 1\n"
    "#else\n"
    "#define FIRST(total) lid\n"
    "#define END(total) (total)\n"
    "#define STEP_BY (LX * LY)\n"
    "#endif\n"
    "#define DECL(r) float8 acc##r##0 = (float8)(0.0f), acc##r##1 = (float8)(0.0f);\n"
    "#define LOAD(r) float8 x##r##0 = acc##r##0, x##r##1 = acc##r##1;\n"
    "#define STEP(r) { const float8 a = (float8)(ap[r * TK + p]);"
    " x##r##0 = fma(a, b0, x##r##0); x##r##1 = fma(a, b1, x##r##1); }\n"
    "#define SAVE(r) acc##r##0 = x##r##0; acc##r##1 = x##r##1;\n"
    "#define STORE(r) store_row(C, m, n, row0 + ly * 6 + r, col0 + lx * WN, acc##r##0, acc##r##1);\n"
    "void store_row(__global float* C, ulong m, ulong n, ulong row, ulong col, float8 lo, float8 hi) {\n"
    "  if (row >= m) return;\n"
    "  __global float* out = C + row * n + col;\n"
    "  if (col + WN <= n) {\n"
    "    vstore8(lo, 0, out);\n"
    "    vstore8(hi, 1, out);\n"
    "    return;\n"
    "  }\n"
    "  float lane[WN];\n"
    "  vstore8(lo, 0, lane);\n"
    "  vstore8(hi, 1, lane);\n"
    "  for (ulong c = 0; col + c < n && c < WN; ++c) out[c] = lane[c];\n"
    "}\n"
    "__kernel __attribute__((reqd_work_group_size(LX, LY, 1)))\n"
    "void matmul(const ulong m, const ulong n, const ulong k,\n"
    "            __global const float* A, __global const float* B, __global float* C) {\n"
    "  __local float As[TM * TK]; /* As[r * TK + p] */\n"
    "  __local float Bs[TK * TN]; /* Bs[p * TN + c] */\n"
    "  const uint lx = get_local_id(0), ly = get_local_id(1), lid = ly * LX + lx;\n"
    "  const ulong row0 = get_group_id(1) * TM, col0 = get_group_id(0) * TN;\n"
    "  const int full_rows = row0 + TM <= m, full_cols = col0 + TN <= n;\n"
    "  ROWS(DECL)\n"
    "  for (ulong t = 0; t < k; t += TK) {\n"
    "    const int full_k = t + TK <= k;\n"
    "    if (full_rows && full_k) {\n"
    "      for (uint i = FIRST(TM * TK / 4); i < END(TM * TK / 4); i += STEP_BY) {\n"
    "        const uint r = i / (TK / 4), p = i % (TK / 4) * 4;\n"
    "        vstore4(vload4(0, A + (row0 + r) * k + t + p), 0, As + r * TK + p);\n"
    "      }\n"
    "    } else {\n"
    "      for (uint i = lid; i < TM * TK; i += LX * LY) {\n"
    "        const uint r = i / TK, p = i % TK;\n"
    "        As[r * TK + p] = (row0 + r < m && t + p < k) ? A[(row0 + r) * k + t + p] : 0.0f;\n"
    "      }\n"
    "    }\n"
    "    if (full_cols && full_k) {\n"
    "      for (uint i = FIRST(TK * TN / 4); i < END(TK * TN / 4); i += STEP_BY) {\n"
    "        const uint p = i / (TN / 4), c = i % (TN / 4) * 4;\n"
    "        vstore4(vload4(0, B + (t + p) * n + col0 + c), 0, Bs + p * TN + c);\n"
    "      }\n"
    "    } else {\n"
    "      for (uint i = lid; i < TK * TN; i += LX * LY) {\n"
    "        const uint p = i / TN, c = i % TN;\n"
    "        Bs[p * TN + c] = (t + p < k && col0 + c < n) ? B[(t + p) * n + col0 + c] : 0.0f;\n"
    "      }\n"
    "    }\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    {\n"
    "      __local const float* ap = As + ly * 6 * TK;\n"
    "      __local const float* bp = Bs + lx * WN;\n"
    "      ROWS(LOAD)\n"
    "      for (uint p = 0; p < TK; ++p) {\n"
    "        const float8 b0 = vload8(0, bp + p * TN), b1 = vload8(1, bp + p * TN);\n"
    "        ROWS(STEP)\n"
    "      }\n"
    "      ROWS(SAVE)\n"
    "    }\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  ROWS(STORE)\n"
    "}\n";

static const char* const kSource =
    "__kernel void softmax(const ulong cols, __global const float* in, __global float* out) {\n"
    "  const size_t r = get_global_id(0);\n"
    "  __global const float* x = in + r * cols;\n"
    "  __global float* y = out + r * cols;\n"
    "  float mx = -INFINITY, sum = 0.0f;\n"
    "  for (ulong c = 0; c < cols; ++c) mx = fmax(mx, x[c]);\n"
    "  for (ulong c = 0; c < cols; ++c) sum += exp(x[c] - mx);\n"
    "  for (ulong c = 0; c < cols; ++c) y[c] = exp(x[c] - mx) / sum;\n"
    "}\n";

/* A second string: ISO C caps one literal at 4095 characters. */
static const char* const kLayerSource =
    /* ABI 2.2. Indices are checked where they are read: a bad one turns the
     * row's output into NaN (the ABI's rule for device backends), never an
     * out-of-bounds access. */
    "__kernel void rmsnorm(const ulong cols, const float eps, __global const float* in,\n"
    "                      __global const float* w, __global float* out) {\n"
    "  const size_t r = get_global_id(0);\n"
    "  __global const float* x = in + r * cols;\n"
    "  __global float* y = out + r * cols;\n"
    "  float ss = 0.0f;\n"
    "  for (ulong c = 0; c < cols; ++c) ss = fma(x[c], x[c], ss);\n"
    "  const float inv = 1.0f / sqrt(ss / (float)(cols ? cols : 1) + eps);\n"
    "  for (ulong c = 0; c < cols; ++c) y[c] = x[c] * inv * w[c];\n"
    "}\n"
    "__kernel void rope(const ulong half_dim, const ulong row_stride, const ulong x_offset,\n"
    "                   const ulong max_position, __global float* x, __global const int* pos,\n"
    "                   __global const float* cs, __global const float* sn) {\n"
    "  const size_t r = get_global_id(1), hp = get_global_id(0);\n"
    "  const size_t h = hp / half_dim, i = hp % half_dim;\n"
    "  __global float* v = x + r * row_stride + x_offset + h * 2 * half_dim + 2 * i;\n"
    "  const int p = pos[r];\n"
    "  if (p < 0 || (ulong)p >= max_position) { v[0] = NAN; v[1] = NAN; return; }\n"
    "  const float c = cs[p * half_dim + i], s = sn[p * half_dim + i], a = v[0], b = v[1];\n"
    "  v[0] = a * c - b * s;\n"
    "  v[1] = a * s + b * c;\n"
    "}\n"
    "__kernel void silu_mul(const ulong cols, __global const float* in, __global float* out) {\n"
    "  const size_t r = get_global_id(1), i = get_global_id(0);\n"
    "  const float g = in[r * 2 * cols + i], u = in[r * 2 * cols + cols + i];\n"
    "  out[r * cols + i] = g / (1.0f + exp(-g)) * u;\n"
    "}\n";

static const char* const kAttentionSource =
    /* One work-item per (row, head). Scores are computed twice (max, then
     * weights) instead of kept: the context length has no bound a private
     * array could take; the weighted V sum accumulates in `out` itself. */
    "__kernel void paged_attention(const ulong q_heads, const ulong kv_heads, const ulong hd,\n"
    "    const ulong q_row_stride, const ulong q_offset, const ulong num_blocks, const ulong block_size,\n"
    "    const ulong num_seqs, const ulong max_blocks, const float scale,\n"
    "    __global const float* q, __global const float* kc, __global const float* vc,\n"
    "    __global const int* table, __global const int* seq_ids, __global const int* pos,\n"
    "    __global float* out) {\n"
    "  const size_t r = get_global_id(1), h = get_global_id(0);\n"
    "  const ulong g = h / (q_heads / kv_heads);\n"
    "  __global const float* qh = q + r * q_row_stride + q_offset + h * hd;\n"
    "  __global float* o = out + (r * q_heads + h) * hd;\n"
    "  const int s = seq_ids[r], p = pos[r];\n"
    "  int bad = s < 0 || (ulong)s >= num_seqs || p < 0 || (ulong)p >= max_blocks * block_size;\n"
    "  for (ulong j = 0; !bad && j <= (ulong)p / block_size; ++j) {\n"
    "    const int b = table[(ulong)s * max_blocks + j];\n"
    "    bad = b < 0 || (ulong)b >= num_blocks;\n"
    "  }\n"
    "  if (bad) { for (ulong i = 0; i < hd; ++i) o[i] = NAN; return; }\n"
    "  __global const int* blocks = table + (ulong)s * max_blocks;\n"
    "  float mx = -INFINITY, sum = 0.0f;\n"
    "  for (ulong t = 0; t <= (ulong)p; ++t) {\n"
    "    __global const float* k = kc + (((ulong)blocks[t / block_size] * block_size + t % block_size) * kv_heads + g) * hd;\n"
    "    float dot = 0.0f;\n"
    "    for (ulong i = 0; i < hd; ++i) dot = fma(qh[i], k[i], dot);\n"
    "    mx = fmax(mx, dot * scale);\n"
    "  }\n"
    "  for (ulong i = 0; i < hd; ++i) o[i] = 0.0f;\n"
    "  for (ulong t = 0; t <= (ulong)p; ++t) {\n"
    "    const ulong off = (((ulong)blocks[t / block_size] * block_size + t % block_size) * kv_heads + g) * hd;\n"
    "    float dot = 0.0f;\n"
    "    for (ulong i = 0; i < hd; ++i) dot = fma(qh[i], kc[off + i], dot);\n"
    "    const float w = exp(dot * scale - mx);\n"
    "    sum += w;\n"
    "    for (ulong i = 0; i < hd; ++i) o[i] = fma(w, vc[off + i], o[i]);\n"
    "  }\n"
    "  for (ulong i = 0; i < hd; ++i) o[i] /= sum;\n"
    "}\n";

typedef struct cl_ctx {
  cl_platform_id platform;
  cl_device_id device;
  cl_context context;
  cl_command_queue queue;
  cl_program program; /* built at first use */
  size_t matmul_local[2]; /* LX, LY the program was built with */
  cl_kernel k_matmul, k_softmax;
  cl_kernel k_rmsnorm, k_rope, k_silu_mul, k_attention; /* ABI 2.2 */
  char device_line[256];
} cl_ctx;

typedef struct cl_buffer {
  cl_mem mem;
  uint64_t bytes;
} cl_buffer;

static gpulab_hal_status cl_fail(gpulab_hal_error* err, const char* what, cl_int code) {
  return gpulab_hal_fail(err, GPULAB_HAL_ERR_DEVICE, "%s failed: OpenCL error %d", what, (int)code);
}

static void ocl_shutdown(void* vctx) {
  cl_ctx* c = (cl_ctx*)vctx;
  if (c == NULL) return;
  if (c->k_matmul) clReleaseKernel(c->k_matmul);
  if (c->k_softmax) clReleaseKernel(c->k_softmax);
  if (c->k_rmsnorm) clReleaseKernel(c->k_rmsnorm);
  if (c->k_rope) clReleaseKernel(c->k_rope);
  if (c->k_silu_mul) clReleaseKernel(c->k_silu_mul);
  if (c->k_attention) clReleaseKernel(c->k_attention);
  if (c->program) clReleaseProgram(c->program);
  if (c->queue) clReleaseCommandQueue(c->queue);
  if (c->context) clReleaseContext(c->context);
  free(c);
}

static gpulab_hal_status ocl_init(void** out, gpulab_hal_error* err) {
  cl_platform_id platforms[8];
  cl_uint np = 0, i;
  cl_int rc;
  cl_ctx* c;
  char pname[96] = "", dname[96] = "";
  gpulab_hal_clear_error(err);
  rc = clGetPlatformIDs(8, platforms, &np);
  if (rc != CL_SUCCESS || np == 0)
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_NO_DEVICE,
                           "no OpenCL platform (clGetPlatformIDs: %d; install an ICD such as pocl-opencl-icd)", (int)rc);
  c = (cl_ctx*)calloc(1, sizeof *c);
  if (c == NULL) return gpulab_hal_fail(err, GPULAB_HAL_ERR_OUT_OF_MEMORY, "calloc failed");
  /* A GPU on any platform first, then any device. */
  for (i = 0; i < np && c->device == NULL; ++i)
    if (clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_GPU, 1, &c->device, NULL) == CL_SUCCESS) c->platform = platforms[i];
    else c->device = NULL;
  for (i = 0; i < np && c->device == NULL; ++i)
    if (clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_ALL, 1, &c->device, NULL) == CL_SUCCESS) c->platform = platforms[i];
    else c->device = NULL;
  if (c->device == NULL) {
    free(c);
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_NO_DEVICE, "%u OpenCL platform(s), no device", (unsigned)np);
  }
  c->context = clCreateContext(NULL, 1, &c->device, NULL, NULL, &rc);
  if (rc != CL_SUCCESS) {
    ocl_shutdown(c);
    return cl_fail(err, "clCreateContext", rc);
  }
  c->queue = clCreateCommandQueue(c->context, c->device, 0, &rc);
  if (rc != CL_SUCCESS) {
    ocl_shutdown(c);
    return cl_fail(err, "clCreateCommandQueue", rc);
  }
  clGetPlatformInfo(c->platform, CL_PLATFORM_NAME, sizeof pname - 1, pname, NULL);
  clGetDeviceInfo(c->device, CL_DEVICE_NAME, sizeof dname - 1, dname, NULL);
  snprintf(c->device_line, sizeof c->device_line, "OpenCL: %s / %s", pname, dname);
  *out = c;
  return GPULAB_HAL_OK;
}

static gpulab_hal_status ensure_program(cl_ctx* c, gpulab_hal_error* err) {
  cl_int rc;
  char geometry[160];
  const char* sources[5];
  cl_device_type type = 0;
  cl_ulong local_bytes = 0;
  unsigned tk;
  int cpu;
  if (c->program != NULL) return GPULAB_HAL_OK;
  /* The matmul's geometry, measured with PoCL on a 2-core EPYC (README): 4 x 8
   * work-items (a 48 x 64 tile of C per group), k in slices of 128, and each
   * work-item copying one contiguous run of the tile — PoCL runs a group's
   * work-items one after another, so a run is a stream the prefetcher can
   * follow (interleaved copies measured slower at n = 1024). A GPU wants
   * the interleaved (coalesced) copy and a smaller slice; both shrink the
   * slice until the two tiles fit the device's local memory. */
  clGetDeviceInfo(c->device, CL_DEVICE_TYPE, sizeof type, &type, NULL);
  clGetDeviceInfo(c->device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof local_bytes, &local_bytes, NULL);
  cpu = (type & CL_DEVICE_TYPE_CPU) != 0;
  c->matmul_local[0] = 4;
  c->matmul_local[1] = 8;
  tk = cpu ? 128 : 32;
  while (tk > 16 && (cl_ulong)tk * (kMatmulRM * c->matmul_local[1] + kMatmulWN * c->matmul_local[0]) * 4 > local_bytes)
    tk /= 2;
  snprintf(geometry, sizeof geometry, "#define LX %u\n#define LY %u\n#define TK %u\n#define CONTIGUOUS_COPY %d\n",
           (unsigned)c->matmul_local[0], (unsigned)c->matmul_local[1], tk, cpu);
  sources[0] = geometry;
  sources[1] = kMatmulSource;
  sources[2] = kSource;
  sources[3] = kLayerSource;
  sources[4] = kAttentionSource;
  c->program = clCreateProgramWithSource(c->context, 5, sources, NULL, &rc);
  if (rc != CL_SUCCESS) return cl_fail(err, "clCreateProgramWithSource", rc);
  rc = clBuildProgram(c->program, 1, &c->device, "-cl-std=CL1.2", NULL, NULL);
  if (rc != CL_SUCCESS) {
    char log[200] = "";
    clGetProgramBuildInfo(c->program, c->device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
    clReleaseProgram(c->program);
    c->program = NULL;
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_DEVICE, "kernel build failed (%d): %s", (int)rc, log);
  }
  c->k_matmul = clCreateKernel(c->program, "matmul", &rc);
  if (rc != CL_SUCCESS) return cl_fail(err, "clCreateKernel(matmul)", rc);
  c->k_softmax = clCreateKernel(c->program, "softmax", &rc);
  if (rc != CL_SUCCESS) return cl_fail(err, "clCreateKernel(softmax)", rc);
  c->k_rmsnorm = clCreateKernel(c->program, "rmsnorm", &rc);
  if (rc != CL_SUCCESS) return cl_fail(err, "clCreateKernel(rmsnorm)", rc);
  c->k_rope = clCreateKernel(c->program, "rope", &rc);
  if (rc != CL_SUCCESS) return cl_fail(err, "clCreateKernel(rope)", rc);
  c->k_silu_mul = clCreateKernel(c->program, "silu_mul", &rc);
  if (rc != CL_SUCCESS) return cl_fail(err, "clCreateKernel(silu_mul)", rc);
  c->k_attention = clCreateKernel(c->program, "paged_attention", &rc);
  if (rc != CL_SUCCESS) return cl_fail(err, "clCreateKernel(paged_attention)", rc);
  return GPULAB_HAL_OK;
}

static gpulab_hal_status ocl_alloc(void* vctx, uint64_t bytes, gpulab_hal_buffer* out, gpulab_hal_error* err) {
  cl_ctx* c = (cl_ctx*)vctx;
  cl_buffer* b;
  cl_int rc;
  gpulab_hal_clear_error(err);
  if (out == NULL) return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "out is NULL");
  *out = NULL;
  b = (cl_buffer*)calloc(1, sizeof *b);
  if (b == NULL) return gpulab_hal_fail(err, GPULAB_HAL_ERR_OUT_OF_MEMORY, "calloc failed");
  b->bytes = bytes;
  /* OpenCL refuses zero-sized buffers; a degenerate tensor still gets a handle. */
  b->mem = clCreateBuffer(c->context, CL_MEM_READ_WRITE, (size_t)(bytes ? bytes : 64), NULL, &rc);
  if (rc != CL_SUCCESS) {
    free(b);
    return gpulab_hal_fail(err, rc == CL_MEM_OBJECT_ALLOCATION_FAILURE || rc == CL_INVALID_BUFFER_SIZE
                                    ? GPULAB_HAL_ERR_OUT_OF_MEMORY
                                    : GPULAB_HAL_ERR_DEVICE,
                           "clCreateBuffer(%llu) failed: OpenCL error %d", (unsigned long long)bytes, (int)rc);
  }
  *out = (gpulab_hal_buffer)(void*)b;
  return GPULAB_HAL_OK;
}

static gpulab_hal_status ocl_free(void* vctx, gpulab_hal_buffer buffer, gpulab_hal_error* err) {
  cl_buffer* b = (cl_buffer*)(void*)buffer;
  (void)vctx;
  gpulab_hal_clear_error(err);
  if (b == NULL) return GPULAB_HAL_OK;
  clReleaseMemObject(b->mem);
  free(b);
  return GPULAB_HAL_OK;
}

static gpulab_hal_status check_range(const cl_buffer* b, uint64_t off, uint64_t bytes, const void* host,
                                     gpulab_hal_error* err) {
  return hal_check_copy(b != NULL, b != NULL ? b->bytes : 0, off, bytes, host, err);
}

static gpulab_hal_status ocl_to_device(void* vctx, gpulab_hal_buffer dst, uint64_t off, const void* src, uint64_t bytes,
                                       gpulab_hal_error* err) {
  cl_ctx* c = (cl_ctx*)vctx;
  const cl_buffer* b = (const cl_buffer*)(const void*)dst;
  gpulab_hal_status st;
  cl_int rc;
  gpulab_hal_clear_error(err);
  st = check_range(b, off, bytes, src, err);
  if (st != GPULAB_HAL_OK || bytes == 0) return st;
  rc = clEnqueueWriteBuffer(c->queue, b->mem, CL_TRUE, (size_t)off, (size_t)bytes, src, 0, NULL, NULL);
  return rc == CL_SUCCESS ? GPULAB_HAL_OK : cl_fail(err, "clEnqueueWriteBuffer", rc);
}

static gpulab_hal_status ocl_to_host(void* vctx, void* dst, gpulab_hal_buffer src, uint64_t off, uint64_t bytes,
                                     gpulab_hal_error* err) {
  cl_ctx* c = (cl_ctx*)vctx;
  const cl_buffer* b = (const cl_buffer*)(const void*)src;
  gpulab_hal_status st;
  cl_int rc;
  gpulab_hal_clear_error(err);
  st = check_range(b, off, bytes, dst, err);
  if (st != GPULAB_HAL_OK || bytes == 0) return st;
  rc = clEnqueueReadBuffer(c->queue, b->mem, CL_TRUE, (size_t)off, (size_t)bytes, dst, 0, NULL, NULL);
  return rc == CL_SUCCESS ? GPULAB_HAL_OK : cl_fail(err, "clEnqueueReadBuffer", rc);
}

static gpulab_hal_status ocl_matmul(void* vctx, const gpulab_hal_matmul_args* a, gpulab_hal_error* err) {
  cl_ctx* c = (cl_ctx*)vctx;
  const cl_buffer *A, *B, *C;
  cl_ulong m, n, k;
  size_t global[2], local[2];
  gpulab_hal_status st;
  cl_int rc;
  gpulab_hal_clear_error(err);
  if (a == NULL || a->struct_size < sizeof(gpulab_hal_matmul_args))
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "matmul args missing or too small");
  if (a->dtype != GPULAB_HAL_DTYPE_F32)
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_UNSUPPORTED, "dtype mask 0x%x: this backend does F32 only", (unsigned)a->dtype);
  A = (const cl_buffer*)(const void*)a->a;
  B = (const cl_buffer*)(const void*)a->b;
  C = (const cl_buffer*)(const void*)a->c;
  if (A == NULL || B == NULL || C == NULL) return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "a NULL buffer");
  if (a->m > 0xFFFFFFFFu || a->n > 0xFFFFFFFFu || a->k > 0xFFFFFFFFu)
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "dimension above 2^32");
  if (A->bytes < a->m * a->k * 4 || B->bytes < a->k * a->n * 4 || C->bytes < a->m * a->n * 4)
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "a buffer is too small for %llux%llux%llu",
                           (unsigned long long)a->m, (unsigned long long)a->n, (unsigned long long)a->k);
  if (a->m == 0 || a->n == 0) return GPULAB_HAL_OK;
  st = ensure_program(c, err);
  if (st != GPULAB_HAL_OK) return st;
  m = a->m;
  n = a->n;
  k = a->k;
  rc = clSetKernelArg(c->k_matmul, 0, sizeof m, &m);
  rc |= clSetKernelArg(c->k_matmul, 1, sizeof n, &n);
  rc |= clSetKernelArg(c->k_matmul, 2, sizeof k, &k);
  rc |= clSetKernelArg(c->k_matmul, 3, sizeof(cl_mem), &A->mem);
  rc |= clSetKernelArg(c->k_matmul, 4, sizeof(cl_mem), &B->mem);
  rc |= clSetKernelArg(c->k_matmul, 5, sizeof(cl_mem), &C->mem);
  if (rc != CL_SUCCESS) return cl_fail(err, "clSetKernelArg(matmul)", rc);
  local[0] = c->matmul_local[0];
  local[1] = c->matmul_local[1];
  global[0] = (size_t)((n + kMatmulWN * local[0] - 1) / (kMatmulWN * local[0])) * local[0];
  global[1] = (size_t)((m + kMatmulRM * local[1] - 1) / (kMatmulRM * local[1])) * local[1];
  rc = clEnqueueNDRangeKernel(c->queue, c->k_matmul, 2, NULL, global, local, 0, NULL, NULL);
  if (rc != CL_SUCCESS) return cl_fail(err, "clEnqueueNDRangeKernel(matmul)", rc);
  rc = clFinish(c->queue);
  return rc == CL_SUCCESS ? GPULAB_HAL_OK : cl_fail(err, "clFinish", rc);
}

static gpulab_hal_status ocl_softmax(void* vctx, const gpulab_hal_softmax_args* a, gpulab_hal_error* err) {
  cl_ctx* c = (cl_ctx*)vctx;
  const cl_buffer *I, *O;
  cl_ulong cols;
  size_t global;
  gpulab_hal_status st;
  cl_int rc;
  gpulab_hal_clear_error(err);
  if (a == NULL || a->struct_size < sizeof(gpulab_hal_softmax_args))
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "softmax args missing or too small");
  if (a->dtype != GPULAB_HAL_DTYPE_F32)
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_UNSUPPORTED, "dtype mask 0x%x: this backend does F32 only", (unsigned)a->dtype);
  I = (const cl_buffer*)(const void*)a->in;
  O = (const cl_buffer*)(const void*)a->out;
  if (I == NULL || O == NULL) return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "a NULL buffer");
  if (a->rows > 0xFFFFFFFFu || a->cols > 0xFFFFFFFFu)
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "dimension above 2^32");
  if (I->bytes < a->rows * a->cols * 4 || O->bytes < a->rows * a->cols * 4)
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "a buffer is too small for %llux%llu",
                           (unsigned long long)a->rows, (unsigned long long)a->cols);
  if (a->rows == 0 || a->cols == 0) return GPULAB_HAL_OK;
  st = ensure_program(c, err);
  if (st != GPULAB_HAL_OK) return st;
  cols = a->cols;
  rc = clSetKernelArg(c->k_softmax, 0, sizeof cols, &cols);
  rc |= clSetKernelArg(c->k_softmax, 1, sizeof(cl_mem), &I->mem);
  rc |= clSetKernelArg(c->k_softmax, 2, sizeof(cl_mem), &O->mem);
  if (rc != CL_SUCCESS) return cl_fail(err, "clSetKernelArg(softmax)", rc);
  global = (size_t)a->rows;
  rc = clEnqueueNDRangeKernel(c->queue, c->k_softmax, 1, NULL, &global, NULL, 0, NULL, NULL);
  if (rc != CL_SUCCESS) return cl_fail(err, "clEnqueueNDRangeKernel(softmax)", rc);
  rc = clFinish(c->queue);
  return rc == CL_SUCCESS ? GPULAB_HAL_OK : cl_fail(err, "clFinish", rc);
}

/* ---- ABI 2.2 -------------------------------------------------------------- */
static uint64_t cl_bytes(gpulab_hal_buffer b) { return b ? ((const cl_buffer*)(const void*)b)->bytes : 0; }
static cl_mem cl_mem_of(gpulab_hal_buffer b) { return ((const cl_buffer*)(const void*)b)->mem; }

/* Sets `n` kernel arguments from (size, pointer) pairs, runs a 1-D or 2-D
 * range and waits. */
typedef struct cl_arg {
  size_t size;
  const void* value;
} cl_arg;

static gpulab_hal_status run_kernel(cl_ctx* c, cl_kernel k, const char* what, const cl_arg* args, cl_uint n,
                                    cl_uint dims, const size_t* global, gpulab_hal_error* err) {
  cl_int rc = CL_SUCCESS;
  cl_uint i;
  for (i = 0; i < n; ++i) rc |= clSetKernelArg(k, i, args[i].size, args[i].value);
  if (rc != CL_SUCCESS) return cl_fail(err, what, rc);
  rc = clEnqueueNDRangeKernel(c->queue, k, dims, NULL, global, NULL, 0, NULL, NULL);
  if (rc != CL_SUCCESS) return cl_fail(err, what, rc);
  rc = clFinish(c->queue);
  return rc == CL_SUCCESS ? GPULAB_HAL_OK : cl_fail(err, "clFinish", rc);
}

#define CL_ARG(x) {sizeof(x), &(x)}

static int any_null(const gpulab_hal_buffer* b, int n) {
  int i;
  for (i = 0; i < n; ++i)
    if (b[i] == NULL) return 1;
  return 0;
}

static gpulab_hal_status ocl_rmsnorm(void* vctx, const gpulab_hal_rmsnorm_args* a, gpulab_hal_error* err) {
  cl_ctx* c = (cl_ctx*)vctx;
  gpulab_hal_status st;
  cl_ulong cols;
  cl_float eps;
  cl_mem in, w, out;
  size_t global;
  gpulab_hal_clear_error(err);
  if (a != NULL && a->struct_size >= sizeof *a) {
    const gpulab_hal_buffer b[3] = {a->in, a->weight, a->out};
    if (any_null(b, 3)) return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "rmsnorm: a NULL buffer");
  }
  st = hal_check_rmsnorm(a, GPULAB_HAL_DTYPE_F32, a ? cl_bytes(a->in) : 0, a ? cl_bytes(a->weight) : 0,
                         a ? cl_bytes(a->out) : 0, err);
  if (st != GPULAB_HAL_OK || a->rows == 0) return st;
  if ((st = ensure_program(c, err)) != GPULAB_HAL_OK) return st;
  cols = a->cols;
  eps = a->eps;
  in = cl_mem_of(a->in);
  w = cl_mem_of(a->weight);
  out = cl_mem_of(a->out);
  {
    const cl_arg args[] = {CL_ARG(cols), CL_ARG(eps), CL_ARG(in), CL_ARG(w), CL_ARG(out)};
    global = (size_t)a->rows;
    return run_kernel(c, c->k_rmsnorm, "rmsnorm kernel", args, 5, 1, &global, err);
  }
}

static gpulab_hal_status ocl_rope(void* vctx, const gpulab_hal_rope_args* a, gpulab_hal_error* err) {
  cl_ctx* c = (cl_ctx*)vctx;
  gpulab_hal_status st;
  cl_ulong half, stride, off, maxp;
  cl_mem x, pos, cs, sn;
  size_t global[2];
  gpulab_hal_clear_error(err);
  if (a != NULL && a->struct_size >= sizeof *a) {
    const gpulab_hal_buffer b[4] = {a->x, a->positions, a->cos_table, a->sin_table};
    if (any_null(b, 4)) return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "rope: a NULL buffer");
  }
  st = hal_check_rope(a, GPULAB_HAL_DTYPE_F32, a ? cl_bytes(a->x) : 0, a ? cl_bytes(a->positions) : 0,
                      a ? cl_bytes(a->cos_table) : 0, a ? cl_bytes(a->sin_table) : 0, err);
  if (st != GPULAB_HAL_OK || a->rows == 0 || a->heads == 0 || a->head_dim == 0) return st;
  if ((st = ensure_program(c, err)) != GPULAB_HAL_OK) return st;
  half = a->head_dim / 2u;
  stride = a->row_stride;
  off = a->x_offset;
  maxp = a->max_position;
  x = cl_mem_of(a->x);
  pos = cl_mem_of(a->positions);
  cs = cl_mem_of(a->cos_table);
  sn = cl_mem_of(a->sin_table);
  {
    const cl_arg args[] = {CL_ARG(half), CL_ARG(stride), CL_ARG(off), CL_ARG(maxp),
                           CL_ARG(x),    CL_ARG(pos),    CL_ARG(cs),  CL_ARG(sn)};
    global[0] = (size_t)(a->heads * half);
    global[1] = (size_t)a->rows;
    return run_kernel(c, c->k_rope, "rope kernel", args, 8, 2, global, err);
  }
}

static gpulab_hal_status ocl_silu_mul(void* vctx, const gpulab_hal_silu_mul_args* a, gpulab_hal_error* err) {
  cl_ctx* c = (cl_ctx*)vctx;
  gpulab_hal_status st;
  cl_ulong cols;
  cl_mem in, out;
  size_t global[2];
  gpulab_hal_clear_error(err);
  if (a != NULL && a->struct_size >= sizeof *a && (a->in == NULL || a->out == NULL))
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "silu_mul: a NULL buffer");
  st = hal_check_silu_mul(a, GPULAB_HAL_DTYPE_F32, a ? cl_bytes(a->in) : 0, a ? cl_bytes(a->out) : 0, err);
  if (st != GPULAB_HAL_OK || a->rows == 0 || a->cols == 0) return st;
  if ((st = ensure_program(c, err)) != GPULAB_HAL_OK) return st;
  cols = a->cols;
  in = cl_mem_of(a->in);
  out = cl_mem_of(a->out);
  {
    const cl_arg args[] = {CL_ARG(cols), CL_ARG(in), CL_ARG(out)};
    global[0] = (size_t)a->cols;
    global[1] = (size_t)a->rows;
    return run_kernel(c, c->k_silu_mul, "silu_mul kernel", args, 3, 2, global, err);
  }
}

static gpulab_hal_status ocl_paged_attention(void* vctx, const gpulab_hal_paged_attention_args* a,
                                             gpulab_hal_error* err) {
  cl_ctx* c = (cl_ctx*)vctx;
  gpulab_hal_status st;
  uint64_t bytes[7] = {0, 0, 0, 0, 0, 0, 0};
  cl_ulong qh, kvh, hd, qrs, qoff, nb, bs, ns, mb;
  cl_float scale;
  cl_mem q, kc, vc, table, seq, pos, out;
  size_t global[2];
  gpulab_hal_clear_error(err);
  if (a != NULL && a->struct_size >= sizeof *a) {
    const gpulab_hal_buffer b[7] = {a->q, a->k_cache, a->v_cache, a->block_table, a->seq_ids, a->positions, a->out};
    int i;
    if (any_null(b, 7)) return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "paged_attention: a NULL buffer");
    for (i = 0; i < 7; ++i) bytes[i] = cl_bytes(b[i]);
  }
  st = hal_check_paged_attention(a, GPULAB_HAL_DTYPE_F32, bytes, err);
  if (st != GPULAB_HAL_OK || a->rows == 0 || a->q_heads == 0) return st;
  if ((st = ensure_program(c, err)) != GPULAB_HAL_OK) return st;
  qh = a->q_heads;
  kvh = a->kv_heads;
  hd = a->head_dim;
  qrs = a->q_row_stride;
  qoff = a->q_offset;
  nb = a->num_blocks;
  bs = a->block_size;
  ns = a->num_seqs;
  mb = a->max_blocks_per_seq;
  scale = a->scale;
  q = cl_mem_of(a->q);
  kc = cl_mem_of(a->k_cache);
  vc = cl_mem_of(a->v_cache);
  table = cl_mem_of(a->block_table);
  seq = cl_mem_of(a->seq_ids);
  pos = cl_mem_of(a->positions);
  out = cl_mem_of(a->out);
  {
    const cl_arg args[] = {CL_ARG(qh), CL_ARG(kvh), CL_ARG(hd),    CL_ARG(qrs), CL_ARG(qoff), CL_ARG(nb),
                           CL_ARG(bs), CL_ARG(ns),  CL_ARG(mb),    CL_ARG(scale), CL_ARG(q),  CL_ARG(kc),
                           CL_ARG(vc), CL_ARG(table), CL_ARG(seq), CL_ARG(pos), CL_ARG(out)};
    global[0] = (size_t)a->q_heads;
    global[1] = (size_t)a->rows;
    return run_kernel(c, c->k_attention, "paged_attention kernel", args, 17, 2, global, err);
  }
}

static gpulab_hal_status ocl_describe(void* vctx, char* out, uint32_t out_size, gpulab_hal_error* err) {
  const cl_ctx* c = (const cl_ctx*)vctx;
  gpulab_hal_clear_error(err);
  snprintf(out, out_size, "%s", c->device_line);
  return GPULAB_HAL_OK;
}

static const gpulab_hal_backend kOpenCL = {
    GPULAB_HAL_ABI_VERSION,
    sizeof(gpulab_hal_backend),
    "opencl",
    "OpenCL C kernels through the ICD loader (PoCL on the CPU here)",
    GPULAB_HAL_DTYPE_F32,
    GPULAB_HAL_OPS_V2_2,
    8,
    GPULAB_HAL_FEATURE_VENDOR_LIB | GPULAB_HAL_FEATURE_NOT_UNLOADABLE,
    0,
    {0, 0, 0, 0, 0, 0, 0, 0},
    ocl_init,
    ocl_shutdown,
    ocl_alloc,
    ocl_free,
    ocl_to_device,
    ocl_to_host,
    ocl_matmul,
    ocl_softmax,
    ocl_describe,
    ocl_rmsnorm,
    ocl_rope,
    ocl_silu_mul,
    ocl_paged_attention,
};

const gpulab_hal_backend* gpulab_hal_backend_register(void) { return &kOpenCL; }
