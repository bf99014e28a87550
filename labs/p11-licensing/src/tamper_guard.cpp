#include "licensing/tamper_guard.hpp"

#include <fmt/format.h>

#include "antitamper/debugger.h"
#include "antitamper/hooks.h"
#include "antitamper/integrity.h"

namespace licensing {

std::string tamper_problem() {
  const at_integrity_result code = at_verify_code_integrity();
  switch (code.status) {
    case AT_INTEGRITY_OK:
      break;
    case AT_INTEGRITY_MISMATCH:
      return fmt::format(
          "code integrity: SHA-256 of the licence check's code ({} bytes) differs from the "
          "build-time seal "
          "(patched or breakpointed)",
          code.size);
    case AT_INTEGRITY_UNSEALED:
      return "code integrity: this program was never sealed (tamperseal), so its licence check "
             "cannot be verified";
    case AT_INTEGRITY_ERROR:
      return "code integrity: the code could not be hashed (is libcrypto hooked?)";
  }
  if (const int tracer = at_tracer_pid("/proc/self/status"); tracer > 0)
    return fmt::format("debugger: traced by pid {} (TracerPid in /proc/self/status)", tracer);
  const at_hook_report hooks = at_check_hooks("/");
  if (hooks.symbols_hooked > 0)
    return fmt::format("hooks: {} of {} watched symbols hooked, first: {}", hooks.symbols_hooked,
                       hooks.symbols_checked, hooks.first_hook);
  if (hooks.ld_preload_set) return "hooks: LD_PRELOAD is set";
  if (hooks.ld_so_preload) return "hooks: /etc/ld.so.preload lists libraries";
  return "";
}

}  // namespace licensing
