// The sampler on its own: greedy takes the first largest logit; top-p keeps
// the smallest most-probable set whose mass reaches top_p and never draws
// outside it; the draws follow the request's seed.
#include "serving/sampler.hpp"

#include <gtest/gtest.h>

#include <array>
#include <vector>

namespace {

using serving::sample;
using serving::TokenId;

// Softmax at temperature 1: token 1 ~51%, token 2 ~46%, token 0 ~2.5%, token 3 ~0.02%.
const std::vector<float> kLogits{0.0f, 3.0f, 2.9f, -5.0f};

std::array<int, 4> draws(double top_p, int n, std::uint64_t seed = 7) {
  gpulab::Rng rng(seed);
  std::array<int, 4> count{};
  for (int i = 0; i < n; ++i) ++count[static_cast<std::size_t>(sample(kLogits, 1.0, top_p, rng))];
  return count;
}

TEST(Sampler, GreedyTakesTheFirstLargestLogit) {
  gpulab::Rng rng(1);
  EXPECT_EQ(sample(kLogits, 0, 1, rng), 1);
  const std::vector<float> tie{1.0f, 4.0f, 4.0f};
  EXPECT_EQ(sample(tie, 0, 1, rng), 1);
}

TEST(Sampler, TopPKeepsOnlyTheNucleus) {
  const auto one = draws(0.5, 300);  // token 1 alone reaches 0.5
  EXPECT_EQ(one[1], 300);
  const auto two = draws(0.9, 2000);  // tokens 1 and 2 reach 0.9 together
  EXPECT_EQ(two[0] + two[3], 0);
  EXPECT_GT(two[1], 800);
  EXPECT_GT(two[2], 700);
  const auto all = draws(1.0, 4000);  // the whole distribution: token 0 shows up (~100 expected)
  EXPECT_GT(all[0], 40);
  EXPECT_LT(all[0], 200);
}

TEST(Sampler, TheSeedDecidesTheDraws) {
  EXPECT_EQ(draws(1.0, 500, 11), draws(1.0, 500, 11));
  EXPECT_NE(draws(1.0, 500, 11), draws(1.0, 500, 12));
}

}  // namespace
