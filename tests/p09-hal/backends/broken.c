/* Backends that must be rejected, one per reason, chosen by -DGPULAB_TEST_CASE:
 *   1 major3      a future major (3.0): "abi v3 != core v2"
 *   2 tiny        major 2 but a 64-byte descriptor: too small to hold v2.0
 *   3 noname      a NULL name
 *   4 nodevice    init() returns GPULAB_HAL_ERR_NO_DEVICE
 *   5 initfail    init() returns GPULAB_HAL_ERR_DEVICE
 *   6 nullmatmul  declares matmul with a NULL matmul function
 *   7 nulldesc    the register function returns NULL
 *   8 nosym       exports a differently named symbol only
 *   9 nullattention  v2.2: declares paged_attention with a NULL function */
#include "../../../labs/p09-hal/backends/common/host_backend.h"

#define CASE GPULAB_TEST_CASE

#if CASE == 4
static gpulab_hal_status nodev_init(void** ctx, gpulab_hal_error* err) {
  *ctx = NULL;
  return gpulab_hal_fail(err, GPULAB_HAL_ERR_NO_DEVICE, "test: no accelerator on this machine");
}
#elif CASE == 5
static gpulab_hal_status fail_init(void** ctx, gpulab_hal_error* err) {
  *ctx = NULL;
  return gpulab_hal_fail(err, GPULAB_HAL_ERR_DEVICE, "test: firmware handshake failed");
}
#endif

static gpulab_hal_backend kDesc = {
    GPULAB_HAL_ABI_VERSION, sizeof(gpulab_hal_backend), "broken", "a backend the core must reject",
    GPULAB_HAL_DTYPE_F32, GPULAB_HAL_OP_BUFFER, 1, 0, 0, {0, 0, 0, 0, 0, 0, 0, 0},
    NULL, NULL, host_buffer_alloc, host_buffer_free, host_copy_to_device, host_copy_to_host, NULL, NULL, NULL,
    NULL, NULL, NULL, NULL};

#if CASE == 8
GPULAB_HAL_EXPORT const gpulab_hal_backend* hal_backend_register(void);
const gpulab_hal_backend* hal_backend_register(void) { return &kDesc; }
#else
const gpulab_hal_backend* gpulab_hal_backend_register(void) {
#if CASE == 1
  kDesc.abi_version = GPULAB_HAL_MAKE_VERSION(3u, 0u);
#elif CASE == 2
  kDesc.struct_size = 64;
#elif CASE == 3
  kDesc.name = NULL;
#elif CASE == 4
  kDesc.init = nodev_init;
#elif CASE == 5
  kDesc.init = fail_init;
#elif CASE == 6
  kDesc.ops |= GPULAB_HAL_OP_MATMUL;
#elif CASE == 7
  return NULL;
#elif CASE == 9
  kDesc.ops |= GPULAB_HAL_OP_PAGED_ATTENTION;
#endif
  return &kDesc;
}
#endif
