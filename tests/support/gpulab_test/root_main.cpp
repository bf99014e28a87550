// main() of a lab's root-only tests (tests/<lab>/root/*.cpp, ctest label
// `root`): without root every test exits 77, which ctest (SKIP_RETURN_CODE 77)
// reports as skipped; a run where every test called GTEST_SKIP (no mount
// permission in a container, say) also exits 77, so a skip never shows as a pass.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>

namespace {

class SkipCounter : public testing::EmptyTestEventListener {
 public:
  int skipped = 0, ran = 0;
  void OnTestEnd(const testing::TestInfo& info) override {
    ++ran;
    if (info.result()->Skipped()) ++skipped;
  }
};

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  if (!GTEST_FLAG_GET(list_tests) && geteuid() != 0) {
    std::fprintf(stderr, "SKIPPED: these tests need root (mknod, mount)\n");
    return 77;
  }
  auto* counter = new SkipCounter;  // owned by gtest's listener list
  testing::UnitTest::GetInstance()->listeners().Append(counter);
  const int rc = RUN_ALL_TESTS();
  if (rc == 0 && counter->ran > 0 && counter->skipped == counter->ran) return 77;
  return rc;
}
