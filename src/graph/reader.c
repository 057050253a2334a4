/* Line reader over plain, gzip, xz and bzip2 input (see reader.h).
 *
 * Raw bytes come in 256 KiB reads (or straight from the caller's memory),
 * are decoded by zlib, liblzma or libbz2 into the line buffer, and lines are
 * cut with memchr. The compression is sniffed from the magic bytes, not the
 * file name, so a misnamed file still reads. Concatenated gzip members and
 * bzip2 streams (pigz, pbzip2) are decoded one after another, xz through
 * LZMA_CONCATENATED. A stream that ends before its end marker is reported as
 * truncated; that is the common failure of an interrupted download.
 */
#include "graph/reader.h"

#include <bzlib.h>
#include <errno.h>
#include <fcntl.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define IN_CHUNK ((size_t)256 << 10)
#define FILE_BUF ((size_t)2 << 20)   /* > WG__LINE_MAX + chunk */
#define MEM_BUF_MIN ((size_t)64 << 10)

typedef union decoder {
  z_stream z;
  lzma_stream x;
  bz_stream b;
} decoder;

static const char *const comp_names[] = {"", "gz", "xz", "bz2"};

const char *wg__compression_name(wg__compression c) {
  return (unsigned)c < 4 ? comp_names[c] : "?";
}

wg_status wg__reader_fail(wg__reader *r, wg_status status, const char *fmt,
                          ...) {
  char msg[WG__ERRMSG];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return wg__error(r->ctx, status, "%s:%llu: %s", r->display,
                   (unsigned long long)r->line, msg);
}

/* ---- raw input ------------------------------------------------------------ */

/* Makes raw bytes available in in[in_pos, in_len) unless the source is
 * exhausted (raw_eof). */
static wg_status raw_fill(wg__reader *r) {
  if (r->in_pos < r->in_len || r->raw_eof) return WG_OK;
  if (r->fd < 0) {
    if (r->in == NULL && r->mem_size > 0) {
      r->in = r->mem;
      r->in_len = r->mem_size;
      r->in_pos = 0;
      r->raw_done = r->mem_size;
    } else {
      r->raw_eof = 1;
    }
    return WG_OK;
  }
  for (;;) {
    ssize_t got = read(r->fd, r->in_buf, IN_CHUNK);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0)
      return wg__error(r->ctx, WG_EIO, "%s: read error: %s", r->display,
                       strerror(errno));
    r->in = r->in_buf;
    r->in_len = (size_t)got;
    r->in_pos = 0;
    r->raw_done += (uint64_t)got;
    if (got == 0) r->raw_eof = 1;
    return WG_OK;
  }
}

/* ---- decoders ---------------------------------------------------------------- */

static wg_status corrupt(wg__reader *r, const char *detail) {
  return wg__error(r->ctx, WG_EPARSE, "%s: corrupt %s stream (%s) after %llu decompressed bytes",
                   r->display, wg__compression_name(r->comp), detail,
                   (unsigned long long)r->out_done);
}

static wg_status truncated(wg__reader *r) {
  return wg__error(r->ctx, WG_EPARSE,
                   "%s: truncated %s stream: the file ends before the end of "
                   "the compressed data (after %llu decompressed bytes)",
                   r->display, wg__compression_name(r->comp),
                   (unsigned long long)r->out_done);
}

static int starts_with(const unsigned char *p, size_t len, const char *magic,
                       size_t mlen) {
  return len >= mlen && memcmp(p, magic, mlen) == 0;
}

