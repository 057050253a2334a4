/* Bootstrap of one-process-per-GPU communicators, the way NCCL's unique id
 * works but through the file system of the host: the id names a fresh
 * folder; each rank writes its entry (its CUDA IPC handle, its GPU's PCI
 * id, rank 0 also NCCL's id) to "<tag>.<rank>" by writing a temporary file
 * and renaming it (so a reader never sees half an entry), then polls, asleep
 * between looks, until all ranks' entries are there or the time-out passes.
 * The collectives themselves never touch these files. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "coll/coll_internal.h"
#include "core/internal.h"

static const char kMagic[8] = "wgcoll1";

static const char *id_dir(const wg_comm_id *id) { return id->bytes + sizeof kMagic; }

static int id_ok(const wg_comm_id *id) {
  return memcmp(id->bytes, kMagic, sizeof kMagic) == 0 &&
         memchr(id_dir(id), '\0', sizeof id->bytes - sizeof kMagic) != NULL &&
         id_dir(id)[0] == '/';
}

wg_status wg__coll_make_id(wg_ctx_t *ctx, wg_comm_id *id) {
  memset(id, 0, sizeof *id);
  memcpy(id->bytes, kMagic, sizeof kMagic);
  const char *tmp = getenv("TMPDIR");
  if (!tmp || tmp[0] != '/') tmp = "/tmp";
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t r = wg__mix64((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^
                         ((uint64_t)getpid() << 12));
  char *dir = id->bytes + sizeof kMagic;
  size_t cap = sizeof id->bytes - sizeof kMagic;
  int n = snprintf(dir, cap, "%s/wgcoll-%d-%016llx", tmp, (int)getpid(),
                   (unsigned long long)r);
  if (n < 0 || (size_t)n >= cap)
    return wg__error(ctx, WG_ERANGE, "comm id: temporary folder path '%s' is too long",
                     tmp);
  if (mkdir(dir, 0700) != 0)
    return wg__error(ctx, WG_EIO, "comm id: cannot make %s: %s", dir, strerror(errno));
  return WG_OK;
}

static int entry_path(char *buf, size_t cap, const wg_comm_id *id, const char *tag,
                      int rank, const char *suffix) {
  int n = snprintf(buf, cap, "%s/%s.%d%s", id_dir(id), tag, rank, suffix);
  return n > 0 && (size_t)n < cap ? 0 : -1;
}

wg_status wg__coll_rendezvous(wg_ctx_t *ctx, const wg_comm_id *id, const char *tag,
                              int nranks, int rank, const void *blob, size_t len,
                              void *all, double timeout_s) {
  char path[512], tmp[520];
  if (!id_ok(id))
    return wg__error(ctx, WG_EINVAL,
                     "comm rank %d: the id is not one made by wg_comm_unique_id", rank);
  (void)mkdir(id_dir(id), 0700); /* the id may come from another host's tmp layout */
  if (entry_path(path, sizeof path, id, tag, rank, "") ||
      entry_path(tmp, sizeof tmp, id, tag, rank, ".tmp"))
    return wg__error(ctx, WG_ERANGE, "comm rank %d: rendezvous path too long", rank);
  FILE *f = fopen(tmp, "wb");
  if (!f)
    return wg__error(ctx, WG_EIO, "comm rank %d: cannot write %s: %s", rank, tmp,
                     strerror(errno));
  size_t wrote = fwrite(blob, 1, len, f);
  if (fclose(f) != 0 || wrote != len || rename(tmp, path) != 0)
    return wg__error(ctx, WG_EIO, "comm rank %d: cannot write %s: %s", rank, path,
                     strerror(errno));
  double t0 = wg__now();
  unsigned char *out = all;
  for (int r = 0; r < nranks; r++) {
    if (entry_path(path, sizeof path, id, tag, r, ""))
      return wg__error(ctx, WG_ERANGE, "comm rank %d: rendezvous path too long", rank);
    for (;;) {
      f = fopen(path, "rb");
      if (f) {
        size_t got = fread(out + (size_t)r * len, 1, len, f);
        fclose(f);
        if (got != len)
          return wg__error(ctx, WG_EIO,
                           "comm rank %d: %s holds %zu bytes, expected %zu (ranks built "
                           "from different wattgraph versions?)",
                           rank, path, got, len);
        break;
      }
      if (wg__now() - t0 > timeout_s) {
        return wg__error(ctx, WG_ETIMEOUT,
                         "comm rank %d: rank %d of %d never joined '%s' within %.3g s "
                         "(waited in %s)",
                         rank, r, nranks, tag, timeout_s, id_dir(id));
      }
      struct timespec ts = {0, 2000000}; /* 2 ms asleep between looks */
      nanosleep(&ts, NULL);
    }
  }
  return WG_OK;
}

