#include "exporter/collector.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <exception>

namespace exporter {

namespace prom = gpulab::prom;

Collector::Collector(std::vector<std::unique_ptr<Source>> sources, Log log)
    : sources_(std::move(sources)), log_(std::move(log)) {}

Collector::~Collector() {
  stop();
}

std::string Collector::collect() {
  const std::lock_guard collecting(collect_mutex_);
  prom::Exposition all;
  std::map<std::string, bool> up;
  std::vector<std::string> warnings;
  for (auto& source : sources_) {
    const std::string name(source->name());
    Availability a;
    try {
      prom::Exposition mine;
      a = source->collect(mine);
      if (a.up) all.merge(mine);
    } catch (const std::exception& e) {
      a = {false, fmt::format("collection failed: {}", e.what()), {}};
    }
    up[name] = a.up;
    for (auto& w : a.warnings) warnings.push_back(fmt::format("{}: {}", name, w));
    const std::string state = a.up ? fmt::format("source {} up", name)
                                   : fmt::format("source {} unavailable: {}", name, a.reason);
    if (last_state_[name] != state) {
      // "up" is worth a line only after having been down.
      if (!a.up || !last_state_[name].empty()) log_(state);
      last_state_[name] = state;
    }
  }
  for (const auto& w : warnings) {
    if (std::find(last_warnings_.begin(), last_warnings_.end(), w) == last_warnings_.end()) log_(w);
  }
  last_warnings_ = warnings;
  auto& f = all.gauge("gpu_exporter_source_up",
                      "1 if the source was read in the last collection, 0 if it is unavailable.");
  for (const auto& [name, is_up] : up) f.set({{"source", name}}, is_up ? 1 : 0);
  auto text = std::make_shared<const std::string>(all.render());
  {
    const std::lock_guard lock(mutex_);
    snapshot_ = text;
    up_ = up;
  }
  ++collections_;
  return *text;
}

void Collector::start(std::chrono::milliseconds interval) {
  collect();
  {
    const std::lock_guard lock(stop_mutex_);
    stopping_ = false;
  }
  thread_ = std::thread([this, interval] {
    std::unique_lock lock(stop_mutex_);
    while (!stop_cv_.wait_for(lock, interval, [this] { return stopping_; })) {
      lock.unlock();
      collect();
      lock.lock();
    }
  });
}

void Collector::stop() {
  {
    const std::lock_guard lock(stop_mutex_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::shared_ptr<const std::string> Collector::snapshot() const {
  const std::lock_guard lock(mutex_);
  return snapshot_;
}

std::map<std::string, bool> Collector::source_up() const {
  const std::lock_guard lock(mutex_);
  return up_;
}

}  // namespace exporter
