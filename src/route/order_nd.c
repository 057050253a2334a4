/* The router's nested-dissection order, with its top levels in parallel.
 *
 * METIS_NodeND is serial: on a 20M-arc road graph it alone took minutes.
 * Nested dissection splits a graph by a vertex separator S into parts A
 * and B with no arc between them, orders A, then B, then S (S last, so it
 * gets the highest ranks), and recurses into A and B independently. So
 * the top levels are done here: METIS_ComputeVertexSeparator (the same
 * multilevel node bisection METIS_NodeND runs at each of its levels) on
 * the current part, then A and B become two OpenMP tasks. Parts of fewer
 * than WG__ND_LEAF vertices (or at depth WG__ND_DEPTH) are ordered by
 * METIS_NodeND itself.
 *
 * Reproducible on one thread only: where to stop splitting depends only
 * on the part (size, depth), never on the thread count, and every METIS
 * call has seed 1, but Debian's libmetis5 (5.1.0) draws its random numbers
 * from libc's rand(), one state for the whole process: METIS calls running
 * side by side interleave it, so with several threads the order (and the
 * hierarchy's size, within a few percent) can change from run to run.
 * Every order is valid and every answer exact either way (the tests check
 * answers, not orders); for the same hierarchy every time, save the order
 * (.cch) or build on one thread (test_route checks that one thread gives
 * the same order twice). Graphs under WG__ND_LEAF vertices get exactly the
 * order of a single METIS_NodeND call, as before.
 *
 * Separator vertices are ranked in their order inside the part (METIS's
 * own ND does the same). A separator that leaves a side empty, or that is
 * more than half the part, stops the splitting there (METIS_NodeND
 * orders that part instead), so the recursion always shrinks.
 */
#include <metis.h>
#include <stdlib.h>
#include <string.h>

#include "route/order_nd.h"

#define WG__ND_DEPTH 8 /* at most 2^8 parallel parts */

typedef struct nd_part {
  uint32_t nv;
  idx_t *xadj, *adj; /* local CSR, symmetric, no loops */
  uint32_t *gid;     /* local -> original vertex */
} nd_part;

typedef struct nd_shared {
  uint32_t *order; /* order[rank] = vertex */
  uint32_t leaf;   /* parts smaller than this: one METIS_NodeND */
  int max_depth;   /* WG__ND_DEPTH, or WG__IF_DEPTH with inertial flow */
  const double *px, *py; /* planar coordinates: inertial-flow separators */
  int metis_rc;    /* first METIS failure (0 none) */
  int oom;
} nd_shared;

static void part_free(nd_part *p) {
  free(p->xadj);
  free(p->adj);
  free(p->gid);
  memset(p, 0, sizeof *p);
}

static void fail(nd_shared *sh, int metis_rc, int oom) {
#pragma omp critical(wg__nd_fail)
  {
    if (metis_rc && !sh->metis_rc) sh->metis_rc = metis_rc;
    if (oom) sh->oom = 1;
  }
}

/* Orders the whole part with METIS_NodeND into ranks [lo, lo + nv). */
static void order_leaf(nd_shared *sh, const nd_part *p, uint32_t lo) {
  const uint32_t nv = p->nv;
  if (nv == 0) return;
  if (nv < 3 || p->xadj[nv] == 0) {
    for (uint32_t i = 0; i < nv; i++) sh->order[lo + i] = p->gid[i];
    return;
  }
  idx_t *perm = malloc((size_t)nv * sizeof *perm), *iperm = malloc((size_t)nv * sizeof *iperm);
  if (!perm || !iperm) {
    fail(sh, 0, 1);
    goto done;
  }
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_NUMBERING] = 0;
  options[METIS_OPTION_SEED] = 1;
  idx_t n = (idx_t)nv;
  const int rc = METIS_NodeND(&n, p->xadj, p->adj, NULL, options, perm, iperm);
  if (rc != METIS_OK) {
    fail(sh, rc, 0);
    goto done;
  }
  /* perm is checked to be a permutation by the caller (over the whole order) */
  for (uint32_t r = 0; r < nv; r++) {
    const idx_t v = perm[r];
    sh->order[lo + r] = v >= 0 && (uint32_t)v < nv ? p->gid[v] : UINT32_MAX;
  }
done:
  free(perm);
  free(iperm);
}

/* The induced subgraph of the vertices with where[i] == side; pos[i] is
 * i's index among them. */
static int extract(const nd_part *p, const idx_t *where, const uint32_t *pos, idx_t side,
                   uint32_t count, nd_part *c) {
  memset(c, 0, sizeof *c);
  c->nv = count;
  c->xadj = malloc(((size_t)count + 1) * sizeof *c->xadj);
  c->gid = malloc((count ? count : 1) * sizeof *c->gid);
  if (!c->xadj || !c->gid) return -1;
  uint64_t arcs = 0;
  for (uint32_t i = 0; i < p->nv; i++) {
    if (where[i] != side) continue;
    for (idx_t k = p->xadj[i]; k < p->xadj[i + 1]; k++) arcs += where[p->adj[k]] == side;
  }
  c->adj = malloc((arcs ? arcs : 1) * sizeof *c->adj);
  if (!c->adj) return -1;
  uint64_t at = 0;
  for (uint32_t i = 0; i < p->nv; i++) {
    if (where[i] != side) continue;
    const uint32_t j = pos[i];
    c->gid[j] = p->gid[i];
    c->xadj[j] = (idx_t)at;
    for (idx_t k = p->xadj[i]; k < p->xadj[i + 1]; k++)
      if (where[p->adj[k]] == side) c->adj[at++] = (idx_t)pos[p->adj[k]];
  }
  c->xadj[count] = (idx_t)at;
  return 0;
}

