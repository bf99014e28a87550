/* A stand-in libnvidia-ml for the driver/toolkit-skew drill
 * (docs/runbooks/driver-toolkit-skew.md). It exports the entry points
 * gpu-exporter requires and answers nvmlInit_v2 the way NVML does when the
 * user-space library is newer than the loaded kernel module:
 * NVML_ERROR_LIB_RM_VERSION_MISMATCH (18), "Driver/library version mismatch".
 * DRILL_NVML_INIT_RESULT=0 makes it initialise instead (a node with no GPUs:
 * the state before the upgrade). Not NVML: it never touches a device. */
#include <stdlib.h>

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st* nvmlDevice_t;

enum { kSuccess = 0, kInvalidArgument = 2, kLibRmVersionMismatch = 18 };

static nvmlReturn_t init_result(void) {
  const char* forced = getenv("DRILL_NVML_INIT_RESULT");
  return forced != NULL ? (nvmlReturn_t)atoi(forced) : kLibRmVersionMismatch;
}

nvmlReturn_t nvmlInit_v2(void) {
  return init_result();
}
nvmlReturn_t nvmlShutdown(void) {
  return kSuccess;
}

const char* nvmlErrorString(nvmlReturn_t result) {
  switch (result) {
    case kSuccess:
      return "Success";
    case kInvalidArgument:
      return "Invalid Argument";
    case kLibRmVersionMismatch:
      return "Driver/library version mismatch";
    default:
      return "Unknown Error";
  }
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  if (count == NULL) return kInvalidArgument;
  *count = 0;
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  (void)index;
  (void)device;
  return kInvalidArgument;
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  (void)device;
  (void)uuid;
  (void)length;
  return kInvalidArgument;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  (void)device;
  (void)name;
  (void)length;
  return kInvalidArgument;
}
