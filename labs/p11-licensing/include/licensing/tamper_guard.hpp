// The anti-tamper lab (labs/p11-antitamper) applied to the real licence
// check: with GateOptions::anti_tamper, check_license first asks three of its
// layers whether the program deciding is the one that was built and runs
// unobserved:
//   - code integrity: SHA-256 of the `tamper_text` section (where evaluate()
//     and state_permits_use() live, see license_status.cpp) against the seal
//     tamperseal wrote into the linked program;
//   - debugger: TracerPid in /proc/self/status;
//   - hooks: LD_PRELOAD, /etc/ld.so.preload, and libc/libcrypto symbols that
//     resolve into another library.
// The ptrace probe is left out: it forks, which a multi-threaded gateway
// calling the gate must not do. Each layer only raises an attacker's cost
// (the anti-tamper README says how each falls).
#pragma once

#include <string>

namespace licensing {

// "" when no layer objects, else one line: "code integrity: ...", "debugger: ...", "hooks: ...".
// A program that was never sealed objects too: stripping the seal must not switch the check off.
std::string tamper_problem();

}  // namespace licensing
