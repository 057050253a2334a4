/* The traffic simulator's step on the GPU, bit for bit the CPU step of
 * src/traffic/sim.c (read its opening comment first: phases A, C, B, the
 * junction rule, integer state in mm and mm/s).
 *
 * Why the results are the same bits:
 *  - IDM is evaluated in double from the same integers with the same
 *    operations in the same order; every +, -, *, / and sqrt below is a
 *    round-to-nearest intrinsic (__dadd_rn, __dmul_rn, ...), which nvcc never
 *    fuses into a multiply-add, as the host compiler (no -mfma) never does.
 *    llround is C's llround on both sides.
 *  - Phase A and phase B are per lane and read only the state at t (A) or
 *    their own lane's decisions (B): a thread per lane computes what the CPU
 *    loop computes for that lane.
 *  - Phase C, the only order-dependent rule, is serial on the CPU in
 *    ascending incoming lane id. Contenders for a target lane t all come
 *    from lanes whose arc ends at the vertex t's arc starts from, and t's
 *    entry limit is touched by no one else; so the rule restricted to one
 *    junction vertex, with its incoming lanes visited in ascending id, is
 *    the CPU's rule. A thread per junction vertex with a contender does it
 *    (the arcs into a vertex, ascending, come from a reverse CSR built once);
 *    the vertices are found by the phase-A threads of the contenders (an
 *    atomic stamp per vertex, a worklist), so no sort is needed and the
 *    worklist's order does not matter. Entrants are appended to their target
 *    lanes after phase B, again per vertex in ascending incoming lane id,
 *    which is the CPU's entrant order for each target lane.
 *  - Every counter and aggregate is an integer (atomics commute).
 *
 * Per step: phase A (+ the fronts' fates that need no junction rule), the
 * junction kernel, phase B with the commit, the entrants, the per-arc
 * aggregates and a one-thread tail (updates += running, worklist reset):
 * six launches on one stream, no host round trip.
 *
 * Memory on the device: per vehicle its 56-byte record plus 8 bytes of
 * step scratch (new position and speed, int32 each); per lane 4 (head) + 4 (count) + 8
 * (slot offset) + 4 (capacity) + 4 (arc) + 4 (target lane) + 4 (front) +
 * 1 (fate) + 8 (front's new position) + 8 + 4 (entry limit and its stamp)
 * bytes and 4 per slot; per arc 4 + 4 + 4 (tail, length, speed) + 8 (first
 * lane) + 20 (aggregates) + 4 (reverse CSR); per vertex 8 + 8 + 4 + 4 (CSR,
 * reverse CSR, stamp, worklist). Routes: 4 bytes per route arc. */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/check.cuh"
#include "cuda/gateway.h"
#include "traffic/veh.h"

