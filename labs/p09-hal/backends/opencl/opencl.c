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

#include "../common/copy_check.h"

static const char* const kSource =
    "#define TILE 16\n"
    "__kernel void matmul(const ulong m, const ulong n, const ulong k,\n"
    "                     __global const float* A, __global const float* B, __global float* C) {\n"
    "  __local float As[TILE][TILE];\n"
    "  __local float Bs[TILE][TILE];\n"
    "  const size_t lr = get_local_id(1), lc = get_local_id(0);\n"
    "  const size_t row = get_group_id(1) * TILE + lr, col = get_group_id(0) * TILE + lc;\n"
    "  float acc = 0.0f;\n"
    "  for (ulong t = 0; t < k; t += TILE) {\n"
    "    As[lr][lc] = (row < m && t + lc < k) ? A[row * k + t + lc] : 0.0f;\n"
    "    Bs[lr][lc] = (t + lr < k && col < n) ? B[(t + lr) * n + col] : 0.0f;\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (int p = 0; p < TILE; ++p) acc = fma(As[lr][p], Bs[p][lc], acc);\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  if (row < m && col < n) C[row * n + col] = acc;\n"
    "}\n"
    "__kernel void softmax(const ulong cols, __global const float* in, __global float* out) {\n"
    "  const size_t r = get_global_id(0);\n"
    "  __global const float* x = in + r * cols;\n"
    "  __global float* y = out + r * cols;\n"
    "  float mx = -INFINITY, sum = 0.0f;\n"
    "  for (ulong c = 0; c < cols; ++c) mx = fmax(mx, x[c]);\n"
    "  for (ulong c = 0; c < cols; ++c) sum += exp(x[c] - mx);\n"
    "  for (ulong c = 0; c < cols; ++c) y[c] = exp(x[c] - mx) / sum;\n"
    "}\n";

typedef struct cl_ctx {
  cl_platform_id platform;
  cl_device_id device;
  cl_context context;
  cl_command_queue queue;
  cl_program program; /* built at first use */
  cl_kernel k_matmul, k_softmax;
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
  const char* source = kSource;
  if (c->program != NULL) return GPULAB_HAL_OK;
  c->program = clCreateProgramWithSource(c->context, 1, &source, NULL, &rc);
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
  size_t global[2], local[2] = {16, 16};
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
  global[0] = (size_t)((n + 15) / 16 * 16);
  global[1] = (size_t)((m + 15) / 16 * 16);
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
    GPULAB_HAL_OP_BUFFER | GPULAB_HAL_OP_MATMUL | GPULAB_HAL_OP_SOFTMAX,
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
};

const gpulab_hal_backend* gpulab_hal_backend_register(void) { return &kOpenCL; }
