/* wg_selftune_adopt: the loop's exact frontier fit, told to the controller.
 *
 * The models steer the threshold; on graphs whose distance density varies
 * by orders of magnitude (Kronecker: one distance unit may hold 10^5
 * improving relaxations, the next ten units nothing) the loop then fits the
 * frontier to the target count exactly, in distance order, and reports the
 * threshold it ended at and the partitions it emptied. Kept in its own file
 * so code that compiles selftune.c for the GPU under other names does not
 * get a second, clashing host definition of this function. */
#include "wattgraph/control.h"

WG_HD wg_status wg_selftune_adopt(wg_selftune *st, wg_selftune_decision *dec,
                                  uint64_t prev_threshold, uint64_t threshold,
                                  uint32_t consumed) {
  if (!st || !dec || consumed >= st->nparts) return WG_EINVAL;
  if (consumed) {
    for (uint32_t i = 0; i < WG_SELFTUNE_MAX_PARTS; i++)
      st->bound[i] = i + consumed < WG_SELFTUNE_MAX_PARTS ? st->bound[i + consumed]
                                                          : WG_SELFTUNE_INF;
    st->nparts -= consumed;
    st->dropped += consumed;
  }
  uint64_t t = threshold < 1 ? 1 : threshold;
  if ((double)t > WG_SELFTUNE_DELTA_MAX) t = (uint64_t)WG_SELFTUNE_DELTA_MAX;
  if (st->nparts > 1 && t >= st->bound[0]) t = st->bound[0] - 1; /* bound[0] >= 2 */
  st->delta = (double)t;
  dec->delta = (double)t;
  dec->threshold = t;
  dec->grow = t > prev_threshold ? 1 : t < prev_threshold ? -1 : 0;
  dec->drop += consumed;
  dec->nparts = st->nparts;
  for (uint32_t i = 0; i < WG_SELFTUNE_MAX_PARTS; i++) dec->bound[i] = st->bound[i];
  return WG_OK;
}
