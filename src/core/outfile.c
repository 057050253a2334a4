/* Output files: the one way the library and the CLI write a file.
 *
 * A regular file (or a name that does not exist yet) is written under a
 * unique temporary name in the target's own folder (created with O_EXCL, as
 * mkstemp does, so two runs writing the same name never share one), flushed,
 * fsync'ed and renamed over the target: readers see the old file or the
 * whole new one, never half of it. An existing file's permission bits are
 * kept; a read-only file is refused rather than replaced (root would be
 * allowed to). A symbolic link is followed to its target, which is what is
 * replaced; the link stays. A character device or a FIFO (/dev/stdout, a
 * pipe, /dev/full) is written in place as a stream, and its write errors
 * are reported; a folder, socket or block device is refused. "-" is the
 * standard output.
 *
 * A name ending in .gz, .xz or .bz2 is compressed with zlib, liblzma or
 * libbz2 (the loaders read all three back); .zst and .lz4 are refused by
 * name. Compression sits behind a stdio cookie, so callers write through
 * one FILE * whatever the name asks for. */
#define _GNU_SOURCE
#include <bzlib.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "core/internal.h"

enum { Z_NONE, Z_GZ, Z_XZ, Z_BZ2 };

struct wg_outfile {
  char *user;   /* the name as given, for messages */
  char *target; /* after following symbolic links */
  char *tmp;    /* temporary name; NULL when streaming */
  int fd;
  FILE *raw;    /* on fd */
  FILE *stream; /* what callers write: raw, or the compressing cookie */
  int zkind;
  int zerr;     /* first errno seen by the compressor */
  z_stream gz;
  lzma_stream xz;
  bz_stream bz;
  unsigned char zbuf[1 << 16];
};

static int ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && strcasecmp(s + a - b, suffix) == 0;
}

static int compression_of_name(const char *path) {
  if (ends_with(path, ".gz")) return Z_GZ;
  if (ends_with(path, ".xz")) return Z_XZ;
  if (ends_with(path, ".bz2")) return Z_BZ2;
  return Z_NONE;
}

/* Follows symbolic links (at most 40) to the path that will be written.
 * A dangling link resolves to the name it points at. NULL on a loop or out
 * of memory (errno says which). */
static char *resolve_links(const char *path) {
  char *p = strdup(path);
  struct stat st0;
  /* a device or FIFO is opened by the name given: /dev/stdout's chain ends
   * in /proc's "pipe:[N]", which only open() can follow */
  if (p && stat(path, &st0) == 0 && !S_ISREG(st0.st_mode) && !S_ISDIR(st0.st_mode))
    return p;
  for (int hops = 0; p; hops++) {
    struct stat st;
    if (lstat(p, &st) != 0 || !S_ISLNK(st.st_mode)) return p;
    if (hops == 40) {
      free(p);
      errno = ELOOP;
      return NULL;
    }
    char link[4096];
    ssize_t len = readlink(p, link, sizeof link - 1);
    if (len < 0) return p;
    link[len] = '\0';
    char *next;
    if (link[0] == '/') {
      next = strdup(link);
    } else {
      char *slash = strrchr(p, '/');
      size_t dlen = slash ? (size_t)(slash - p) + 1 : 0;
      next = malloc(dlen + (size_t)len + 1);
      if (next) {
        memcpy(next, p, dlen);
        memcpy(next + dlen, link, (size_t)len + 1);
      }
    }
    free(p);
    p = next;
  }
  return NULL;
}

/* The descriptor a name stands for when its link chain goes through
 * /proc/self/fd/N or /dev/fd/N (/dev/stdout is one): written as a stream on
 * a copy of N, as "-" is, whatever N is open on; -1 otherwise. */
