// The loader: discovery order, every rejection reason, the accepted version
// range (ABI evolution both ways), and unload in reverse order.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <sstream>

#include "hal_test_support.hpp"

namespace hal = gpulab::hal;
using hal_test::backend;
using hal_test::rejection_for;
using hal_test::test_backend;
namespace fs = std::filesystem;

namespace {
struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/gpulab-hal-test-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

void write_file(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

// Loads one file into a fresh registry and returns its rejection (must be one).
hal::Rejection reject_one(const fs::path& lib) {
  hal::Registry reg;
  EXPECT_FALSE(reg.load(lib));
  EXPECT_TRUE(reg.backends().empty());
  EXPECT_EQ(reg.rejected().size(), 1u);
  return reg.rejected().empty() ? hal::Rejection{} : reg.rejected().front();
}
}  // namespace

TEST(Loader, LoadsTheReferenceBackendAndReadsItsDescriptor) {
  hal::Registry reg;
  ASSERT_TRUE(reg.load(backend("cpu_ref"))) << reg.rejected().front().message;
  const hal::Backend* b = reg.find("cpu_ref");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->abi_major(), 2u);
  EXPECT_EQ(b->abi_minor(), 2u);
  EXPECT_EQ(b->struct_size(), sizeof(gpulab_hal_backend));
  EXPECT_EQ(hal::dtype_mask_string(b->dtypes()), "F32|F16|BF16");
  EXPECT_EQ(hal::op_mask_string(b->ops()), "buffer|matmul|softmax|rmsnorm|rope|silu_mul|paged_attention");
  EXPECT_EQ(b->perf_hint(), 1u);
  EXPECT_TRUE(b->declares(hal::Op::kSoftmax));
  EXPECT_EQ(b->device(), "host CPU, 1 thread, plain loops");
}

TEST(Loader, RejectsAStaleV1BackendByItsVersionWordAlone) {
  const auto r = reject_one(backend("stale"));
  EXPECT_EQ(r.reason, hal::RejectReason::kAbiMajorMismatch);
  EXPECT_EQ(r.message, "abi v1 != core v2");
  EXPECT_EQ(r.name, "stale");
}

TEST(Loader, RejectsAFutureMajor) {
  const auto r = reject_one(test_backend("major3"));
  EXPECT_EQ(r.reason, hal::RejectReason::kAbiMajorMismatch);
  EXPECT_EQ(r.message, "abi v3 != core v2");
}

TEST(Loader, RejectsADescriptorTooSmallForV2_0) {
  const auto r = reject_one(test_backend("tiny"));
  EXPECT_EQ(r.reason, hal::RejectReason::kDescriptorTooSmall);
  EXPECT_EQ(r.message, "descriptor is 64 bytes, ABI v2.0 needs at least 144");
}

TEST(Loader, RejectsALibraryWithoutTheRegistrationSymbol) {
  const auto r = reject_one(test_backend("nosym"));
  EXPECT_EQ(r.reason, hal::RejectReason::kMissingSymbol);
  EXPECT_NE(r.message.find("gpulab_hal_backend_register"), std::string::npos);
}

TEST(Loader, RejectsANullDescriptorAndABadOne) {
  EXPECT_EQ(reject_one(test_backend("nulldesc")).reason, hal::RejectReason::kNullDescriptor);
  const auto noname = reject_one(test_backend("noname"));
  EXPECT_EQ(noname.reason, hal::RejectReason::kInvalidDescriptor);
  EXPECT_EQ(noname.name, "noname");  // from the file name, since the descriptor has none
  const auto nullmm = reject_one(test_backend("nullmatmul"));
  EXPECT_EQ(nullmm.reason, hal::RejectReason::kInvalidDescriptor);
  EXPECT_EQ(nullmm.message, "declares matmul but its function is NULL");
  const auto nullatt = reject_one(test_backend("nullattention"));
  EXPECT_EQ(nullatt.reason, hal::RejectReason::kInvalidDescriptor);
  EXPECT_EQ(nullatt.message, "declares paged_attention but its function is NULL");
}

