// main() of fakegpu-client and fakegpu-evil. They are also linked statically
// (fakegpu-*-static, for a bare rootfs or the VM's initramfs), so they use only
// CLI11 and nlohmann::json (header-only) and the C library — not fmt.
#pragma once

namespace fakegpu {

enum class Tool { kClient, kEvil, kBench };

int tool_main(Tool tool, int argc, char** argv);

}  // namespace fakegpu
