#include "licensing/host_probe.hpp"

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <system_error>

namespace licensing {

namespace fs = std::filesystem;

namespace {

// The path as seen inside the probed tree ("/etc/machine-id"), for messages.
std::string shown(const fs::path& rel) { return "/" + rel.string(); }

std::string trim(std::string s) {
  const auto first = s.find_first_not_of(" \t\n");
  if (first == std::string::npos) return "";
  const auto last = s.find_last_not_of(" \t\n");
  return s.substr(first, last - first + 1);
}

std::string lower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

// nullopt + reason when unreadable. Sysfs/proc files are small; cap at 1 MiB.
std::optional<std::string> read_small(const fs::path& p, std::string& why) {
  std::ifstream in(p, std::ios::binary);
  if (!in) {
    why = errno == EACCES ? "permission denied (needs root)" : "not present";
    return std::nullopt;
  }
  std::string s;
  char buf[4096];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    s.append(buf, static_cast<std::size_t>(in.gcount()));
    if (s.size() > (1u << 20)) {
      why = "unexpectedly large";
      return std::nullopt;
    }
  }
  return s;
}

Reading machine_id(const fs::path& root) {
  Reading r{"machine_id", "", {}, ""};
  for (const char* rel : {"etc/machine-id", "var/lib/dbus/machine-id"}) {
    std::string why;
    if (auto s = read_small(root / rel, why)) {
      r.source = shown(rel);
      const std::string id = lower(trim(*s));
      if (id.size() == 32 && id != std::string(32, '0')) r.raw.push_back(id);
      else r.note = "not a 32-hex-digit machine id";
      return r;
    }
    r.note = why;
  }
  r.source = "/etc/machine-id";
  return r;
}

Reading dmi_uuid(const fs::path& root) {
  const fs::path rel = "sys/class/dmi/id/product_uuid";
  Reading r{"dmi_uuid", shown(rel), {}, ""};
  std::string why;
  auto s = read_small(root / rel, why);
  if (!s) {
    r.note = why == "not present" ? "not present (no DMI table: VM or non-x86 board)" : why;
    return r;
  }
  const std::string id = lower(trim(*s));
  // Firmware placeholders that many boards ship: not an identity.
  static const std::set<std::string> kJunk = {"00000000-0000-0000-0000-000000000000",
                                              "ffffffff-ffff-ffff-ffff-ffffffffffff",
                                              "03000200-0400-0500-0006-000700080009"};
  if (id.size() != 36 || kJunk.count(id)) {
    r.note = "placeholder value from the firmware, ignored";
    return r;
  }
  r.raw.push_back(id);
  return r;
}

void cpu_readings(const fs::path& root, std::vector<Reading>& out) {
  const fs::path rel = "proc/cpuinfo";
  Reading model{"cpu_model", shown(rel), {}, ""};
  Reading flags{"cpu_flags", shown(rel), {}, ""};
  std::string why;
  auto s = read_small(root / rel, why);
  if (s) {
    std::istringstream in(*s);
    std::string line;
    while (std::getline(in, line)) {
      const auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      const std::string key = trim(line.substr(0, colon));
      const std::string value = trim(line.substr(colon + 1));
      if (key == "model name" && model.raw.empty() && !value.empty()) model.raw.push_back(value);
      if (key == "flags" && flags.raw.empty() && !value.empty()) {
        // Sorted, so the order the kernel prints them in does not matter.
        std::istringstream words(value);
        std::set<std::string> set;
        for (std::string w; words >> w;) set.insert(w);
        std::string joined;
        for (const auto& w : set) joined += (joined.empty() ? "" : " ") + w;
        flags.raw.push_back(joined);
      }
    }
  }
  if (model.raw.empty()) model.note = s ? "no 'model name' line" : why;
  if (flags.raw.empty()) flags.note = s ? "no 'flags' line" : why;
  out.push_back(std::move(model));
  out.push_back(std::move(flags));
}

Reading nic_macs(const fs::path& root) {
  const fs::path rel = "sys/class/net";
  Reading r{"nic_mac", shown(rel) + "/*/address", {}, ""};
  std::error_code ec;
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(root / rel, ec)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  std::size_t virtual_ifs = 0;
  for (const auto& name : names) {
    const fs::path dir = root / rel / name;
    // Physical NICs have a bus device behind them; lo, bridges, veth, tun do not.
    if (!fs::exists(dir / "device", ec)) {
      ++virtual_ifs;
      continue;
    }
    std::string why;
    // A bonded NIC reports the bond's MAC in `address`; the burned-in one is here.
    auto addr = read_small(dir / "bonding_slave/perm_hwaddr", why);
    if (!addr) {
      // addr_assign_type 0 = permanent; 1 (random) or 3 (set by user) would not identify the card.
      auto type = read_small(dir / "addr_assign_type", why);
      if (type && trim(*type) != "0") continue;
      addr = read_small(dir / "address", why);
    }
    if (!addr) continue;
    const std::string mac = lower(trim(*addr));
    if (mac.size() == 17 && mac != "00:00:00:00:00:00") r.raw.push_back(mac);
  }
  if (r.raw.empty()) {
    r.note = names.empty() ? "no network interfaces found"
                           : "no physical NIC with a permanent address (" + std::to_string(virtual_ifs) +
                                 " virtual interfaces skipped)";
  }
  return r;
}

Reading root_disk(const fs::path& root) {
  Reading r{"root_disk", "/proc/self/mountinfo", {}, ""};
  std::string why;
  auto mi = read_small(root / "proc/self/mountinfo", why);
  if (!mi) {
    r.note = "mountinfo " + why;
    return r;
  }
  // The last mount on "/" is the visible one: "id parent MAJ:MIN root mountpoint ... - fstype src opts".
  std::string devnum, fstype;
  std::istringstream in(*mi);
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    std::string id, parent, dev, mroot, mpoint;
    if (!(f >> id >> parent >> dev >> mroot >> mpoint) || mpoint != "/") continue;
    devnum = dev;
    const auto dash = line.find(" - ");
    std::istringstream tail(dash == std::string::npos ? "" : line.substr(dash + 3));
    tail >> fstype;
  }
  if (devnum.empty()) {
    r.note = "no mount on / in mountinfo";
    return r;
  }
  if (devnum.rfind("0:", 0) == 0) {
    r.note = "root filesystem is " + (fstype.empty() ? "virtual" : fstype) + ", not on a block device (container?)";
    return r;
  }
  std::error_code ec;
  fs::path dev = fs::canonical(root / "sys/dev/block" / devnum, ec);
  if (ec) {
    r.note = "no /sys/dev/block/" + devnum;
    return r;
  }
  if (fs::exists(dev / "partition", ec)) dev = dev.parent_path();  // partition -> whole disk
  // LVM / dm-crypt: follow the first underlying device.
  for (int depth = 0; depth < 4 && fs::is_directory(dev / "slaves", ec); ++depth) {
    std::vector<fs::path> slaves;
    for (const auto& e : fs::directory_iterator(dev / "slaves", ec)) slaves.push_back(e.path());
    if (slaves.empty()) break;
    std::sort(slaves.begin(), slaves.end());
    fs::path next = fs::canonical(slaves.front(), ec);
    if (ec) break;
    if (fs::exists(next / "partition", ec)) next = next.parent_path();
    dev = next;
  }
  r.source = "/sys/block/" + dev.filename().string();
  for (const char* f : {"device/serial", "serial", "wwid", "device/wwid"}) {
    if (auto s = read_small(dev / f, why)) {
      const std::string serial = trim(*s);
      if (!serial.empty()) {
        r.source += std::string("/") + f;
        r.raw.push_back(serial);
        return r;
      }
    }
  }
  r.note = "disk " + dev.filename().string() + " exposes no serial number";
  return r;
}

