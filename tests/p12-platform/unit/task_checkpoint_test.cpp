// Checkpoints: a bit-exact round trip through the file format and the
// directory (latest pointer, two kept), and refusal of every kind of damaged
// or foreign file with a message that says what is wrong.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "gpulab/errors.hpp"
#include "platform/task/checkpoint.hpp"

namespace task = gpulab::platform::task;
namespace fs = std::filesystem;

namespace {

task::Checkpoint sample(std::uint64_t step) {
  task::Checkpoint c;
  c.run = {42, 2, 5, 3, 64, 0.1f};
  c.step = step;
  c.first_loss = 2.25;
  c.last_loss = 0.125 + static_cast<double>(step);
  // Values whose bits matter: a negative zero, a denormal, the largest float.
  c.params = {1.5f, -0.0f, std::numeric_limits<float>::denorm_min(),
              std::numeric_limits<float>::max(), -3.25f};
  return c;
}

fs::path fresh_dir(const std::string& name) {
  const fs::path d =
      fs::temp_directory_path() / ("gpulab-task-ckpt-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  return d;
}

std::string usage_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const gpulab::UsageError& e) {
    return e.what();
  }
  return "(no UsageError)";
}

void expect_same(const task::Checkpoint& a, const task::Checkpoint& b) {
  EXPECT_EQ(a.step, b.step);
  EXPECT_EQ(a.run.seed, b.run.seed);
  EXPECT_EQ(a.run.world, b.run.world);
  EXPECT_EQ(a.run.param_count, b.run.param_count);
  EXPECT_EQ(a.run.hidden, b.run.hidden);
  EXPECT_EQ(a.run.batch, b.run.batch);
  EXPECT_EQ(a.run.lr, b.run.lr);
  EXPECT_EQ(a.first_loss, b.first_loss);
  EXPECT_EQ(a.last_loss, b.last_loss);
  ASSERT_EQ(a.params.size(), b.params.size());
  for (std::size_t i = 0; i < a.params.size(); ++i)
    EXPECT_EQ(std::bit_cast<std::uint32_t>(a.params[i]), std::bit_cast<std::uint32_t>(b.params[i]))
        << i;
}

TEST(Checkpoint, EncodeDecodeIsBitExact) {
  const auto c = sample(40);
  const std::string bytes = task::encode_checkpoint(c);
  EXPECT_EQ(bytes.size(), task::kCheckpointHeaderBytes + 5 * 4);
  EXPECT_EQ(bytes.substr(0, 8), "GPLTCKPT");
  expect_same(task::decode_checkpoint(bytes, "mem"), c);
}

TEST(Checkpoint, DirectoryKeepsLatestAndItsPredecessor) {
  const fs::path dir = fresh_dir("dir");
  EXPECT_FALSE(task::load_latest_checkpoint(dir).has_value());  // no directory: a fresh run
  for (std::uint64_t step : {10, 20, 30}) task::write_checkpoint(dir, sample(step));
  const auto got = task::load_latest_checkpoint(dir);
  ASSERT_TRUE(got.has_value());
  expect_same(*got, sample(30));
  EXPECT_TRUE(fs::exists(dir / task::checkpoint_file_name(30)));
  EXPECT_TRUE(fs::exists(dir / task::checkpoint_file_name(20)));
  EXPECT_FALSE(fs::exists(dir / task::checkpoint_file_name(10)));
  std::ifstream latest(dir / "latest");
  std::string name;
  latest >> name;
  EXPECT_EQ(name, "ckpt-00000030.bin");
  int temps = 0;
  for (const auto& e : fs::directory_iterator(dir))
    temps += e.path().filename().string().starts_with(".") ? 1 : 0;
  EXPECT_EQ(temps, 0);
  fs::remove_all(dir);
}

TEST(Checkpoint, DamagedFilesAreRefusedWithTheReason) {
  const std::string good = task::encode_checkpoint(sample(7));
  const auto refuse = [](std::string bytes) {
    return usage_error([&] { task::decode_checkpoint(bytes, "f.bin"); });
  };
  std::string flipped = good;
  flipped[task::kCheckpointHeaderBytes + 2] ^= 0x10;  // one bit of one parameter
  EXPECT_NE(refuse(flipped).find("checksum"), std::string::npos) << refuse(flipped);
  std::string header_flip = good;
  header_flip[16] ^= 0x01;  // the step
  EXPECT_NE(refuse(header_flip).find("checksum"), std::string::npos);
  EXPECT_NE(refuse(good.substr(0, good.size() - 1)).find("truncated"), std::string::npos);
  EXPECT_NE(refuse(good.substr(0, 20)).find("shorter than"), std::string::npos);
  EXPECT_NE(refuse("NOTACKPT" + good.substr(8)).find("bad magic"), std::string::npos);
  std::string version = good;
  version[8] = 9;
  EXPECT_NE(refuse(version).find("format version 9"), std::string::npos);
  EXPECT_NE(refuse(good).find("(no UsageError)"), std::string::npos);  // the control
}

TEST(Checkpoint, DanglingOrDamagedLatestIsRefused) {
  const fs::path dir = fresh_dir("dangling");
  task::write_checkpoint(dir, sample(5));
  fs::remove(dir / task::checkpoint_file_name(5));
  std::string msg = usage_error([&] { task::load_latest_checkpoint(dir); });
  EXPECT_NE(msg.find("ckpt-00000005.bin"), std::string::npos) << msg;
  EXPECT_NE(msg.find("cannot open"), std::string::npos) << msg;

  task::write_checkpoint(dir, sample(6));
  {
    std::fstream f(dir / task::checkpoint_file_name(6),
                   std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(task::kCheckpointHeaderBytes));
    f.put('\x7f');
  }
  msg = usage_error([&] { task::load_latest_checkpoint(dir); });
  EXPECT_NE(msg.find("checksum"), std::string::npos) << msg;

  std::ofstream(dir / "latest") << "../../etc/passwd\n";
  msg = usage_error([&] { task::load_latest_checkpoint(dir); });
  EXPECT_NE(msg.find("not a checkpoint file name"), std::string::npos) << msg;
  fs::remove_all(dir);
}

TEST(Checkpoint, AnotherRunsCheckpointIsRefusedNamingTheFields) {
  const auto c = sample(3);
  EXPECT_NO_THROW(task::require_same_run(c, c.run, "f"));
  task::RunIdentity other = c.run;
  other.world = 4;
  other.lr = 0.2f;
  const std::string msg = usage_error([&] { task::require_same_run(c, other, "f"); });
  EXPECT_NE(msg.find("world 2 (this run: 4)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("lr 0.1 (this run: 0.2)"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("seed"), std::string::npos) << msg;
}

}  // namespace
