// The AMN's secondary losses (§4.4): Bernoulli KL divergences; see models/qa/amn.hpp (gaps 7, 8,
// 12).
#include <algorithm>

#include "models/qa/amn_steps.hpp"
#include "ops/ops.hpp"

namespace memgrad::qa::amn {

// D_KL(p || q) = p log(p / q) + (1 - p) log((1 - p) / (1 - q)), per entry, summed where mask is 1
// and divided by count (the number of such entries). p is clamped into [1e-6, 1 - 1e-6] (a
// decision probability can saturate); the targets q are data in (0, 1).
Var bernoulli_kl(Var p, Var target, Var mask, double count) {
  const Var pc = clamp(p, 1e-6, 1.0 - 1e-6);
  const Var qc = scale_shift(pc, -1.0, 1.0);  // 1 - p
  const Var lq = log(target), l1q = log(scale_shift(target, -1.0, 1.0));
  const Var kl = add(mul(pc, sub(log(pc), lq)), mul(qc, sub(log(qc), l1q)));
  return scale(sum(mul(kl, mask)), 1.0 / std::max(count, 1.0));
}

}  // namespace memgrad::qa::amn
