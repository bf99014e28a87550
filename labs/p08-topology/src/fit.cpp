#include "topology/calibrate.hpp"

#include <stdexcept>

namespace topo {

Link fit_ring_link(int world, const std::vector<Sample>& samples) {
  if (samples.size() < 2) throw std::invalid_argument("need at least two sizes to fit latency and bandwidth");
  // Weighted least squares of t = a + b*V with weights 1/t^2.
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& s : samples) {
    const double w = 1.0 / (s.seconds * s.seconds);
    sw += w;
    sx += w * s.bytes;
    sy += w * s.seconds;
    sxx += w * s.bytes * s.bytes;
    sxy += w * s.bytes * s.seconds;
  }
  double b = (sw * sxy - sx * sy) / (sw * sxx - sx * sx);
  double a = (sy - b * sx) / sw;
  if (a < 0) {  // through the origin instead
    a = 0;
    b = sxy / sxx;
  }
  if (!(b > 0)) throw std::runtime_error("the measurements do not grow with size; cannot fit a bandwidth");
  const double hops = 2.0 * (world - 1);
  return {"loopback", hops / world / b, a / hops};
}

}  // namespace topo
