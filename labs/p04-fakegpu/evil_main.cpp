#include "fakegpu/tool_main.hpp"

int main(int argc, char** argv) {
  return fakegpu::tool_main(fakegpu::Tool::kEvil, argc, argv);
}