/* Orders part p (which it frees) into ranks [lo, lo + p->nv). */
static void dissect(nd_shared *sh, nd_part *p, uint32_t lo, int depth) {
  const uint32_t nv = p->nv;
  idx_t *where = NULL;
  uint32_t *pos = NULL;
  if (nv < sh->leaf || depth >= sh->max_depth || p->xadj[nv] == 0) goto leaf;
  where = malloc((size_t)nv * sizeof *where);
  pos = malloc((size_t)nv * sizeof *pos);
  if (!where || !pos) {
    fail(sh, 0, 1);
    goto out;
  }
  int metis_sep = 1;
  if (sh->px) {
    const int rc = wg__inertial_separator(nv, p->xadj, p->adj, sh->px, sh->py, p->gid, where);
    if (rc < 0) {
      fail(sh, 0, 1);
      goto out;
    }
    metis_sep = rc > 0;
  }
  if (metis_sep) {
    idx_t options[METIS_NOPTIONS];
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_NUMBERING] = 0;
    options[METIS_OPTION_SEED] = 1;
    idx_t n = (idx_t)nv, sepsize = 0;
    const int rc = METIS_ComputeVertexSeparator(&n, p->xadj, p->adj, NULL, options, &sepsize,
                                                where);
    if (rc != METIS_OK) {
      fail(sh, rc, 0);
      goto out;
    }
  }
  uint32_t cnt[3] = {0, 0, 0};
  for (uint32_t i = 0; i < nv; i++) {
    const idx_t s = where[i];
    if (s < 0 || s > 2) {
      fail(sh, METIS_ERROR, 0);
      goto out;
    }
    pos[i] = cnt[s]++;
  }
  if (cnt[0] == 0 || cnt[1] == 0 || cnt[2] > nv / 2) {
    free(where);
    free(pos);
    where = NULL;
    pos = NULL;
    goto leaf;
  }
  /* (Any permutation is a valid CCH order: the separator property only
   * makes it a good one, so it is not re-checked here.) */
  nd_part c[2];
  if (extract(p, where, pos, 0, cnt[0], &c[0]) || extract(p, where, pos, 1, cnt[1], &c[1])) {
    part_free(&c[0]);
    part_free(&c[1]);
    fail(sh, 0, 1);
    goto out;
  }
  /* the separator takes the top ranks of the part */
  {
    const uint32_t top = lo + cnt[0] + cnt[1];
    for (uint32_t i = 0; i < nv; i++)
      if (where[i] == 2) sh->order[top + pos[i]] = p->gid[i];
  }
  free(where);
  free(pos);
  where = NULL;
  pos = NULL;
  part_free(p);
  nd_part *a = malloc(sizeof *a), *b = malloc(sizeof *b);
  if (!a || !b) {
    free(a);
    free(b);
    part_free(&c[0]);
    part_free(&c[1]);
    fail(sh, 0, 1);
    return;
  }
  *a = c[0];
  *b = c[1];
  const uint32_t lo_b = lo + cnt[0];
#pragma omp task default(none) firstprivate(sh, a, lo, depth)
  {
    dissect(sh, a, lo, depth + 1);
    free(a);
  }
#pragma omp task default(none) firstprivate(sh, b, lo_b, depth)
  {
    dissect(sh, b, lo_b, depth + 1);
    free(b);
  }
#pragma omp taskwait
  return;
leaf:
  order_leaf(sh, p, lo);
out:
  free(where);
  free(pos);
  part_free(p);
}

wg_status wg__cch_nd_order(wg_ctx_t *ctx, uint32_t n, idx_t **xadj, idx_t **adj,
                           uint32_t *order, uint32_t leaf) {
  return wg__cch_nd_order_xy(ctx, n, xadj, adj, order, leaf, NULL, NULL);
}

wg_status wg__cch_nd_order_xy(wg_ctx_t *ctx, uint32_t n, idx_t **xadj, idx_t **adj,
                              uint32_t *order, uint32_t leaf, const double *px,
                              const double *py) {
  nd_shared sh = {order, leaf < 16 ? 16 : leaf, px && py ? WG__IF_DEPTH : WG__ND_DEPTH,
                  px && py ? px : NULL, px && py ? py : NULL, 0, 0};
  nd_part *root = NULL;
  if (wg__calloc(ctx, &root, 1, sizeof *root, "router order") != WG_OK) return WG_ENOMEM;
  root->nv = n;
  root->xadj = *xadj;
  root->adj = *adj;
  *xadj = NULL;
  *adj = NULL;
  root->gid = malloc((size_t)(n ? n : 1) * sizeof *root->gid);
  if (!root->gid) {
    part_free(root);
    wg__free(&root);
    return wg__error(ctx, WG_ENOMEM, "router: out of memory in the nested dissection");
  }
  for (uint32_t v = 0; v < n; v++) root->gid[v] = v;
  const int threads = wg__threads(ctx);
#pragma omp parallel num_threads(threads) if (threads > 1 && n >= sh.leaf)
#pragma omp single
  dissect(&sh, root, 0, 0); /* frees the root's arrays */
  wg__free(&root);
  if (sh.oom) return wg__error(ctx, WG_ENOMEM, "router: out of memory in the nested dissection");
  if (sh.metis_rc)
    return wg__error(ctx, sh.metis_rc == METIS_ERROR_MEMORY ? WG_ENOMEM : WG_EINVAL,
                     "router: METIS failed (code %d) ordering %u vertices", sh.metis_rc, n);
  return WG_OK;
}