TEST(Loader, RejectsWhatDlopenCannotLoad) {
  TempDir dir;
  const fs::path fake = dir.path / "gpulab-hal-text.so";
  write_file(fake, "this is not an ELF file\n");
  const auto r = reject_one(fake);
  EXPECT_EQ(r.reason, hal::RejectReason::kDlopenFailed);
  EXPECT_EQ(r.message.rfind("dlopen: ", 0), 0u);
  EXPECT_EQ(reject_one(dir.path / "missing.so").reason, hal::RejectReason::kDlopenFailed);
}

TEST(Loader, RejectsADuplicateName) {
  hal::Registry reg;
  ASSERT_TRUE(reg.load(backend("cpu_ref")));
  EXPECT_FALSE(reg.load(test_backend("cpu_ref_copy")));  // another file, same descriptor name
  EXPECT_FALSE(reg.load(backend("cpu_ref")));            // the same file twice
  ASSERT_EQ(reg.rejected().size(), 2u);
  for (const auto& r : reg.rejected()) {
    EXPECT_EQ(r.reason, hal::RejectReason::kDuplicateName);
    EXPECT_NE(r.message.find("already loaded from " + backend("cpu_ref").string()), std::string::npos);
  }
  EXPECT_EQ(reg.backends().size(), 1u);
  // The first one still works after its twin was closed again.
  EXPECT_TRUE(hal::check_matmul(*reg.find("cpu_ref"), hal::DType::kF32, 5, 4, 3, 1).pass);
}

TEST(Loader, ReportsNoDeviceAndInitFailureSeparately) {
  const auto nodev = reject_one(test_backend("nodevice"));
  EXPECT_EQ(nodev.reason, hal::RejectReason::kNoDevice);
  EXPECT_EQ(nodev.message, "test: no accelerator on this machine");
  EXPECT_EQ(nodev.name, "broken");
  const auto fail = reject_one(test_backend("initfail"));
  EXPECT_EQ(fail.reason, hal::RejectReason::kInitFailed);
  EXPECT_EQ(fail.message, "test: firmware handshake failed");
}

TEST(AbiEvolution, AnOldMinorBackendLoadsInTheNewerCore) {
  hal::Registry reg;
  ASSERT_TRUE(reg.load(test_backend("old_minor"))) << reg.rejected().front().message;
  const hal::Backend& b = *reg.find("old_minor");
  EXPECT_EQ(b.abi_minor(), 0u);
  EXPECT_EQ(b.struct_size(), GPULAB_HAL_DESCRIPTOR_SIZE_V2_0);
  // The v2.1 member lies beyond its descriptor: read as "not provided", never as garbage.
  EXPECT_EQ(b.descriptor().describe_device, nullptr);
  EXPECT_EQ(b.device(), "(ABI 2.0: not reported)");
  EXPECT_TRUE(hal::check_matmul(b, hal::DType::kF32, 13, 7, 9, 3).pass);
}

