// `ptx-dissect annotate FILE.ptx`: every line of a PTX file with a one-line
// explanation of what it does and why it is there.
#pragma once

#include <string>
#include <string_view>

namespace ptx_dissect {

// The explanation for one raw line ("" for blank lines and braces).
std::string explain_line(std::string_view raw);

// The whole file: "text    // explanation" per line, explanations aligned.
std::string annotate(std::string_view ptx);

}  // namespace ptx_dissect
