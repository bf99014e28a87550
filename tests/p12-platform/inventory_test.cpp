#include "platform/inventory.hpp"

#include <gtest/gtest.h>

#include "gpulab/cli.hpp"
#include "platform/agent.hpp"

namespace {

using platform::parse_device_spec;

TEST(DeviceSpec, CountsExpandToIndexedDevices) {
  const auto d = parse_device_spec("cpu_ref:2,fast:1,blas");
  ASSERT_EQ(d.size(), 4U);
  EXPECT_EQ(d[0].id, "cpu_ref:0");
  EXPECT_EQ(d[1].id, "cpu_ref:1");
  EXPECT_EQ(d[2].id, "fast:0");
  EXPECT_EQ(d[3].id, "blas:0");
  EXPECT_EQ(d[3].backend, "blas");
}

TEST(DeviceSpec, BadItemsAreUsageErrorsNamingThem) {
  for (const char* bad : {"", "tpu:1", "cpu_ref:x", "cpu_ref:0", "cpu_ref:99", "cpu_ref:1,cpu_ref:1", "auto:1",
                          "cpu_ref:1,", "cpu_ref:1e3"}) {
    EXPECT_THROW(parse_device_spec(bad), gpulab::UsageError) << bad;
  }
  try {
    parse_device_spec("cpu_ref:2,tpu:1");
  } catch (const gpulab::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown backend 'tpu'"), std::string::npos) << e.what();
  }
}

TEST(Xid, OnlyTheDeviceKillingCodesAreFatal) {
  EXPECT_TRUE(platform::xid_is_fatal(79));
  EXPECT_TRUE(platform::xid_is_fatal(48));
  EXPECT_FALSE(platform::xid_is_fatal(13));  // a graphics engine exception: the application's fault
  EXPECT_FALSE(platform::xid_is_fatal(31));
  EXPECT_EQ(platform::xid_reason(79), "Xid 79: GPU has fallen off the bus");
}

TEST(Certify, TheReferenceBackendIsCertifiedAndOnlyCertifiedDevicesAreOffered) {
  auto devices = parse_device_spec("cpu_ref:1");
  devices.push_back(platform::Device{"cuda:0", "cuda", 0, true, "", {}});
  const auto certs = platform::certify(devices);
  ASSERT_EQ(certs.size(), 2U);
  for (const auto& c : certs) {
    if (c.backend == "cpu_ref") {
      EXPECT_TRUE(c.certified) << c.detail;
    } else {
      // Certified only where a GPU ran the cases; without one the reason is given.
      EXPECT_EQ(c.certified, !devices[1].dtypes.empty());
      if (!c.certified) {
        EXPECT_FALSE(c.detail.empty());
      }
    }
  }
  EXPECT_EQ(devices[0].dtypes, std::vector<std::string>{"f32"});
}

}  // namespace
