// The cgroup v2 device program, run through an interpreter of the same
// instructions: the allow-list semantics are checked without root or a kernel.
#include "mininer/device_filter.hpp"

#include <gtest/gtest.h>

namespace {

using mininer::DeviceRule;

std::uint32_t access(std::uint32_t acc, std::uint32_t type) {
  return (acc << 16) | type;
}

TEST(DeviceProgram, AllowsOnlyTheListedNodes) {
  const auto prog = mininer::build_device_program({mininer::kDevNull, DeviceRule{'c', 10, 229}});
  for (const std::uint32_t acc : std::initializer_list<std::uint32_t>{
           BPF_DEVCG_ACC_READ, BPF_DEVCG_ACC_WRITE, BPF_DEVCG_ACC_MKNOD,
           BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE}) {
    EXPECT_EQ(mininer::evaluate_device_program(prog, access(acc, BPF_DEVCG_DEV_CHAR), 1, 3), 1);
    EXPECT_EQ(mininer::evaluate_device_program(prog, access(acc, BPF_DEVCG_DEV_CHAR), 10, 229), 1);
    EXPECT_EQ(mininer::evaluate_device_program(prog, access(acc, BPF_DEVCG_DEV_CHAR), 1, 5), 0)
        << "/dev/zero";
    EXPECT_EQ(mininer::evaluate_device_program(prog, access(acc, BPF_DEVCG_DEV_CHAR), 1, 9), 0)
        << "/dev/urandom";
    EXPECT_EQ(mininer::evaluate_device_program(prog, access(acc, BPF_DEVCG_DEV_CHAR), 10, 230), 0);
    EXPECT_EQ(mininer::evaluate_device_program(prog, access(acc, BPF_DEVCG_DEV_BLOCK), 1, 3), 0)
        << "block 1:3 is a RAM disk, not /dev/null";
  }
}

TEST(DeviceProgram, BlockRulesMatchBlockDevicesOnly) {
  const auto prog = mininer::build_device_program({DeviceRule{'b', 7, 0}});
  EXPECT_EQ(
      mininer::evaluate_device_program(prog, access(BPF_DEVCG_ACC_READ, BPF_DEVCG_DEV_BLOCK), 7, 0),
      1);
  EXPECT_EQ(
      mininer::evaluate_device_program(prog, access(BPF_DEVCG_ACC_READ, BPF_DEVCG_DEV_CHAR), 7, 0),
      0);
}

TEST(DeviceProgram, EmptyListDeniesEverything) {
  const auto prog = mininer::build_device_program({});
  EXPECT_EQ(prog.size(), 6u);
  EXPECT_EQ(
      mininer::evaluate_device_program(prog, access(BPF_DEVCG_ACC_READ, BPF_DEVCG_DEV_CHAR), 1, 3),
      0);
}

TEST(DeviceProgram, FiveInstructionsPerDevice) {
  EXPECT_EQ(mininer::build_device_program({mininer::kDevNull}).size(), 4u + 5u + 2u);
  EXPECT_EQ(mininer::build_device_program(
                {mininer::kDevNull, DeviceRule{'c', 195, 0}, DeviceRule{'c', 195, 255}})
                .size(),
            4u + 15u + 2u);
}

TEST(DeviceRule, SpellsTheV1Rule) {
  EXPECT_EQ(mininer::kDevNull.text(), "c 1:3");
  EXPECT_EQ((DeviceRule{'b', 8, 16}.text()), "b 8:16");
}

}  // namespace