static wg_status dec_init(wg__reader *r) {
  decoder *d = calloc(1, sizeof *d);
  if (!d) return wg__error(r->ctx, WG_ENOMEM, "%s: cannot allocate a decoder", r->display);
  r->dec = d;
  int ok = 1;
  switch (r->comp) {
    case WG__COMP_GZ:
      ok = inflateInit2(&d->z, 15 + 16) == Z_OK;
      break;
    case WG__COMP_XZ: {
      lzma_stream init = LZMA_STREAM_INIT;
      d->x = init;
      ok = lzma_stream_decoder(&d->x, wg_ctx_memory_limit(r->ctx),
                               LZMA_CONCATENATED) == LZMA_OK;
      break;
    }
    case WG__COMP_BZ2:
      ok = BZ2_bzDecompressInit(&d->b, 0, 0) == BZ_OK;
      break;
    default:
      break;
  }
  if (!ok) {
    free(d);
    r->dec = NULL;
    return wg__error(r->ctx, WG_ENOMEM, "%s: cannot start the %s decoder",
                     r->display, wg__compression_name(r->comp));
  }
  return WG_OK;
}

static void dec_end(wg__reader *r) {
  decoder *d = r->dec;
  if (!d) return;
  switch (r->comp) {
    case WG__COMP_GZ: inflateEnd(&d->z); break;
    case WG__COMP_XZ: lzma_end(&d->x); break;
    case WG__COMP_BZ2: BZ2_bzDecompressEnd(&d->b); break;
    default: break;
  }
  free(d);
  r->dec = NULL;
}

/* After a gzip member or bzip2 stream ends: another may follow. */
static wg_status next_member(wg__reader *r) {
  wg_status st = raw_fill(r);
  if (st != WG_OK) return st;
  if (r->raw_eof) {
    r->dec_done = 1;
    return WG_OK;
  }
  const unsigned char *p = r->in + r->in_pos;
  size_t len = r->in_len - r->in_pos;
  decoder *d = r->dec;
  if (r->comp == WG__COMP_GZ && len > 0 && p[0] == 0) {
    /* zero padding after the last member (tape blocks, dd): gzip accepts it
     * with a warning; so do we, as long as nothing but zeros follows */
    for (;;) {
      for (size_t i = r->in_pos; i < r->in_len; i++)
        if (r->in[i] != 0)
          return corrupt(r, "unexpected data after the zero padding that follows the "
                            "compressed stream");
      r->in_pos = r->in_len;
      if (r->raw_eof) break;
      if ((st = raw_fill(r)) != WG_OK) return st;
      if (r->in_pos == r->in_len && r->raw_eof) break;
    }
    r->dec_done = 1;
    return WG_OK;
  }
  if (r->comp == WG__COMP_GZ && (len < 2 || starts_with(p, len, "\x1f\x8b", 2))) {
    if (inflateReset(&d->z) != Z_OK) return corrupt(r, "cannot restart");
    return WG_OK;
  }
  if (r->comp == WG__COMP_BZ2 && (len < 3 || starts_with(p, len, "BZh", 3))) {
    BZ2_bzDecompressEnd(&d->b);
    memset(&d->b, 0, sizeof d->b);
    if (BZ2_bzDecompressInit(&d->b, 0, 0) != BZ_OK)
      return wg__error(r->ctx, WG_ENOMEM, "%s: cannot restart the bz2 decoder", r->display);
    return WG_OK;
  }
  return corrupt(r, "unexpected data after the end of the compressed stream");
}

/* Decodes into out[0, room) and sets *produced; produced == 0 only at the
 * end of the stream (r->dec_done) or on error. */
