#include "mininer/device_filter.hpp"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>

#include "mininer/sys.hpp"

namespace mininer {
namespace {

bpf_insn insn(std::uint8_t code, std::uint8_t dst, std::uint8_t src, std::int16_t off,
              std::int32_t imm) {
  bpf_insn i{};
  i.code = code;
  i.dst_reg = dst & 0xf;
  i.src_reg = src & 0xf;
  i.off = off;
  i.imm = imm;
  return i;
}

// r1 = struct bpf_cgroup_dev_ctx { u32 access_type; u32 major; u32 minor; }
constexpr std::uint8_t kLoadWord = BPF_LDX | BPF_MEM | BPF_W;
constexpr std::uint8_t kAndImm = BPF_ALU64 | BPF_AND | BPF_K;
constexpr std::uint8_t kJumpNotEqualImm = BPF_JMP | BPF_JNE | BPF_K;
constexpr std::uint8_t kMoveImm = BPF_ALU64 | BPF_MOV | BPF_K;
constexpr std::uint8_t kExit = BPF_JMP | BPF_EXIT;

std::int32_t dev_type(char type) {
  return type == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR;
}

long bpf(int cmd, bpf_attr& attr) {
  return ::syscall(__NR_bpf, cmd, &attr, sizeof attr);
}

}  // namespace

std::vector<bpf_insn> build_device_program(const std::vector<DeviceRule>& allow) {
  std::vector<bpf_insn> p;
  p.push_back(insn(kLoadWord, 2, 1, 0, 0));     // r2 = ctx->access_type
  p.push_back(insn(kAndImm, 2, 0, 0, 0xffff));  // r2 &= 0xffff        (device type)
  p.push_back(insn(kLoadWord, 3, 1, 4, 0));     // r3 = ctx->major
  p.push_back(insn(kLoadWord, 4, 1, 8, 0));     // r4 = ctx->minor
  for (const auto& rule : allow) {              // any access (read, write, mknod) to a listed node
    p.push_back(insn(kJumpNotEqualImm, 2, 0, 4, dev_type(rule.type)));
    p.push_back(insn(kJumpNotEqualImm, 3, 0, 3, static_cast<std::int32_t>(rule.major)));
    p.push_back(insn(kJumpNotEqualImm, 4, 0, 2, static_cast<std::int32_t>(rule.minor)));
    p.push_back(insn(kMoveImm, 0, 0, 0, 1));  // r0 = 1: allow
    p.push_back(insn(kExit, 0, 0, 0, 0));
  }
  p.push_back(insn(kMoveImm, 0, 0, 0, 0));  // r0 = 0: deny everything else
  p.push_back(insn(kExit, 0, 0, 0, 0));
  return p;
}

int evaluate_device_program(const std::vector<bpf_insn>& prog, std::uint32_t access_type,
                            std::uint32_t major, std::uint32_t minor) {
  std::uint64_t r[11] = {};
  const std::uint32_t ctx[3] = {access_type, major, minor};
  for (std::size_t pc = 0; pc < prog.size(); ++pc) {
    const bpf_insn& i = prog[pc];
    switch (i.code) {
      case kLoadWord:
        if (i.src_reg != 1 || i.off < 0 || i.off > 8 || i.off % 4 != 0)
          throw std::logic_error("bad context load");
        r[i.dst_reg] = ctx[i.off / 4];
        break;
      case kAndImm:
        r[i.dst_reg] &= static_cast<std::uint64_t>(static_cast<std::int64_t>(i.imm));
        break;
      case kMoveImm:
        r[i.dst_reg] = static_cast<std::uint64_t>(static_cast<std::int64_t>(i.imm));
        break;
      case kJumpNotEqualImm:
        if (r[i.dst_reg] != static_cast<std::uint64_t>(static_cast<std::int64_t>(i.imm)))
          pc += static_cast<std::size_t>(i.off);
        break;
      case kExit:
        return static_cast<int>(r[0]);
      default:
        throw std::logic_error("instruction outside the device-program subset");
    }
  }
  throw std::logic_error("program fell off its end");
}

int load_device_program(const std::vector<bpf_insn>& prog) {
  static char log[16384];
  static const char license[] = "GPL";
  bpf_attr attr{};
  attr.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
  attr.insns = reinterpret_cast<std::uint64_t>(prog.data());
  attr.insn_cnt = static_cast<std::uint32_t>(prog.size());
  attr.license = reinterpret_cast<std::uint64_t>(license);
  attr.log_buf = reinterpret_cast<std::uint64_t>(log);
  attr.log_size = sizeof log;
  attr.log_level = 1;
  log[0] = '\0';
  const long fd = bpf(BPF_PROG_LOAD, attr);
  if (fd < 0) {
    const int error = errno;
    std::string verifier(log);
    while (!verifier.empty() && verifier.back() == '\n') verifier.pop_back();
    const auto last = verifier.find_last_of('\n');
    if (last != std::string::npos) verifier = verifier.substr(last + 1);
    throw SysError("bpf(BPF_PROG_LOAD, cgroup device program): " + errno_text(error) +
                       (verifier.empty() ? "" : " (verifier: " + verifier + ")"),
                   error);
  }
  return static_cast<int>(fd);
}

void attach_device_program(int prog_fd, const std::string& cgroup_path) {
  const int cg = ::open(cgroup_path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (cg < 0) throw_errno("cannot open " + cgroup_path);
  bpf_attr attr{};
  attr.target_fd = static_cast<std::uint32_t>(cg);
  attr.attach_bpf_fd = static_cast<std::uint32_t>(prog_fd);
  attr.attach_type = BPF_CGROUP_DEVICE;
  const long rc = bpf(BPF_PROG_ATTACH, attr);
  const int error = errno;
  ::close(cg);
  if (rc != 0) throw_errno("bpf(BPF_PROG_ATTACH, BPF_CGROUP_DEVICE) on " + cgroup_path, error);
}

}  // namespace mininer
