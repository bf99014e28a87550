// The byte-exactness audit every headline and world-sweep row relies on: a
// count that is off by one byte on one rank must be named, never averaged away.
#include <gtest/gtest.h>

#include "ring_allreduce/chunks.hpp"
#include "ring_allreduce/experiments.hpp"

namespace {

ring::Headline exact_headline(std::size_t count, int world, std::size_t elem) {
  ring::Headline h;
  h.world = world;
  for (int r = 0; r < world; ++r) {
    h.ring_bytes.push_back(ring::ring_bytes_sent(count, world, r, elem));
    h.naive_bytes.push_back(ring::naive_bytes_sent(count, world, elem));
  }
  return h;
}

TEST(ByteCountFailures, ExactCountsPass) {
  for (const int world : {2, 3, 4, 8, 16})
    EXPECT_TRUE(ring::byte_count_failures(exact_headline(80'001, world, 8), 80'001, 8).empty()) << world;
}

TEST(ByteCountFailures, OneByteOffOnOneRankIsNamed) {
  auto h = exact_headline(1000, 4, 4);
  h.ring_bytes[2] += 1;
  const auto fails = ring::byte_count_failures(h, 1000, 4);
  ASSERT_EQ(fails.size(), 1u);
  EXPECT_NE(fails[0].find("rank 2 wrote"), std::string::npos) << fails[0];
  EXPECT_NE(fails[0].find("ring bytes"), std::string::npos) << fails[0];
}

TEST(ByteCountFailures, NaiveCountsAreCheckedToo) {
  auto h = exact_headline(1000, 3, 8);
  h.naive_bytes[0] -= 8;
  const auto fails = ring::byte_count_failures(h, 1000, 8);
  ASSERT_EQ(fails.size(), 1u);
  EXPECT_NE(fails[0].find("rank 0 wrote"), std::string::npos) << fails[0];
  EXPECT_NE(fails[0].find("naive bytes"), std::string::npos) << fails[0];
}

TEST(ByteCountFailures, WrongElementSizeFailsEveryRank) {
  const auto h = exact_headline(1000, 4, 8);
  EXPECT_EQ(ring::byte_count_failures(h, 1000, 4).size(), 8u);
}

}  // namespace
