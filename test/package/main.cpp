// The out-of-tree consumer's program: one compiled function, its result and
// whether the compiled path ran.
#include <kiln/kiln.h>

#include <cstdio>

[[kiln::compile]] kiln::Tensor scaled_sin(const kiln::Tensor &x) {
  return kiln::sin(x) * CONSUMER_SCALE;
}

int main() {
  kiln::Tensor y = scaled_sin(kiln::arange(4));
  std::printf("y[1] %.4f compiled_calls %llu\n",
              y.to_vector<float>()[1],
              (unsigned long long)kiln::stats().compiled_calls);
}
