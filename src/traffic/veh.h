/* The simulator's vehicle record, shared by the CPU step (sim.c) and the
 * CUDA step (src/cuda/traffic/step.cu), which copies arrays of it as they
 * are: plain C, no C11-only constructs, so nvcc's C++ reads it too. */
#ifndef WG_TRAFFIC_VEH_H
#define WG_TRAFFIC_VEH_H

#include <stdint.h>

enum { VK_TRIP = 0, VK_WALKER = 1, VK_FIXED = 2 };
enum { VS_QUEUED = 0, VS_RUNNING = 1, VS_DONE = 2 };

/* One vehicle: 56 bytes beside its route; with the step's 8 bytes of
 * scratch (new position and speed, int32 each) 64 (docs/traffic.md). A
 * trip's destination is its route's last arc's head (not stored). */
typedef struct wg__veh {
  int32_t pos;          /* mm from the arc's start (front bumper) */
  int32_t v;            /* mm/s */
  uint32_t arc;         /* current arc, WG_SIM_NONE before departure */
  uint32_t next_arc;    /* the arc after this one, WG_SIM_NONE at the end */
  uint64_t route_first; /* into sim->route */
  uint32_t route_len;   /* arcs */
  uint32_t route_idx;   /* index of `arc` in the route */
  uint32_t wait;        /* steps standing still */
  uint32_t depart_step; /* step it entered the network */
  uint32_t hops;        /* arcs entered (walkers' random stream) */
  uint8_t lane, kind, state, pad;
  uint64_t odo_mm;      /* distance driven */
} wg__veh;

/* The counters both backends keep as integers (so sums do not depend on the
 * order vehicles are visited in): the CUDA step holds them in one device
 * array of WG__TC_N entries. */
enum {
  WG__TC_RUNNING = 0,
  WG__TC_ARRIVED,
  WG__TC_GRIDLOCK,
  WG__TC_DEAD_END,
  WG__TC_UPDATES,   /* running vehicles summed over steps */
  WG__TC_MOVED_MM,  /* distance driven by all vehicles */
  WG__TC_TRIP_STEPS, /* steps of arrived trips */
  WG__TC_TRIP_MM,   /* distance of arrived trips */
  WG__TC_ERROR,     /* CUDA step: a lane over capacity (a bug), lane id + 1 */
  WG__TC_N
};

#endif