static int fd_of_name(const char *path) {
  char cur[4096];
  snprintf(cur, sizeof cur, "%s", path);
  for (int hops = 0; hops < 40; hops++) {
    static const char *const dirs[] = {"/proc/self/fd/", "/dev/fd/"};
    for (int i = 0; i < 2; i++) {
      size_t k = strlen(dirs[i]);
      if (strncmp(cur, dirs[i], k) == 0 && cur[k]) {
        char *end = NULL;
        long n = strtol(cur + k, &end, 10);
        if (*end == '\0' && n >= 0 && n < 1 << 20) return (int)n;
      }
    }
    char link[4096];
    ssize_t len = readlink(cur, link, sizeof link - 1);
    if (len <= 0 || link[0] != '/') return -1;
    link[len] = '\0';
    memcpy(cur, link, (size_t)len + 1);
  }
  return -1;
}

/* The folder holding path ("." for a bare name), malloc'ed. */
static char *folder_of(const char *path) {
  char *copy = strdup(path);
  if (!copy) return NULL;
  char *d = strdup(dirname(copy));
  free(copy);
  return d;
}

/* Checks target (links already followed): 0 and *stream set to whether it
 * is written in place, or an error naming `user`. */
static wg_status check_target(wg_ctx_t *ctx, const char *user, const char *target,
                              int *stream, mode_t *mode, int *exists) {
  struct stat st;
  *stream = 0;
  *exists = 0;
  *mode = 0666;
  if (stat(target, &st) == 0) {
    *exists = 1;
    if (S_ISDIR(st.st_mode))
      return wg__error(ctx, WG_EINVAL, "%s: is a folder, not a file to write", user);
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
      if (access(target, W_OK) != 0)
        return wg__error(ctx, WG_EIO, "%s: cannot write: %s", user, strerror(errno));
      *stream = 1;
      return WG_OK;
    }
    if (!S_ISREG(st.st_mode))
      return wg__error(ctx, WG_EINVAL,
                       "%s: not a regular file, character device or FIFO; refusing to "
                       "write to it", user);
    if ((st.st_mode & 0222) == 0)
      return wg__error(ctx, WG_EIO,
                       "%s: is read-only (mode %04o); not replaced (remove it or make "
                       "it writable first)", user, (unsigned)(st.st_mode & 07777));
    if (access(target, W_OK) != 0)
      return wg__error(ctx, WG_EIO, "%s: cannot write: %s", user, strerror(errno));
    *mode = st.st_mode & 07777;
  } else if (errno != ENOENT) {
    return wg__error(ctx, WG_EIO, "%s: cannot write: %s",
                     user, strerror(errno));
  }
  char *dir = folder_of(target);
  if (!dir) return wg__error(ctx, WG_ENOMEM, "%s: out of memory", user);
  wg_status s = WG_OK;
  if (stat(dir, &st) != 0)
    s = wg__error(ctx, WG_ENOENT, "%s: cannot create: folder %s: %s", user, dir,
                  strerror(errno));
  else if (!S_ISDIR(st.st_mode))
    s = wg__error(ctx, WG_EIO, "%s: cannot create: %s is not a folder", user, dir);
  else if (access(dir, W_OK | X_OK) != 0)
    s = wg__error(ctx, WG_EIO, "%s: cannot create a file in folder %s: %s", user, dir,
                  strerror(errno));
  free(dir);
  return s;
}

static wg_status check_name(wg_ctx_t *ctx, const char *path) {
  if (!path || !*path) return wg__error(ctx, WG_EINVAL, "output: empty file name");
  static const char *const unsupported[][2] = {
      {".zst", "zstd"}, {".lz4", "lz4"}, {".lz", "lzip"}, {".zip", "zip"}, {".Z", "compress"}};
  for (size_t i = 0; i < sizeof unsupported / sizeof *unsupported; i++)
    if (ends_with(path, unsupported[i][0]))
      return wg__error(ctx, WG_ENOTSUP,
                       "%s: %s compression is not supported for output (use .gz, .xz, "
                       ".bz2 or no compression suffix)", path, unsupported[i][1]);
  return WG_OK;
}

