/* DLPack's tensor description types (the subset ptxbench's TVM-FFI binding uses), written from the
 * DLPack specification (dmlc/dlpack, version 1.x): the values of DLDeviceType and DLDataTypeCode
 * are the specification's, so code written against dlpack.h reads the same numbers here.
 * ptxbench ships this header for candidates that use the TVM-FFI binding (ABI.md beside this
 * folder's parent); nothing here allocates or owns memory. */
#ifndef DLPACK_DLPACK_H_
#define DLPACK_DLPACK_H_

#include <stdint.h>

#define DLPACK_MAJOR_VERSION 1
#define DLPACK_MINOR_VERSION 1

#ifdef __cplusplus
extern "C" {
#endif

/* Where a tensor's memory lives. */
typedef enum {
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,
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
  kDLMAIA = 17
} DLDeviceType;

typedef struct {
  DLDeviceType device_type;
  int32_t device_id; /* the device's index (a CUDA device ordinal) */
} DLDevice;

/* The kind of an element; with `bits` and `lanes` it makes a DLDataType. */
typedef enum {
  kDLInt = 0,
  kDLUInt = 1,
  kDLFloat = 2,
  kDLOpaqueHandle = 3,
  kDLBfloat = 4,
  kDLComplex = 5,
  kDLBool = 6,
  kDLFloat8_e3m4 = 7,
  kDLFloat8_e4m3 = 8,
  kDLFloat8_e4m3b11fnuz = 9,
  kDLFloat8_e4m3fn = 10,
  kDLFloat8_e4m3fnuz = 11,
  kDLFloat8_e5m2 = 12,
  kDLFloat8_e5m2fnuz = 13,
  kDLFloat8_e8m0fnu = 14,
  kDLFloat6_e2m3fn = 15,
  kDLFloat6_e3m2fn = 16,
  kDLFloat4_e2m1fn = 17
} DLDataTypeCode;

/* bf16: {kDLBfloat, 16, 1}; fp32: {kDLFloat, 32, 1}; int64: {kDLInt, 64, 1}. */
typedef struct {
  uint8_t code;   /* a DLDataTypeCode */
  uint8_t bits;   /* bits of one lane */
  uint16_t lanes; /* 1 for scalars */
} DLDataType;

/* A strided view of memory. Shapes and strides count elements; `strides` may be NULL for a
 * compact row-major tensor (ptxbench always fills it). */
typedef struct {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
} DLTensor;

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* DLPACK_DLPACK_H_ */
