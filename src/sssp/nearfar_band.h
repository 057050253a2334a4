/* The fixed-delta loop's relaxation and one-region loop over distances of
 * type NFB_T (included by nearfar_cpu.c twice: uint64_t, the caller's
 * array, and uint32_t, a narrow copy used when every distance of the graph
 * fits, see run_fixed), named NFB(name). No include guard: a template. */
/* Several threads: relaxes u's out-arcs into this thread's bands, unless
 * the entry (u, off) is stale (off OFF_ANY: a frontier vertex, taken when
 * not settled below lo). Distances are read and swapped relaxed: a stale
 * read of dist[u] only takes a stale entry as live (the relaxation then
 * finds less to improve), and every improvement pushes its own entry, so
 * none is lost; the barriers order the iterations. */
static inline __attribute__((always_inline)) uint64_t NFB(fused_relax)(
    const fixq *q, tbins *tb, const wg_csr *c, NFB_T *dist, uint32_t u,
    uint32_t uoff, uint64_t cur, uint64_t lo) {
  const NFB_T du = __atomic_load_n(&dist[u], __ATOMIC_RELAXED);
  if (bent_stale(du, lo, uoff)) return 0;
  uint64_t improved = 0;
  const uint32_t *tgt = c->targets, *wt = c->weights;
  for (uint64_t a = c->offsets[u], e = c->offsets[u + 1]; a < e; a++) {
    const uint32_t v = tgt[a];
    const NFB_T nd = du + wt[a];
    NFB_T old = __atomic_load_n(&dist[v], __ATOMIC_RELAXED);
    while (nd < old) {
      if (__atomic_compare_exchange_n(&dist[v], &old, nd, 1, __ATOMIC_RELAXED,
                                      __ATOMIC_RELAXED)) {
        improved++;
        band_push(q, tb, v, nd, band_of(q, nd), cur);
        break;
      }
    }
  }
  return improved;
}

/* Drops the stale entries of buffer b (band starting at lo); returns the
 * entries left. Safe while other threads relax: an entry once stale stays
 * stale. */
static uint64_t NFB(band_compact)(vbuf *b, const NFB_T *dist, uint64_t lo) {
  uint64_t k = 0;
  for (uint64_t j = 0; j < b->len; j++) {
    const bent en = b->e[j];
    if (!bent_stale(__atomic_load_n(&dist[en.v], __ATOMIC_RELAXED), lo, en.off))
      b->e[k++] = en;
  }
  b->len = k;
  return k;
}

/* Thread buffer tb's overflow entries of bands inside the window [cur, cur +
 * FIX_BINS) come in (stale ones dropped); the rest stay. */
static void NFB(over_flush_tb)(const fixq *q, tbins *tb, const NFB_T *dist, uint64_t cur) {
  const uint64_t pushed = tb->pushed;
  uint64_t keep = 0, mn = UINT64_MAX;
  for (uint64_t j = 0; j < tb->over.len; j++) {
    const far_entry en = tb->over.e[j];
    if (dist[en.v] < en.d) continue; /* stale */
    const uint64_t b = band_of(q, en.d);
    if (b - cur < FIX_BINS) {
      band_push(q, tb, en.v, en.d, b, cur);
      continue;
    }
    tb->over.e[keep++] = en;
    if (b < mn) mn = b;
  }
  tb->over.len = keep;
  tb->over_min = mn;
  tb->pushed = pushed; /* moved, not pushed: X3 counts pushes once */
}

