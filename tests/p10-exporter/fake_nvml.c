/* A stand-in libnvidia-ml.so.1 for gpu-exporter's NVML source tests: two
 * devices with fixed readings, one Xid 79 event on device 1 delivered by the
 * first nvmlEventSetWait_v2, and ECC not supported on device 1. Not NVML: it
 * only answers the entry points the exporter resolves, with NVML's types and
 * units (mW, mJ, MHz, KB/s, percent). */
#include <stddef.h>
#include <string.h>
#include <time.h>

typedef int nvmlReturn_t;
struct nvmlDevice_st {
  int index;
};
typedef struct nvmlDevice_st* nvmlDevice_t;
typedef struct nvmlEventSet_st {
  int delivered;
} * nvmlEventSet_t;
typedef struct {
  unsigned gpu, memory;
} nvmlUtilization_t;
typedef struct {
  unsigned long long total, free, used;
} nvmlMemory_t;
typedef struct {
  nvmlDevice_t device;
  unsigned long long eventType, eventData;
  unsigned gpuInstanceId, computeInstanceId;
} nvmlEventData_t;

enum { kSuccess = 0, kInvalidArgument = 2, kNotSupported = 3, kTimeout = 10 };

static struct nvmlDevice_st devices[2] = {{0}, {1}};
static struct nvmlEventSet_st event_set = {0};

static int valid(nvmlDevice_t d) {
  return d == &devices[0] || d == &devices[1];
}

nvmlReturn_t nvmlInit_v2(void) {
  return kSuccess;
}
nvmlReturn_t nvmlShutdown(void) {
  return kSuccess;
}
const char* nvmlErrorString(nvmlReturn_t r) {
  return r == kSuccess ? "Success" : r == kNotSupported ? "Not Supported" : "Unknown Error";
}
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned* count) {
  *count = 2;
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice_t* d) {
  if (i >= 2) return kInvalidArgument;
  *d = &devices[i];
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char* buf, unsigned len) {
  if (!valid(d) || len < 16) return kInvalidArgument;
  strcpy(buf, d->index == 0 ? "GPU-fake-0000" : "GPU-fake-0001");
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char* buf, unsigned len) {
  if (!valid(d) || len < 32) return kInvalidArgument;
  strcpy(buf, "Fake A100-SXM4-40GB");
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t* u) {
  u->gpu = d->index == 0 ? 37 : 0;
  u->memory = 10;
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t* m) {
  (void)d;
  m->total = 40ULL << 30;
  m->used = 1ULL << 30;
  m->free = m->total - m->used;
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned* t) {
  if (sensor != 0) return kInvalidArgument;
  *t = d->index == 0 ? 55 : 41;
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned* mw) {
  *mw = d->index == 0 ? 123456 : 60000;
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d, unsigned long long* mj) {
  *mj = d->index == 0 ? 5000000ULL : 1000ULL;
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned* mhz) {
  if (type != 1) return kInvalidArgument; /* NVML_CLOCK_SM */
  *mhz = d->index == 0 ? 1410 : 210;
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t d, int counter, unsigned* kb) {
  (void)d;
  *kb = counter == 0 ? 1000 : 2000; /* TX, RX */
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int error_type, int counter_type,
                                         unsigned long long* count) {
  if (d->index == 1) return kNotSupported;
  if (counter_type != 1) return kInvalidArgument; /* aggregate */
  *count = error_type == 0 ? 5 : 1;
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d, unsigned long long* r) {
  *r = d->index == 0 ? 0x40ULL /* HW thermal slowdown */ : 0;
  return kSuccess;
}
nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t* set) {
  *set = &event_set;
  return kSuccess;
}
nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long types,
                                      nvmlEventSet_t set) {
  (void)d;
  return (types & 0x8ULL) != 0 && set == &event_set ? kSuccess : kInvalidArgument;
}
nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t* data, unsigned timeout_ms) {
  if (!set->delivered) {
    set->delivered = 1;
    memset(data, 0, sizeof *data);
    data->device = &devices[1];
    data->eventType = 0x8ULL; /* nvmlEventTypeXidCriticalError */
    data->eventData = 79;
    return kSuccess;
  }
  struct timespec ts = {0, (long)(timeout_ms < 50 ? timeout_ms : 50) * 1000000L};
  nanosleep(&ts, NULL);
  return kTimeout;
}
nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
  (void)set;
  return kSuccess;
}
