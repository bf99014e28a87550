#include "paged_kv/kv_math.hpp"

#include <gtest/gtest.h>

namespace paged_kv {
namespace {

TEST(KvMath, Llama3_8bIs128KiBPerTokenAnd1GiBPer8K) {
  const auto m = *find_model("llama-3-8b");
  const KvCapacity c = kv_capacity(m, 8192, 16, 40, 0);
  EXPECT_EQ(c.bytes_per_token, 131072u);
  EXPECT_EQ(c.bytes_per_sequence, 1073741824u);
  EXPECT_EQ(c.bytes_per_block, 2097152u);
  EXPECT_EQ(c.sequences_fit, 22u);  // (40 - 16) GB / 1.074 GB
  EXPECT_EQ(kv_capacity(m, 8192, 16, 40, 2).sequences_fit,
            20u);  // the text's "~20" needs a 2 GB reserve
  EXPECT_EQ(kv_capacity(m, 8192, 16, 80, 0).sequences_fit, 59u);  // an 80 GB H100
}

TEST(KvMath, WithoutGqaIsFourTimesAndFp8Halves) {
  auto m = *find_model("llama-3-8b");
  m.kv_heads = 32;
  EXPECT_EQ(kv_bytes_per_token(m), 4 * 131072u);
  EXPECT_EQ(kv_capacity(m, 8192, 16, 40, 0).sequences_fit, 5u);
  m.kv_heads = 8;
  m.dtype = DType::kFp8;
  EXPECT_EQ(kv_bytes_per_token(m), 65536u);
  EXPECT_EQ(kv_capacity(m, 8192, 16, 40, 0).sequences_fit, 44u);
}

TEST(KvMath, Presets) {
  EXPECT_EQ(kv_bytes_per_token(*find_model("llama-2-7b")), 524288u);   // no GQA: 32 KV heads
  EXPECT_EQ(kv_bytes_per_token(*find_model("llama-2-70b")), 327680u);  // 80 layers, 8 KV heads
  EXPECT_FALSE(find_model("gpt-5").has_value());
  // 70B weights do not fit a 40 GB GPU: zero sequences, not a negative count.
  EXPECT_EQ(kv_capacity(*find_model("llama-2-70b"), 4096, 16, 40, 0).sequences_fit, 0u);
}

TEST(KvMath, RejectsNonsense) {
  auto m = *find_model("llama-3-8b");
  EXPECT_THROW((void)kv_capacity(m, 0, 16, 40, 0), std::invalid_argument);
  EXPECT_THROW((void)kv_capacity(m, 8192, 0, 40, 0), std::invalid_argument);
  EXPECT_THROW((void)kv_capacity(m, 8192, 16, 0, 0), std::invalid_argument);
  EXPECT_THROW((void)kv_capacity(m, 8192, 16, 40, -1), std::invalid_argument);
  m.layers = 0;
  EXPECT_THROW((void)kv_bytes_per_token(m), std::invalid_argument);
  EXPECT_FALSE(parse_dtype("fp4").has_value());
  EXPECT_EQ(dtype_bytes(*parse_dtype("int8")), 1u);
}

}  // namespace
}  // namespace paged_kv