static wg_status dec_run(wg__reader *r, char *out, size_t room, size_t *produced) {
  decoder *d = r->dec;
  wg_status st;
  *produced = 0;
  while (*produced == 0 && !r->dec_done) {
    if ((st = raw_fill(r)) != WG_OK) return st;
    const unsigned char *in = r->in + r->in_pos;
    size_t avail = r->in_len - r->in_pos, used = 0, made = 0;
    if (r->comp == WG__COMP_GZ) {
      if (avail == 0 && r->raw_eof) return truncated(r);
      d->z.next_in = (unsigned char *)(uintptr_t)in;
      d->z.avail_in = (uInt)(avail > UINT32_MAX ? UINT32_MAX : avail);
      d->z.next_out = (unsigned char *)out;
      d->z.avail_out = (uInt)room;
      int ret = inflate(&d->z, Z_NO_FLUSH);
      used = (size_t)(d->z.next_in - in);
      made = room - d->z.avail_out;
      r->in_pos += used;
      if (ret == Z_STREAM_END) {
        if ((st = next_member(r)) != WG_OK) return st;
      } else if (ret == Z_MEM_ERROR) {
        return wg__error(r->ctx, WG_ENOMEM, "%s: out of memory in gzip decoder", r->display);
      } else if (ret == Z_DATA_ERROR || ret == Z_NEED_DICT || ret == Z_STREAM_ERROR) {
        return corrupt(r, d->z.msg ? d->z.msg : "invalid data");
      } else if (ret == Z_BUF_ERROR && used == 0 && made == 0 && r->raw_eof) {
        return truncated(r);
      }
    } else if (r->comp == WG__COMP_XZ) {
      d->x.next_in = in;
      d->x.avail_in = avail;
      d->x.next_out = (uint8_t *)out;
      d->x.avail_out = room;
      lzma_ret ret = lzma_code(&d->x, r->raw_eof ? LZMA_FINISH : LZMA_RUN);
      used = (size_t)(d->x.next_in - in);
      made = room - d->x.avail_out;
      r->in_pos += used;
      if (ret == LZMA_STREAM_END) {
        r->dec_done = 1;
      } else if (ret == LZMA_MEM_ERROR || ret == LZMA_MEMLIMIT_ERROR) {
        return wg__error(r->ctx, WG_ENOMEM,
                         "%s: the xz decoder needs more memory than allowed", r->display);
      } else if (ret == LZMA_FORMAT_ERROR) {
        return corrupt(r, "not an xz stream");
      } else if (ret == LZMA_OPTIONS_ERROR) {
        return corrupt(r, "unsupported xz options");
      } else if (ret == LZMA_DATA_ERROR) {
        return corrupt(r, "compressed data is corrupt");
      } else if (ret == LZMA_BUF_ERROR) {
        return truncated(r);
      } else if (ret != LZMA_OK) {
        return corrupt(r, "decoder error");
      } else if (used == 0 && made == 0 && r->raw_eof) {
        return truncated(r);
      }
    } else {
      if (avail == 0 && r->raw_eof) return truncated(r);
      d->b.next_in = (char *)(uintptr_t)in;
      d->b.avail_in = (unsigned)(avail > UINT32_MAX ? UINT32_MAX : avail);
      d->b.next_out = out;
      d->b.avail_out = (unsigned)(room > UINT32_MAX ? UINT32_MAX : room);
      int ret = BZ2_bzDecompress(&d->b);
      used = (size_t)((const unsigned char *)d->b.next_in - in);
      made = (size_t)(d->b.next_out - out);
      r->in_pos += used;
      if (ret == BZ_STREAM_END) {
        if ((st = next_member(r)) != WG_OK) return st;
      } else if (ret == BZ_MEM_ERROR) {
        return wg__error(r->ctx, WG_ENOMEM, "%s: out of memory in bz2 decoder", r->display);
      } else if (ret != BZ_OK) {
        return corrupt(r, "compressed data is corrupt");
      } else if (used == 0 && made == 0 && r->raw_eof) {
        return truncated(r);
      }
    }
    *produced += made;
    out += made;
    room -= made;
  }
  return WG_OK;
}

/* Appends decoded bytes at buf[end, cap); sets eof when none are left. */
static wg_status decode_more(wg__reader *r) {
  size_t room = r->cap - r->end, made = 0;
  wg_status st;
  if (r->comp == WG__COMP_NONE) {
    if ((st = raw_fill(r)) != WG_OK) return st;
    size_t avail = r->in_len - r->in_pos;
    made = avail < room ? avail : room;
    if (made) memcpy(r->buf + r->end, r->in + r->in_pos, made);
    r->in_pos += made;
    if (made == 0 && r->raw_eof) r->eof = 1;
  } else {
    if ((st = dec_run(r, r->buf + r->end, room, &made)) != WG_OK) return st;
    if (made == 0 && r->dec_done) r->eof = 1;
  }
  r->end += made;
  r->out_done += made;
  wg__progress(r->ctx, "parsing", r->raw_done, r->raw_total);
  return WG_OK;
}