namespace {

enum { F_STAY = 0, F_ENTER, F_HELD, F_ARRIVE, F_DEADEND, F_GRIDLOCK, F_CONTEND };
constexpr int64_t BIG = (int64_t)1 << 62;
constexpr uint32_t NONE = UINT32_MAX;
typedef unsigned long long ull;

struct K {
  uint64_t nl;
  const uint64_t *off;
  const uint32_t *tgt, *tail;
  const uint64_t *in_off;
  const uint32_t *in_arc;
  const int32_t *len_mm, *v0_mms;
  const uint64_t *lane0, *slot0;
  const uint32_t *cap, *lane_arc;
  wg__veh *veh;
  int32_t *np;
  int32_t *nv;
  uint32_t *head, *cnt, *slots;
  const uint32_t *route;
  uint32_t *agg_exits;
  ull *agg_count, *agg_speed;
  ull *ctr;
  uint32_t *ftl, *front;
  uint8_t *fate;
  int64_t *feff, *lim;
  uint32_t *lim_at, *vstamp, *work, *nwork;
  double accel, decel, headway_s, min_gap_m, step_s;
  int64_t s0_mm, len_veh_mm, dt_ms;
  uint32_t lim_steps;
  uint64_t seed;
};

__device__ __forceinline__ uint32_t lane_at(const K &k, uint64_t l, uint32_t i) {
  uint32_t j = k.head[l] + i;
  if (j >= k.cap[l]) j -= k.cap[l];
  return k.slots[k.slot0[l] + j];
}

__device__ __forceinline__ int64_t lane_room(const K &k, uint64_t l) {
  const uint32_t c = k.cnt[l];
  if (c == 0) return BIG;
  return (int64_t)k.veh[lane_at(k, l, c - 1)].pos - k.len_veh_mm;
}

__device__ uint64_t best_lane(const K &k, uint32_t a) {
  uint64_t best = k.lane0[a];
  int64_t room = lane_room(k, best);
  for (uint64_t l = best + 1; l < k.lane0[a + 1]; l++) {
    const int64_t r = lane_room(k, l);
    if (r > room) best = l, room = r;
  }
  return best;
}

__device__ __forceinline__ uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* sim.c's next_arc_of, for a vehicle whose arc, hops and route are set. */
__device__ uint32_t next_arc_of(const K &k, const wg__veh &v, uint32_t vid) {
  if (v.kind != VK_WALKER)
    return v.route_idx + 1 < v.route_len ? k.route[v.route_first + v.route_idx + 1] : NONE;
  const uint32_t h = k.tgt[v.arc], back = k.tail[v.arc];
  const uint64_t lo = k.off[h], hi = k.off[h + 1];
  if (lo == hi) return NONE;
  uint64_t options = 0;
  for (uint64_t e = lo; e < hi; e++) options += k.tgt[e] != back;
  if (options == 0) return (uint32_t)lo;
  const uint64_t r = mix64(k.seed ^ mix64(((uint64_t)vid << 32) | v.hops));
  uint64_t pick = __umul64hi(r, options); /* wg__bounded */
  for (uint64_t e = lo; e < hi; e++)
    if (k.tgt[e] != back && pick-- == 0) return (uint32_t)e;
  return NONE;
}

/* sim.c's idm(), operation for operation. */
__device__ double idm(const K &k, double v, double v0, double gap, double dv) {
  const double r = __ddiv_rn(v, v0), r2 = __dmul_rn(r, r);
  const double free_term = __dsub_rn(1.0, __dmul_rn(r2, r2));
  if (gap <= 0) return __dmul_rn(k.accel, free_term);
  double dyn = __dadd_rn(__dmul_rn(v, k.headway_s),
                         __ddiv_rn(__dmul_rn(v, dv),
                                   __dmul_rn(2.0, __dsqrt_rn(__dmul_rn(k.accel, k.decel)))));
  if (dyn < 0) dyn = 0;
  const double q = __ddiv_rn(__dadd_rn(k.min_gap_m, dyn), gap);
  return __dmul_rn(k.accel, __dsub_rn(free_term, __dmul_rn(q, q)));
}

/* Phase A for one lane, then the front's fate where no junction rule is
 * needed; a front passing its arc's end towards a next arc is a contender
 * and puts the junction vertex on the worklist. A team of 2^team_log
 * threads takes a lane, vehicle i to thread i mod the team: each vehicle
 * reads only the last step's state (its own and its leader's), so the
 * lane's vehicles are independent and a long queue no longer holds the
 * step back. */
__global__ void k_phase_a(K k, uint32_t stamp, uint32_t team_log) {
  const uint64_t g = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  const uint64_t l = g >> team_log;
  const uint32_t t = (uint32_t)(g & ((1u << team_log) - 1)), team = 1u << team_log;
  if (l >= k.nl) return;
  if (t == 0) k.fate[l] = F_STAY;
  const uint32_t n = k.cnt[l];
  if (n <= t) return;
  const uint32_t arc = k.lane_arc[l];
  const double dt = k.step_s, v0 = __ddiv_rn((double)k.v0_mms[arc], 1000.0);
  const int32_t v0i = k.v0_mms[arc];
  uint32_t vid0 = NONE;
  for (uint32_t i = t; i < n; i += team) {
    const uint32_t vid = lane_at(k, l, i);
    const wg__veh v = k.veh[vid];
    double gap = 0, dv = 0;
    const double vm = __ddiv_rn((double)v.v, 1000.0);
    if (i > 0) {
      const wg__veh &a = k.veh[lane_at(k, l, i - 1)];
      gap = __ddiv_rn((double)((int64_t)a.pos - k.len_veh_mm - v.pos), 1000.0);
      dv = __dsub_rn(vm, __ddiv_rn((double)a.v, 1000.0));
    } else {
      vid0 = vid;
      k.ftl[l] = NONE;
      if (v.next_arc != NONE) {
        const uint64_t t = best_lane(k, v.next_arc);
        k.ftl[l] = (uint32_t)t;
        if (k.cnt[t]) {
          const wg__veh &a = k.veh[lane_at(k, t, k.cnt[t] - 1)];
          gap = __ddiv_rn(
              (double)((int64_t)k.len_mm[arc] - v.pos + a.pos - k.len_veh_mm), 1000.0);
          dv = __dsub_rn(vm, __ddiv_rn((double)a.v, 1000.0));
          if (gap < 0.001) gap = 0.001;
        }
      }
    }
    if (i > 0 && gap < 0.001) gap = 0.001;
    const double acc = idm(k, vm, v0, gap, dv);
    double vn = __dadd_rn(vm, __dmul_rn(acc, dt)), dx;
    if (vn < 0) {
      dx = acc < 0 ? __ddiv_rn(-__dmul_rn(vm, vm), __dmul_rn(2.0, acc)) : 0;
      vn = 0;
    } else {
      dx = __ddiv_rn(__dmul_rn(__dadd_rn(vm, vn), dt), 2.0);
    }
    if (dx > 1e6) dx = 1e6;
    long long vi = llround(__dmul_rn(vn, 1000.0));
    if (vi > v0i) vi = v0i;
    k.np[vid] = (int32_t)(v.pos + (int64_t)llround(__dmul_rn(dx, 1000.0)));
    k.nv[vid] = (int32_t)vi;
  }
  if (t != 0) return;
  /* the front (this thread's vehicle 0): sim.c's phase_c up to the
   * junction rule */
  const wg__veh &v = k.veh[vid0];
  const int64_t L = k.len_mm[arc], np = k.np[vid0];
  k.front[l] = vid0;
  k.feff[l] = np;
  if (np < L) {
    if (k.nv[vid0] == 0 && v.wait + 1 >= k.lim_steps) k.fate[l] = F_GRIDLOCK;
    return;
  }
  if (v.next_arc == NONE) {
    k.fate[l] = v.kind == VK_WALKER ? F_DEADEND : F_ARRIVE;
    return;
  }
  k.fate[l] = F_CONTEND;
  const uint32_t h = k.tgt[arc];
  if (atomicExch(&k.vstamp[h], stamp) != stamp) k.work[atomicAdd(k.nwork, 1u)] = h;
}

/* Phase C at the junction vertices with contenders: the CPU's rule, in
 * ascending incoming lane id. */
__global__ void k_junction(K k, uint32_t stamp) {
  const uint32_t nw = *k.nwork;
  for (uint32_t w = blockIdx.x * blockDim.x + threadIdx.x; w < nw; w += gridDim.x * blockDim.x) {
    const uint32_t h = k.work[w];
    for (uint64_t i = k.in_off[h]; i < k.in_off[h + 1]; i++) {
      const uint32_t a = k.in_arc[i];
      const int64_t L = k.len_mm[a];
      for (uint64_t l = k.lane0[a]; l < k.lane0[a + 1]; l++) {
        if (k.fate[l] != F_CONTEND) continue;
        const uint32_t vid = k.front[l];
        const wg__veh &v = k.veh[vid];
        const uint64_t t = k.ftl[l];
        if (k.lim_at[t] != stamp) {
          k.lim_at[t] = stamp;
          k.lim[t] = k.cnt[t] ? (int64_t)k.veh[lane_at(k, t, k.cnt[t] - 1)].pos -
                                    k.len_veh_mm - k.s0_mm
                              : BIG;
        }
        int64_t p = k.np[vid] - L;
        if (p > k.lim[t]) p = k.lim[t];
        if (p > k.len_mm[v.next_arc]) p = k.len_mm[v.next_arc];
        if (p >= 0) {
          k.fate[l] = F_ENTER;
          k.lim[t] = p - k.len_veh_mm - k.s0_mm;
          k.feff[l] = L + p;
          k.np[vid] = (int32_t)(L + p);
          if (k.nv[vid] > k.v0_mms[v.next_arc]) k.nv[vid] = k.v0_mms[v.next_arc];
        } else {
          k.np[vid] = (int32_t)L;
          k.nv[vid] = 0;
          k.feff[l] = L;
          k.fate[l] = v.wait + 1 >= k.lim_steps ? F_GRIDLOCK : F_HELD;
        }
      }
    }
  }
}

/* Phase B and the commit of one lane, then what its front's fate implies
 * (sim.c's phase_b_commit and the loop around it in step_once), by a team
 * of 2^team_log threads as phase A (Monaco, 20000 trips, H200: 0.220
 * against 0.236 s for 1200 steps with one thread walking the lane). */
__global__ void k_phase_b(K k, uint64_t step, uint32_t team_log) {
  const uint64_t g = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  const uint64_t l = g >> team_log;
  const uint32_t team = 1u << team_log, t = (uint32_t)(g & (team - 1));
  ull moved = 0;
  const uint32_t n = l < k.nl ? k.cnt[l] : 0;
  const uint32_t arc = n ? k.lane_arc[l] : 0;
  const int64_t L = n ? k.len_mm[arc] : 0;
  const int fate = n ? k.fate[l] : F_STAY;
  const bool leaves =
      fate == F_ENTER || fate == F_ARRIVE || fate == F_DEADEND || fate == F_GRIDLOCK;
  const int64_t need = k.len_veh_mm + k.s0_mm;
  /* Follower i > 0 ends at np_i' = min(np_i, L, np_{i-1}' - need) (lead_0
   * for i - 1 = 0): with d_i = min(np_i, L) + i need that is
   * c_i - i need, c_i = min(c_{i-1}, d_i), c_0 = lead_0, a prefix minimum
   * the team takes team vehicles a round (segmented shuffles: every thread
   * of the warp runs the warp's most rounds). */
  int64_t carry = leaves && fate != F_ENTER ? BIG : (n ? k.feff[l] : BIG);
  const uint32_t rounds = __reduce_max_sync(0xffffffffu, (n + team - 1) >> team_log);
  for (uint32_t r = 0; r < rounds; r++) {
    const uint32_t i = (r << team_log) + t;
    const bool has = i < n;
    uint32_t vid = 0;
    int64_t np = 0;
    int32_t nv = 0;
    int64_t d = INT64_MAX;
    if (has) {
      vid = lane_at(k, l, i);
      np = k.np[vid];
      nv = k.nv[vid];
      if (i > 0) d = (np < L ? np : L) + (int64_t)i * need;
    }
    for (uint32_t o = 1; o < team; o <<= 1) {
      const int64_t x = __shfl_up_sync(0xffffffffu, d, o, team);
      if (t >= o && x < d) d = x;
    }
    const int64_t c = carry < d ? carry : d;
    carry = __shfl_sync(0xffffffffu, c, team - 1, team);
    if (!has) continue;
    wg__veh &v = k.veh[vid];
    if (i > 0) {
      const int64_t cap = c - (int64_t)i * need;
      if (np > cap) {
        np = cap;
        const int64_t vmax = (np - v.pos) * 1000 / k.dt_ms;
        if (nv > vmax) nv = (int32_t)vmax;
      }
    }
    if (i == 0 && (fate == F_GRIDLOCK || fate == F_ARRIVE || fate == F_DEADEND)) {
      np = fate == F_GRIDLOCK ? v.pos : L;
      if (np > L) np = L;
    }
    moved += (ull)(np - v.pos);
    v.odo_mm += (uint64_t)(np - v.pos);
    if (i == 0 && leaves) continue;
    v.pos = (int32_t)np;
    v.v = nv;
    v.wait = v.v == 0 ? v.wait + 1 : 0;
  }
  if (n && t == 0) {
    const uint32_t front = lane_at(k, l, 0);
    if (leaves) {
      k.head[l] = k.head[l] + 1 == k.cap[l] ? 0 : k.head[l] + 1;
      k.cnt[l] = n - 1;
    }
    if (fate == F_ENTER) {
      atomicAdd(&k.agg_exits[arc], 1u);
    } else if (fate == F_ARRIVE || fate == F_DEADEND || fate == F_GRIDLOCK) {
      wg__veh &v = k.veh[front];
      v.state = VS_DONE;
      v.arc = NONE;
      atomicAdd(&k.ctr[WG__TC_RUNNING], (ull)-1ll);
      if (fate == F_ARRIVE) {
        atomicAdd(&k.agg_exits[arc], 1u);
        atomicAdd(&k.ctr[WG__TC_ARRIVED], 1ull);
        atomicAdd(&k.ctr[WG__TC_TRIP_STEPS], (ull)(step + 1 - v.depart_step));
        atomicAdd(&k.ctr[WG__TC_TRIP_MM], (ull)v.odo_mm);
      } else if (fate == F_DEADEND) {
        atomicAdd(&k.ctr[WG__TC_DEAD_END], 1ull);
      } else {
        atomicAdd(&k.ctr[WG__TC_GRIDLOCK], 1ull);
      }
    }
  }
  for (int o = 16; o > 0; o >>= 1) moved += __shfl_down_sync(0xffffffffu, moved, o);
  if ((threadIdx.x & 31) == 0 && moved) atomicAdd(&k.ctr[WG__TC_MOVED_MM], moved);
}

/* Entrants into their target lanes, per junction vertex in ascending
 * incoming lane id (the CPU's entrant order for each target lane). */
__global__ void k_entrants(K k) {
  const uint32_t nw = *k.nwork;
  for (uint32_t w = blockIdx.x * blockDim.x + threadIdx.x; w < nw; w += gridDim.x * blockDim.x) {
    const uint32_t h = k.work[w];
    for (uint64_t i = k.in_off[h]; i < k.in_off[h + 1]; i++) {
      const uint32_t a = k.in_arc[i];
      for (uint64_t l = k.lane0[a]; l < k.lane0[a + 1]; l++) {
        if (k.fate[l] != F_ENTER) continue;
        const uint32_t vid = k.front[l];
        const uint64_t t = k.ftl[l];
        const uint32_t ta = k.lane_arc[t];
        wg__veh v = k.veh[vid];
        v.pos = (int32_t)(k.np[vid] - k.len_mm[v.arc]);
        v.v = k.nv[vid];
        v.wait = v.v == 0 ? v.wait + 1 : 0;
        v.arc = ta;
        v.lane = (uint8_t)(t - k.lane0[ta]);
        v.route_idx++;
        v.hops++;
        v.next_arc = next_arc_of(k, v, vid);
        k.veh[vid] = v;
        if (k.cnt[t] >= k.cap[t]) {
          atomicCAS(&k.ctr[WG__TC_ERROR], 0ull, (ull)t + 1);
          continue;
        }
        uint32_t j = k.head[t] + k.cnt[t];
        if (j >= k.cap[t]) j -= k.cap[t];
        k.slots[k.slot0[t] + j] = vid;
        k.cnt[t]++;
      }
    }
  }
}

/* The end of a step: the updates counted, the worklist emptied. */
__device__ __forceinline__ void step_tail(const K &k) {
  k.ctr[WG__TC_UPDATES] += k.ctr[WG__TC_RUNNING];
  *k.nwork = 0;
}

/* A team a lane, as phase A; integer sums, so the order of the atomics
 * does not change them. */
__global__ void k_aggregate(K k, uint32_t team_log) {
  const uint64_t g = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  /* the step's tail here, one launch fewer a step: the kernels before
   * changed the running count and read the worklist's size for the last
   * time */
  if (g == 0) step_tail(k);
  const uint64_t l = g >> team_log;
  const uint32_t t = (uint32_t)(g & ((1u << team_log) - 1)), team = 1u << team_log;
  if (l >= k.nl) return;
  const uint32_t n = k.cnt[l];
  if (n <= t) return;
  const uint32_t arc = k.lane_arc[l];
  ull sum = 0;
  for (uint32_t i = t; i < n; i += team) sum += (ull)k.veh[lane_at(k, l, i)].v;
  if (t == 0) atomicAdd(&k.agg_count[arc], (ull)n);
  if (sum) atomicAdd(&k.agg_speed[arc], sum);
}

/* A step with no lanes: the tail alone. */
__global__ void k_tail(K k) { step_tail(k); }

/* Departures (sim.c's insert_at_entry for a queue of vehicles): a thread
 * per first arc takes that arc's vehicles in queue order and stops at the
 * first without room (nothing changes on a refusal, so no later one of the
 * same arc has room). Arcs are independent: a departure touches only its
 * first arc's lanes and its own record. */
__global__ void k_depart(K k, const uint32_t *ids, const uint32_t *next, const uint32_t *heads,
                         const uint32_t *head_arc, uint32_t nheads, uint32_t step, int at_speed,
                         uint8_t *went) {
  const uint32_t g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= nheads) return;
  const uint32_t arc = head_arc[g];
  ull in = 0;
  for (uint32_t i = heads[g]; i != NONE; i = next[i]) {
    const uint32_t vid = ids[i];
    const uint64_t l = best_lane(k, arc);
    const int64_t room = lane_room(k, l);
    if (room < k.s0_mm || k.cnt[l] >= k.cap[l]) break;
    wg__veh v = k.veh[vid];
    v.arc = arc;
    v.lane = (uint8_t)(l - k.lane0[arc]);
    v.pos = 0;
    v.v = 0;
    if (at_speed) {
      const double need =
          __dadd_rn(k.min_gap_m, __dmul_rn(__ddiv_rn((double)k.v0_mms[arc], 1000.0), k.headway_s));
      if (room >= (int64_t)llround(__dmul_rn(need, 1000.0))) v.v = k.v0_mms[arc];
    }
    v.state = VS_RUNNING;
    v.depart_step = step;
    v.wait = 0;
    v.next_arc = next_arc_of(k, v, vid);
    k.veh[vid] = v;
    uint32_t j = k.head[l] + k.cnt[l];
    if (j >= k.cap[l]) j -= k.cap[l];
    k.slots[k.slot0[l] + j] = vid;
    k.cnt[l]++;
    went[i] = 1;
    in++;
  }
  if (in) atomicAdd(&k.ctr[WG__TC_RUNNING], in);
}

