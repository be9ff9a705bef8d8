// NVTX ranges in the "kiln" domain (kiln/rt.h). NVTX3 is header-only: with
// no tool attached (NVTX_INJECTION64_PATH unset) its entry points are
// no-ops after the first call.
#include <kiln/rt.h>

#include <cstdlib>

#if KILN_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

namespace kiln::rt {

#if KILN_HAVE_NVTX
namespace {
const bool kNvtxOn = [] {
  const char *v = std::getenv("KILN_NVTX");
  return !(v && v[0] == '0' && v[1] == '\0');
}();

nvtxDomainHandle_t domain() {
  static const nvtxDomainHandle_t d = nvtxDomainCreateA("kiln");
  return d;
}
} // namespace

void nvtx_push(const char *name) {
  if (!kNvtxOn)
    return;
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = name;
  nvtxDomainRangePushEx(domain(), &a);
}

void nvtx_pop() {
  if (kNvtxOn)
    nvtxDomainRangePop(domain());
}
#else
void nvtx_push(const char *) {}
void nvtx_pop() {}
#endif

} // namespace kiln::rt
