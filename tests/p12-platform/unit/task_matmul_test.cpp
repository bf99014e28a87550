// The matmul chain job: bounds, a verified chain on cpu_ref, determinism per
// seed, and derived seed streams.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "gpulab/errors.hpp"
#include "gpulab/rng.hpp"
#include "hal/reference.hpp"
#include "platform/task/checksum.hpp"
#include "platform/task/hal_backend.hpp"
#include "platform/task/link_check.hpp"
#include "platform/task/matmul_job.hpp"
#include "platform/task/seed_streams.hpp"

namespace task = gpulab::platform::task;

namespace {

TEST(MatmulJob, BoundsNameTheFlag) {
  task::MatmulOptions o;
  o.n = 4097;
  try {
    task::validate(o);
    FAIL();
  } catch (const gpulab::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--n must be 1..4096"), std::string::npos);
  }
  o.n = 64;
  o.chain = 1001;
  EXPECT_THROW(task::validate(o), gpulab::UsageError);
  o.chain = 0;
  EXPECT_THROW(task::validate(o), gpulab::UsageError);
  o.chain = 1000;
  o.n = 4096;
  EXPECT_NO_THROW(task::validate(o));
}

TEST(MatmulJob, CpuRefChainPassesAndIsDeterministic) {
  task::MatmulOptions o;
  o.n = 37;  // no tile size divides it
  o.chain = 5;
  o.seed = 3;
  std::vector<task::LinkResult> links;
  const auto s = task::run_matmul_chain(o, [&](const task::LinkResult& l) { links.push_back(l); });
  EXPECT_TRUE(s.pass);
  EXPECT_EQ(s.failed_links, 0u);
  ASSERT_EQ(links.size(), 5u);
  for (const auto& l : links) {
    EXPECT_TRUE(l.pass);
    EXPECT_LE(l.worst_ratio, 1.0);
    EXPECT_EQ(l.samples.size(), 4u);
    EXPECT_TRUE(std::isfinite(l.sum));
  }
  EXPECT_GT(s.gflops, 0.0);
  // Bounded: the scaled chain neither blows up nor dies out.
  for (float v : links.back().samples) EXPECT_LT(std::fabs(v), 10.0f);

  std::vector<task::LinkResult> again;
  task::run_matmul_chain(o, [&](const task::LinkResult& l) { again.push_back(l); });
  for (std::size_t i = 0; i < links.size(); ++i) {
    EXPECT_EQ(links[i].sum, again[i].sum);
    EXPECT_EQ(links[i].samples, again[i].samples);
  }
  o.seed = 4;
  std::vector<task::LinkResult> other;
  task::run_matmul_chain(o, [&](const task::LinkResult& l) { other.push_back(l); });
  EXPECT_NE(links[0].sum, other[0].sum);
}

TEST(MatmulJob, EventsCarryTheContractFields) {
  task::LinkResult l;
  l.index = 2;
  l.sum = 1.5;
  l.samples = {1.0f};
  l.pass = true;
  const auto e = task::link_event(l);
  EXPECT_EQ(e["event"], "matmul");
  EXPECT_EQ(e["i"], 2);
  EXPECT_EQ(e["checksum"]["sum"], 1.5);
  task::MatmulSummary s;
  s.worst_ratio = std::numeric_limits<double>::infinity();
  const auto d = task::done_event(s);
  EXPECT_EQ(d["event"], "done");
  EXPECT_EQ(d["worst_error_ratio"], "inf");  // JSON has no infinity
}

TEST(SeedStreams, DistinctPerStreamAndIndex) {
  const auto a = task::derive_seed(1, task::Stream::kSample, 0);
  EXPECT_EQ(a, task::derive_seed(1, task::Stream::kSample, 0));
  EXPECT_NE(a, task::derive_seed(1, task::Stream::kSample, 1));
  EXPECT_NE(a, task::derive_seed(1, task::Stream::kTeacher, 0));
  EXPECT_NE(a, task::derive_seed(2, task::Stream::kSample, 0));
}

TEST(Checksum, Fnv1aKnownValuesAndHex) {
  EXPECT_EQ(task::fnv1a64({}), 0xcbf29ce484222325ULL);
  const std::string a = "a";
  EXPECT_EQ(task::fnv1a64(std::as_bytes(std::span(a))), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(task::hex64(0xabcULL), "0000000000000abc");
}

}  // namespace

namespace {

const gpulab::hal::Backend& cpu_ref() {
  static const task::HalBackend b("cpu_ref");
  return b.backend();
}

struct Link {
  std::uint64_t n = 64;
  std::vector<float> c_in, b, c_out;
};

Link exact_link() {
  Link l;
  gpulab::Rng rng(5);
  for (auto* v : {&l.c_in, &l.b}) {
    v->resize(l.n * l.n);
    for (float& x : *v) x = static_cast<float>(2 * rng.uniform01() - 1);
  }
  const auto ref = gpulab::hal::reference_matmul(l.n, l.n, l.n, l.c_in, l.b);
  for (double v : ref.value) l.c_out.push_back(static_cast<float>(v));
  return l;
}

std::uint64_t first_unsampled_row(std::uint64_t n) {
  const auto rows = task::sampled_rows(1, 0, n);
  for (std::uint64_t r = 0; r < n; ++r)
    if (std::find(rows.begin(), rows.end(), r) == rows.end()) return r;
  return n;
}

TEST(LinkCheck, CorrectlyRoundedResultPasses) {
  const Link l = exact_link();
  const auto c = task::check_link(cpu_ref(), 1, 0, l.n, l.c_in, l.b, l.c_out);
  EXPECT_TRUE(c.pass());
  EXPECT_LT(c.worst_ratio, 0.1);
  EXPECT_LT(c.cpu_ref_ratio, 1.0);
  EXPECT_EQ(c.samples.size(), 4u);
  EXPECT_EQ(task::sampled_rows(1, 0, l.n).size(), 4u);
  EXPECT_EQ(task::sampled_rows(1, 0, 2).size(), 2u);
}

TEST(LinkCheck, AnErrorInASampledRowFails) {
  Link l = exact_link();
  const std::uint64_t r = task::sampled_rows(1, 0, l.n)[1];
  l.c_out[r * l.n + 7] *= 1.001f;  // far above 2e-5 relative
  const auto c = task::check_link(cpu_ref(), 1, 0, l.n, l.c_in, l.b, l.c_out);
  EXPECT_FALSE(c.pass());
  EXPECT_GT(c.worst_ratio, 1.0);
}

TEST(LinkCheck, AGrossErrorOutsideTheSampledRowsFailsTheSum) {
  Link l = exact_link();
  const std::uint64_t r = first_unsampled_row(l.n);
  ASSERT_LT(r, l.n);
  auto wrong = l;
  for (std::uint64_t c = 0; c < l.n; ++c) wrong.c_out[r * l.n + c] = 0.0f;  // a row never written
  l.c_out[r * l.n] = std::nanf("");
  EXPECT_FALSE(task::check_link(cpu_ref(), 1, 0, l.n, wrong.c_in, wrong.b, wrong.c_out).pass());
  EXPECT_FALSE(task::check_link(cpu_ref(), 1, 0, l.n, l.c_in, l.b, l.c_out).pass());
}

}  // namespace