template <typename T>
cudaError_t dev_alloc(T **p, uint64_t count, uint64_t *bytes) {
  const uint64_t b = (count ? count : 1) * sizeof(T);
  *bytes += b;
  return cudaMalloc((void **)p, b);
}

template <typename T>
cudaError_t up(T *dst, const T *src, uint64_t count, cudaStream_t s) {
  return count ? cudaMemcpyAsync(dst, src, count * sizeof(T), cudaMemcpyHostToDevice, s)
               : cudaSuccess;
}

template <typename T>
cudaError_t down(T *dst, const T *src, uint64_t count, cudaStream_t s) {
  return count ? cudaMemcpyAsync(dst, src, count * sizeof(T), cudaMemcpyDeviceToHost, s)
               : cudaSuccess;
}

} // namespace

struct wg__cuda_traffic {
  int device;
  cudaStream_t stream;
  uint32_t n;
  uint64_t m, nl, nslots;
  uint64_t capveh, caproute;
  uint64_t dev_nveh, dev_nroute; /* records and route arcs the device holds */
  /* departures' buffers */
  uint32_t *d_ids, *d_next, *d_heads, *d_harc;
  uint8_t *d_went;
  uint64_t capdep, capheads;
  int grid_work;
  uint32_t team_log; /* threads a lane in phases A and B and the aggregates: 2^team_log */
  uint64_t bytes_net, bytes_veh;
  K k;
  /* owned device arrays not in K as const */
  uint64_t *off, *in_off, *lane0, *slot0;
  uint32_t *tgt, *tail, *in_arc, *cap, *lane_arc, *route;
  int32_t *len_mm, *v0_mms;
  /* a re-routing round on the device (wg__cuda_traffic_round_*): the picked
   * trips' vehicle, kept-from index, origin, destination, and the router's
   * vertex paths (first, vertices: 0 refused) */
  uint64_t r_nq, r_nverts, r_capverts;
  uint32_t *r_who, *r_keep, *r_orig, *r_dest, *r_plen, *r_verts;
  uint64_t *r_pfirst;
};