/* Moves the unread tail to the front, grows a full buffer (memory sources
 * start small) and decodes the next chunk behind it. */
static wg_status fill(wg__reader *r) {
  if (r->pos > 0) {
    size_t keep = r->end - r->pos;
    memmove(r->buf, r->buf + r->pos, keep);
    r->scanned -= r->pos;
    r->end = keep;
    r->pos = 0;
  }
  if (r->end == r->cap) {
    if (r->cap >= FILE_BUF || r->end > WG__LINE_MAX) {
      r->line++;
      return wg__reader_fail(r, WG_EPARSE, "line longer than %zu bytes (binary data?)",
                             WG__LINE_MAX);
    }
    size_t cap = r->cap * 2 > FILE_BUF ? FILE_BUF : r->cap * 2;
    char *nb = realloc(r->buf, cap + 1);
    if (!nb) return wg__error(r->ctx, WG_ENOMEM, "%s: cannot grow the line buffer", r->display);
    r->buf = nb;
    r->cap = cap;
  }
  return decode_more(r);
}

/* ---- open / close -------------------------------------------------------------- */

static wg_status start(wg__reader *r) {
  wg_status st;
  /* Enough raw bytes to see the longest magic (xz: 6). */
  if ((st = raw_fill(r)) != WG_OK) return st;
  if (r->fd >= 0) {
    while (r->in_len < 6 && !r->raw_eof) {
      ssize_t got = read(r->fd, r->in_buf + r->in_len, IN_CHUNK - r->in_len);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0)
        return wg__error(r->ctx, WG_EIO, "%s: read error: %s", r->display, strerror(errno));
      if (got == 0) r->raw_eof = 1;
      r->in_len += (size_t)got;
      r->raw_done += (uint64_t)got;
    }
  }
  const unsigned char *p = r->in ? r->in : (const unsigned char *)"";
  size_t len = r->in_len;
  if (starts_with(p, len, "\x1f\x8b", 2))
    r->comp = WG__COMP_GZ;
  else if (starts_with(p, len, "\xfd" "7zXZ\0", 6))
    r->comp = WG__COMP_XZ;
  else if (starts_with(p, len, "BZh", 3) && len >= 4 && p[3] >= '1' && p[3] <= '9')
    r->comp = WG__COMP_BZ2;
  else if (starts_with(p, len, "\x28\xb5\x2f\xfd", 4))
    return wg__error(r->ctx, WG_ENOTSUP, "%s: zstd-compressed input is not supported; "
                     "decompress it (zstd -d) or recompress it with gzip, xz or bzip2",
                     r->display);
  else if (starts_with(p, len, "\x04\x22\x4d\x18", 4))
    return wg__error(r->ctx, WG_ENOTSUP, "%s: lz4-compressed input is not supported; "
                     "decompress it (lz4 -d) or recompress it with gzip, xz or bzip2",
                     r->display);
  if (r->comp != WG__COMP_NONE && (st = dec_init(r)) != WG_OK) return st;

  /* Files get the full buffer; a memory source the smallest that helps. */
  if (r->fd >= 0 || r->comp != WG__COMP_NONE)
    r->cap = r->fd >= 0 ? FILE_BUF : MEM_BUF_MIN;
  else
    r->cap = r->mem_size < MEM_BUF_MIN ? MEM_BUF_MIN : (r->mem_size < FILE_BUF ? r->mem_size : FILE_BUF);
  r->buf = malloc(r->cap + 1);
  if (!r->buf) return wg__error(r->ctx, WG_ENOMEM, "%s: cannot allocate the line buffer", r->display);
  return WG_OK;
}

