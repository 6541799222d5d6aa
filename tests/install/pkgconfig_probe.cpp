// Built with `pkg-config --cflags --libs memgrad` (or memgrad-static) by check_install.sh: the
// registry holds every op and model of the installed library.
#include <cstdio>
#include <memgrad/engine/gradcheck.hpp>
#include <memgrad/models/model.hpp>

int main() {
  const size_t ops = memgrad::all_ops().size(), cases = memgrad::all_grad_cases().size();
  size_t models = memgrad::all_models().size();
  std::printf("%zu ops, %zu gradient-check cases, %zu models\n", ops, cases, models);
  return ops >= 40 && cases >= 40 && models >= 10 ? 0 : 1;
}