static void free_all(wg__cuda_traffic *h) {
  void *p[] = {h->off,      h->in_off,     h->lane0,       h->slot0,       h->tgt,
               h->tail,     h->in_arc,     h->cap,         h->lane_arc,    h->route,
               h->len_mm,   h->v0_mms,     h->k.veh,       h->k.np,        h->k.nv,
               h->k.head,   h->k.cnt,      h->k.slots,     h->k.agg_exits, h->k.agg_count,
               h->k.agg_speed, h->k.ctr,   h->k.ftl,       h->k.front,     h->k.fate,
               h->k.feff,   h->k.lim,      h->k.lim_at,    h->k.vstamp,    h->k.work,
               h->k.nwork,  h->d_ids,      h->d_next,      h->d_heads,     h->d_harc,
               h->d_went,   h->r_who,      h->r_keep,      h->r_orig,      h->r_dest,
               h->r_plen,   h->r_verts,    h->r_pfirst};
  for (size_t i = 0; i < sizeof p / sizeof *p; i++)
    if (p[i]) cudaFree(p[i]);
}

extern "C" wg_status wg__cuda_traffic_create(const wg__cuda_traffic_net *net,
                                             wg__cuda_traffic **out, char *why,
                                             size_t why_cap) {
  wg_status st = WG_OK;
  *out = NULL;
  wg__cuda_traffic *h = (wg__cuda_traffic *)calloc(1, sizeof *h);
  if (!h) {
    snprintf(why, why_cap, "out of host memory");
    return WG_ENOMEM;
  }
  h->device = net->device;
  h->n = net->n;
  h->m = net->m;
  h->nl = net->nl;
  h->nslots = net->nslots;
  uint64_t *nb = &h->bytes_net;
  const uint64_t n1 = (uint64_t)net->n + 1;
  int sms = 0;
  K &k = h->k;
  WG_CK(cudaSetDevice(net->device));
  WG_CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, net->device));
  /* the junction worklist holds each vertex at most once a step: blocks
   * beyond n / 128 would only launch and leave (Monaco, H200: the two
   * worklist kernels took ~28 us a step at SMs x 8 blocks) */
  h->grid_work = sms * 8;
  if ((uint64_t)h->grid_work * 128 > (uint64_t)net->n + 127)
    h->grid_work = (int)(((uint64_t)net->n + 127) / 128);
  if (h->grid_work < 1) h->grid_work = 1;
  /* Teams of up to 8 threads a lane while the lanes' threads still fit in
   * one wave of the GPU (2048 resident threads an SM): there the extra
   * threads cost nothing and a congested lane's queue is walked 8x
   * shorter (Monaco, 5000 trips, H200: 0.101 against 0.117 s for 1200
   * steps); beyond it they are real work (the 2M-vertex network with 1
   * thread a lane: 0.72 s against 0.93 s for 300 steps with 8). */
  h->team_log = 0;
  while (h->team_log < 3 && (net->nl << (h->team_log + 1)) <= (uint64_t)sms * 2048) h->team_log++;
  WG_CK(cudaStreamCreateWithFlags(&h->stream, cudaStreamNonBlocking));
  WG_CK(dev_alloc(&h->off, n1, nb));
  WG_CK(dev_alloc(&h->in_off, n1, nb));
  WG_CK(dev_alloc(&h->tgt, net->m, nb));
  WG_CK(dev_alloc(&h->tail, net->m, nb));
  WG_CK(dev_alloc(&h->in_arc, net->m, nb));
  WG_CK(dev_alloc(&h->len_mm, net->m, nb));
  WG_CK(dev_alloc(&h->v0_mms, net->m, nb));
  WG_CK(dev_alloc(&h->lane0, net->m + 1, nb));
  WG_CK(dev_alloc(&h->slot0, net->nl, nb));
  WG_CK(dev_alloc(&h->cap, net->nl, nb));
  WG_CK(dev_alloc(&h->lane_arc, net->nl, nb));
  WG_CK(dev_alloc(&k.head, net->nl, nb));
  WG_CK(dev_alloc(&k.cnt, net->nl, nb));
  WG_CK(dev_alloc(&k.slots, net->nslots, nb));
  WG_CK(dev_alloc(&k.agg_exits, net->m, nb));
  WG_CK(dev_alloc(&k.agg_count, net->m, nb));
  WG_CK(dev_alloc(&k.agg_speed, net->m, nb));
  WG_CK(dev_alloc(&k.ctr, WG__TC_N, nb));
  WG_CK(dev_alloc(&k.ftl, net->nl, nb));
  WG_CK(dev_alloc(&k.front, net->nl, nb));
  WG_CK(dev_alloc(&k.fate, net->nl, nb));
  WG_CK(dev_alloc(&k.feff, net->nl, nb));
  WG_CK(dev_alloc(&k.lim, net->nl, nb));
  WG_CK(dev_alloc(&k.lim_at, net->nl, nb));
  WG_CK(dev_alloc(&k.vstamp, net->n, nb));
  WG_CK(dev_alloc(&k.work, net->n, nb));
  WG_CK(dev_alloc(&k.nwork, 1, nb));
  WG_CK(up(h->off, net->off, n1, h->stream));
  WG_CK(up(h->in_off, net->in_off, n1, h->stream));
  WG_CK(up(h->tgt, net->tgt, net->m, h->stream));
  WG_CK(up(h->tail, net->tail, net->m, h->stream));
  WG_CK(up(h->in_arc, net->in_arc, net->m, h->stream));
  WG_CK(up(h->len_mm, net->len_mm, net->m, h->stream));
  WG_CK(up(h->v0_mms, net->v0_mms, net->m, h->stream));
  WG_CK(up(h->lane0, net->lane0, net->m + 1, h->stream));
  WG_CK(up(h->slot0, net->slot0, net->nl, h->stream));
  WG_CK(up(h->cap, net->cap, net->nl, h->stream));
  WG_CK(up(h->lane_arc, net->lane_arc, net->nl, h->stream));
  WG_CK(cudaMemsetAsync(k.lim_at, 0, (net->nl ? net->nl : 1) * 4, h->stream));
  WG_CK(cudaMemsetAsync(k.vstamp, 0, (net->n ? net->n : 1) * 4, h->stream));
  WG_CK(cudaMemsetAsync(k.nwork, 0, 4, h->stream));
  WG_CK(cudaMemsetAsync(k.ctr, 0, WG__TC_N * 8, h->stream));
  WG_CK(cudaStreamSynchronize(h->stream));
  k.nl = net->nl;
  k.off = h->off;
  k.tgt = h->tgt;
  k.tail = h->tail;
  k.in_off = h->in_off;
  k.in_arc = h->in_arc;
  k.len_mm = h->len_mm;
  k.v0_mms = h->v0_mms;
  k.lane0 = h->lane0;
  k.slot0 = h->slot0;
  k.cap = h->cap;
  k.lane_arc = h->lane_arc;
  k.accel = net->accel;
  k.decel = net->decel;
  k.headway_s = net->headway_s;
  k.min_gap_m = net->min_gap_m;
  k.step_s = net->step_s;
  k.s0_mm = net->s0_mm;
  k.len_veh_mm = net->len_veh_mm;
  k.dt_ms = net->dt_ms;
  k.lim_steps = net->lim_steps;
  k.seed = net->seed;
  *out = h;
  return WG_OK;
done:
  if (h->stream) cudaStreamDestroy(h->stream);
  free_all(h);
  free(h);
  return st;
}

extern "C" void wg__cuda_traffic_destroy(wg__cuda_traffic *h) {
  if (!h) return;
  cudaSetDevice(h->device);
  if (h->stream) {
    cudaStreamSynchronize(h->stream);
    cudaStreamDestroy(h->stream);
  }
  free_all(h);
  free(h);
}

