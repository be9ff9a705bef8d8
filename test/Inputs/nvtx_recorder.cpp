// An NVTX tool for tests (test/plugin/nvtx.cpp): loaded by NVTX through
// NVTX_INJECTION64_PATH, it prints each range pushed ("nvtx: push
// <domain>/<name>") and popped to stderr.
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstring>

namespace {
nvtxDomainHandle_t create_domain(const char *name) {
  return reinterpret_cast<nvtxDomainHandle_t>(strdup(name));
}
const char *domain_name(nvtxDomainHandle_t d) {
  return d ? reinterpret_cast<const char *>(d) : "";
}
int push(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
  std::fprintf(stderr, "nvtx: push %s/%s\n", domain_name(d),
               a && a->messageType == NVTX_MESSAGE_TYPE_ASCII ? a->message.ascii
                                                              : "?");
  return 0;
}
int pop(nvtxDomainHandle_t d) {
  std::fprintf(stderr, "nvtx: pop %s\n", domain_name(d));
  return 0;
}
} // namespace

extern "C" int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get) {
  auto *cb = static_cast<const NvtxExportTableCallbacks *>(get(NVTX_ETID_CALLBACKS));
  NvtxFunctionTable t = nullptr;
  unsigned n = 0;
  if (!cb || !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n) ||
      n < NVTX_CBID_CORE2_DomainCreateA)
    return 0;
  *t[NVTX_CBID_CORE2_DomainCreateA] = reinterpret_cast<NvtxFunctionPointer>(&create_domain);
  *t[NVTX_CBID_CORE2_DomainRangePushEx] = reinterpret_cast<NvtxFunctionPointer>(&push);
  *t[NVTX_CBID_CORE2_DomainRangePop] = reinterpret_cast<NvtxFunctionPointer>(&pop);
  return 1;
}