void wg__coll_rendezvous_cleanup(const wg_comm_id *id, int nranks, int rank) {
  /* Rank 0 removes the folder once every other rank has said it is gone
   * (so no rank is still reading an entry); the others only say so. */
  static const char *tags[] = {"join", "bye", "gone"};
  char path[512];
  if (!id_ok(id)) return;
  if (rank != 0) {
    if (!entry_path(path, sizeof path, id, "gone", rank, "")) {
      FILE *f = fopen(path, "wb");
      if (f) fclose(f);
    }
    return;
  }
  double t0 = wg__now();
  for (int r = 1; r < nranks; r++) {
    if (entry_path(path, sizeof path, id, "gone", r, "")) return;
    while (access(path, F_OK) != 0 && wg__now() - t0 < 5.0) {
      struct timespec ts = {0, 2000000};
      nanosleep(&ts, NULL);
    }
  }
  for (int r = 0; r < nranks; r++)
    for (size_t i = 0; i < sizeof tags / sizeof *tags; i++)
      if (!entry_path(path, sizeof path, id, tags[i], r, "")) (void)unlink(path);
  wg__coll_id_remove(id); /* and the last wg__coll_agree entries */
}

void wg__coll_id_remove(const wg_comm_id *id) {
  static const char *const prefixes[] = {"join.", "bye.", "gone.", "agree"};
  char path[512];
  if (!id_ok(id)) return;
  DIR *d = opendir(id_dir(id));
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    int ours = 0;
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
      ours |= strncmp(e->d_name, prefixes[i], strlen(prefixes[i])) == 0;
    if (!ours) continue; /* never remove what we did not write */
    int n = snprintf(path, sizeof path, "%s/%s", id_dir(id), e->d_name);
    if (n > 0 && (size_t)n < sizeof path) (void)unlink(path);
  }
  closedir(d);
  (void)rmdir(id_dir(id));
}

wg_status wg__coll_agree(wg_ctx_t *ctx, const wg_comm_id *id, unsigned seq, int nranks,
                         int rank, double *v, int n, int sum, double timeout_s) {
  if (n <= 0 || nranks <= 1) return WG_OK;
  double *all = NULL;
  wg_status st = wg__alloc(ctx, &all, (uint64_t)nranks * (uint64_t)n, sizeof *all,
                           "agreement entries");
  if (st != WG_OK) return st;
  char tag[32], path[512];
  snprintf(tag, sizeof tag, "agree%u", seq);
  st = wg__coll_rendezvous(ctx, id, tag, nranks, rank, v, (size_t)n * sizeof *v, all,
                           timeout_s);
  if (st == WG_OK) {
    for (int i = 0; i < n; i++) {
      double a = all[i];
      for (int r = 1; r < nranks; r++) {
        double b = all[(size_t)r * n + i];
        a = sum ? a + b : (b > a ? b : a);
      }
      v[i] = a;
    }
    /* Every rank has written entry seq, so every rank has read all of seq-1:
     * this rank's entry of seq-1 can go. */
    snprintf(tag, sizeof tag, "agree%u", seq - 1);
    if (seq > 0 && !entry_path(path, sizeof path, id, tag, rank, "")) (void)unlink(path);
  }
  wg__free(&all);
  return st;
}