extern "C" wg_status wg__cuda_traffic_upload(wg__cuda_traffic *h, const wg__cuda_traffic_state *s,
                                             int with_routes, char *why, size_t why_cap) {
  wg_status st = WG_OK;
  K &k = h->k;
  uint64_t scratch = 0;
  WG_CK(cudaSetDevice(h->device));
  if (s->nveh > h->capveh) {
    WG_CK(cudaStreamSynchronize(h->stream));
    uint64_t cap = h->capveh ? h->capveh : 1024;
    while (cap < s->nveh) cap *= 2;
    cudaFree(k.veh);
    cudaFree(k.np);
    cudaFree(k.nv);
    k.veh = NULL, k.np = NULL, k.nv = NULL;
    h->capveh = 0;
    h->bytes_veh = 0;
    WG_CK(dev_alloc(&k.veh, cap, &h->bytes_veh));
    WG_CK(dev_alloc(&k.np, cap, &h->bytes_veh));
    WG_CK(dev_alloc(&k.nv, cap, &h->bytes_veh));
    h->capveh = cap;
  }
  if (with_routes && s->nroute > h->caproute) {
    WG_CK(cudaStreamSynchronize(h->stream));
    uint64_t cap = h->caproute ? h->caproute : 4096;
    while (cap < s->nroute) cap *= 2;
    cudaFree(h->route);
    h->route = NULL;
    h->caproute = 0;
    WG_CK(dev_alloc(&h->route, cap, &scratch));
    h->caproute = cap;
    k.route = h->route;
  }
  WG_CK(up(k.veh, (const wg__veh *)s->veh, s->nveh, h->stream));
  WG_CK(up(k.head, s->head, h->nl, h->stream));
  WG_CK(up(k.cnt, s->cnt, h->nl, h->stream));
  WG_CK(up(k.slots, s->slots, h->nslots, h->stream));
  WG_CK(up(k.agg_exits, s->agg_exits, h->m, h->stream));
  WG_CK(up(k.agg_count, (const ull *)s->agg_count, h->m, h->stream));
  WG_CK(up(k.agg_speed, (const ull *)s->agg_speed, h->m, h->stream));
  WG_CK(up(k.ctr, (const ull *)s->counters, (uint64_t)WG__TC_N, h->stream));
  if (with_routes) WG_CK(up(h->route, s->route, s->nroute, h->stream));
  h->dev_nveh = s->nveh;
  if (with_routes) h->dev_nroute = s->nroute;
  /* the host's arrays may change once this returns */
  WG_CK(cudaStreamSynchronize(h->stream));
done:
  return st;
}

extern "C" wg_status wg__cuda_traffic_download(wg__cuda_traffic *h, wg__cuda_traffic_state *s,
                                               char *why, size_t why_cap) {
  wg_status st = WG_OK;
  K &k = h->k;
  WG_CK(cudaSetDevice(h->device));
  WG_CK(down((wg__veh *)s->veh, k.veh, s->nveh, h->stream));
  WG_CK(down(s->head, k.head, h->nl, h->stream));
  WG_CK(down(s->cnt, k.cnt, h->nl, h->stream));
  WG_CK(down(s->slots, k.slots, h->nslots, h->stream));
  WG_CK(down(s->agg_exits, k.agg_exits, h->m, h->stream));
  WG_CK(down((ull *)s->agg_count, k.agg_count, h->m, h->stream));
  WG_CK(down((ull *)s->agg_speed, k.agg_speed, h->m, h->stream));
  WG_CK(down((ull *)s->counters, k.ctr, (uint64_t)WG__TC_N, h->stream));
  WG_CK(cudaStreamSynchronize(h->stream));
done:
  return st;
}

extern "C" wg_status wg__cuda_traffic_counters(wg__cuda_traffic *h, uint64_t *counters,
                                               char *why, size_t why_cap) {
  wg_status st = WG_OK;
  WG_CK(cudaSetDevice(h->device));
  WG_CK(down((ull *)counters, h->k.ctr, (uint64_t)WG__TC_N, h->stream));
  WG_CK(cudaStreamSynchronize(h->stream));
done:
  return st;
}

extern "C" wg_status wg__cuda_traffic_step(wg__cuda_traffic *h, uint64_t step, char *why,
                                           size_t why_cap) {
  wg_status st = WG_OK;
  const uint32_t stamp = (uint32_t)(step + 1) ? (uint32_t)(step + 1) : 1;
  const unsigned threads = 256;
  const unsigned team_grid =
      (unsigned)(((h->nl << h->team_log) + threads - 1) / threads);
  WG_CK(cudaSetDevice(h->device));
  if (h->nl == 0) {
    k_tail<<<1, 1, 0, h->stream>>>(h->k);
    WG_CK(cudaGetLastError());
    goto done;
  }
  k_phase_a<<<team_grid, threads, 0, h->stream>>>(h->k, stamp, h->team_log);
  k_junction<<<h->grid_work, 128, 0, h->stream>>>(h->k, stamp);
  k_phase_b<<<team_grid, threads, 0, h->stream>>>(h->k, step, h->team_log);
  k_entrants<<<h->grid_work, 128, 0, h->stream>>>(h->k);
  k_aggregate<<<team_grid, threads, 0, h->stream>>>(h->k, h->team_log);
  WG_CK(cudaGetLastError());
done:
  return st;
}

/* Grows a device array to hold `want` elements, keeping its first `keep`. */
template <typename T>
static cudaError_t grow_keep(T **p, uint64_t *cap, uint64_t want, uint64_t keep,
                             uint64_t *bytes, cudaStream_t stream) {
  if (want <= *cap) return cudaSuccess;
  uint64_t c = *cap ? *cap : 1024;
  while (c < want) c *= 2;
  T *q = NULL;
  cudaError_t e = cudaMalloc((void **)&q, c * sizeof(T));
  if (e != cudaSuccess) return e;
  if (keep && (e = cudaMemcpyAsync(q, *p, keep * sizeof(T), cudaMemcpyDeviceToDevice, stream)) !=
                  cudaSuccess) {
    cudaFree(q);
    return e;
  }
  if ((e = cudaStreamSynchronize(stream)) != cudaSuccess) {
    cudaFree(q);
    return e;
  }
  cudaFree(*p);
  *p = q;
  if (bytes) *bytes += (c - *cap) * sizeof(T);
  *cap = c;
  return cudaSuccess;
}

extern "C" wg_status wg__cuda_traffic_depart(wg__cuda_traffic *h,
                                             const wg__cuda_traffic_state *s, uint64_t veh_from,
                                             uint64_t route_from, const uint32_t *ids,
                                             const uint32_t *next, uint64_t n,
                                             const uint32_t *heads, const uint32_t *head_arc,
                                             uint64_t nheads, uint64_t step, int at_speed,
                                             uint8_t *went_in, char *why, size_t why_cap) {
  wg_status st = WG_OK;
  K &k = h->k;
  WG_CK(cudaSetDevice(h->device));
  if (veh_from > h->dev_nveh || route_from > h->dev_nroute || n >= NONE) {
    snprintf(why, why_cap, "departures: vehicles from %llu (device holds %llu), routes from "
             "%llu (device holds %llu), %llu departures",
             (unsigned long long)veh_from, (unsigned long long)h->dev_nveh,
             (unsigned long long)route_from, (unsigned long long)h->dev_nroute,
             (unsigned long long)n);
    return WG_EINVAL;
  }
  if (s->nveh > h->capveh) {
    uint64_t cap = h->capveh, cap2 = h->capveh, cap3 = h->capveh;
    WG_CK(grow_keep(&k.veh, &cap, s->nveh, veh_from, &h->bytes_veh, h->stream));
    WG_CK(grow_keep(&k.np, &cap2, s->nveh, 0, &h->bytes_veh, h->stream));
    WG_CK(grow_keep(&k.nv, &cap3, s->nveh, 0, &h->bytes_veh, h->stream));
    h->capveh = cap;
  }
  if (s->nroute > h->caproute) {
    WG_CK(grow_keep(&h->route, &h->caproute, s->nroute, route_from, NULL, h->stream));
    k.route = h->route;
  }
  if (s->nveh > veh_from)
    WG_CK(up(k.veh + veh_from, (const wg__veh *)s->veh + veh_from, s->nveh - veh_from,
             h->stream));
  if (s->nroute > route_from)
    WG_CK(up(h->route + route_from, s->route + route_from, s->nroute - route_from, h->stream));
  h->dev_nveh = s->nveh;
  h->dev_nroute = s->nroute;
  if (n) {
    if (n > h->capdep) {
      WG_CK(cudaStreamSynchronize(h->stream));
      cudaFree(h->d_ids), cudaFree(h->d_next), cudaFree(h->d_went);
      h->d_ids = h->d_next = NULL, h->d_went = NULL, h->capdep = 0;
      uint64_t c = 1024, b = 0;
      while (c < n) c *= 2;
      WG_CK(dev_alloc(&h->d_ids, c, &b));
      WG_CK(dev_alloc(&h->d_next, c, &b));
      WG_CK(dev_alloc(&h->d_went, c, &b));
      h->capdep = c;
    }
    if (nheads > h->capheads) {
      WG_CK(cudaStreamSynchronize(h->stream));
      cudaFree(h->d_heads), cudaFree(h->d_harc);
      h->d_heads = h->d_harc = NULL, h->capheads = 0;
      uint64_t c = 1024, b = 0;
      while (c < nheads) c *= 2;
      WG_CK(dev_alloc(&h->d_heads, c, &b));
      WG_CK(dev_alloc(&h->d_harc, c, &b));
      h->capheads = c;
    }
    WG_CK(up(h->d_ids, ids, n, h->stream));
    WG_CK(up(h->d_next, next, n, h->stream));
    WG_CK(up(h->d_heads, heads, nheads, h->stream));
    WG_CK(up(h->d_harc, head_arc, nheads, h->stream));
    WG_CK(cudaMemsetAsync(h->d_went, 0, n, h->stream));
    if (nheads) {
      k_depart<<<(unsigned)((nheads + 127) / 128), 128, 0, h->stream>>>(
          k, h->d_ids, h->d_next, h->d_heads, h->d_harc, (uint32_t)nheads, (uint32_t)step,
          at_speed, h->d_went);
      WG_CK(cudaGetLastError());
    }
    WG_CK(down(went_in, h->d_went, n, h->stream));
  }
  WG_CK(cudaStreamSynchronize(h->stream));
done:
  return st;
}

