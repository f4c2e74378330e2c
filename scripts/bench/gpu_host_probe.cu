// The GPU host probe's kernel program (scripts/bench/gpu_host_probe.sh): CUDA IPC between two processes
// (the parent writes, a child opens the handle, reads and writes back), and a kernel `pred` whose FFMA
// is predicated off at run time, to see which ncu SASS metrics count it (tests/data/ncu_probe_pred.csv).
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("FAIL %s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)
__global__ void fill(int* p, int v, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = v + i; }
__global__ void pred(float* out, int flag) {
  float x = threadIdx.x;
  if (flag == 12345) x = x * 3.0f + 1.0f;   // never true at runtime
  out[threadIdx.x] = x;
}
int main(int argc, char** argv) {
  if (argc > 2 && std::strcmp(argv[1], "child") == 0) {
    cudaIpcMemHandle_t h; for (int i = 0; i < 64; ++i) { unsigned v; std::sscanf(argv[2] + 2 * i, "%2x", &v); h.reserved[i] = (char)v; }
    void* p = nullptr; CK(cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess));
    int host[4]; CK(cudaMemcpy(host, p, sizeof host, cudaMemcpyDeviceToHost));
    std::printf("child read %d %d %d %d\n", host[0], host[1], host[2], host[3]);
    fill<<<1, 4>>>((int*)p, 1000, 4); CK(cudaDeviceSynchronize());
    CK(cudaIpcCloseMemHandle(p)); return 0;
  }
  int* d = nullptr; CK(cudaMalloc(&d, 1 << 20)); fill<<<1, 4>>>(d, 7, 4); CK(cudaDeviceSynchronize());
  cudaIpcMemHandle_t h; CK(cudaIpcGetMemHandle(&h, d));
  std::string hex; char b[3]; for (int i = 0; i < 64; ++i) { std::snprintf(b, 3, "%02x", (unsigned char)h.reserved[i]); hex += b; }
  std::string cmd = std::string(argc > 1 ? argv[1] : "./gpu_host_probe") + " child " + hex;
  int rc = std::system(cmd.c_str());
  int host[4]; CK(cudaMemcpy(host, d, sizeof host, cudaMemcpyDeviceToHost));
  std::printf("ipc rc=%d parent sees %d %d %d %d (expect 1000..1003)\n", rc, host[0], host[1], host[2], host[3]);
  float* o; CK(cudaMalloc(&o, 128 * 4)); pred<<<1, 128>>>(o, 0); CK(cudaDeviceSynchronize());
  return 0;
}
