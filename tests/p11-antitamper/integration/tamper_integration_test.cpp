// tamperlab as an attacker meets it: a patched copy, a tracer, a preloaded hook.
#include <gtest/gtest.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "antitamper/key_check.h"
#include "gpulab_test/elf_symbol.hpp"

namespace {

const std::string kBin = std::string(GPULAB_BIN_DIR) + "/tamperlab";

// This process's own scratch directory (mkdtemp), removed at exit: fixed names under /tmp were
// shared by every checkout (and every ctest job) running these tests at the same time.
class Scratch {
 public:
  Scratch() {
    std::string tmpl = ::testing::TempDir() + "tamperlab-test-XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr) std::abort();
    dir_ = tmpl + "/";
  }
  ~Scratch() { std::filesystem::remove_all(dir_); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  std::string file(const std::string& name) const { return dir_ + name; }

 private:
  std::string dir_;
};

const Scratch& scratch() {
  static const Scratch s;
  return s;
}

std::string valid_key() {
  char buf[32];
  at_make_key("GPULAB-", "1234", "ABCD", buf, sizeof buf);
  return buf;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Outcome {
  int code = -1;
  std::string out;
};

Outcome run(const std::string& cmd) {
  const std::string out = scratch().file("tamper-out.txt");
  const int st = std::system((cmd + " >" + out + " 2>&1 </dev/null").c_str());
  return {WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), slurp(out)};
}

TEST(Tamperlab, CleanRunPassesEveryLayer) {
  const Outcome r = run(kBin + " --key " + valid_key());
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("code integrity            PASS"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("licence key accepted"), std::string::npos);
  EXPECT_EQ(run(kBin + " --key GPULAB-1234-ABCD-0000").code, 1);
  EXPECT_EQ(run(kBin + " --bogus").code, 2);
  EXPECT_EQ(run(kBin).code, 2);
}

TEST(Tamperlab, OnePatchedByteIsDetected) {
  std::string img = slurp(kBin);
  const std::size_t at = gpulab_test::elf_function_file_offset(img, "at_key_check_flat");
  ASSERT_GT(at, 0u) << "symbol table missing (stripped binary?)";
  img[at + 8] = static_cast<char>(img[at + 8] ^ 0x01);
  const std::string copy = scratch().file("tamperlab-patched");
  std::ofstream(copy, std::ios::binary) << img;
  std::filesystem::permissions(copy, std::filesystem::perms::owner_all);
  const Outcome r = run(copy + " --key " + valid_key());
  std::filesystem::remove(copy);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("code integrity            FAIL"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not run: the code is not the code that was built"), std::string::npos);
}

TEST(Tamperlab, RunningUnderATracerIsDetected) {
  const std::string out = scratch().file("tamper-traced.txt");
  const std::string key = valid_key();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::FILE* f = std::fopen(out.c_str(), "w");
    if (!f) _exit(126);
    dup2(fileno(f), 1);
    // LeakSanitizer (asan preset) stops the world with ptrace at exit, which a traced process
    // cannot do.
    const char* asan = std::getenv("ASAN_OPTIONS");
    const std::string opts =
        std::string(asan ? asan : "") + (asan && *asan ? ":" : "") + "detect_leaks=0";
    setenv("ASAN_OPTIONS", opts.c_str(), 1);
    ptrace(PTRACE_TRACEME, 0, nullptr, nullptr);
    execl(kBin.c_str(), "tamperlab", "--key", key.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // A minimal debugger: let every stop continue, passing real signals on.
  int st = 0;
  while (waitpid(child, &st, 0) == child && WIFSTOPPED(st)) {
    const int sig = WSTOPSIG(st) == SIGTRAP ? 0 : WSTOPSIG(st);
    ptrace(PTRACE_CONT, child, nullptr, reinterpret_cast<void*>(static_cast<long>(sig)));
  }
  ASSERT_TRUE(WIFEXITED(st));
  const std::string text = slurp(out);
  EXPECT_EQ(WEXITSTATUS(st), 1) << text;
  EXPECT_NE(text.find("debugger: TracerPid       FAIL"), std::string::npos) << text;
  EXPECT_NE(text.find("debugger: ptrace probe    FAIL"), std::string::npos) << text;
}

TEST(Tamperlab, PreloadedStrcmpHookIsDetected) {
  const std::string hook = std::string(GPULAB_BIN_DIR) + "/libtamperlab-hook.so";
  ASSERT_TRUE(std::filesystem::exists(hook));
  // verify_asan_link_order=0: under the asan preset the hook would otherwise precede libasan.
  const Outcome r = run("ASAN_OPTIONS=verify_asan_link_order=0 LD_PRELOAD=" + hook + " " + kBin +
                        " --key GPULAB-0000-0000-0000");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("strcmp from " + hook), std::string::npos) << r.out;
  // The hook would make a strcmp-based check accept anything; the flattened one does not use
  // strcmp.
  EXPECT_NE(r.out.find("licence key rejected"), std::string::npos) << r.out;
}

TEST(Tamperlab, SecretStringsAreNotInTheBinary) {
  const std::string img = slurp(kBin);
  EXPECT_EQ(img.find("licence key rejected"), std::string::npos);
  EXPECT_EQ(img.find("licence key accepted"), std::string::npos);
  EXPECT_NE(img.find("code integrity"), std::string::npos);  // an ordinary string, for contrast
}

}  // namespace