extern "C" void wg__cuda_traffic_bytes(const wg__cuda_traffic *h, uint64_t *net,
                                       uint64_t *per_vehicle, uint64_t *total) {
  *net = h ? h->bytes_net : 0;
  *per_vehicle = sizeof(wg__veh) + 2 * sizeof(int32_t);
  *total = h ? h->bytes_net + h->bytes_veh + h->caproute * 4 : 0;
}

/* ---- re-routing rounds on the device -----------------------------------------
 * src/traffic/routes.c's round with the state left where it is: the trips
 * that re-route are picked here (routes.c's reroute_pick, operation for
 * operation), only their origins and destinations go to the host for the
 * router, its vertex paths come back, and here they become arcs (the same
 * lower-bound look-up as wg__sim_arc) and every queued or running trip's
 * remaining route is packed into a fresh array in vehicle order, the new
 * path spliced in: the array, offsets and records the host's round makes. */
#include <cub/device/device_scan.cuh>

namespace {

struct RoundPick {
  int mode;
  double share, ahead_m;
  uint64_t seed, round;
};

/* routes.c's reroute_pick. */
__device__ int rr_pick(const K &k, const wg__veh &v, uint64_t i, const RoundPick &p,
                       uint32_t *orig, uint32_t *dest, uint32_t *keep) {
  if (v.kind != VK_TRIP || v.state != VS_RUNNING || v.next_arc == NONE) return 0;
  if (p.mode == 1 /* WG_REROUTE_SHARE */) {
    const uint64_t x = mix64(p.seed ^ mix64((i << 20) ^ p.round));
    const double u = __dmul_rn((double)(x >> 11), 1.0 / 9007199254740992.0); /* wg__unit */
    if (u >= p.share) return 0;
  }
  uint32_t to = k.tgt[k.route[v.route_first + v.route_len - 1]], from_idx = v.route_len;
  if (p.mode == 2 /* WG_REROUTE_AHEAD */) {
    double ahead = 0;
    uint32_t j = v.route_idx + 1;
    for (; j < v.route_len; j++) {
      ahead = __dadd_rn(ahead, __ddiv_rn((double)k.len_mm[k.route[v.route_first + j]], 1000.0));
      if (ahead >= p.ahead_m) break;
    }
    if (j >= v.route_len) j = v.route_len - 1;
    to = k.tgt[k.route[v.route_first + j]];
    from_idx = j + 1;
  }
  *orig = k.tgt[v.arc];
  *dest = to;
  *keep = from_idx;
  return 1;
}

__global__ void k_rr_flag(K k, uint64_t nveh, RoundPick p, uint32_t *flag) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < nveh;
       i += (uint64_t)gridDim.x * blockDim.x) {
    uint32_t o, d, f;
    flag[i] = (uint32_t)rr_pick(k, k.veh[i], i, p, &o, &d, &f);
  }
}

/* flag[i] becomes the vehicle's query index (NONE when it keeps its route). */
__global__ void k_rr_fill(K k, uint64_t nveh, RoundPick p, uint32_t *flag, const uint32_t *pos,
                          uint32_t *who, uint32_t *keep, uint32_t *orig, uint32_t *dest) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < nveh;
       i += (uint64_t)gridDim.x * blockDim.x) {
    if (!flag[i]) {
      flag[i] = NONE;
      continue;
    }
    const uint32_t q = pos[i];
    rr_pick(k, k.veh[i], i, p, &orig[q], &dest[q], &keep[q]);
    who[q] = (uint32_t)i;
    flag[i] = q;
  }
}

__global__ void k_add_u64(uint64_t *a, uint64_t n, uint64_t add) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
       i += (uint64_t)gridDim.x * blockDim.x)
    a[i] += add;
}

__global__ void k_rr_widen(const uint32_t *a, uint64_t n, uint64_t *b) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i <= n;
       i += (uint64_t)gridDim.x * blockDim.x)
    b[i] = i < n ? a[i] : 0;
}

/* The router's device answer for picked trips [q0, q0 + n) checked as
 * routes.c's wg__sim_reroute_dev checks a host answer: a trip whose origin
 * is its destination is not a query there (plen 0), an unreachable pair
 * (dist WG_ROUTE_INF), a path under 2 vertices or one not from the origin
 * to the destination is refused (plen 0: the trip keeps its route). Path i
 * is verts[off[i] .. off[i + 1]); it lands at base + off[i] of r_verts. */
__global__ void k_rr_check(uint64_t n, const uint32_t *orig, const uint32_t *dest,
                           const uint64_t *dist, const uint64_t *off, const uint32_t *verts,
                           uint64_t nverts, uint64_t base, uint32_t *plen, uint64_t *pfirst) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
       i += (uint64_t)gridDim.x * blockDim.x) {
    const uint64_t a = off[i], b = off[i + 1];
    uint32_t len = 0;
    if (orig[i] != dest[i] && (!dist || dist[i] != UINT64_MAX) && a <= b && b <= nverts &&
        b - a >= 2 && b - a <= 0xffffffffull && verts[a] == orig[i] && verts[b - 1] == dest[i])
      len = (uint32_t)(b - a);
    plen[i] = len;
    pfirst[i] = len ? base + a : 0;
  }
}

/* wg__sim_arc: the first arc u -> v among u's sorted targets. */
__device__ uint32_t arc_of(const K &k, uint32_t n, uint32_t u, uint32_t v) {
  if (u >= n || v >= n) return NONE;
  uint64_t lo = k.off[u], hi = k.off[u + 1];
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (k.tgt[mid] < v)
      lo = mid + 1;
    else
      hi = mid;
  }
  return (lo < k.off[u + 1] && k.tgt[lo] == v) ? (uint32_t)lo : NONE;
}

/* A warp per picked trip: its current arc, then its path's arcs, at
 * foff[q] of fresh; a step that is no arc refuses the path (plen 0: the
 * trip keeps its route, as routes.c's reason 4). */
