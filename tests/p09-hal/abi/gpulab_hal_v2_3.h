/* A FUTURE minor, v2.3, as a vendor might build against it next year: the
 * v2.2 descriptor plus two appended members. A backend built against this is
 * "a newer-minor backend" for the v2.2 core, which must load it and ignore the
 * tail it does not know. */
#ifndef GPULAB_HAL_V2_3_H
#define GPULAB_HAL_V2_3_H

#include <gpulab_hal/gpulab_hal.h>

#define GPULAB_HAL_V2_3_VERSION GPULAB_HAL_MAKE_VERSION(2u, 3u)

typedef struct gpulab_hal_backend_v2_3 {
  gpulab_hal_backend v2_2;                                       /* unchanged prefix */
  gpulab_hal_status (*synchronize)(void* ctx, gpulab_hal_error* err); /* v2.3: appended */
  uint64_t preferred_alignment;                                  /* v2.3: appended */
} gpulab_hal_backend_v2_3;

_Static_assert(sizeof(gpulab_hal_backend_v2_3) == 200, "v2.3 is 200 bytes");

#endif
