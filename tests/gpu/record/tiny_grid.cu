// A plain CUDA C++ program for gpuscope's advice on programs that are not PyTorch (issue 20):
// unified memory (cudaMallocManaged, first touched on the host, so the kernels page-fault it
// over) and one kernel launched as 1 block of 256 threads that holds most of the time, next to
// the same kernel on a grid that fills the GPU. Profiled with ncu (launch statistics, speed of
// light, DRAM throughput, occupancy).
//   nvcc -O2 -arch=sm_90 -o tiny_grid tiny_grid.cu && ./tiny_grid
#include <cstdio>
#include <cuda_runtime.h>

__global__ void saxpy(int n, float a, const float *x, float *y) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    y[i] = a * x[i] + y[i];
}

#define CHECK(call) do { cudaError_t e = (call); if (e != cudaSuccess) { \
  std::fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e)); return 1; } } while (0)

int main() {
  const int n = 1 << 24;  // 64 MiB per array
  float *x, *y;
  CHECK(cudaMallocManaged(&x, n * sizeof(float)));
  CHECK(cudaMallocManaged(&y, n * sizeof(float)));
  for (int i = 0; i < n; ++i) { x[i] = 1.0f; y[i] = 2.0f; }  // on the host: pages start there
  saxpy<<<1, 256>>>(n, 2.0f, x, y);  // one block on a GPU of 132 SMs
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  saxpy<<<sms * 8, 256>>>(n, 2.0f, x, y);  // the same work on a full grid
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  const bool right = y[0] == 6.0f;
  std::printf("y[0] = %.1f (expected 6.0), %d SMs\n", y[0], sms);
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
  return right ? 0 : 1;
}