__global__ void k_rr_convert(K k, uint32_t n, uint64_t nq, const uint32_t *who,
                             const uint64_t *pfirst, uint32_t *plen, const uint32_t *verts,
                             const uint64_t *foff, uint32_t *fresh, ull *refused) {
  const unsigned lane = threadIdx.x & 31;
  for (uint64_t q = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) / 32; q < nq;
       q += (uint64_t)gridDim.x * blockDim.x / 32) {
    const uint32_t len = plen[q];
    if (len < 2) continue;
    const uint32_t *path = verts + pfirst[q];
    uint32_t *out = fresh + foff[q];
    if (lane == 0) out[0] = k.veh[who[q]].arc;
    int bad = 0;
    for (uint32_t h = lane; h + 1 < len; h += 32) {
      const uint32_t a = arc_of(k, n, path[h], path[h + 1]);
      if (a == NONE) bad = 1;
      out[1 + h] = a;
    }
    if (__any_sync(0xffffffffu, bad) && lane == 0) {
      plen[q] = 0;
      atomicAdd(refused, 1ull);
    }
  }
}

/* routes.c's pack sizes: arcs of every vehicle's new remaining route
 * (sz[nveh] = 0 for the scan's total). */
__global__ void k_rr_sizes(K k, uint64_t nveh, const uint32_t *qidx, const uint32_t *plen,
                           const uint32_t *keep, uint64_t *sz) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i <= nveh;
       i += (uint64_t)gridDim.x * blockDim.x) {
    if (i == nveh) {
      sz[i] = 0;
      continue;
    }
    const wg__veh &v = k.veh[i];
    uint64_t t = 0;
    if (v.state != VS_DONE && v.kind != VK_WALKER) {
      const uint32_t q = qidx[i];
      if (q != NONE && plen[q])
        t = (uint64_t)plen[q] + (v.route_len - keep[q]);
      else
        t = v.route_len - v.route_idx;
    }
    sz[i] = t;
  }
}

/* A warp per vehicle: its new route copied to roff[i] of nroute, its record
 * pointed at it (finished trips keep no route). */
__global__ void k_rr_pack(K k, uint64_t nveh, const uint32_t *qidx, const uint32_t *plen,
                          const uint32_t *keep, const uint64_t *foff, const uint32_t *fresh,
                          const uint64_t *roff, uint32_t *nroute) {
  const unsigned lane = threadIdx.x & 31;
  for (uint64_t i = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) / 32; i < nveh;
       i += (uint64_t)gridDim.x * blockDim.x / 32) {
    wg__veh *v = &k.veh[i];
    if (v->kind == VK_WALKER) continue;
    const uint8_t state = v->state;
    const uint64_t rf = v->route_first;
    const uint32_t rl = v->route_len, ri = v->route_idx;
    __syncwarp();
    if (state == VS_DONE) {
      if (lane == 0) v->route_first = 0, v->route_len = 0, v->route_idx = 0;
      continue;
    }
    const uint64_t start = roff[i], len = roff[i + 1] - start;
    const uint32_t q = qidx[i];
    uint32_t next = NONE;
    if (q != NONE && plen[q]) {
      const uint32_t a = plen[q];
      const uint32_t *src = fresh + foff[q];
      for (uint32_t j = lane; j < a; j += 32) nroute[start + j] = src[j];
      for (uint32_t j = keep[q] + lane; j < rl; j += 32)
        nroute[start + a + (j - keep[q])] = k.route[rf + j];
      if (len > 1) next = src[1];
    } else {
      for (uint32_t j = ri + lane; j < rl; j += 32) nroute[start + (j - ri)] = k.route[rf + j];
      if (len > 1) next = k.route[rf + ri + 1];
    }
    if (lane == 0) {
      v->route_first = start;
      v->route_len = (uint32_t)len;
      v->route_idx = 0;
      if (state == VS_RUNNING) v->next_arc = next;
    }
  }
}

unsigned grid_for(uint64_t n, unsigned threads) {
  const uint64_t b = (n + threads - 1) / threads;
  return (unsigned)(b < 65535 * 16 ? (b ? b : 1) : 65535 * 16);
}

/* An exclusive sum of n items (in != out) with temporary storage. */
template <typename T>
cudaError_t scan_exclusive(const T *in, T *out, uint64_t n, cudaStream_t s) {
  size_t tb = 0;
  cudaError_t e = cub::DeviceScan::ExclusiveSum(NULL, tb, in, out, n, s);
  if (e != cudaSuccess) return e;
  void *t = NULL;
  if ((e = cudaMalloc(&t, tb ? tb : 1)) != cudaSuccess) return e;
  e = cub::DeviceScan::ExclusiveSum(t, tb, in, out, n, s);
  cudaError_t f = cudaStreamSynchronize(s);
  cudaFree(t);
  return e != cudaSuccess ? e : f;
}

void round_free(wg__cuda_traffic *h) {
  void *p[] = {h->r_who, h->r_keep, h->r_orig, h->r_dest, h->r_plen, h->r_verts, h->r_pfirst};
  for (size_t i = 0; i < sizeof p / sizeof *p; i++)
    if (p[i]) cudaFree(p[i]);
  h->r_who = h->r_keep = h->r_orig = h->r_dest = h->r_plen = h->r_verts = NULL;
  h->r_pfirst = NULL;
  h->r_nq = h->r_nverts = h->r_capverts = 0;
}

} // namespace

extern "C" wg_status wg__cuda_traffic_lane_counts(wg__cuda_traffic *h, uint32_t *cnt, char *why,
                                                  size_t why_cap) {
  wg_status st = WG_OK;
  WG_CK(cudaSetDevice(h->device));
  WG_CK(down(cnt, h->k.cnt, h->nl, h->stream));
  WG_CK(cudaStreamSynchronize(h->stream));
done:
  return st;
}

extern "C" wg_status wg__cuda_traffic_round_pick(wg__cuda_traffic *h,
                                                 const wg__cuda_traffic_pick *pk, uint64_t nveh,
                                                 uint64_t *nq, uint32_t **orig, uint32_t **dest,
                                                 char *why, size_t why_cap) {
  wg_status st = WG_OK;
  K &k = h->k;
  uint32_t last[2] = {0, 0};
  uint64_t q = 0, b = 0;
  RoundPick p = {pk->mode, pk->share, pk->ahead_m, pk->seed, pk->round};
  uint32_t *flag = (uint32_t *)k.np, *pos = (uint32_t *)k.nv; /* step scratch, free now */
  *nq = 0;
  *orig = *dest = NULL;
  WG_CK(cudaSetDevice(h->device));
  round_free(h);
  if (nveh != h->dev_nveh || nveh >= NONE) {
    snprintf(why, why_cap, "re-routing round: %llu vehicles asked, the device holds %llu",
             (unsigned long long)nveh, (unsigned long long)h->dev_nveh);
    return WG_EINVAL;
  }
  if (nveh == 0) return WG_OK;
  k_rr_flag<<<grid_for(nveh, 256), 256, 0, h->stream>>>(k, nveh, p, flag);
  WG_CK(cudaGetLastError());
  WG_CK(scan_exclusive(flag, pos, nveh, h->stream));
  WG_CK(down(&last[0], pos + nveh - 1, 1, h->stream));
  WG_CK(down(&last[1], flag + nveh - 1, 1, h->stream));
  WG_CK(cudaStreamSynchronize(h->stream));
  q = (uint64_t)last[0] + last[1];
  h->r_nq = q;
  WG_CK(dev_alloc(&h->r_who, q, &b));
  WG_CK(dev_alloc(&h->r_keep, q, &b));
  WG_CK(dev_alloc(&h->r_orig, q, &b));
  WG_CK(dev_alloc(&h->r_dest, q, &b));
  WG_CK(dev_alloc(&h->r_plen, q, &b));
  WG_CK(dev_alloc(&h->r_pfirst, q, &b));
  WG_CK(cudaMemsetAsync(h->r_plen, 0, (q ? q : 1) * 4, h->stream));
  k_rr_fill<<<grid_for(nveh, 256), 256, 0, h->stream>>>(k, nveh, p, flag, pos, h->r_who,
                                                        h->r_keep, h->r_orig, h->r_dest);
  WG_CK(cudaGetLastError());
  if (q) {
    *orig = (uint32_t *)malloc(q * 4);
    *dest = (uint32_t *)malloc(q * 4);
    if (!*orig || !*dest) {
      free(*orig), free(*dest);
      *orig = *dest = NULL;
      snprintf(why, why_cap, "re-routing round: out of host memory for %llu trips",
               (unsigned long long)q);
      st = WG_ENOMEM;
      goto done;
    }
    WG_CK(down(*orig, h->r_orig, q, h->stream));
    WG_CK(down(*dest, h->r_dest, q, h->stream));
  }
  WG_CK(cudaStreamSynchronize(h->stream));
  *nq = q;
done:
  if (st != WG_OK) {
    if (*orig) free(*orig), free(*dest);
    *orig = *dest = NULL;
    round_free(h);
  }
  return st;
}

