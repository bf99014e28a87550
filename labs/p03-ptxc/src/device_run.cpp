#include "ptxc/device_run.hpp"

#include <cuda.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <gpulab/errors.hpp>

namespace ptxc {

bool device_path_built() {
  return true;
}

namespace {

// The driver entry points, resolved from libcuda.so.1 by their ABI names
// (cuda.h maps cuMemAlloc to cuMemAlloc_v2 and so on).
struct Driver {
  decltype(&::cuInit) init = nullptr;
  decltype(&::cuDeviceGetCount) device_count = nullptr;
  decltype(&::cuDeviceGet) device_get = nullptr;
  decltype(&::cuDeviceGetName) device_name = nullptr;
  decltype(&::cuDeviceGetAttribute) attribute = nullptr;
  decltype(&::cuDevicePrimaryCtxRetain) ctx_retain = nullptr;
  decltype(&::cuDevicePrimaryCtxRelease) ctx_release = nullptr;
  decltype(&::cuCtxSetCurrent) ctx_set = nullptr;
  decltype(&::cuCtxSynchronize) sync = nullptr;
  decltype(&::cuModuleLoadData) module_load = nullptr;
  decltype(&::cuModuleUnload) module_unload = nullptr;
  decltype(&::cuModuleGetFunction) get_function = nullptr;
  decltype(&::cuMemAlloc) alloc = nullptr;
  decltype(&::cuMemFree) free = nullptr;
  decltype(&::cuMemcpyHtoD) h2d = nullptr;
  decltype(&::cuMemcpyDtoH) d2h = nullptr;
  decltype(&::cuLaunchKernel) launch = nullptr;
  decltype(&::cuGetErrorString) error_string = nullptr;

  static const Driver& get() {
    static const Driver d = load();
    return d;
  }

 private:
  static Driver load() {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr)
      throw gpulab::Unsupported("no CUDA driver on this machine (libcuda.so.1 not found)");
    Driver d;
    const auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
      if (fn == nullptr) throw gpulab::Unsupported(fmt::format("the CUDA driver lacks {}", name));
    };
    sym(d.init, "cuInit");
    sym(d.device_count, "cuDeviceGetCount");
    sym(d.device_get, "cuDeviceGet");
    sym(d.device_name, "cuDeviceGetName");
    sym(d.attribute, "cuDeviceGetAttribute");
    sym(d.ctx_retain, "cuDevicePrimaryCtxRetain");
    sym(d.ctx_release, "cuDevicePrimaryCtxRelease_v2");
    sym(d.ctx_set, "cuCtxSetCurrent");
    sym(d.sync, "cuCtxSynchronize");
    sym(d.module_load, "cuModuleLoadData");
    sym(d.module_unload, "cuModuleUnload");
    sym(d.get_function, "cuModuleGetFunction");
    sym(d.alloc, "cuMemAlloc_v2");
    sym(d.free, "cuMemFree_v2");
    sym(d.h2d, "cuMemcpyHtoD_v2");
    sym(d.d2h, "cuMemcpyDtoH_v2");
    sym(d.launch, "cuLaunchKernel");
    sym(d.error_string, "cuGetErrorString");
    return d;
  }
};

void check(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return;
  const char* msg = nullptr;
  Driver::get().error_string(r, &msg);
  throw gpulab::RunError(fmt::format("{} failed: {} ({})", what,
                                     msg != nullptr ? msg : "unknown error", static_cast<int>(r)));
}

}  // namespace

DeviceRun run_on_device(const std::string& ptx, const std::string& entry,
                        const std::vector<Param>& params, const KernelInputs& inputs, int n,
                        int block) {
  const Driver& cu = Driver::get();
  if (cu.init(0) != CUDA_SUCCESS) throw gpulab::Unsupported("cuInit failed: no usable NVIDIA GPU");
  int count = 0;
  if (cu.device_count(&count) != CUDA_SUCCESS || count == 0)
    throw gpulab::Unsupported("no NVIDIA GPU found");
  CUdevice dev = 0;
  check(cu.device_get(&dev, 0), "cuDeviceGet");
  char name[256] = {};
  check(cu.device_name(name, sizeof name, dev), "cuDeviceGetName");
  int major = 0;
  int minor = 0;
  check(cu.attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
        "cuDeviceGetAttribute");
  check(cu.attribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev),
        "cuDeviceGetAttribute");
  CUcontext ctx = nullptr;
  check(cu.ctx_retain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  check(cu.ctx_set(ctx), "cuCtxSetCurrent");

  DeviceRun out;
  out.device = fmt::format("{} (sm_{}{})", name, major, minor);
  CUmodule mod = nullptr;
  std::vector<CUdeviceptr> ptrs(params.size(), 0);
  std::string failure;
  try {
    check(cu.module_load(&mod, ptx.c_str()), "cuModuleLoadData (driver JIT of the PTX)");
    CUfunction fn = nullptr;
    check(cu.get_function(&fn, mod, entry.c_str()), "cuModuleGetFunction");
    std::vector<void*> args;
    std::vector<float> scalars = inputs.scalars;
    for (std::size_t p = 0; p < params.size(); ++p) {
      if (params[p].type == Type::kF32Ptr) {
        const std::size_t bytes = inputs.buffers[p].size() * sizeof(float);
        check(cu.alloc(&ptrs[p], bytes), "cuMemAlloc");
        check(cu.h2d(ptrs[p], inputs.buffers[p].data(), bytes), "cuMemcpyHtoD");
        args.push_back(&ptrs[p]);
      } else {
        args.push_back(&scalars[p]);
      }
    }
    int count_arg = n;
    args.push_back(&count_arg);
    const auto grid = static_cast<unsigned>((n + block - 1) / block);
    check(cu.launch(fn, grid, 1, 1, static_cast<unsigned>(block), 1, 1, 0, nullptr, args.data(),
                    nullptr),
          "cuLaunchKernel");
    check(cu.sync(), "cuCtxSynchronize");
    out.buffers.resize(params.size());
    for (std::size_t p = 0; p < params.size(); ++p) {
      if (params[p].type != Type::kF32Ptr) continue;
      out.buffers[p].resize(inputs.buffers[p].size());
      check(cu.d2h(out.buffers[p].data(), ptrs[p], out.buffers[p].size() * sizeof(float)),
            "cuMemcpyDtoH");
    }
  } catch (const gpulab::RunError& e) {
    failure = e.what();
  }
  for (const CUdeviceptr p : ptrs)
    if (p != 0) cu.free(p);
  if (mod != nullptr) cu.module_unload(mod);
  cu.ctx_release(dev);
  if (!failure.empty()) throw gpulab::RunError(failure);
  return out;
}

}  // namespace ptxc
