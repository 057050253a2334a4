/* CPU package and DRAM meters through the Linux powercap RAPL files.
 *
 * /sys/class/powercap lists every zone flat, as symlinks: intel-rapl:N is a
 * package (its "name" file says "package-N"; other top zones such as "psys"
 * are skipped) and intel-rapl:N:M a subdomain ("core", "uncore", "dram": only
 * dram is kept). The same subdomains also appear nested inside intel-rapl:N/,
 * which is all a tree rooted at a control type shows, so both layouts are
 * read and merged by (N, M). AMD's RAPL driver uses the same names. The
 * intel-rapl-mmio zones duplicate the MSR ones and are ignored.
 *
 * energy_uj is read with open/read/close every time: sysfs produces the
 * value when the file is read, so a kept-open descriptor would not advance
 * without a seek, and a fresh open also notices a zone that vanished.
 * Since Linux 5.10 energy_uj is readable by root only; that is reported as
 * its own reason.
 *
 * Wrap-around: the counter shows 0 .. max_energy_range_uj and the step after
 * the maximum is 0, so it counts modulo max_energy_range_uj + 1; a window
 * whose end value is below its begin value wrapped once and its energy is
 * (max - begin) + end + 1. (The hardware's real modulus is max plus one
 * energy unit, 15 to 61 uJ; the difference is at most one unit per wrap.)
 * The range is typically 262 kJ, i.e. minutes to hours between wraps; a
 * window longer than that needs the sampler, whose readings are folded into
 * the window and so catch every wrap. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "power/power_internal.h"

#define WG__MAX_ZONES 4096

typedef struct zone {
  unsigned n;
  long sub; /* -1: a top zone (package); else M of intel-rapl:N:M */
  char path[512];
} zone;

uint64_t wg__rapl_delta(uint64_t a, uint64_t b, uint64_t max) {
  if (b >= a) return b - a;
  return (max - a) + b + 1;
}

/* Reads up to cap-1 bytes of a small file into buf (NUL-terminated).
 * 0, or -1 with the reason in why. */
static int read_small_file(const char *path, char *buf, size_t cap, char *why,
                           size_t wcap) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    if (e == EACCES || e == EPERM)
      wg__fmt(why, wcap, "permission denied reading %s (run as root or chmod)", path);
    else
      wg__fmt(why, wcap, "read error: cannot open %s: %s", path, strerror(e));
    return -1;
  }
  size_t len = 0;
  for (;;) {
    ssize_t r = read(fd, buf + len, cap - 1 - len);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      int e = errno;
      close(fd);
      if (e == EACCES || e == EPERM)
        wg__fmt(why, wcap, "permission denied reading %s (run as root or chmod)", path);
      else
        wg__fmt(why, wcap, "read error on %s: %s", path, strerror(e));
      return -1;
    }
    if (r == 0) break;
    len += (size_t)r;
    if (len == cap - 1) {
      close(fd);
      wg__fmt(why, wcap, "read error: %s is longer than %zu bytes", path, cap - 2);
      return -1;
    }
  }
  close(fd);
  buf[len] = '\0';
  return 0;
}

int wg__read_u64_file(const char *path, uint64_t *out, char *why, size_t cap) {
  char buf[64];
  if (read_small_file(path, buf, sizeof buf, why, cap) != 0) return -1;
  /* strtoull would accept "-5", " 7" and "+7"; a counter is plain digits. */
  char *end = NULL;
  errno = 0;
  unsigned long long v = buf[0] >= '0' && buf[0] <= '9' ? strtoull(buf, &end, 10) : 0;
  if (!end || end == buf || errno == ERANGE || strspn(end, " \t\r\n") != strlen(end)) {
    size_t n = strcspn(buf, "\r\n");
    wg__fmt(why, cap, "read error: %s holds \"%.*s\", not a counter", path,
             (int)(n > 24 ? 24 : n), buf);
    return -1;
  }
  *out = (uint64_t)v;
  return 0;
}

int wg__rapl_read(const wg__source *s, uint64_t *uj, char *why, size_t cap) {
  if (wg__read_u64_file(s->energy_path, uj, why, cap) != 0) return -1;
  if (*uj > s->max_range) {
    wg__fmt(why, cap, "read error: %s = %llu exceeds max_energy_range_uj %llu",
             s->energy_path, (unsigned long long)*uj, (unsigned long long)s->max_range);
    return -1;
  }
  return 0;
}

/* "intel-rapl:N" or "intel-rapl:N:M", digits only; 0 on a match. */
static int parse_zone_name(const char *name, unsigned *n, long *sub) {
  static const char prefix[] = "intel-rapl:";
  if (strncmp(name, prefix, sizeof prefix - 1) != 0) return -1;
  const char *p = name + sizeof prefix - 1;
  unsigned long v[2];
  int parts = 0;
  for (;;) {
    if (*p < '0' || *p > '9' || parts == 2) return -1;
    unsigned long x = 0;
    while (*p >= '0' && *p <= '9') {
      x = x * 10 + (unsigned long)(*p - '0');
      if (x > 1000000ul) return -1;
      p++;
    }
    v[parts++] = x;
    if (*p == '\0') break;
    if (*p != ':') return -1;
    p++;
  }
  *n = (unsigned)v[0];
  *sub = parts == 2 ? (long)v[1] : -1;
  return 0;
}