wg_status wg__reader_open(wg_ctx_t *ctx, wg__reader *r, const char *path,
                          const char *display) {
  struct stat sb;
  wg_status st;
  memset(r, 0, sizeof *r);
  r->ctx = ctx;
  r->display = display ? display : path;
  /* "-": standard input (a copy of it, closed with the reader) */
  r->fd = strcmp(path, "-") == 0 ? fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3)
                                 : open(path, O_RDONLY | O_CLOEXEC);
  if (r->fd < 0) {
    int e = errno;
    if (e == ENOENT) return wg__error(ctx, WG_ENOENT, "%s: no such file", r->display);
    return wg__error(ctx, WG_EIO, "%s: cannot open: %s", r->display, strerror(e));
  }
  if (fstat(r->fd, &sb) != 0) {
    st = wg__error(ctx, WG_EIO, "%s: cannot stat: %s", r->display, strerror(errno));
    goto fail;
  }
  if (S_ISDIR(sb.st_mode)) {
    st = wg__error(ctx, WG_EIO, "%s: is a directory, not a graph file", r->display);
    goto fail;
  }
  if (S_ISREG(sb.st_mode)) r->raw_total = (uint64_t)sb.st_size;
  r->in_buf = malloc(IN_CHUNK);
  if (!r->in_buf) {
    st = wg__error(ctx, WG_ENOMEM, "%s: cannot allocate the input buffer", r->display);
    goto fail;
  }
  if ((st = start(r)) != WG_OK) goto fail;
  return WG_OK;
fail:
  wg__reader_close(r);
  return st;
}

wg_status wg__reader_open_memory(wg_ctx_t *ctx, wg__reader *r,
                                 const void *data, size_t size,
                                 const char *display) {
  memset(r, 0, sizeof *r);
  r->ctx = ctx;
  r->display = display ? display : "<memory>";
  r->fd = -1;
  r->mem = data;
  r->mem_size = data ? size : 0;
  r->raw_total = r->mem_size;
  wg_status st = start(r);
  if (st != WG_OK) wg__reader_close(r);
  return st;
}

void wg__reader_close(wg__reader *r) {
  if (!r) return;
  dec_end(r);
  if (r->fd >= 0) close(r->fd);
  free(r->in_buf);
  free(r->buf);
  const char *display = r->display;
  wg_ctx_t *ctx = r->ctx;
  memset(r, 0, sizeof *r);
  r->fd = -1;
  r->display = display;
  r->ctx = ctx;
}

/* ---- reading ------------------------------------------------------------------- */

wg_status wg__reader_peek(wg__reader *r, size_t want, const char **head,
                          size_t *len) {
  wg_status st;
  if (want > WG__LINE_MAX) want = WG__LINE_MAX;
  while (r->end - r->pos < want && !r->eof) {
    if (r->end == r->cap && r->pos == 0 && r->cap >= want) break;
    if ((st = fill(r)) != WG_OK) return st;
  }
  *head = r->buf + r->pos;
  *len = r->end - r->pos;
  return WG_OK;
}

int wg__reader_line(wg__reader *r, char **line, size_t *len) {
  for (;;) {
    char *start = r->buf + r->pos;
    char *nl = memchr(r->buf + r->scanned, '\n', r->end - r->scanned);
    size_t l;
    if (nl) {
      l = (size_t)(nl - start);
      r->pos = r->scanned = (size_t)(nl + 1 - r->buf);
    } else if (r->eof) {
      if (r->pos == r->end) return 0;
      l = r->end - r->pos;
      r->pos = r->scanned = r->end; /* buf[cap] is spare: room for the NUL */
    } else {
      r->scanned = r->end;
      wg_status st = fill(r);
      if (st != WG_OK) return st;
      continue;
    }
    r->line++;
    if (r->line == 1 && l >= 3 && memcmp(start, "\xef\xbb\xbf", 3) == 0) {
      start += 3; /* a UTF-8 byte-order mark: not part of any text format */
      l -= 3;
    }
    if (l > WG__LINE_MAX)
      return wg__reader_fail(r, WG_EPARSE, "line longer than %zu bytes (binary data?)",
                             WG__LINE_MAX);
    if (l && start[l - 1] == '\r') l--;
    start[l] = '\0';
    r->line_end = start + l;
    *line = start;
    *len = l;
    return 1;
  }
}

