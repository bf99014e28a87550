/* A FUTURE minor, v2.2, as a vendor might build against it next year: the
 * v2.1 descriptor plus two appended members. A backend built against this is
 * "a newer-minor backend" for the v2.1 core, which must load it and ignore the
 * tail it does not know. */
#ifndef GPULAB_HAL_V2_2_H
#define GPULAB_HAL_V2_2_H

#include <gpulab_hal/gpulab_hal.h>

#define GPULAB_HAL_V2_2_VERSION GPULAB_HAL_MAKE_VERSION(2u, 2u)

typedef struct gpulab_hal_backend_v2_2 {
  gpulab_hal_backend v2_1;                                       /* unchanged prefix */
  gpulab_hal_status (*synchronize)(void* ctx, gpulab_hal_error* err); /* v2.2: appended */
  uint64_t preferred_alignment;                                  /* v2.2: appended */
} gpulab_hal_backend_v2_2;

_Static_assert(sizeof(gpulab_hal_backend_v2_2) == 168, "v2.2 is 168 bytes");

#endif
