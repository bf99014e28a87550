// A mock kubelet that speaks the real protocol: it serves Registration on
// kubelet.sock, and for every plugin that registers it connects back to the
// plugin's socket, consumes ListAndWatch, keeps the node's capacity, and
// allocates the way the kubelet's device manager does. Plain C++ header.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "device_plugin/device_state.hpp"

namespace device_plugin {

// A gRPC outcome without gRPC types: code 0 is OK.
struct CallResult {
  int code = 0;
  std::string code_name = "OK";
  std::string message;
  [[nodiscard]] bool ok() const { return code == 0; }
};

struct AllocateResult : CallResult {
  std::vector<std::string> ids;                 // what was requested
  std::vector<ContainerAllocation> containers;  // what the plugin returned
};

struct PreferredResult : CallResult {
  std::vector<std::string> ids;
};

struct RegistrationRecord {
  std::string resource;
  std::string endpoint;
  std::string version;
  CallResult result;
};

class MockKubelet {
 public:
  explicit MockKubelet(std::string socket_dir);
  ~MockKubelet();
  MockKubelet(const MockKubelet&) = delete;
  MockKubelet& operator=(const MockKubelet&) = delete;

  // Removes the sockets in the directory (as the kubelet does when it starts),
  // then serves kubelet.sock; throws gpulab::RunError if it cannot bind.
  void start();
  void stop();   // closes plugin streams, stops serving, removes kubelet.sock

  // Registration attempts so far (accepted and refused).
  [[nodiscard]] std::vector<RegistrationRecord> registrations() const;
  [[nodiscard]] std::vector<std::string> resources() const;
  // The devices the last ListAndWatch message listed.
  [[nodiscard]] std::vector<Device> devices(const std::string& resource) const;
  // Allocatable units: healthy devices (the node's extended-resource capacity).
  [[nodiscard]] int capacity(const std::string& resource) const;
  [[nodiscard]] int list_updates(const std::string& resource) const;  // ListAndWatch messages received
  // Waits until `pred` holds (checked on every update) or the timeout passes.
  bool wait_until(const std::function<bool()>& pred, std::chrono::milliseconds timeout) const;
  bool wait_for_capacity(const std::string& resource, int units, std::chrono::milliseconds timeout) const;

  // Like the kubelet: pick `count` healthy unallocated devices (asking
  // GetPreferredAllocation when the plugin offers it), then call Allocate.
  AllocateResult allocate(const std::string& resource, int count);
  // Call Allocate for exactly these IDs (one container), as a scheduler-bound pod would.
  AllocateResult allocate_ids(const std::string& resource, const std::vector<std::string>& ids);
  PreferredResult preferred(const std::string& resource, const std::vector<std::string>& available,
                            const std::vector<std::string>& must_include, int size);
  // The pod is gone: the kubelet forgets the allocation (the plugin is never told).
  void release(const std::string& resource, const std::vector<std::string>& ids);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace device_plugin
