#include "platform/inventory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "conformance/session.hpp"
#include "gpulab/cli.hpp"
#include "hal/hal.hpp"
#include "platform/job_spec.hpp"

namespace platform {

std::vector<Device> parse_device_spec(std::string_view spec) {
  std::vector<Device> out;
  std::set<std::string> seen;
  std::size_t pos = 0;
  while (pos <= spec.size()) {
    const auto comma = spec.find(',', pos);
    const auto item = spec.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    pos = comma == std::string_view::npos ? spec.size() + 1 : comma + 1;
    const auto colon = item.find(':');
    const std::string backend(item.substr(0, colon));
    int count = 1;
    if (colon != std::string_view::npos) {
      const std::string n(item.substr(colon + 1));
      try {
        std::size_t used = 0;
        count = std::stoi(n, &used);
        if (used != n.size()) throw std::invalid_argument(n);
      } catch (const std::exception&) {
        throw gpulab::UsageError(fmt::format("--devices '{}': '{}' is not a count", spec, n));
      }
    }
    if (backend.empty() || backend == "auto" ||
        std::find(std::begin(kBackendNames), std::end(kBackendNames), backend) == std::end(kBackendNames)) {
      throw gpulab::UsageError(
          fmt::format("--devices '{}': unknown backend '{}' (cpu_ref, fast, blas, opencl, cuda)", spec, backend));
    }
    if (count < 1 || count > 16) throw gpulab::UsageError(fmt::format("--devices '{}': 1-16 devices per backend", spec));
    if (!seen.insert(backend).second) throw gpulab::UsageError(fmt::format("--devices '{}': {} twice", spec, backend));
    for (int i = 0; i < count; ++i) out.push_back(Device{fmt::format("{}:{}", backend, i), backend, i, true, "", {}});
  }
  return out;
}

std::vector<Device> discover_devices() {
  gpulab::hal::Registry reg(gpulab::hal::DiscoveryOptions::from_environment());
  std::vector<Device> out;
  for (const auto& b : reg.backends()) {
    const std::string name(b->name());
    if (std::find(std::begin(kBackendNames), std::end(kBackendNames), name) == std::end(kBackendNames)) continue;
    out.push_back(Device{name + ":0", name, 0, true, "", {}});
  }
  return out;
}

std::vector<Certification> certify(std::vector<Device>& devices) {
  std::set<std::string> backends;
  for (const auto& d : devices) backends.insert(d.backend);
  std::vector<Certification> out;
  // One session per backend: a name the HAL cannot load must not cost the others.
  for (const auto& name : backends) {
    Certification c{name, false, false, "not loaded by the HAL here"};
    conformance::SessionOptions opts;
    opts.only = {name};
    opts.matrix.ops = {conformance::Op::kMatmul};
    opts.matrix.dtypes = {conformance::DType::kF32};
    opts.perf = false;
    try {
      const auto report = conformance::run_session(opts);
      for (const auto& br : report.backends) {
        if (br.info.name != name) continue;
        c.loaded = true;
        const auto* cell = br.cell(conformance::Op::kMatmul, conformance::DType::kF32);
        if (!br.available()) {
          c.detail = br.info.unavailable;
        } else if (cell == nullptr || cell->verdict != conformance::Verdict::kPass) {
          c.detail = cell ? fmt::format("F32 matmul {} ({}/{} cases)", conformance::name_of(cell->verdict),
                                        cell->passed, cell->total)
                          : "F32 matmul not declared";
        } else {
          c.certified = true;
          c.detail = fmt::format("F32 matmul PASS ({}/{} cases)", cell->passed, cell->total);
        }
      }
      for (const auto& r : report.rejected) {
        if (r.name == name) c.detail = "rejected by the HAL: " + r.reason;
      }
    } catch (const std::exception& e) {
      c.detail = e.what();
    }
    out.push_back(std::move(c));
  }
  for (auto& d : devices) {
    const auto it = std::find_if(out.begin(), out.end(), [&](const Certification& c) { return c.backend == d.backend; });
    d.dtypes.clear();
    if (it != out.end() && it->certified) d.dtypes.emplace_back("f32");
  }
  return out;
}

}  // namespace platform
