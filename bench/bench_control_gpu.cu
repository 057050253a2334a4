/* bench_control_gpu: the controller compiled for the device (WG_HD =
 * __host__ __device__) and timed in one GPU thread, the way a persistent
 * SSSP kernel would call it between iterations. Not built by CMake (bench/
 * globs *.c); build by hand:
 *
 *   nvcc -O3 -arch=sm_90 -Iinclude -Isrc bench/bench_control_gpu.cu -o bench_control_gpu
 *
 * It includes the two C sources directly, which is how a .cu file in
 * src/cuda/ would reuse them. The plant (degree 2.7, uniform far queue)
 * runs in the same thread; its cost is timed separately and subtracted.
 */
#include <cstdio>
#include <cstring>

extern "C" {
#include "control/selftune.c"
#include "control/vsgd.c"
}

__device__ static void plant_counts(const wg_selftune *st, double x1, uint64_t k,
                                    wg_selftune_counts *c) {
  const double rho = 3.0;
  double noise = 1.0 + 0.1 * ((double)((k * 2654435761u) % 1000) / 1000.0 - 0.5);
  c->x1 = (uint64_t)x1;
  c->x2 = (uint64_t)(2.7 * noise * x1);
  c->x3 = (uint64_t)(0.7 * (double)c->x2);
  c->x4 = (uint64_t)(0.3 * (double)c->x3);
  c->nparts = st->nparts;
  double lo = ceil(st->delta);
  for (uint32_t i = 0; i < st->nparts; i++) {
    double hi = st->bound[i] == WG_SELFTUNE_INF ? lo + 1e9 : (double)st->bound[i];
    c->part_size[i] = (uint64_t)(rho * fmax(hi - lo, 0.0));
    lo = hi;
  }
  c->far_min = (uint64_t)ceil(st->delta);
}

/* mode 0: plant only; mode 1: plant + controller step. */
__global__ void run(int mode, long steps, unsigned long long *cycles, double *sink) {
  wg_selftune st;
  wg_selftune_counts c;
  wg_selftune_decision d;
  wg_selftune_init(&st, 1e5, 10.0, 10.0);
  memset(&c, 0, sizeof c);
  memset(&d, 0, sizeof d);
  double x1 = 1.0, s = 0.0;
  unsigned long long t0 = clock64();
  for (long k = 0; k < steps; k++) {
    if (k % 1000 == 0) wg_selftune_init(&st, 1e5, 10.0, 10.0);
    plant_counts(&st, x1, (uint64_t)k, &c);
    uint64_t thr = (uint64_t)ceil(st.delta);
    if (mode == 1) {
      wg_selftune_step(&st, &c, &d);
    } else {
      d.threshold = thr + 1 + (uint64_t)(k & 7);
      st.delta += 1.0;
    }
    x1 = fmax((double)c.x4 + 3.0 * ((double)d.threshold - (double)thr), 0.0);
    s += d.delta + x1;
  }
  *cycles = clock64() - t0;
  *sink = s;
}

int main() {
  const long steps = 200000;
  unsigned long long *cyc;
  double *sink;
  cudaMalloc(&cyc, sizeof *cyc);
  cudaMalloc(&sink, sizeof *sink);
  int clock_khz = 0;
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0);
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  unsigned long long c[2];
  for (int rep = 0; rep < 2; rep++) /* rep 0 warms up */
    for (int mode = 0; mode < 2; mode++) {
      run<<<1, 1>>>(mode, steps, cyc, sink);
      cudaError_t e = cudaDeviceSynchronize();
      if (e != cudaSuccess) {
        fprintf(stderr, "bench_control_gpu: %s\n", cudaGetErrorString(e));
        return 1;
      }
      cudaMemcpy(&c[mode], cyc, sizeof c[mode], cudaMemcpyDeviceToHost);
    }
  double ghz = clock_khz / 1e6;
  double plant_ns = (double)c[0] / steps / ghz, both_ns = (double)c[1] / steps / ghz;
  printf("bench_control_gpu on %s (%.2f GHz SM clock): plant %.0f ns, plant+step %.0f ns,"
         " step alone ~%.0f ns (%.0f cycles) per iteration, one thread\n",
         prop.name, ghz, plant_ns, both_ns, both_ns - plant_ns,
         (double)(c[1] - c[0]) / steps);
  cudaFree(cyc);
  cudaFree(sink);
  return 0;
}