wg_status wg_outfile_check(wg_ctx_t *ctx, const char *path) {
  wg_status s = check_name(ctx, path);
  if (s != WG_OK || strcmp(path, "-") == 0) return s;
  int fd = fd_of_name(path);
  if (fd >= 0) {
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY)
      return wg__error(ctx, WG_EIO, "%s: descriptor %d is not open for writing", path, fd);
    return WG_OK;
  }
  char *target = resolve_links(path);
  if (!target)
    return wg__error(ctx, WG_EIO, "%s: cannot follow the link: %s", path, strerror(errno));
  int stream, exists;
  mode_t mode;
  s = check_target(ctx, path, target, &stream, &mode, &exists);
  free(target);
  return s;
}

int wg_outfile_same(const char *a, const char *b) {
  if (!a || !b || strcmp(a, "-") == 0 || strcmp(b, "-") == 0) return 0;
  if (strcmp(a, b) == 0) return 1;
  char *ta = resolve_links(a), *tb = resolve_links(b);
  int same = 0;
  struct stat sa, sb;
  if (ta && tb) {
    int ea = stat(ta, &sa) == 0, eb = stat(tb, &sb) == 0;
    if (ea && eb) {
      same = sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    } else if (!ea && !eb) { /* two new names: the same folder and base? */
      char *da = folder_of(ta), *db = folder_of(tb);
      char *ra = da ? realpath(da, NULL) : NULL, *rb = db ? realpath(db, NULL) : NULL;
      const char *ba = strrchr(ta, '/'), *bb = strrchr(tb, '/');
      ba = ba ? ba + 1 : ta;
      bb = bb ? bb + 1 : tb;
      same = ra && rb && strcmp(ra, rb) == 0 && strcmp(ba, bb) == 0;
      free(da), free(db), free(ra), free(rb);
    }
  }
  free(ta);
  free(tb);
  return same;
}

/* ---- compression cookies --------------------------------------------------- */

static int raw_put(wg_outfile_t *o, const void *p, size_t n) {
  if (n && fwrite(p, 1, n, o->raw) != n) {
    if (!o->zerr) o->zerr = errno ? errno : EIO;
    return -1;
  }
  return 0;
}

/* Runs the compressor over len bytes (flush: finish the stream). */
static int z_step(wg_outfile_t *o, const void *buf, size_t len, int finish) {
  if (o->zerr) {
    errno = o->zerr;
    return -1;
  }
  if (o->zkind == Z_GZ) {
    o->gz.next_in = (Bytef *)(uintptr_t)buf;
    o->gz.avail_in = (uInt)len;
    int r;
    do {
      o->gz.next_out = o->zbuf;
      o->gz.avail_out = sizeof o->zbuf;
      r = deflate(&o->gz, finish ? Z_FINISH : Z_NO_FLUSH);
      if (r == Z_STREAM_ERROR) return o->zerr = EIO, -1;
      if (raw_put(o, o->zbuf, sizeof o->zbuf - o->gz.avail_out)) return -1;
    } while (o->gz.avail_out == 0 || (finish && r != Z_STREAM_END));
  } else if (o->zkind == Z_XZ) {
    o->xz.next_in = buf;
    o->xz.avail_in = len;
    lzma_ret r;
    do {
      o->xz.next_out = o->zbuf;
      o->xz.avail_out = sizeof o->zbuf;
      r = lzma_code(&o->xz, finish ? LZMA_FINISH : LZMA_RUN);
      if (r != LZMA_OK && r != LZMA_STREAM_END) return o->zerr = EIO, -1;
      if (raw_put(o, o->zbuf, sizeof o->zbuf - o->xz.avail_out)) return -1;
    } while (o->xz.avail_out == 0 || (finish && r != LZMA_STREAM_END));
  } else {
    o->bz.next_in = (char *)(uintptr_t)buf;
    o->bz.avail_in = (unsigned)len;
    int r;
    do {
      o->bz.next_out = (char *)o->zbuf;
      o->bz.avail_out = sizeof o->zbuf;
      r = BZ2_bzCompress(&o->bz, finish ? BZ_FINISH : BZ_RUN);
      if (r < 0) return o->zerr = EIO, -1;
      if (raw_put(o, o->zbuf, sizeof o->zbuf - o->bz.avail_out)) return -1;
    } while (o->bz.avail_in > 0 || o->bz.avail_out == 0 ||
             (finish && r != BZ_STREAM_END));
  }
  return 0;
}

