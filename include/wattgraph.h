/* wattgraph.h: the public C API of wattgraph, one header per module.
 *
 *   core   status codes, the context, errors, logging, GPU presence
 *   graph  the host CSR graph, loaders, binary cache, generators, statistics
 *   sssp   shortest paths, the Dijkstra oracle, the verifier
 *   power  energy meters (NVML, RAPL) and the power sampler
 *   control  plain-C controllers: vSGD online models, the self-tuning delta
 *   pq     the batched priority queue (generalised heap), CPU and CUDA
 *   route  the router: hierarchy, customisation, batched routes, tables, snapping
 *   coll   reduce and allreduce across the GPUs of a host (direct, NCCL)
 *   traffic  road traffic microsimulation: IDM, junctions, routing in the loop
 *   serve  the route server: OSRM-shaped request parser, HTTP server, batches
 *
 * Conventions: public names start with wg_; handles are opaque and made by
 * *_create or a loader, freed by a NULL-safe *_destroy(&h) that clears the
 * caller's pointer; every fallible call returns wg_status (0 = success);
 * options structs are initialised with *_defaults().
 */
#ifndef WATTGRAPH_H
#define WATTGRAPH_H

#include "wattgraph/coll.h"
#include "wattgraph/control.h"
#include "wattgraph/core.h"
#include "wattgraph/graph.h"
#include "wattgraph/power.h"
#include "wattgraph/pq.h"
#include "wattgraph/route.h"
#include "wattgraph/serve.h"
#include "wattgraph/sssp.h"
#include "wattgraph/traffic.h"

#endif