// A backend built against v2.1 loads in the v2.2 core, and every v2.2 op reads
// as not declared, whatever its op mask says: it has no function slot for
// them. Routing refuses them by name, the wrappers answer UNSUPPORTED.
TEST(AbiEvolution, A21BackendLoadsAndHasNoneOfThe22Ops) {
  hal::Registry reg;
  ASSERT_TRUE(reg.load(test_backend("v21_minor"))) << reg.rejected().front().message;
  const hal::Backend& b = *reg.find("v21_minor");
  EXPECT_EQ(b.abi_minor(), 1u);
  EXPECT_EQ(b.struct_size(), GPULAB_HAL_DESCRIPTOR_SIZE_V2_1);
  EXPECT_EQ(b.device(), "backend built against ABI v2.1");
  EXPECT_EQ(hal::op_mask_string(b.ops()), "buffer|matmul|softmax");  // the stray v2.2 bits dropped
  for (hal::Op o : hal::kLayerOps) {
    EXPECT_FALSE(b.declares(o)) << hal::op_name(o);
    const hal::Status s = b.usable(o, hal::DType::kF32);
    EXPECT_EQ(s.code, GPULAB_HAL_ERR_UNSUPPORTED);
    EXPECT_EQ(s.message, fmt::format("backend v21_minor (ABI 2.1) does not declare {}", hal::op_name(o)));
    const auto routed = reg.route({o, hal::DType::kF32, 4, 8, 0});
    ASSERT_FALSE(routed);
    EXPECT_EQ(routed.error().message, fmt::format("no loaded backend supports FP32 {}", hal::op_name(o)));
  }
  std::vector<float> in(8, 1.0f), w(4, 1.0f), out(8);
  const hal::Status s = hal::rmsnorm_host(b, hal::DType::kF32, 2, 4, 1e-5f, in.data(), w.data(), out.data());
  EXPECT_EQ(hal::describe(s), "unsupported: backend v21_minor (ABI 2.1) does not declare rmsnorm");
  EXPECT_TRUE(hal::check_matmul(b, hal::DType::kF32, 13, 7, 9, 3).pass);
  EXPECT_TRUE(hal::check_softmax(b, hal::DType::kF32, 5, 9, 3).pass);
}

TEST(AbiEvolution, ANewerMinorBackendLoadsInTheOlderCore) {
  hal::Registry reg;
  ASSERT_TRUE(reg.load(test_backend("new_minor"))) << reg.rejected().front().message;
  const hal::Backend& b = *reg.find("new_minor");
  EXPECT_EQ(b.abi_minor(), 3u);
  EXPECT_EQ(b.struct_size(), 200u);  // bigger than the core's 184: the tail is ignored
  EXPECT_EQ(b.device(), "future backend, ABI v2.3");
  EXPECT_TRUE(hal::check_matmul(b, hal::DType::kF32, 13, 7, 9, 3).pass);
}

TEST(Discovery, EnvironmentThenManifestsThenBuildDir) {
  TempDir dir;
  const fs::path manifests = dir.path / "hal.d";
  fs::create_directory(manifests);
  // Absolute path, a path relative to the manifest, an empty manifest, a non-manifest file.
  write_file(manifests / "10-old.hal", test_backend("old_minor").string() + "\n# comment lines after the first are ignored\n");
  fs::copy_file(test_backend("new_minor"), dir.path / "gpulab-hal-new_minor.so");
  write_file(manifests / "20-new.hal", "  ../gpulab-hal-new_minor.so  \n");
  write_file(manifests / "30-empty.hal", "\n");
  write_file(manifests / "README", backend("stale").string() + "\n");

  hal::DiscoveryOptions o;
  o.paths = {backend("limited")};
  o.manifest_dir = manifests;
  o.backend_dir = hal::build_backend_dir();
  hal::Registry reg(o);

  ASSERT_GE(reg.backends().size(), 4u);
  EXPECT_EQ(reg.backends()[0]->name(), "limited");
  EXPECT_EQ(reg.backends()[0]->source(), hal::Source::kEnvironment);
  EXPECT_EQ(reg.backends()[1]->name(), "old_minor");
  EXPECT_EQ(reg.backends()[1]->source(), hal::Source::kManifest);
  EXPECT_EQ(reg.backends()[2]->name(), "new_minor");
  EXPECT_EQ(reg.backends()[3]->source(), hal::Source::kBuildDir);
  const auto* empty = rejection_for(reg, manifests / "30-empty.hal");
  ASSERT_NE(empty, nullptr);
  EXPECT_EQ(empty->reason, hal::RejectReason::kBadManifest);
  // limited came first from the environment, so the build dir's copy is a duplicate.
  const auto* dup = rejection_for(reg, backend("limited"));
  ASSERT_NE(dup, nullptr);
  EXPECT_EQ(dup->reason, hal::RejectReason::kDuplicateName);
  EXPECT_EQ(dup->source, hal::Source::kBuildDir);
  // stale is rejected once (from the build dir), never via the README that is not a manifest.
  std::size_t stale = 0;
  for (const auto& r : reg.rejected()) stale += r.name == "stale";
  EXPECT_EQ(stale, 1u);
}

