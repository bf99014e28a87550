#include "platform/inventory.hpp"

#include <gtest/gtest.h>

#include "gpulab/errors.hpp"
#include "gpulab/inventory/node_inventory.hpp"
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

TEST(DeviceSpec, DevicesAreInventoryAcceleratorsWithNodeOrdinalsAndLinks) {
  const auto d = parse_device_spec("cpu_ref:2,fast:1@island-a");
  ASSERT_EQ(d.size(), 3U);
  // index is the node ordinal (what --inject and the exporter count), unique
  // per node as the inventory requires; the backend's own ordinal is in the id.
  EXPECT_EQ(d[1].index, 1);
  EXPECT_EQ(d[2].index, 2);
  EXPECT_EQ(platform::backend_ordinal(d[1]), 1);
  EXPECT_EQ(platform::backend_ordinal(d[2]), 0);
  EXPECT_EQ(d[0].vendor, "cpu");
  EXPECT_GT(d[0].memory_bytes, 0U);
  EXPECT_EQ(d[0].domain.island, "");  // the node is the island
  EXPECT_EQ(d[2].domain.island, "island-a");
  namespace inv = gpulab::inventory;
  ASSERT_NE(d[0].link_to("cpu_ref:1"), nullptr);
  EXPECT_EQ(d[0].link_to("cpu_ref:1")->kind, inv::LinkKind::kNvlink);  // same island
  ASSERT_NE(d[0].link_to("fast:0"), nullptr);
  EXPECT_EQ(d[0].link_to("fast:0")->kind, inv::LinkKind::kPcie);  // another island: through the host
  ASSERT_NE(d[2].link_to(inv::kNetworkPeer), nullptr);
  EXPECT_EQ(d[2].link_to(inv::kNetworkPeer)->kind, inv::LinkKind::kEthernet);
  // The whole node passes the shared inventory's checks.
  inv::NodeInventory node{"node-a", 0, {}};
  for (const auto& x : d) node.accelerators.push_back(x);
  EXPECT_EQ(inv::validate(node), std::vector<std::string>{});
}

TEST(DeviceJson, RoundTripsThroughTheInventoryFormAndRefusesBadFieldsByName) {
  auto d = parse_device_spec("fast:2@rack-1");
  d[0].dtypes = {"f32"};
  d[1].health = gpulab::inventory::Health::unhealthy("Xid 79: GPU has fallen off the bus");
  gpulab::Json list = gpulab::Json::array();
  for (const auto& x : d) list.push_back(platform::to_json(x));
  EXPECT_EQ(list[1].at("health").at("reason"), "Xid 79: GPU has fallen off the bus");
  EXPECT_EQ(list[1].at("healthy"), false);  // protocol 1's field, still written
  EXPECT_EQ(platform::devices_from_json(list, "node-a"), d);

  list[1]["memory_bytes"] = 0;
  try {
    platform::devices_from_json(list, "node-a");
    ADD_FAILURE() << "memory_bytes 0 accepted";
  } catch (const platform::SpecError& e) {
    EXPECT_EQ(e.field(), "devices[1].memory_bytes");
  }
  list[1] = platform::to_json(d[1]);
  try {
    platform::devices_from_json(list, "node a");  // the inventory's names have no blanks
    ADD_FAILURE() << "a node name with a blank accepted";
  } catch (const platform::SpecError& e) {
    EXPECT_EQ(e.field(), "name");
  }
  list[1]["colour"] = "blue";
  try {
    platform::devices_from_json(list, "node-a");
    ADD_FAILURE() << "an unknown field accepted";
  } catch (const platform::SpecError& e) {
    EXPECT_EQ(e.field(), "devices[1].colour");
  }
}

TEST(DeviceSpec, BadItemsAreUsageErrorsNamingThem) {
  for (const char* bad : {"", "tpu:1", "cpu_ref:x", "cpu_ref:0", "cpu_ref:99", "cpu_ref:1,cpu_ref:1", "auto:1",
                          "cpu_ref:1,", "cpu_ref:1e3", "fast:1@", "fast:1@a b", "fast:1@a/b"}) {
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
  devices.push_back(platform::hal_device("cuda", 0, 1));
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
