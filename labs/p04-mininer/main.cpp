// mininer: a container runtime built from the kernel's primitives — clone
// with new namespaces, pivot_root into a rootfs, a fresh /proc, cgroups for
// memory and devices — plus GPU passthrough of a device node the way the
// NVIDIA container toolkit does it.
#include <fmt/core.h>
#include <unistd.h>

#include "gpulab/cli.hpp"
#include "gpulab/flag_checks.hpp"
#include "mininer/cgroup.hpp"
#include "mininer/container.hpp"
#include "mininer/rootfs.hpp"

namespace {

constexpr std::string_view kProgram = "mininer";

struct RunFlags {
  std::vector<std::string> devices, injects;
  std::string cgroup = "auto";
};

void add_run_flags(CLI::App& sub, mininer::RunSpec& spec, RunFlags& flags) {
  sub.add_option("--rootfs", spec.rootfs,
                 "Root filesystem directory (make one with 'mininer mkrootfs DIR')")
      ->capture_default_str();
  sub.add_flag("--chroot", spec.chroot_only,
               "chroot instead of pivot_root (weaker: escapable by a root process)");
  sub.add_option("--device", flags.devices,
                 "HOST[:/dev/NAME] device node (recreated with its major:minor) or FUSE device "
                 "file (bind-mounted); "
                 "repeatable")
      ->type_name("PATH")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  sub.add_option("--inject", flags.injects,
                 "HOST[:PATH] file bind-mounted read-only (default /usr/bin/NAME without -static); "
                 "repeatable")
      ->type_name("PATH")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  sub.add_flag(
      "--device-cgroup", spec.device_cgroup,
      "Allow only /dev/null and the --device nodes (v1 devices.allow or a v2 eBPF program)");
  sub.add_flag("--net", spec.net,
               "New network namespace with a veth pair to the host ($MININER_HOST_IP inside)");
  sub.add_flag("--userns", spec.userns, "New user namespace: container root is host uid 100000");
  sub.add_flag("--confine", spec.confine,
               "Docker's default capabilities only, no_new_privs, and a seccomp filter that refuses mounts, "
               "namespaces, modules, kexec, BPF and keyrings (EPERM)");
  sub.add_option("--cgroup", flags.cgroup, "cgroup version for limits: auto (detect), v1 or v2")
      ->check(CLI::IsMember({"auto", "v1", "v2"}))
      ->capture_default_str();
  sub.add_option("--hostname", spec.hostname, "Hostname inside the container")
      ->capture_default_str();
  sub.prefix_command();  // the first word that is not a flag starts the command
}

void finish_spec(CLI::App& sub, mininer::RunSpec& spec, const RunFlags& flags) {
  spec.argv = sub.remaining();
  if (!spec.argv.empty() && spec.argv.front() == "--") spec.argv.erase(spec.argv.begin());
  for (const auto& d : flags.devices) spec.devices.push_back(mininer::parse_device_request(d));
  for (const auto& i : flags.injects) spec.injects.push_back(mininer::parse_inject_request(i));
  spec.cgroup = flags.cgroup == "v1"   ? mininer::CgroupPreference::kV1
                : flags.cgroup == "v2" ? mininer::CgroupPreference::kV2
                                       : mininer::CgroupPreference::kAuto;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "mininer: a container from namespaces, pivot_root and cgroups, with GPU-style device "
      "passthrough.\n"
      "Proves that a container is a process with its own view (UTS, PID, mount) and limits "
      "(memory, devices)."};
  app.require_subcommand(1);

  mininer::RunSpec run_spec, limited_spec;
  RunFlags run_flags, limited_flags;
  auto* run = app.add_subcommand("run", "Run CMD... in a new container (hostname minibox, PID 1)");
  add_run_flags(*run, run_spec, run_flags);

  auto* limited =
      app.add_subcommand("run-limited", "Run CMD... with a memory limit of MB MiB (swap off)");
  std::uint64_t limit_mb = 0;
  limited->add_option("MB", limit_mb, "Memory limit in MiB")
      ->required()
      ->check(gpulab::whole_in<std::uint64_t>());  // -1 is not 2^64-1; 0 and > 1 PiB: run_container says why
  add_run_flags(*limited, limited_spec, limited_flags);

  auto* mkrootfs =
      app.add_subcommand("mkrootfs", "Build a busybox rootfs in DIR from Debian's busybox-static");
  std::string rootfs_dir;
  mkrootfs->add_option("DIR", rootfs_dir, "Directory to create or refresh")->required();

  auto* gc = app.add_subcommand(
      "gc", "Remove the cgroups of mininers that were killed with SIGKILL (each run also does)");

  return gpulab::run_program(kProgram, app, argc, argv, [&]() -> int {
    if (*gc) {
      if (::geteuid() != 0) throw gpulab::Unsupported("mininer gc removes cgroups, which needs root: run it with sudo");
      const auto stale = mininer::remove_stale_cgroups();
      for (const auto& p : stale.removed) fmt::print("removed cgroup {} (stale: its mininer was killed)\n", p);
      for (const auto& f : stale.failures) fmt::print(stderr, "mininer: warning: {}\n", f);
      if (stale.removed.empty() && stale.failures.empty()) fmt::print("no stale cgroups\n");
      return stale.failures.empty() ? gpulab::kExitOk : gpulab::kExitCheckFailed;
    }
    if (*mkrootfs) {
      const auto r = mininer::make_rootfs(rootfs_dir);
      std::string extras;
      for (const auto& e : r.extras) extras += ", " + e;
      fmt::print("mkrootfs: {}: busybox {} (static, from {}), {} applets, /proc /sys /dev /tmp{}\n",
                 rootfs_dir, r.busybox_version.empty() ? "?" : r.busybox_version, r.busybox_path,
                 r.applets, extras);
      for (const auto& n : r.notes) fmt::print(stderr, "mininer: note: {}\n", n);
      return gpulab::kExitOk;
    }
    mininer::RunSpec& spec = *run ? run_spec : limited_spec;
    finish_spec(*run ? *run : *limited, spec, *run ? run_flags : limited_flags);
    if (*limited) spec.memory_mb = limit_mb;
    return mininer::run_container(spec).exit_code();
  });
}
