// ptxc's reports without the program: the suite and run tables, the JSON, and
// the failure lines a user reads.
#include "ptxc/reports.hpp"

#include <gtest/gtest.h>

#include <string>

#include "gpulab/errors.hpp"
#include "ptxc/compiler.hpp"

namespace {

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

constexpr const char* kSource =
    "kernel scale(a: f32, x: f32*) { x[i] = a * x[i]; }\n"
    "kernel vadd(a: f32*, b: f32*, c: f32*) { c[i] = a[i] + b[i]; }\n";

TEST(Reports, SuiteSummarisesEveryKernel) {
  ptxc::RunFlags f;
  f.n = 300;
  const ptxc::SuiteReport r = ptxc::run_suite_report(f, 1, false);
  ASSERT_FALSE(r.run.rows.empty());
  EXPECT_TRUE(r.pass());
  const std::string text = render(r);
  EXPECT_EQ(text.rfind("kernel", 0), 0U) << text;
  EXPECT_TRUE(has(text, std::to_string(r.run.rows.size()) + "/" +
                            std::to_string(r.run.rows.size()) +
                            " kernels agree with the reference at -O0 and -O1 (n=300, block=128, "
                            "seed=1): PASS\n"))
      << text;
  const gpulab::Json j = to_json(r);
  EXPECT_EQ(j["kernels"].size(), r.run.rows.size());
  EXPECT_EQ(j["n"], 300);
  EXPECT_EQ(j["pass"], true);
  ptxc::SuiteReport dumped = r;
  dumped.dump = true;
  EXPECT_EQ(render(dumped).rfind(r.run.ptx_o1 + "\n", 0), 0U);
}

TEST(Reports, RunComparesEachKernelWithTheReference) {
  ptxc::RunFlags f;
  f.n = 300;
  const auto c = ptxc::compile(kSource, "t.k", ptxc::options_for(1, f));
  ptxc::RunRequest q{"t.k", "", "", nullptr, false, f, 1};
  const ptxc::RunReport r = ptxc::run_kernels(c, q);
  ASSERT_EQ(r.kernels.size(), 2U);
  EXPECT_TRUE(r.pass());
  const std::string text = render(r);
  EXPECT_TRUE(has(text, "-O1 insts")) << text;
  EXPECT_FALSE(has(text, "against insts")) << text;
  EXPECT_EQ(r.kernels[1].diff.stats.threads, 384U);  // 3 blocks of 128 for n = 300
  const gpulab::Json j = to_json(r);
  EXPECT_EQ(j["kernels"][1]["kernel"], "vadd");
  EXPECT_FALSE(j["kernels"][0].contains("gpu"));

  q.kernel = "vadd";
  EXPECT_EQ(ptxc::run_kernels(c, q).kernels.size(), 1U);
  q.kernel = "nope";
  EXPECT_THROW(ptxc::run_kernels(c, q), gpulab::UsageError);
}

TEST(Reports, WithoutTheGuardTheFaultIsAFailLine) {
  ptxc::RunFlags f;
  f.n = 300;
  f.no_guard = true;
  const auto c = ptxc::compile(kSource, "t.k", ptxc::options_for(1, f));
  const ptxc::RunReport r = ptxc::run_kernels(c, {"t.k", "vadd", "", nullptr, false, f, 1});
  EXPECT_FALSE(r.pass());
  const std::string text = render(r);
  EXPECT_TRUE(has(text, "FAIL vadd: thread 300 (block 2, thread 44): out-of-bounds")) << text;
  EXPECT_EQ(to_json(r)["pass"], false);
}

TEST(Reports, AgainstAnotherModuleCountsDifferingElements) {
  ptxc::RunFlags f;
  f.n = 300;
  const auto c = ptxc::compile(kSource, "t.k", ptxc::options_for(1, f));
  const auto same = ptxc::ptx::parse_ptx(c.ptx);
  const ptxc::RunReport r = ptxc::run_kernels(c, {"t.k", "", "same.ptx", &same, false, f, 1});
  const std::string text = render(r);
  EXPECT_TRUE(has(text, "bit-identical")) << text;
  EXPECT_EQ(to_json(r)["kernels"][0]["against_differing_elements"], 0);
}

TEST(Reports, EmitStagesAndBadTargets) {
  ptxc::RunFlags f;
  EXPECT_TRUE(has(ptxc::emit_stage(kSource, "t.k", "tokens", f), "1:1\t'kernel'\tkernel\n"));
  EXPECT_TRUE(has(ptxc::emit_stage(kSource, "t.k", "ptx", f), ".entry vadd"));
  EXPECT_TRUE(has(ptxc::emit_stage(kSource, "t.k", "ir", f), "kernel scale:\n"));
  f.target = "sm_42";
  EXPECT_THROW(ptxc::emit_stage(kSource, "t.k", "ptx", f), gpulab::UsageError);
  f = {};
  f.n = 0;
  EXPECT_THROW(ptxc::check_sizes(f), gpulab::UsageError);
}

}  // namespace
