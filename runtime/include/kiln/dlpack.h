// kiln/dlpack.h - the DLPack tensor exchange structures (DLPack 1.0,
// https://dmlc.github.io/dlpack/latest/c_api.html), written from the
// public specification: the C ABI that PyTorch, JAX, CuPy, NumPy and
// others use to hand each other tensors without a copy.
//
// The names are the standard ones, in the global namespace, so a pointer
// from any DLPack producer fits. If the official <dlpack/dlpack.h> was
// included first, its definitions are used; included after this one, it
// is skipped (same include guard), so the two never clash.
#pragma once

#ifndef DLPACK_DLPACK_H_
#define DLPACK_DLPACK_H_

#include <cstdint>

#define DLPACK_MAJOR_VERSION 1
#define DLPACK_MINOR_VERSION 0

extern "C" {

typedef struct {
  uint32_t major;
  uint32_t minor;
} DLPackVersion;

typedef enum {
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3, // pinned host memory
  kDLOpenCL = 4,
  kDLVulkan = 7,
  kDLMetal = 8,
  kDLVPI = 9,
  kDLROCM = 10,
  kDLROCMHost = 11,
  kDLExtDev = 12,
  kDLCUDAManaged = 13,
  kDLOneAPI = 14,
  kDLWebGPU = 15,
  kDLHexagon = 16,
  kDLMAIA = 17,
} DLDeviceType;

typedef struct {
  DLDeviceType device_type;
  int32_t device_id;
} DLDevice;

typedef enum {
  kDLInt = 0U,
  kDLUInt = 1U,
  kDLFloat = 2U,
  kDLOpaqueHandle = 3U,
  kDLBfloat = 4U,
  kDLComplex = 5U,
  kDLBool = 6U,
} DLDataTypeCode;

typedef struct {
  uint8_t code;   // a DLDataTypeCode
  uint8_t bits;   // bits per lane
  uint16_t lanes; // 1 for a scalar element
} DLDataType;

typedef struct {
  void *data;  // where element 0 is, less byte_offset
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t *shape;
  int64_t *strides; // in elements; NULL: compact row-major
  uint64_t byte_offset;
} DLTensor;

// DLPack before 1.0 (PyTorch's "dltensor" capsules).
typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;

#define DLPACK_FLAG_BITMASK_READ_ONLY (1UL << 0UL)
#define DLPACK_FLAG_BITMASK_IS_COPIED (1UL << 1UL)

// DLPack 1.0 ("dltensor_versioned" capsules).
typedef struct DLManagedTensorVersioned {
  DLPackVersion version;
  void *manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned *self);
  uint64_t flags;
  DLTensor dl_tensor;
} DLManagedTensorVersioned;

} // extern "C"

#endif // DLPACK_DLPACK_H_
