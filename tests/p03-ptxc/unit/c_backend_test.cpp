// The second backend: the C that ptxc emits, compiled by the system C compiler
// and loaded with dlopen, must give the interpreter's results bit for bit
// (both round once per operation and use fmaf where the PTX has fma.rn).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bit>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "ptxc/c_emitter.hpp"
#include "ptxc/differential.hpp"
#include "ptxc/suite.hpp"
#include "test_util.hpp"

TEST(CBackend, SharesTheMiddleEndButNotTheIndexModel) {
  const auto c = ptxc_test::compile_at(
      "kernel scale2(a: f32*, b: f32*, c: f32*) { c[i] = a[i] * 2.0 + b[i]; }", 1);
  const std::string src = ptxc::emit_c(c.functions);
  EXPECT_NE(src.find("for (int i = 0; i < n; ++i)"), std::string::npos)
      << src;                                                              // a loop, not a grid
  EXPECT_NE(src.find("fmaf(v3, 0x1p+1f, v7)"), std::string::npos) << src;  // the same contraction
  EXPECT_NE(src.find("void ptxc_entry_scale2(void **args, int n)"), std::string::npos);
}

TEST(CBackend, CompiledCMatchesTheInterpreterBitForBit) {
  const std::string cc = PTXC_CC;
  if (cc.empty() || access(cc.c_str(), X_OK) != 0) GTEST_SKIP() << "no C compiler at " << cc;
  const auto c = ptxc_test::compile_at(ptxc::builtin_suite_source(), 1);
  char dir_template[] = "/tmp/ptxc-cback-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  std::ofstream(dir + "/suite.c") << ptxc::emit_c(c.functions);
  const std::string cmd =
      cc + " -O2 -ffp-contract=off -fPIC -shared -o " + dir + "/suite.so " + dir + "/suite.c -lm";
  const int rc = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0) << cmd;
  void* lib = dlopen((dir + "/suite.so").c_str(), RTLD_NOW);
  ASSERT_NE(lib, nullptr) << dlerror();

  const auto module = ptxc::ptx::parse_ptx(c.ptx);
  const int n = 777;
  for (const auto& k : c.program.kernels) {
    const auto inputs = ptxc::random_inputs(k.params, n, 11);
    const auto interp = ptxc::run_ptx(*module.find(k.name), k.params, inputs, n, 128);
    auto host = inputs;
    std::vector<void*> args;
    // Pointers must stay put while args points at them.
    std::vector<float*> ptr_storage(k.params.size(), nullptr);
    for (std::size_t p = 0; p < k.params.size(); ++p) {
      if (k.params[p].type == ptxc::Type::kF32Ptr) {
        ptr_storage[p] = host.buffers[p].data();
        args.push_back(&ptr_storage[p]);
      } else {
        args.push_back(&host.scalars[p]);
      }
    }
    using Entry = void (*)(void**, int);
    const auto fn = reinterpret_cast<Entry>(dlsym(lib, ("ptxc_entry_" + k.name).c_str()));
    ASSERT_NE(fn, nullptr) << k.name;
    fn(args.data(), n);
    for (std::size_t p = 0; p < k.params.size(); ++p)
      for (std::size_t i = 0; i < host.buffers[p].size(); ++i)
        ASSERT_EQ(std::bit_cast<std::uint32_t>(host.buffers[p][i]),
                  std::bit_cast<std::uint32_t>(interp.buffers[p][i]))
            << k.name << " " << k.params[p].name << "[" << i << "]";
  }
  dlclose(lib);
  std::filesystem::remove_all(dir);
}
