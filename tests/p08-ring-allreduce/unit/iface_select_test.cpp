// The interface a rank's ring connections use (iface_select.hpp): NCCL's
// default picks the first non-loopback interface in the kernel's order, which
// on a host whose management port is listed first is the wrong NIC;
// NCCL_SOCKET_IFNAME's prefixes, "=" and "^" choose another.
#include "ring_allreduce/iface_select.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace {

using ring::choose_interface;
using ring::NetInterface;

// A server's interfaces in the kernel's order: loopback, the management port, the fabric.
const std::vector<NetInterface> kServer{
    {"lo", "127.0.0.1", true}, {"eno1", "10.231.1.1", true}, {"ens2", "10.231.2.1", true}};

TEST(IfaceSelect, TheDefaultTakesTheFirstInterfaceThatIsNotLoopbackTheManagementPortHere) {
  const auto c = choose_interface(kServer, "", "NCCL_SOCKET_IFNAME");
  EXPECT_EQ(c.iface.name, "eno1");
  EXPECT_EQ(c.iface.address, "10.231.1.1");
  EXPECT_EQ(c.rule, "default (no ib*: the first up interface that is not lo or docker*)");
}

TEST(IfaceSelect, TheDefaultPrefersInfinibandThenSkipsDockerAndFallsBackToLoopback) {
  const std::vector<NetInterface> ib{{"lo", "127.0.0.1", true}, {"eno1", "10.0.0.1", true}, {"ib0", "10.1.0.1", true}};
  EXPECT_EQ(choose_interface(ib, "", "x").iface.name, "ib0");
  const std::vector<NetInterface> docker{{"lo", "127.0.0.1", true}, {"docker0", "172.17.0.1", true},
                                         {"ens2", "10.1.0.1", true}};
  EXPECT_EQ(choose_interface(docker, "", "x").iface.name, "ens2");
  const std::vector<NetInterface> alone{{"lo", "127.0.0.1", true}, {"eno1", "10.0.0.1", false}};
  const auto c = choose_interface(alone, "", "x");
  EXPECT_EQ(c.iface.name, "lo");
  EXPECT_EQ(c.rule, "default (nothing but loopback)");
}

TEST(IfaceSelect, PrefixesExactNamesAndExclusionsFollowNcclSyntax) {
  EXPECT_EQ(choose_interface(kServer, "ens", "NCCL_SOCKET_IFNAME").iface.name, "ens2");
  EXPECT_EQ(choose_interface(kServer, "ens", "NCCL_SOCKET_IFNAME").rule, "NCCL_SOCKET_IFNAME=ens");
  EXPECT_EQ(choose_interface(kServer, "ib,ens", "--iface").iface.name, "ens2");  // the first listed that exists
  EXPECT_EQ(choose_interface(kServer, "=ens2", "--iface").iface.name, "ens2");
  EXPECT_EQ(choose_interface(kServer, "^lo,eno", "--iface").iface.name, "ens2");
  EXPECT_EQ(choose_interface(kServer, "^lo", "--iface").iface.name, "eno1");  // in the kernel's order
  // "=" wants the whole name: a prefix of it matches nothing.
  EXPECT_THROW(choose_interface(kServer, "=ens", "--iface"), std::runtime_error);
}

TEST(IfaceSelect, AnInterfaceThatIsDownIsNeverChosen) {
  std::vector<NetInterface> fabric_down = kServer;
  fabric_down[2].up = false;
  try {
    choose_interface(fabric_down, "ens", "NCCL_SOCKET_IFNAME");
    FAIL() << "a down interface was chosen";
  } catch (const std::runtime_error& e) {
    // The message names the spec and what the host has, so the operator sees the fabric is down.
    EXPECT_STREQ(e.what(),
                 "NCCL_SOCKET_IFNAME=ens: no up IPv4 interface matches (this host has: lo 127.0.0.1, eno1 10.231.1.1, "
                 "ens2 10.231.2.1 (down))");
  }
}

TEST(IfaceSelect, AnEmptyListIsRefused) {
  EXPECT_THROW(choose_interface(kServer, "^", "--iface"), std::runtime_error);
  EXPECT_THROW(choose_interface(kServer, ",", "--iface"), std::runtime_error);
  EXPECT_THROW(choose_interface(kServer, "=", "--iface"), std::runtime_error);
}

TEST(IfaceSelect, ThisNamespaceListsLoopbackWithItsAddress) {
  const auto all = ring::ipv4_interfaces();
  bool lo = false;
  for (const auto& i : all) lo = lo || (i.name == "lo" && i.address == "127.0.0.1");
  EXPECT_TRUE(lo);
}

}  // namespace
