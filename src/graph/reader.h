/* The text loaders' input: a file or a memory buffer, decompressed on the
 * fly when it starts like gzip, xz or bzip2, read line by line.
 *
 * Lines are handed out in place from one large buffer: the reader finds the
 * next '\n' with memchr, overwrites it (and a preceding '\r') with '\0' and
 * returns a pointer, so a line costs one memchr and no copy. A partial line
 * at the end of a chunk is moved to the front before the next chunk is
 * decompressed behind it. Every line is NUL-terminated, which lets the
 * number parsers below stop at the terminator without bounds checks; an
 * embedded NUL (binary junk) then shows up as an unexpected character.
 *
 * The small parsing helpers every text format shares live here as static
 * inline functions so the hot loops inline them.
 */
#ifndef WG_GRAPH_READER_H
#define WG_GRAPH_READER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/internal.h"

/* Longest accepted line; longer ones are an error, not unbounded growth. */
#define WG__LINE_MAX ((size_t)1 << 20)

typedef enum wg__compression {
  WG__COMP_NONE = 0,
  WG__COMP_GZ,
  WG__COMP_XZ,
  WG__COMP_BZ2
} wg__compression;

typedef struct wg__reader {
  wg_ctx_t *ctx;
  const char *display;       /* name used in messages (not owned) */
  int fd;                    /* -1 for a memory source */
  const unsigned char *mem;  /* memory source */
  size_t mem_size;
  wg__compression comp;
  void *dec;                 /* decoder state for comp != NONE */
  int dec_done;              /* the compressed stream ended cleanly */
  /* Raw (possibly compressed) input waiting to be decoded. */
  unsigned char *in_buf;     /* owned, file sources only */
  const unsigned char *in;
  size_t in_len, in_pos;
  int raw_eof;               /* no more raw bytes */
  /* Decoded bytes: [pos, end) are unread; buf[cap] is room for a NUL. */
  char *buf;
  size_t cap, pos, end, scanned;
  int eof;                   /* no more decoded bytes will come */
  uint64_t line;             /* 1-based number of the line last returned */
  const char *line_end;      /* its terminating NUL */
  uint64_t raw_total;        /* size of the raw source (0 if unknown) */
  uint64_t raw_done;         /* raw bytes consumed */
  uint64_t out_done;         /* decoded bytes produced */
} wg__reader;

/* Opens path for reading; display names it in messages. Missing files give
 * WG_ENOENT, directories and unreadable files WG_EIO. On failure the reader
 * needs no close (closing it is harmless). */
wg_status wg__reader_open(wg_ctx_t *ctx, wg__reader *r, const char *path,
                          const char *display);
/* Reads from data[0, size), which must outlive the reader. */
wg_status wg__reader_open_memory(wg_ctx_t *ctx, wg__reader *r,
                                 const void *data, size_t size,
                                 const char *display);
/* NULL-safe; frees everything and leaves a closed reader. */
void wg__reader_close(wg__reader *r);

/* Makes at least `want` decoded bytes available without consuming them
 * (fewer at the end of input) and points *head at them. */
wg_status wg__reader_peek(wg__reader *r, size_t want, const char **head,
                          size_t *len);

/* Next line: returns 1 with *line (NUL-terminated, no line end) and *len,
 * 0 at the end of input, or a negative status with the context's message
 * set. r->line is the line's 1-based number. */
int wg__reader_line(wg__reader *r, char **line, size_t *len);

/* Copies all remaining decoded bytes to fd (for loaders that need a real
 * uncompressed file). */
/* check, when given, sees each decoded chunk (offset: bytes before it) and
 * stops the copy with its error; max_bytes bounds what is written (the
 * error then names r->display, as every error of the copy does). */
typedef wg_status (*wg__copy_check)(void *user, wg__reader *r, const unsigned char *p,
                                    size_t len, uint64_t offset);
wg_status wg__reader_copy_to_fd(wg__reader *r, int fd, uint64_t max_bytes,
                                wg__copy_check check, void *user);

/* "", "gz", "xz", "bz2". */
const char *wg__compression_name(wg__compression c);

/* Records "display:line: message" and returns status. */
wg_status wg__reader_fail(wg__reader *r, wg_status status, const char *fmt,
                          ...) WG__PRINTF(3, 4);

/* ---- field parsing ---------------------------------------------------------- */

static inline const char *wg__skip_blank(const char *p) {
  while (*p == ' ' || *p == '\t') p++;
  return p;
}

static inline int wg__is_digit(char c) { return (unsigned)(c - '0') < 10u; }

/* Parses an unsigned decimal at *pp (which must start with a digit):
 * 0 on success (advancing *pp past the digits), -1 if it overflows
 * uint64. The caller checks what follows. */
static inline int wg__parse_u64(const char **pp, uint64_t *out) {
  const char *p = *pp;
  uint64_t v = 0;
  /* Up to 19 digits cannot overflow; only longer numbers need checks. */
  const char *safe = p + 19;
  while (p < safe && wg__is_digit(*p)) v = v * 10 + (uint64_t)(*p++ - '0');
  while (wg__is_digit(*p)) {
    if (__builtin_mul_overflow(v, 10u, &v) ||
        __builtin_add_overflow(v, (uint64_t)(*p - '0'), &v)) {
      while (wg__is_digit(*p)) p++;
      *pp = p;
      return -1;
    }
    p++;
  }
  *pp = p;
  *out = v;
  return 0;
}

/* Reports why the field at p could not be read as an unsigned number of at
 * most max: missing, negative, not a number, NUL byte, or too large
 * (WG_EOVERFLOW). Always returns an error status. */
wg_status wg__field_error(wg__reader *r, const char *p, const char *what,
                          uint64_t max);

/* Reads one unsigned field of the current line into *out: blanks, digits,
 * then a blank or the end of the line. `what` names the field ("source
 * vertex", "weight") for the message on failure. */
static inline wg_status wg__field_u64(wg__reader *r, const char **pp,
                                      const char *what, uint64_t max,
                                      uint64_t *out) {
  const char *p = wg__skip_blank(*pp);
  if (WG__LIKELY(wg__is_digit(*p))) {
    uint64_t v;
    if (WG__LIKELY(wg__parse_u64(&p, &v) == 0 && v <= max &&
                   (*p == ' ' || *p == '\t' || p == r->line_end))) {
      *pp = p;
      *out = v;
      return WG_OK;
    }
  }
  *out = 0;
  return wg__field_error(r, *pp, what, max);
}

/* WG_OK if only blanks remain on the line after p, else an error naming
 * the extra field (or the NUL byte). `what` says what the line should hold
 * ("an arc line has 3 fields"). */
wg_status wg__line_trailing_error(wg__reader *r, const char *p,
                                  const char *what);
static inline wg_status wg__line_end(wg__reader *r, const char *p,
                                     const char *what) {
  p = wg__skip_blank(p);
  if (WG__LIKELY(p == r->line_end)) return WG_OK;
  return wg__line_trailing_error(r, p, what);
}

/* Comments may say anything but must not hold a NUL byte (binary junk). */
static inline wg_status wg__comment_check(wg__reader *r, const char *p) {
  if (WG__UNLIKELY(memchr(p, '\0', (size_t)(r->line_end - p)) != NULL))
    return wg__reader_fail(r, WG_EPARSE, "NUL byte in the line (binary data?)");
  return WG_OK;
}

#endif
