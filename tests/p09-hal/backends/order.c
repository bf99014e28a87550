/* Records init and shutdown in the file named by GPULAB_HAL_TEST_LOG, so a
 * test can see the core shut backends down in reverse load order. Built twice:
 * -DORDER_NAME="order_a" and "order_b". */
#include <stdio.h>
#include <stdlib.h>

#include "../../../labs/p09-hal/backends/common/host_backend.h"

static void log_event(const char* what) {
  const char* path = getenv("GPULAB_HAL_TEST_LOG");
  FILE* f = path ? fopen(path, "a") : NULL;
  if (f) {
    fprintf(f, "%s %s\n", what, ORDER_NAME);
    fclose(f);
  }
}

static gpulab_hal_status order_init(void** ctx, gpulab_hal_error* err) {
  gpulab_hal_clear_error(err);
  *ctx = malloc(16); /* real state, so ASan sees it freed at shutdown */
  log_event("init");
  return *ctx ? GPULAB_HAL_OK : gpulab_hal_fail(err, GPULAB_HAL_ERR_OUT_OF_MEMORY, "malloc");
}
static void order_shutdown(void* ctx) {
  free(ctx);
  log_event("shutdown");
}

static const gpulab_hal_backend kDesc = {
    GPULAB_HAL_ABI_VERSION, sizeof(gpulab_hal_backend), ORDER_NAME, "records its lifecycle",
    GPULAB_HAL_DTYPE_F32, GPULAB_HAL_OP_BUFFER, 1, GPULAB_HAL_FEATURE_HOST_MEMORY, 0, {0, 0, 0, 0, 0, 0, 0, 0},
    order_init, order_shutdown, host_buffer_alloc, host_buffer_free, host_copy_to_device, host_copy_to_host,
    NULL, NULL, NULL, NULL, NULL, NULL, NULL};

const gpulab_hal_backend* gpulab_hal_backend_register(void) { return &kDesc; }
