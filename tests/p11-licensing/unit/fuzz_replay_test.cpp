// Replays the fuzz corpus and deterministic mutations of it through the same
// property the libFuzzer target checks, so compilers without libFuzzer still
// exercise the parsers on hostile input.
#include <gtest/gtest.h>

#include <filesystem>

#include "gpulab/rng.hpp"
#include "licensing/fuzz_entry.hpp"
#include "test_support.hpp"

namespace {

std::vector<std::string> corpus() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(std::string(GPULAB_LAB_DIR) + "/../../tests/p11-licensing/fuzz-corpus")) {
    out.push_back(testing_support::read(e.path()));
  }
  return out;
}

bool check(const std::string& s) {
  return licensing::fuzz_one_input(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
}

TEST(FuzzReplay, CorpusRoundTrips) {
  const auto seeds = corpus();
  ASSERT_GE(seeds.size(), 4u);
  for (const auto& s : seeds) EXPECT_TRUE(check(s));
}

TEST(FuzzReplay, MutationsNeverBreakTheProperty) {
  gpulab::Rng rng(11);
  const auto seeds = corpus();
  for (int i = 0; i < 3000; ++i) {
    std::string s = seeds[static_cast<std::size_t>(i) % seeds.size()];
    const int edits = static_cast<int>(rng.uniform_int(1, 4));
    for (int e = 0; e < edits && !s.empty(); ++e) {
      const auto at = static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(s.size() - 1)));
      switch (rng.uniform_int(0, 3)) {
        case 0: s[at] = static_cast<char>(rng.uniform_int(0, 255)); break;
        case 1: s.erase(at, static_cast<std::size_t>(rng.uniform_int(1, 40))); break;
        case 2: s.insert(at, s.substr(static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(s.size() - 1))), 20)); break;
        default: s.resize(at); break;
      }
    }
    ASSERT_TRUE(check(s)) << "mutation " << i;
  }
}

}  // namespace