static ssize_t cookie_write(void *c, const char *buf, size_t len) {
  wg_outfile_t *o = c;
  /* zlib and libbz2 count input in 32 bits */
  for (size_t done = 0; done < len;) {
    size_t step = len - done < (1u << 30) ? len - done : (1u << 30);
    if (z_step(o, buf + done, step, 0) != 0) {
      errno = o->zerr;
      return 0;
    }
    done += step;
  }
  return (ssize_t)len;
}

static int cookie_close(void *c) {
  wg_outfile_t *o = c;
  return z_step(o, NULL, 0, 1);
}

static void z_end(wg_outfile_t *o) {
  if (o->zkind == Z_GZ) deflateEnd(&o->gz);
  if (o->zkind == Z_XZ) lzma_end(&o->xz);
  if (o->zkind == Z_BZ2) BZ2_bzCompressEnd(&o->bz);
  o->zkind = Z_NONE;
}

static int z_begin(wg_outfile_t *o, int kind) {
  int ok;
  if (kind == Z_GZ) /* 15 + 16: a gzip wrapper */
    ok = deflateInit2(&o->gz, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK;
  else if (kind == Z_XZ)
    ok = lzma_easy_encoder(&o->xz, 6, LZMA_CHECK_CRC64) == LZMA_OK;
  else
    ok = BZ2_bzCompressInit(&o->bz, 9, 0, 0) == BZ_OK;
  if (!ok) return -1;
  o->zkind = kind;
  cookie_io_functions_t io = {NULL, cookie_write, NULL, cookie_close};
  o->stream = fopencookie(o, "w", io);
  if (!o->stream) {
    z_end(o);
    return -1;
  }
  return 0;
}

/* ---- open, commit, abort ----------------------------------------------------- */

static void free_outfile(wg_outfile_t *o) {
  free(o->user);
  free(o->target);
  free(o->tmp);
  free(o);
}

void wg_outfile_abort(wg_outfile_t **po) {
  if (!po || !*po) return;
  wg_outfile_t *o = *po;
  if (o->stream && o->stream != o->raw) {
    o->zerr = o->zerr ? o->zerr : ECANCELED; /* the cookie writes nothing more */
    fclose(o->stream);
  }
  z_end(o);
  if (o->raw)
    fclose(o->raw);
  else if (o->fd >= 0)
    close(o->fd);
  if (o->tmp) unlink(o->tmp);
  free_outfile(o);
  *po = NULL;
}

wg_status wg_outfile_open(wg_ctx_t *ctx, wg_outfile_t **out, const char *path) {
  if (!out) return wg__error(ctx, WG_EINVAL, "wg_outfile_open: NULL handle");
  *out = NULL;
  wg_status s = check_name(ctx, path);
  if (s != WG_OK) return s;
  wg_outfile_t *o = calloc(1, sizeof *o);
  if (!o || !(o->user = strdup(path))) {
    free(o);
    return wg__error(ctx, WG_ENOMEM, "%s: out of memory", path);
  }
  o->fd = -1;
  int stream = 1, exists = 0;
  mode_t mode = 0666;
  int given_fd = strcmp(path, "-") == 0 ? STDOUT_FILENO : fd_of_name(path);
  if (given_fd >= 0) {
    fflush(stdout);
    o->fd = fcntl(given_fd, F_DUPFD_CLOEXEC, 3);
    if (o->fd < 0) {
      s = wg__error(ctx, WG_EIO, "%s: %s", path, strerror(errno));
      goto fail;
    }
  } else {
    if (!(o->target = resolve_links(path))) {
      s = wg__error(ctx, WG_EIO, "%s: cannot follow the link: %s", path, strerror(errno));
      goto fail;
    }
    if ((s = check_target(ctx, path, o->target, &stream, &mode, &exists)) != WG_OK)
      goto fail;
    if (stream) {
      /* a FIFO blocks here until a reader comes, as any writer would */
      o->fd = open(o->target, O_WRONLY | O_CLOEXEC | O_NOCTTY);
      if (o->fd < 0) {
        s = wg__error(ctx, WG_EIO, "%s: cannot open for writing: %s", path, strerror(errno));
        goto fail;
      }
    } else {
      size_t tlen = strlen(o->target);
      if (!(o->tmp = malloc(tlen + 32))) {
        s = wg__error(ctx, WG_ENOMEM, "%s: out of memory", path);
        goto fail;
      }
      static unsigned counter;
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      uint64_t seed = wg__mix64(((uint64_t)getpid() << 32) ^ (uint64_t)ts.tv_nsec ^
                                ((uint64_t)ts.tv_sec << 20) ^
                                __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED));
      for (int attempt = 0; attempt < 100 && o->fd < 0; attempt++) {
        seed = wg__mix64(seed);
        snprintf(o->tmp, tlen + 32, "%s.%06llx.tmp", o->target,
                 (unsigned long long)(seed & 0xffffff));
        /* new files get 0666 less the umask, as fopen would make them */
        o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                     exists ? 0600 : 0666);
        if (o->fd < 0 && errno != EEXIST) break;
      }
      if (o->fd < 0) {
        s = wg__error(ctx, WG_EIO, "%s: cannot create a temporary file beside it: %s",
                      path, strerror(errno));
        free(o->tmp);
        o->tmp = NULL;
        goto fail;
      }
      if (exists && fchmod(o->fd, mode) != 0) {
        s = wg__error(ctx, WG_EIO, "%s: cannot keep the mode %04o: %s", path,
                      (unsigned)mode, strerror(errno));
        goto fail;
      }
    }
  }
  if (!(o->raw = fdopen(o->fd, "wb"))) {
    s = wg__error(ctx, WG_ENOMEM, "%s: out of memory", path);
    goto fail;
  }
  o->stream = o->raw;
  int kind = strcmp(path, "-") == 0 ? Z_NONE : compression_of_name(path);
  if (kind != Z_NONE && z_begin(o, kind) != 0) {
    s = wg__error(ctx, WG_ENOMEM, "%s: cannot start the compressor", path);
    goto fail;
  }
  *out = o;
  return WG_OK;