static void NFB(band_loop)(nf *s, fixq *q, fixpar *P, wg__sssp_job *job, NFB_T *dist) {
  const int t = omp_get_thread_num(), nth = omp_get_num_threads();
  tbins *tb = &q->tb[t];
  const wg_csr *c = &s->c;
  uint32_t *front = s->front.v;
  const uint64_t cap = s->front.cap;
  const int trace = job->opts->trace;
  const uint64_t df = q->delta;
  /* self-tuned (P->tune): every thread runs its own copy of the controller
   * on the same summed counts after barrier A, so all copies take the same
   * decisions without a third barrier; the frontier is bands [cur, end) */
  const int tune = P->tune;
  wg_selftune ctl;
  if (tune) ctl = P->ctl0;
  uint64_t cur = 0, end = 1;
  for (uint64_t it = 0;; it++) {
    const unsigned par = (unsigned)(it & 1);
    const double t0 = trace && t == 0 ? wg__now() : 0.0;
    if (t == 0) {
      __atomic_store_n(&P->chunk[par ^ 1], 0, __ATOMIC_RELAXED);
      __atomic_store_n(&P->tail[par ^ 1], 0, __ATOMIC_RELAXED);
    }
    const uint64_t len = __atomic_load_n(&P->tail[par], __ATOMIC_RELAXED);
    const uint64_t lo = cur * q->delta;
    uint64_t improved = 0;
    tb->pushed = 0;
    for (;;) {
      const uint64_t i0 = __atomic_fetch_add(&P->chunk[par], FIX_CHUNK, __ATOMIC_RELAXED);
      if (i0 >= len) break;
      const uint64_t i1 = i0 + FIX_CHUNK < len ? i0 + FIX_CHUNK : len;
      for (uint64_t i = i0; i < i1; i++)
        improved += NFB(fused_relax)(q, tb, c, dist, front[i], OFF_ANY, cur, lo);
    }
    /* bucket fusion over the frontier's bands [cur, end) in order (near-far:
     * band cur alone); it stops at the first band left at the fusion limit,
     * whose later bands wait for the next iteration */
    uint64_t bfull = cur, taken = 0;
    for (uint64_t b = cur; b < end && !tb->failed; b++) {
      vbuf *cb = &tb->slot[b % FIX_BINS];
      const uint64_t blo = b * df;
      int full = 0;
      while (cb->len > 0 && !tb->failed) {
        /* stale entries count for nothing: a band at the fusion limit is
         * compacted before it is left to the next iteration */
        if (cb->len >= FIX_FUSE && NFB(band_compact)(cb, dist, blo) >= FIX_FUSE) {
          full = 1;
          break;
        }
        if (cb->len == 0) break;
        vbuf tmp = *cb;
        *cb = tb->work;
        tb->work = tmp;
        taken += tb->work.len;
        for (uint64_t j = 0; j < tb->work.len; j++)
          improved +=
              NFB(fused_relax)(q, tb, c, dist, tb->work.e[j].v, tb->work.e[j].off, cur, blo);
        tb->work.len = 0;
      }
      if (full) {
        bfull = b;
        break;
      }
    }
    uint64_t vote = tb->over_min;
    /* no slot above `hi` was ever filled: the scan stops there; a band of
     * stale entries only is emptied and passed (else it would cost an
     * iteration and its two barriers for nothing: FLA, 2 threads, 641
     * iterations against 201 with the marks) */
    for (uint64_t b = cur; b <= tb->hi && b - cur < FIX_BINS && b < vote; b++)
      if (tb->slot[b % FIX_BINS].len &&
          (b == bfull /* left at the fusion limit: compacted above */ ||
           NFB(band_compact)(&tb->slot[b % FIX_BINS], dist, b * q->delta))) {
        vote = b;
        break;
      }
    tb->vote = vote;
    tb->vfail = tb->failed;
    tb->vpushed = tb->pushed;
    tb->count = improved;
    if (tune) {
      /* the controller's counts of this thread's queue: X4 (bands below
       * `end`) and the partitions by each band's start (stale entries of
       * bands not compacted count too: an overestimate) */
      uint64_t x4 = 0;
      for (uint32_t i = 0; i < ctl.nparts; i++) tb->pcnt[i] = 0;
      uint32_t pi = 0;
      for (uint64_t b = vote; b <= tb->hi && b - cur < FIX_BINS; b++) {
        const uint64_t l = tb->slot[b % FIX_BINS].len;
        if (!l) continue;
        if (b < end) {
          x4 += l;
          continue;
        }
        while (pi + 1 < ctl.nparts && b * df >= ctl.bound[pi]) pi++;
        tb->pcnt[pi] += l;
      }
      if (tb->over.len) {
        if (tb->over_min < end) {
          x4 += tb->over.len;
        } else {
          while (pi + 1 < ctl.nparts && tb->over_min * df >= ctl.bound[pi]) pi++;
          tb->pcnt[pi] += tb->over.len;
        }
      }
      tb->x4 = x4;
      tb->taken = taken;
    }
    wg__barrier_wait(&P->bar); /* A */
    uint64_t next = UINT64_MAX, x2 = 0, x3 = 0;
    int failed = 0;
    for (int u = 0; u < nth; u++) {
      if (q->tb[u].vote < next) next = q->tb[u].vote;
      failed |= q->tb[u].vfail;
      x2 += q->tb[u].count;
      x3 += q->tb[u].vpushed;
    }
    if (failed || next == UINT64_MAX) {
      if (t == 0) P->iters = it + 1;
      if (t == 0 && trace && !failed) {
        wg_sssp_iter row = {0};
        row.iter = it;
        row.frontier_in = len;
        row.advance_out = x2;
        row.filter_out = x3;
        row.delta = (double)q->delta;
        row.time_us = (wg__now() - t0) * 1e6;
        P->st = wg__sssp_trace_push(s->ctx, job, &row);
      }
      break;
    }
    uint64_t nend = next + 1, tx4 = 0;
    if (tune) {
      wg_selftune_counts cnt;
      memset(&cnt, 0, sizeof cnt);
      uint64_t taken_all = 0;
      for (int u = 0; u < nth; u++) {
        tx4 += q->tb[u].x4;
        taken_all += q->tb[u].taken;
        for (uint32_t i = 0; i < ctl.nparts; i++) cnt.part_size[i] += q->tb[u].pcnt[i];
      }
      /* X1: every vertex expanded (the frontier and the fused drains), so
       * X2 / X1 stays the improving degree */
      cnt.x1 = len + taken_all;
      cnt.x2 = x2;
      cnt.x3 = x3;
      cnt.x4 = tx4;
      cnt.far_min = tx4 == 0 ? next * df : WG_SELFTUNE_INF;
      cnt.nparts = ctl.nparts;
      wg_selftune_decision dec;
      if (wg_selftune_step(&ctl, &cnt, &dec) != WG_OK) {
        if (t == 0) {
          P->iters = it + 1;
          P->st = wg__error(s->ctx, WG_EINVAL, "self-tuning: controller rejected the counts");
        }
        break;
      }
      /* the threshold in whole bands: at least the next one, at most the
       * window */
      uint64_t e = dec.threshold / df + (dec.threshold % df != 0);
      if (e <= next) e = next + 1;
      if (e - next > FIX_BINS) e = next + FIX_BINS;
      if (e * df != dec.threshold &&
          wg_selftune_adopt(&ctl, &dec, end * df, e * df, 0) != WG_OK) {
        if (t == 0) {
          P->iters = it + 1;
          P->st = wg__error(s->ctx, WG_EINVAL, "self-tuning: the controller rejected the band");
        }
        break;
      }
      nend = e;
    }
    if (tb->over_min != UINT64_MAX && tb->over_min - next < FIX_BINS)
      NFB(over_flush_tb)(q, tb, dist, next);
    for (uint64_t b = next; b < nend; b++) {
      vbuf *nb = &tb->slot[b % FIX_BINS];
      if (!nb->len) continue;
      /* live entries to the front of the slot, then copied together */
      const uint64_t nlo = b * df;
      uint64_t k = 0;
      for (uint64_t j = 0; j < nb->len; j++) {
        const bent en = nb->e[j];
        if (!bent_stale(dist[en.v], nlo, en.off)) nb->e[k++] = en;
      }
      const uint64_t off = __atomic_fetch_add(&P->tail[par ^ 1], k, __ATOMIC_RELAXED);
      if (off + k <= cap)
        for (uint64_t j = 0; j < k; j++) front[off + j] = nb->e[j].v;
      else
        tb->failed = 1;
      nb->len = 0;
    }
    wg__barrier_wait(&P->bar); /* B */
    if (trace) {
      if (t == 0) {
        wg_sssp_iter row = {0};
        row.iter = it;
        row.frontier_in = len;
        row.advance_out = x2;
        row.filter_out = x3;
        row.near_out = tune          ? tx4
                       : next == cur ? __atomic_load_n(&P->tail[par ^ 1], __ATOMIC_RELAXED)
                                     : 0;
        row.far_size = queued_total(q);
        row.delta = tune ? (double)(nend * df) : (double)q->delta;
        row.time_us = (wg__now() - t0) * 1e6;
        P->st = wg__sssp_trace_push(s->ctx, job, &row);
      }
      wg__barrier_wait(&P->bar); /* the row is written */
      if (P->st != WG_OK) {
        if (t == 0) P->iters = it + 1;
        break;
      }
    }
    cur = next;
    end = nend;
  }
}