Reading gpu_uuids(const ProbeOptions& options) {
  GpuProbe g;
  if (options.gpu_probe) {
    g = options.gpu_probe();
  } else {
    if (options.root == "/") g = probe_gpus_nvml();
    if (g.uuids.empty()) {
      GpuProbe proc = probe_gpus_procfs(options.root);
      if (!proc.uuids.empty()) g = proc;
      else if (options.root != "/") g = proc;
      else g.note += "; " + proc.note;
    }
  }
  Reading r{"gpu_uuid", g.source, {}, g.note};
  for (auto& u : g.uuids) r.raw.push_back(lower(trim(u)));
  std::sort(r.raw.begin(), r.raw.end());
  return r;
}

}  // namespace

GpuProbe probe_gpus_procfs(const fs::path& root) {
  GpuProbe g{{}, "/proc/driver/nvidia/gpus", ""};
  std::error_code ec;
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(root / "proc/driver/nvidia/gpus", ec)) dirs.push_back(e.path());
  if (ec || dirs.empty()) {
    g.note = "no NVIDIA driver procfs entries";
    return g;
  }
  std::sort(dirs.begin(), dirs.end());
  for (const auto& d : dirs) {
    std::string why;
    auto s = read_small(d / "information", why);
    if (!s) continue;
    std::istringstream in(*s);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("GPU UUID:", 0) == 0) g.uuids.push_back(trim(line.substr(9)));
    }
  }
  if (g.uuids.empty()) g.note = "driver procfs lists no GPU UUID";
  return g;
}

std::vector<Reading> probe_host(const ProbeOptions& options) {
  std::vector<Reading> out;
  out.push_back(machine_id(options.root));
  out.push_back(dmi_uuid(options.root));
  cpu_readings(options.root, out);
  out.push_back(nic_macs(options.root));
  out.push_back(root_disk(options.root));
  out.push_back(gpu_uuids(options));
  return out;
}

Fingerprint fingerprint_of(std::string_view product, const std::vector<Reading>& readings) {
  Fingerprint fp{std::string(product), {}};
  for (const auto& r : readings) {
    for (const auto& raw : r.raw) fp.components.push_back({r.kind, component_hash(product, r.kind, raw)});
  }
  std::sort(fp.components.begin(), fp.components.end());
  fp.components.erase(std::unique(fp.components.begin(), fp.components.end()), fp.components.end());
  return fp;
}

}  // namespace licensing
