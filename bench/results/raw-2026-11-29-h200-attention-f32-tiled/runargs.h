// Plain-C description of one attention call for the harness.
#pragma once
#include <cstdint>
struct RunArgs {
  int dtype; // 0 f32, 1 f64, 2 bf16
  int64_t B, Hq, Hkv, L, S, D, Dv;
  const void *q, *k, *v, *mask;
  void *out;
  int64_t qs[4], ks[4], vs[4], ms[4], os[4];
  bool mask_bool, causal;
  double scale;
};