extern "C" wg_status wg__cuda_traffic_round_paths(wg__cuda_traffic *h, uint64_t q0, uint64_t n,
                                                  const uint32_t *plen, const uint64_t *pfirst,
                                                  const uint32_t *verts, uint64_t nverts,
                                                  char *why, size_t why_cap) {
  wg_status st = WG_OK;
  const uint64_t base = h->r_nverts;
  WG_CK(cudaSetDevice(h->device));
  if (q0 > h->r_nq || n > h->r_nq - q0) {
    snprintf(why, why_cap, "re-routing round: paths for trips %llu..%llu of %llu",
             (unsigned long long)q0, (unsigned long long)(q0 + n), (unsigned long long)h->r_nq);
    return WG_EINVAL;
  }
  WG_CK(grow_keep(&h->r_verts, &h->r_capverts, base + nverts, base, NULL, h->stream));
  WG_CK(up(h->r_verts + base, verts, nverts, h->stream));
  WG_CK(up(h->r_plen + q0, plen, n, h->stream));
  WG_CK(up(h->r_pfirst + q0, pfirst, n, h->stream));
  if (n && base) {
    k_add_u64<<<grid_for(n, 256), 256, 0, h->stream>>>(h->r_pfirst + q0, n, base);
    WG_CK(cudaGetLastError());
  }
  h->r_nverts = base + nverts;
  /* the host's arrays may change once this returns */
  WG_CK(cudaStreamSynchronize(h->stream));
done:
  return st;
}

extern "C" wg_status wg__cuda_traffic_round_queries(wg__cuda_traffic *h, const uint32_t **d_orig,
                                                    const uint32_t **d_dest, uint64_t *nq) {
  *d_orig = h->r_orig;
  *d_dest = h->r_dest;
  *nq = h->r_nq;
  return WG_OK;
}

extern "C" wg_status wg__cuda_traffic_round_paths_dev(wg__cuda_traffic *h, uint64_t q0, uint64_t n,
                                                      const uint64_t *d_dist,
                                                      const uint64_t *d_off,
                                                      const uint32_t *d_verts, uint64_t nverts,
                                                      char *why, size_t why_cap) {
  wg_status st = WG_OK;
  const uint64_t base = h->r_nverts;
  WG_CK(cudaSetDevice(h->device));
  if (q0 > h->r_nq || n > h->r_nq - q0) {
    snprintf(why, why_cap, "re-routing round: paths for trips %llu..%llu of %llu",
             (unsigned long long)q0, (unsigned long long)(q0 + n), (unsigned long long)h->r_nq);
    return WG_EINVAL;
  }
  if (n && (!d_off || (nverts && !d_verts))) {
    snprintf(why, why_cap, "re-routing round: no device paths for %llu trips",
             (unsigned long long)n);
    return WG_EINVAL;
  }
  /* the router's buffers are its own (reused by its next call): the
   * vertices are copied, device to device */
  WG_CK(grow_keep(&h->r_verts, &h->r_capverts, base + nverts, base, NULL, h->stream));
  if (nverts)
    WG_CK(cudaMemcpyAsync(h->r_verts + base, d_verts, nverts * 4, cudaMemcpyDeviceToDevice,
                          h->stream));
  if (n) {
    k_rr_check<<<grid_for(n, 256), 256, 0, h->stream>>>(n, h->r_orig + q0, h->r_dest + q0, d_dist,
                                                        d_off, d_verts, nverts, base,
                                                        h->r_plen + q0, h->r_pfirst + q0);
    WG_CK(cudaGetLastError());
  }
  h->r_nverts = base + nverts;
  /* the router's buffers may change once this returns */
  WG_CK(cudaStreamSynchronize(h->stream));
done:
  return st;
}

extern "C" wg_status wg__cuda_traffic_round_splice(wg__cuda_traffic *h, uint64_t *nroute,
                                                   uint64_t *refused, char *why,
                                                   size_t why_cap) {
  wg_status st = WG_OK;
  K &k = h->k;
  const uint64_t nq = h->r_nq, nveh = h->dev_nveh;
  const uint32_t *qidx = (const uint32_t *)k.np;
  uint64_t *w = NULL, *foff = NULL, *sz = NULL, *roff = NULL, b = 0, tot[2] = {0, 0};
  uint32_t *fresh = NULL, *nr = NULL;
  ull *d_ref = NULL;
  *nroute = h->dev_nroute;
  *refused = 0;
  WG_CK(cudaSetDevice(h->device));
  /* the new paths' arcs: at foff[q] (a scan of the path lengths) of fresh */
  WG_CK(dev_alloc(&w, nq + 1, &b));
  WG_CK(dev_alloc(&foff, nq + 1, &b));
  WG_CK(dev_alloc(&d_ref, 1, &b));
  WG_CK(cudaMemsetAsync(d_ref, 0, 8, h->stream));
  k_rr_widen<<<grid_for(nq + 1, 256), 256, 0, h->stream>>>(h->r_plen, nq, w);
  WG_CK(cudaGetLastError());
  WG_CK(scan_exclusive(w, foff, nq + 1, h->stream));
  WG_CK(down(&tot[0], foff + nq, 1, h->stream));
  WG_CK(cudaStreamSynchronize(h->stream));
  cudaFree(w);
  w = NULL;
  WG_CK(dev_alloc(&fresh, tot[0], &b));
  if (nq) {
    k_rr_convert<<<grid_for(nq * 32, 256), 256, 0, h->stream>>>(
        k, h->n, nq, h->r_who, h->r_pfirst, h->r_plen, h->r_verts, foff, fresh, d_ref);
    WG_CK(cudaGetLastError());
  }
  /* every vehicle's new remaining route: sizes, offsets, the copy */
  WG_CK(dev_alloc(&sz, nveh + 1, &b));
  WG_CK(dev_alloc(&roff, nveh + 1, &b));
  k_rr_sizes<<<grid_for(nveh + 1, 256), 256, 0, h->stream>>>(k, nveh, qidx, h->r_plen,
                                                             h->r_keep, sz);
  WG_CK(cudaGetLastError());
  WG_CK(scan_exclusive(sz, roff, nveh + 1, h->stream));
  cudaFree(sz);
  sz = NULL;
  WG_CK(down(&tot[1], roff + nveh, 1, h->stream));
  WG_CK(down((ull *)refused, d_ref, 1, h->stream));
  WG_CK(cudaStreamSynchronize(h->stream));
  WG_CK(dev_alloc(&nr, tot[1], &b));
  if (nveh) {
    k_rr_pack<<<grid_for(nveh * 32, 256), 256, 0, h->stream>>>(k, nveh, qidx, h->r_plen,
                                                               h->r_keep, foff, fresh, roff, nr);
    WG_CK(cudaGetLastError());
  }
  WG_CK(cudaStreamSynchronize(h->stream));
  cudaFree(h->route);
  h->route = nr;
  k.route = nr;
  nr = NULL;
  h->caproute = tot[1] ? tot[1] : 1;
  h->dev_nroute = tot[1];
  *nroute = tot[1];
done:
  cudaFree(w);
  cudaFree(foff);
  cudaFree(sz);
  cudaFree(roff);
  cudaFree(fresh);
  cudaFree(nr);
  cudaFree(d_ref);
  round_free(h);
  return st;
}

extern "C" wg_status wg__cuda_traffic_routes_down(wg__cuda_traffic *h, uint32_t *route,
                                                  uint64_t n, char *why, size_t why_cap) {
  wg_status st = WG_OK;
  WG_CK(cudaSetDevice(h->device));
  if (n > h->dev_nroute) {
    snprintf(why, why_cap, "route arcs: %llu asked, the device holds %llu",
             (unsigned long long)n, (unsigned long long)h->dev_nroute);
    return WG_EINVAL;
  }
  WG_CK(down(route, h->route, n, h->stream));
  WG_CK(cudaStreamSynchronize(h->stream));
done:
  return st;
}
