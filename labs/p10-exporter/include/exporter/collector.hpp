// Runs the sources off the request path: one background thread collects every
// `interval` and publishes the rendered exposition; a scrape only copies a
// shared pointer to the last one. Adds gpu_exporter_source_up{source=...}.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "exporter/source.hpp"

namespace exporter {

class Collector {
 public:
  using Log = std::function<void(const std::string&)>;
  // `log` receives one line per change: a source going down (with the reason)
  // or up, and each new warning. Repeated identical lines are not logged again.
  Collector(std::vector<std::unique_ptr<Source>> sources, Log log);
  ~Collector();
  Collector(const Collector&) = delete;
  Collector& operator=(const Collector&) = delete;

  // One collection now: every source, then gpu_exporter_source_up. Publishes
  // and returns the text. A source that throws or whose families clash with
  // another's counts as down for this collection.
  std::string collect();
  // Collects now and then every `interval` on a background thread until stop().
  void start(std::chrono::milliseconds interval);
  void stop();

  // The last published exposition (never null after the first collect()).
  [[nodiscard]] std::shared_ptr<const std::string> snapshot() const;
  [[nodiscard]] std::uint64_t collections() const { return collections_; }
  // source name -> up, from the last collection.
  [[nodiscard]] std::map<std::string, bool> source_up() const;

 private:
  std::vector<std::unique_ptr<Source>> sources_;
  Log log_;
  mutable std::mutex mutex_;  // snapshot_, up_
  std::shared_ptr<const std::string> snapshot_;
  std::map<std::string, bool> up_;
  std::map<std::string, std::string> last_state_;  // per source: the last logged line
  std::vector<std::string> last_warnings_;
  std::mutex collect_mutex_;  // one collection at a time
  std::atomic<std::uint64_t> collections_{0};
  std::thread thread_;
  std::mutex stop_mutex_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
};

}  // namespace exporter
