#include "ptx_dissect/nvcc_plan.hpp"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <stdexcept>

#include "gpulab/text.hpp"

namespace ptx_dissect {

namespace {

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// The files a step reads are its positional arguments with these endings.
bool is_source_file(std::string_view w) {
  constexpr std::array<std::string_view, 7> kEndings = {".cu",  ".ii", ".ptx",   ".cubin",
                                                        ".cpp", ".c",  ".fatbin"};
  for (const auto e : kEndings)
    if (ends_with(w, e)) return true;
  return false;
}

// "-arch=sm_80" or "-arch sm_80" -> "sm_80"; "" when absent.
std::string arch_of(const std::vector<std::string>& w) {
  for (std::size_t k = 1; k < w.size(); ++k) {
    if (w[k].rfind("-arch=", 0) == 0) return w[k].substr(6);
    if (w[k] == "-arch" && k + 1 < w.size()) return w[k + 1];
  }
  return "";
}

std::string cuda_arch_macro(const std::vector<std::string>& w) {
  for (const auto& x : w)
    if (x.rfind("-D__CUDA_ARCH__=", 0) == 0) return x.substr(16);
  return "";
}

bool has(const std::vector<std::string>& w, std::string_view word) {
  for (const auto& x : w)
    if (x == word) return true;
  return false;
}

std::string tool_name(std::string_view first) {
  const auto slash = first.rfind('/');
  return std::string(slash == std::string_view::npos ? first : first.substr(slash + 1));
}

std::string describe(const std::string& tool, const std::vector<std::string>& w,
                     const PlanStep& step, const std::vector<std::string>& images) {
  if (tool == "gcc" || tool == "g++" || tool == "c++" || tool == "clang" || tool == "clang++") {
    if (has(w, "-E")) {
      const auto arch = cuda_arch_macro(w);
      return arch.empty() ? "preprocess for the host"
                          : fmt::format("preprocess for the device (__CUDA_ARCH__={})", arch);
    }
    if (has(w, "-c")) return "compile the host code, fatbin embedded, into the object";
    return "host compiler";
  }
  if (tool == "cudafe++") return "split: host C++ with launch stubs, device code taken out";
  if (tool == "cicc") return fmt::format("device C++ -> NVVM IR -> PTX for {}", arch_of(w));
  if (tool == "ptxas") {
    const auto arch = arch_of(w);
    return step.writes.empty() ? fmt::format("check the PTX assembles ({}: shipped as PTX)", arch)
                               : fmt::format("PTX -> SASS for {} (registers, scheduling)", arch);
  }
  if (tool == "fatbinary") {
    std::string list;
    for (const auto& i : images) list += (list.empty() ? "" : " + ") + i;
    return fmt::format("bundle {} into the fatbin", list);
  }
  if (tool == "nvlink") return "device link (relocatable device code)";
  if (tool == "rm") return "delete a temporary";
  return "(a step this reader does not describe)";
}

}  // namespace

std::vector<std::string> split_command(std::string_view line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  bool any = false;  // "" is a word too
  for (const char c : line) {
    if (c == '"') {
      quoted = !quoted;
      any = true;
    } else if (!quoted && std::isspace(static_cast<unsigned char>(c)) != 0) {
      if (any || !cur.empty()) out.push_back(cur);
      cur.clear();
      any = false;
    } else {
      cur += c;
    }
  }
  if (any || !cur.empty()) out.push_back(cur);
  return out;
}

std::string normalise_temp_path(std::string_view path) {
  const auto slash = path.rfind('/');
  std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  // tmpxft_<pid hex>_<counter hex>-<n>_<stem>: the prefix differs on every run.
  if (name.rfind("tmpxft_", 0) == 0) {
    const auto dash = name.find('-');
    const auto under = dash == std::string_view::npos ? dash : name.find('_', dash);
    if (under != std::string_view::npos) name = name.substr(under + 1);
  }
  return std::string(name);
}

std::string recorded_command(std::string_view text) {
  const std::string_view first = gpulab::trim(text.substr(0, text.find('\n')));
  return first.rfind("$ nvcc ", 0) == 0 ? std::string(first.substr(2)) : std::string();
}

std::vector<PlanStep> parse_nvcc_dryrun(std::string_view text) {
  std::vector<PlanStep> steps;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = gpulab::trim(text.substr(start, end - start));
    start = end + 1;
    if (line.rfind("#$ ", 0) != 0) continue;
    const auto words = split_command(line.substr(3));
    if (words.empty()) continue;
    // "#$ _HERE_=/usr/local/cuda/bin", "#$ PATH=...": settings, not steps.
    const auto eq = words[0].find('=');
    if (eq != std::string::npos && words[0].find('/') > eq) continue;

    PlanStep step;
    step.tool = tool_name(words[0]);
    std::vector<std::string> images;
    for (std::size_t k = 1; k < words.size(); ++k) {
      const std::string& w = words[k];
      if (w == "-o" && k + 1 < words.size()) {
        step.writes.push_back(normalise_temp_path(words[++k]));
      } else if (w == "--gen_c_file_name" && step.tool == "cudafe++" && k + 1 < words.size()) {
        step.writes.push_back(normalise_temp_path(words[++k]));
      } else if (w.rfind("--embedded-fatbin=", 0) == 0) {
        step.writes.push_back(normalise_temp_path(w.substr(18)));
      } else if (w.rfind("--image3=", 0) == 0) {
        // --image3=kind=elf,sm=80,file=X
        std::string kind;
        std::string sm;
        for (const auto f : gpulab::split_fields(std::string_view(w).substr(9), ',')) {
          if (f.rfind("kind=", 0) == 0) kind = std::string(f.substr(5));
          if (f.rfind("sm=", 0) == 0) sm = std::string(f.substr(3));
          if (f.rfind("file=", 0) == 0) step.reads.push_back(normalise_temp_path(f.substr(5)));
        }
        images.push_back(kind == "elf"
                             ? fmt::format("sm_{} SASS", sm)
                             : fmt::format("compute_{} {}", sm, kind == "ptx" ? "PTX" : kind));
      } else if (w.rfind("--", 0) == 0 && w.find('=') == std::string::npos) {
        // A long option's value, when one follows ("--orig_src_file_name kernels.cu");
        // flags such as --m64 are followed by the next option.
        if (k + 1 < words.size() && words[k + 1].rfind('-', 0) != 0) ++k;
      } else if (w == "-include" || w == "-isystem" || w == "-x") {
        ++k;
      } else if (w.rfind('-', 0) != 0 && (step.tool == "rm" || is_source_file(w))) {
        step.reads.push_back(normalise_temp_path(w));
      }
    }
    step.stage = describe(step.tool, words, step, images);
    steps.push_back(std::move(step));
  }
  if (steps.empty())
    throw std::runtime_error("no nvcc -dryrun steps (lines that start with '#$ ')");
  return steps;
}

}  // namespace ptx_dissect