wg_status wg__reader_copy_to_fd(wg__reader *r, int fd, uint64_t max_bytes,
                                wg__copy_check check, void *user) {
  wg_status st;
  uint64_t written = 0;
  for (;;) {
    size_t len = r->end - r->pos;
    const char *p = r->buf + r->pos;
    if (check && len && (st = check(user, r, (const unsigned char *)p, len, written)) != WG_OK)
      return st;
    if (len > max_bytes - written) {
      char b[32];
      return wg__error(r->ctx, WG_EFULL,
                       "%s: decompresses to more than %s, the most it may take in the "
                       "temporary folder", r->display,
                       wg__human_bytes(max_bytes, b, sizeof b));
    }
    written += len;
    while (len > 0) {
      ssize_t w = write(fd, p, len);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0)
        return wg__error(r->ctx, WG_EIO, "%s: cannot write its decompressed copy in the "
                         "temporary folder: %s", r->display, strerror(errno));
      p += w;
      len -= (size_t)w;
    }
    r->pos = r->scanned = r->end;
    if (r->eof) return WG_OK;
    if ((st = fill(r)) != WG_OK) return st;
  }
}

/* ---- field errors ------------------------------------------------------------------ */

/* Copies the whitespace-delimited token at p into out for a message. */
static const char *token(const char *p, const char *end, char *out, size_t cap) {
  size_t i = 0;
  while (p < end && *p != ' ' && *p != '\t' && i + 1 < cap) {
    unsigned char c = (unsigned char)*p++;
    out[i++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
  }
  if (i + 1 == cap && i >= 4) memcpy(out + i - 3, "...", 3);
  out[i] = '\0';
  return out;
}

wg_status wg__field_error(wg__reader *r, const char *p, const char *what,
                          uint64_t max) {
  char tok[48];
  const char *end = r->line_end;
  p = wg__skip_blank(p);
  if (p >= end) return wg__reader_fail(r, WG_EPARSE, "missing %s", what);
  if (*p == '\0')
    return wg__reader_fail(r, WG_EPARSE, "NUL byte in the %s field (binary data?)", what);
  if (*p == '-' && wg__is_digit(p[1]))
    return wg__reader_fail(r, WG_EPARSE, "%s %s is negative", what,
                           token(p, end, tok, sizeof tok));
  if (wg__is_digit(*p)) {
    const char *q = p;
    uint64_t v = 0;
    int over = wg__parse_u64(&q, &v);
    if (q == end || *q == ' ' || *q == '\t') {
      if (over || v > max)
        return wg__reader_fail(r, WG_EOVERFLOW, "%s %s is too large (the largest allowed is %llu)",
                               what, token(p, end, tok, sizeof tok), (unsigned long long)max);
      return wg__reader_fail(r, WG_EPARSE, "cannot read the %s", what); /* not reached */
    }
    if (*q == '\0')
      return wg__reader_fail(r, WG_EPARSE, "NUL byte in the %s field (binary data?)", what);
  }
  return wg__reader_fail(r, WG_EPARSE, "%s '%s' is not a non-negative integer", what,
                         token(p, end, tok, sizeof tok));
}

wg_status wg__line_trailing_error(wg__reader *r, const char *p,
                                  const char *what) {
  char tok[48];
  if (*p == '\0') return wg__reader_fail(r, WG_EPARSE, "NUL byte in the line (binary data?)");
  return wg__reader_fail(r, WG_EPARSE, "unexpected extra field '%s' (%s)",
                         token(p, r->line_end, tok, sizeof tok), what);
}