static int is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Adds the zone if (n, sub) is new and its path is a folder. */
static wg_status add_zone(wg_meter_t *m, zone **z, size_t *nz, size_t *cz,
                          unsigned n, long sub, const char *dir, const char *entry) {
  char path[512];
  int len = snprintf(path, sizeof path, "%s/%s", dir, entry);
  if (len < 0 || (size_t)len >= sizeof path - 32) return WG_OK; /* too long: skip */
  for (size_t i = 0; i < *nz; i++)
    if ((*z)[i].n == n && (*z)[i].sub == sub) return WG_OK;
  if (!is_dir(path) || *nz >= WG__MAX_ZONES) return WG_OK;
  if (*nz == *cz) {
    size_t c = *cz ? 2 * *cz : 16;
    wg_status st = wg__realloc(m->ctx, z, c, sizeof **z, "powercap zones");
    if (st != WG_OK) return st;
    *cz = c;
  }
  zone *q = &(*z)[(*nz)++];
  q->n = n;
  q->sub = sub;
  memcpy(q->path, path, (size_t)len + 1);
  return WG_OK;
}

/* Collects the intel-rapl zones in dir; a package zone's folder is also
 * searched for nested subzones when `nested`. */
static wg_status scan_dir(wg_meter_t *m, const char *dir, int nested, zone **z,
                          size_t *nz, size_t *cz) {
  wg_status st = WG_OK;
  DIR *d = opendir(dir);
  if (!d) return WG_OK;
  struct dirent *e;
  while (st == WG_OK && (e = readdir(d)) != NULL) {
    unsigned n;
    long sub;
    if (parse_zone_name(e->d_name, &n, &sub) != 0) continue;
    st = add_zone(m, z, nz, cz, n, sub, dir, e->d_name);
    if (st == WG_OK && nested && sub < 0) {
      char inner[512];
      int len = snprintf(inner, sizeof inner, "%s/%s", dir, e->d_name);
      if (len > 0 && (size_t)len < sizeof inner) st = scan_dir(m, inner, 0, z, nz, cz);
    }
  }
  closedir(d);
  return st;
}

static int zone_cmp(const void *a, const void *b) {
  const zone *x = a, *y = b;
  if (x->n != y->n) return x->n < y->n ? -1 : 1;
  return x->sub < y->sub ? -1 : x->sub > y->sub;
}

/* Fills a source for zone q: probes max_energy_range_uj and energy_uj; a
 * failure leaves the source unavailable with the reason. */
static void probe_zone(const zone *q, wg__source *s) {
  char path[576];
  uint64_t v;
  wg__fmt(s->energy_path, sizeof s->energy_path, "%s/energy_uj", q->path);
  wg__fmt(path, sizeof path, "%s/max_energy_range_uj", q->path);
  if (wg__read_u64_file(path, &s->max_range, s->why, sizeof s->why) != 0) return;
  if (s->max_range == 0) {
    wg__fmt(s->why, sizeof s->why, "%s is 0: cannot measure", path);
    return;
  }
  if (wg__rapl_read(s, &v, s->why, sizeof s->why) != 0) return;
  s->method = WG__RAPL;
  s->available = 1;
  s->why[0] = '\0';
}

wg_status wg__rapl_discover(wg_meter_t *m, const char *root) {
  wg_status st = WG_OK;
  zone *z = NULL;
  size_t nz = 0, cz = 0, npkg = 0, ndram = 0;
  char why[160], path[576], name[64];
  DIR *d = opendir(root);
  if (!d) {
    int e = errno;
    if (e == ENOENT || e == ENOTDIR)
      wg__fmt(why, sizeof why, "no RAPL powercap interface at %s", root);
    else if (e == EACCES || e == EPERM)
      wg__fmt(why, sizeof why, "permission denied listing %s (run as root or chmod)", root);
    else
      wg__fmt(why, sizeof why, "cannot list %s: %s", root, strerror(e));
    st = wg__meter_add_unavailable(m, WG_METER_CPU_PACKAGE, "cpu-package", why);
    if (st == WG_OK) st = wg__meter_add_unavailable(m, WG_METER_DRAM, "dram", why);
    return st;
  }
  closedir(d);
  st = scan_dir(m, root, 1, &z, &nz, &cz);
  if (st != WG_OK) goto done;
  if (nz > 1) qsort(z, nz, sizeof *z, zone_cmp);
  /* two passes keep the order fixed: every package, then every dram */
  for (int pass = 0; pass < 2 && st == WG_OK; pass++) {
    for (size_t i = 0; i < nz && st == WG_OK; i++) {
      const zone *q = &z[i];
      if ((pass == 0) != (q->sub < 0)) continue;
      wg__fmt(path, sizeof path, "%s/name", q->path);
      if (read_small_file(path, name, sizeof name, why, sizeof why) != 0) continue;
      name[strcspn(name, "\r\n")] = '\0';
      wg__source s;
      memset(&s, 0, sizeof s);
      if (pass == 0) {
        if (strncmp(name, "package-", 8) != 0) continue; /* psys and others */
        s.kind = WG_METER_CPU_PACKAGE;
        wg__fmt(s.name, sizeof s.name, "%s", name);
        npkg++;
      } else {
        if (strcmp(name, "dram") != 0) continue; /* core, uncore */
        s.kind = WG_METER_DRAM;
        wg__fmt(s.name, sizeof s.name, "dram-%u", q->n);
        ndram++;
      }
      probe_zone(q, &s);
      st = wg__meter_add(m, &s);
    }
    if (st != WG_OK) break;
    if (pass == 0 && npkg == 0) {
      wg__fmt(why, sizeof why, "no RAPL package domain under %s", root);
      st = wg__meter_add_unavailable(m, WG_METER_CPU_PACKAGE, "cpu-package", why);
    }
    if (pass == 1 && ndram == 0) {
      wg__fmt(why, sizeof why, "no dram domain under %s", root);
      st = wg__meter_add_unavailable(m, WG_METER_DRAM, "dram", why);
    }
  }
done:
  wg__free(&z);
  return st;
}