fail:
  wg_outfile_abort(&o);
  return s;
}

FILE *wg_outfile_stream(wg_outfile_t *o) { return o ? o->stream : NULL; }

wg_status wg_outfile_commit(wg_ctx_t *ctx, wg_outfile_t **po) {
  if (!po || !*po) return wg__error(ctx, WG_EINVAL, "wg_outfile_commit: NULL handle");
  wg_outfile_t *o = *po;
  int err = 0;
  if (o->stream != o->raw) { /* finishes the compressed stream */
    int bad = ferror(o->stream);
    if (fclose(o->stream) != 0 || bad) err = o->zerr ? o->zerr : errno ? errno : EIO;
    o->stream = NULL;
    z_end(o);
  }
  if (!err) {
    errno = 0;
    if (fflush(o->raw) != 0 || ferror(o->raw)) err = errno ? errno : EIO;
  }
  if (!err && o->tmp && fsync(o->fd) != 0) err = errno;
  if (!err) {
    int r = fclose(o->raw);
    o->raw = NULL;
    o->fd = -1;
    if (r != 0) err = errno;
  }
  if (err) {
    wg_status s = wg__error(ctx, WG_EIO, "%s: write failed: %s", o->user, strerror(err));
    wg_outfile_abort(po);
    return s;
  }
  if (o->tmp) {
    if (rename(o->tmp, o->target) != 0) {
      wg_status s = wg__error(ctx, WG_EIO, "%s: cannot rename the finished file into "
                              "place: %s", o->user, strerror(errno));
      wg_outfile_abort(po);
      return s;
    }
    free(o->tmp);
    o->tmp = NULL;
    char *dir = folder_of(o->target); /* the rename itself, on disk */
    int dfd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    if (dfd >= 0) {
      fsync(dfd);
      close(dfd);
    }
    free(dir);
  }
  free_outfile(o);
  *po = NULL;
  return WG_OK;
}
