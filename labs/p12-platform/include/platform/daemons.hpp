// gpulabd's two long-running modes as functions (gpulabd_main.cpp only parses
// flags): each binds, writes its URL to --ready-file once it serves, and runs
// until SIGTERM or SIGINT.
#pragma once

#include <filesystem>
#include <string>

#include "platform/agent.hpp"
#include "platform/control_plane.hpp"

namespace platform {

struct ControlDaemonOptions {
  ControlOptions control;
  std::string listen = "127.0.0.1:7070";
  std::filesystem::path ready_file;
};

int run_control_daemon(ControlDaemonOptions options);

struct AgentDaemonOptions {
  AgentOptions agent;
  std::filesystem::path ready_file;
};

int run_agent_daemon(AgentDaemonOptions options);

// Writes `text` to `path` atomically (temp file + rename), for ready files.
void write_ready_file(const std::filesystem::path& path, const std::string& text);

}  // namespace platform
