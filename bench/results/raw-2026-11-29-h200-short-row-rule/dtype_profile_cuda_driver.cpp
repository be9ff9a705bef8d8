#include "dtype_profile_cases.h"
#include <cstdlib>
#include <cstring>
// argv[1]: phase; argv[2]: "cuda" for CUDA tensors
int main(int argc, char **argv) {
  bool cuda = argc > 2 && std::strcmp(argv[2], "cuda") == 0;
  return run_dtype_profile(argc > 1 ? std::atoi(argv[1]) : 2,
                           cuda ? kiln::Device::cuda(0) : kiln::Device::cpu());
}
