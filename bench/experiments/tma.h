// Hopper bulk copies (cp.async.bulk, the TMA engine without a tensor map)
// completing on an mbarrier: the pieces tma_rows.py puts in a rows kernel.
// Experiment only.
#pragma once
#include <cstdint>

__device__ __forceinline__ unsigned kiln_smem_addr(const void *p) {
  return unsigned(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void kiln_mbar_init(uint64_t *bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(kiln_smem_addr(bar)), "r"(count) : "memory");
}
// makes the barriers' initialisation visible to the async (bulk copy) proxy
__device__ __forceinline__ void kiln_mbar_fence_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
// orders this thread's earlier generic-proxy shared-memory accesses before
// its later async-proxy ones (the stage was read; a copy will overwrite it)
__device__ __forceinline__ void kiln_fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
__device__ __forceinline__ void kiln_mbar_expect_tx(uint64_t *bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(kiln_smem_addr(bar)), "r"(bytes) : "memory");
}
// bytes: a multiple of 16; dst and src 16-byte aligned
__device__ __forceinline__ void kiln_bulk_load(void *dst, const void *src, unsigned bytes, uint64_t *bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               ::"r"(kiln_smem_addr(dst)), "l"(src), "r"(bytes), "r"(kiln_smem_addr(bar)) : "memory");
}
__device__ __forceinline__ void kiln_mbar_wait(uint64_t *bar, unsigned phase) {
  asm volatile("{\n"
               "  .reg .pred p;\n"
               "WAIT:\n"
               "  mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
               "  @!p bra WAIT;\n"
               "}\n" ::"r"(kiln_smem_addr(bar)), "r"(phase) : "memory");
}