TEST(Discovery, AManifestThatIsADeviceOrADirectoryIsRejected) {
  // Before: a manifest linked to /dev/zero was read as one endless line.
  TempDir dir;
  const fs::path manifests = dir.path / "hal.d";
  fs::create_directory(manifests);
  fs::create_symlink("/dev/zero", manifests / "10-zero.hal");
  fs::create_directory(manifests / "20-dir.hal");
  write_file(manifests / "30-huge.hal", std::string(100 << 10, 'x'));
  hal::DiscoveryOptions o;
  o.manifest_dir = manifests;
  hal::Registry reg(o);
  EXPECT_TRUE(reg.backends().empty());
  for (const auto& [file, why] : {std::pair<std::string, std::string>{"10-zero.hal", "is a device, not a file"},
                                  {"20-dir.hal", "is a directory, not a file"},
                                  {"30-huge.hal", "is larger than 65536 bytes"}}) {
    const auto* r = rejection_for(reg, manifests / file);
    ASSERT_NE(r, nullptr) << file;
    EXPECT_EQ(r->reason, hal::RejectReason::kBadManifest) << file;
    EXPECT_EQ(r->message, "'" + (manifests / file).string() + "' " + why);
  }
}

TEST(Discovery, FromEnvironmentReadsTheVariables) {
  TempDir dir;
  write_file(dir.path / "a.hal", test_backend("old_minor").string() + "\n");
  const std::string list = test_backend("new_minor").string() + "::" + backend("cpu_ref").string();
  setenv("GPULAB_HAL_BACKENDS", list.c_str(), 1);
  setenv("GPULAB_HAL_MANIFEST_DIR", dir.path.c_str(), 1);
  setenv("GPULAB_HAL_NO_BUILD_DIR", "1", 1);
  const auto o = hal::DiscoveryOptions::from_environment();
  hal::Registry reg(o);
  unsetenv("GPULAB_HAL_BACKENDS");
  unsetenv("GPULAB_HAL_MANIFEST_DIR");
  unsetenv("GPULAB_HAL_NO_BUILD_DIR");
  EXPECT_EQ(o.paths.size(), 2u);  // the empty entry between "::" is skipped
  EXPECT_FALSE(o.backend_dir.has_value());
  ASSERT_EQ(reg.backends().size(), 3u);
  EXPECT_EQ(reg.backends()[0]->name(), "new_minor");
  EXPECT_EQ(reg.backends()[1]->name(), "cpu_ref");
  EXPECT_EQ(reg.backends()[2]->name(), "old_minor");
  EXPECT_TRUE(reg.rejected().empty());
}

TEST(Lifecycle, ShutsDownAndUnloadsInReverseLoadOrder) {
  TempDir dir;
  const fs::path log = dir.path / "log";
  setenv("GPULAB_HAL_TEST_LOG", log.c_str(), 1);
  {
    hal::Registry reg;
    ASSERT_TRUE(reg.load(test_backend("order_a")));
    ASSERT_TRUE(reg.load(test_backend("order_b")));
  }
  unsetenv("GPULAB_HAL_TEST_LOG");
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "init order_a\ninit order_b\nshutdown order_b\nshutdown order_a\n");
}

TEST(Lifecycle, ARegistryCanBeBuiltAndDestroyedRepeatedly) {
  // dlopen/dlclose cycles of every backend: ASan checks nothing leaks or dangles.
  for (int i = 0; i < 2; ++i) {
    hal::Registry reg(hal::DiscoveryOptions::only_dir(hal::build_backend_dir()));
    ASSERT_NE(reg.find("cpu_ref"), nullptr);
    EXPECT_TRUE(hal::check_matmul(*reg.find("fast"), hal::DType::kF32, 9, 9, 9, 1).pass);
  }
}
