/* OpenStreetMap (.osm XML and .osm.pbf) to a road graph for cars.
 *
 * libreadosm streams nodes and ways to two callbacks. Nodes go into one
 * array of (id, lat, lon) records (sorted afterwards if the file was not
 * already in id order, which extracts normally are); ways whose tags say a
 * car may drive on them keep their node refs in one flat array. After the
 * parse, each ref is resolved by binary search, every node that ends a way
 * segment becomes a vertex (dense ids in ascending OSM id order, so internal
 * ids keep the file's order like every other loader), and each segment
 * becomes one or two arcs weighted by its haversine length in decimetres.
 * Two passes over the kept refs are cheaper than a hash table of all nodes
 * and keep the memory at 24 bytes per node plus 8 per kept ref.
 *
 * readosm trusts its input: it dereferences missing XML attributes
 * (<tag k="x"/> crashes it), leaks its parser on malformed XML, and
 * allocates whatever sizes a PBF block header claims. So the file is
 * checked first: XML by a pass of expat (the parser readosm uses, so both
 * see the same document) that also gives line numbers, PBF by walking its
 * blob framing and inflating every block against the sizes it declares.
 * A file that passes is handed to readosm; see docs/osm.md.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <expat.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <readosm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "graph/loaders.h"

#define EARTH_RADIUS_M 6371008.8
#define PBF_MAX_HEADER (64u * 1024u)         /* BlobHeader limit of the spec */
#define PBF_MAX_BLOB (32u * 1024u * 1024u)   /* Blob and raw_size limit */

typedef struct osm_node {
  int64_t id;
  double lat, lon;
} osm_node;

enum { DIR_BOTH = 0, DIR_FORWARD = 1, DIR_BACKWARD = 2 };

typedef struct osm_way {
  uint64_t first; /* index into refs */
  uint32_t count;
  uint32_t dir;
  wg_road_arc fwd, bwd; /* road attributes each way (length filled per arc) */
} osm_way;

typedef struct osm_state {
  wg_ctx_t *ctx;
  wg_status st; /* first failure inside a callback */
  osm_node *nodes;
  uint64_t n_nodes, cap_nodes;
  int nodes_sorted;
  uint64_t bad_nodes; /* negative id or coordinates out of range */
  int64_t *refs;      /* refs of kept ways; later node indices or -1 */
  uint64_t n_refs, cap_refs;
  osm_way *ways;
  uint64_t n_ways, cap_ways;
  uint64_t ways_seen;
} osm_state;

/* ---- tag rules ---------------------------------------------------------- */

static const char *const car_highways[] = {
    "motorway",      "trunk",          "primary",        "secondary",
    "tertiary",      "unclassified",   "residential",    "service",
    "living_street", "road",           "motorway_link",  "trunk_link",
    "primary_link",  "secondary_link", "tertiary_link",
};

static int in_list(const char *v, const char *const *list, size_t len) {
  for (size_t i = 0; i < len; i++)
    if (strcmp(v, list[i]) == 0) return 1;
  return 0;
}

static int is_no_access(const char *v) {
  /* Values that shut cars out; "destination", "permissive", "yes", ...
   * let them in. */
  static const char *const no[] = {"no", "private", "agricultural", "forestry",
                                   "emergency", "psv"};
  return in_list(v, no, sizeof no / sizeof *no);
}

/* Returns -1 to drop the way, else its DIR_* direction. */
static int way_rule(const readosm_way *way) {
  const char *highway = NULL, *oneway = NULL, *junction = NULL, *area = NULL;
  const char *access = NULL, *vehicle = NULL, *motor_vehicle = NULL,
             *motorcar = NULL;
  for (int i = 0; i < way->tag_count; i++) {
    const char *k = way->tags[i].key, *v = way->tags[i].value;
    if (!k || !v) continue;
    if (strcmp(k, "highway") == 0) highway = v;
    else if (strcmp(k, "oneway") == 0) oneway = v;
    else if (strcmp(k, "junction") == 0) junction = v;
    else if (strcmp(k, "area") == 0) area = v;
    else if (strcmp(k, "access") == 0) access = v;
    else if (strcmp(k, "vehicle") == 0) vehicle = v;
    else if (strcmp(k, "motor_vehicle") == 0) motor_vehicle = v;
    else if (strcmp(k, "motorcar") == 0) motorcar = v;
  }
  if (!highway ||
      !in_list(highway, car_highways, sizeof car_highways / sizeof *car_highways))
    return -1;
  if (area && strcmp(area, "yes") == 0) return -1;
  /* The most specific access tag present decides (OSM's access hierarchy):
   * access=private with motorcar=yes is open to cars. */
  const char *acc = motorcar ? motorcar
                    : motor_vehicle ? motor_vehicle
                    : vehicle ? vehicle
                    : access;
  if (acc && is_no_access(acc)) return -1;

  if (oneway) {
    if (!strcmp(oneway, "yes") || !strcmp(oneway, "true") || !strcmp(oneway, "1"))
      return DIR_FORWARD;
    if (!strcmp(oneway, "-1") || !strcmp(oneway, "reverse")) return DIR_BACKWARD;
    if (!strcmp(oneway, "no") || !strcmp(oneway, "false") || !strcmp(oneway, "0"))
      return DIR_BOTH;
    /* Other values ("reversible", "alternating", typos) fall through to
     * the defaults below. */
  }
  if (!strcmp(highway, "motorway") || !strcmp(highway, "motorway_link"))
    return DIR_FORWARD;
  if (junction && (!strcmp(junction, "roundabout") || !strcmp(junction, "circular")))
    return DIR_FORWARD;
  return DIR_BOTH;
}

/* ---- road attributes: maxspeed, lanes, class (docs/traffic.md) ------------ */

/* maxspeed value -> km/h, 0 when not understood. "50", "50 km/h", "30 mph",
 * "10 knots", "50;30" (the first), "none" (the class default), country
 * zones "XX:urban" 50, "XX:rural" 90, "XX:motorway" 120, "XX:trunk" 100,
 * "XX:living_street" 10, "XX:zone30" / "XX:zone:30" 30, "walk" 7. */
static unsigned osm_maxspeed(const char *v, int cls) {
  while (*v == ' ') v++;
  if (!strcmp(v, "none") || !strcmp(v, "signals") || !strcmp(v, "variable"))
    return wg_highway_default_kmh(cls);
  if (!strcmp(v, "walk")) return 7;
  const char *colon = strchr(v, ':');
  if (colon && !(*v >= '0' && *v <= '9')) {
    const char *z = colon + 1;
    if (!strcmp(z, "urban")) return 50;
    if (!strcmp(z, "rural")) return 90;
    if (!strcmp(z, "motorway")) return 120;
    if (!strcmp(z, "trunk")) return 100;
    if (!strcmp(z, "living_street")) return 10;
    if (!strncmp(z, "zone", 4)) {
      z += 4;
      if (*z == ':') z++;
      v = z; /* "zone30", "zone:30" */
    } else
      return 0;
  }
  char *end = NULL;
  errno = 0;
  double x = strtod(v, &end);
  if (end == v || errno || !(x > 0) || x > 400) return 0;
  while (*end == ' ') end++;
  if (!strncmp(end, "mph", 3)) x *= 1.609344;
  else if (!strncmp(end, "knots", 5)) x *= 1.852;
  else if (*end && *end != ';' && strncmp(end, "km/h", 4) && strncmp(end, "kmh", 3) &&
           strncmp(end, "kph", 3))
    return 0;
  long k = lround(x);
  return k < 1 ? 1 : k > 255 ? 255 : (unsigned)k;
}

static unsigned osm_lanes(const char *v) {
  if (!v) return 0;
  char *end = NULL;
  long k = strtol(v, &end, 10);
  return (end == v || k < 1) ? 0 : k > 16 ? 16 : (unsigned)k;
}

/* Fills w->fwd and w->bwd (lengths later) from the way's tags. */
static void way_road(const readosm_way *way, osm_way *w) {
  const char *hw = NULL, *ms = NULL, *msf = NULL, *msb = NULL, *ln = NULL, *lnf = NULL,
             *lnb = NULL;
  for (int i = 0; i < way->tag_count; i++) {
    const char *k = way->tags[i].key, *v = way->tags[i].value;
    if (!k || !v) continue;
    if (!strcmp(k, "highway")) hw = v;
    else if (!strcmp(k, "maxspeed")) ms = v;
    else if (!strcmp(k, "maxspeed:forward")) msf = v;
    else if (!strcmp(k, "maxspeed:backward")) msb = v;
    else if (!strcmp(k, "lanes")) ln = v;
    else if (!strcmp(k, "lanes:forward")) lnf = v;
    else if (!strcmp(k, "lanes:backward")) lnb = v;
  }
  int cls = WG_HW_UNKNOWN;
  for (int c = 1; hw && c < WG_HW_COUNT; c++)
    if (!strcmp(hw, wg_highway_name(c))) cls = c;
  const unsigned def = wg_highway_default_kmh(cls);
  unsigned all = ms ? osm_maxspeed(ms, cls) : 0;
  unsigned f = msf ? osm_maxspeed(msf, cls) : 0, b = msb ? osm_maxspeed(msb, cls) : 0;
  if (!f) f = all;
  if (!b) b = all;
  /* lanes counts both directions on a two-way road */
  unsigned total = osm_lanes(ln), lf = osm_lanes(lnf), lb = osm_lanes(lnb);
  const int oneway = w->dir != DIR_BOTH;
  if (oneway) {
    lf = lb = total ? total : (cls == WG_HW_MOTORWAY || cls == WG_HW_TRUNK ? 2 : 1);
  } else {
    if (!lf) lf = total >= 2 ? (lb && lb < total ? total - lb : total / 2) : 1;
    if (!lb) lb = total >= 2 ? (total > lf ? total - lf : total / 2) : 1;
  }
  w->fwd = (wg_road_arc){0, (uint8_t)(f ? f : def), (uint8_t)(lf ? lf : 1), (uint8_t)cls,
                         (uint8_t)(f != 0)};
  w->bwd = (wg_road_arc){0, (uint8_t)(b ? b : def), (uint8_t)(lb ? lb : 1), (uint8_t)cls,
                         (uint8_t)(b != 0)};
}

/* ---- readosm callbacks ---------------------------------------------------- */

static int on_node(const void *user, const readosm_node *node) {
  osm_state *s = (osm_state *)user;
  const double lat = node->latitude, lon = node->longitude;
  if (node->id < 0 || !(lat >= -90.0 && lat <= 90.0) ||
      !(lon >= -180.0 && lon <= 180.0)) {
    s->bad_nodes++;
    return READOSM_OK;
  }
  if (s->n_nodes == s->cap_nodes) {
    uint64_t cap = s->cap_nodes < 4096 ? 4096 : s->cap_nodes * 2;
    if ((s->st = wg__realloc(s->ctx, &s->nodes, cap, sizeof(osm_node),
                             "OSM nodes")) != WG_OK)
      return READOSM_ABORT;
    s->cap_nodes = cap;
  }
  if (s->n_nodes > 0 && s->nodes[s->n_nodes - 1].id >= node->id)
    s->nodes_sorted = 0;
  osm_node *o = &s->nodes[s->n_nodes++];
  o->id = node->id;
  o->lat = lat;
  o->lon = lon;
  if ((s->n_nodes & 0xffff) == 0) wg__progress(s->ctx, "osm", s->n_nodes, 0);
  return READOSM_OK;
}

static int on_way(const void *user, const readosm_way *way) {
  osm_state *s = (osm_state *)user;
  s->ways_seen++;
  int dir = way_rule(way);
  if (dir < 0 || way->node_ref_count <= 0) return READOSM_OK;
  const uint64_t count = (uint64_t)way->node_ref_count;
  if (s->n_ways == s->cap_ways) {
    uint64_t cap = s->cap_ways < 1024 ? 1024 : s->cap_ways * 2;
    if ((s->st = wg__realloc(s->ctx, &s->ways, cap, sizeof(osm_way),
                             "OSM ways")) != WG_OK)
      return READOSM_ABORT;
    s->cap_ways = cap;
  }
  if (s->n_refs + count > s->cap_refs) {
    uint64_t cap = s->cap_refs < 16384 ? 16384 : s->cap_refs * 2;
    while (cap < s->n_refs + count) cap *= 2;
    if ((s->st = wg__realloc(s->ctx, &s->refs, cap, sizeof(int64_t),
                             "OSM way refs")) != WG_OK)
      return READOSM_ABORT;
    s->cap_refs = cap;
  }
  osm_way *w = &s->ways[s->n_ways++];
  w->first = s->n_refs;
  w->count = (uint32_t)count;
  w->dir = (uint32_t)dir;
  way_road(way, w);
  for (uint64_t i = 0; i < count; i++) s->refs[s->n_refs++] = way->node_refs[i];
  return READOSM_OK;
}

/* ---- pre-validation: XML ------------------------------------------------ */

typedef struct xml_check {
  XML_Parser parser;
  const char *problem; /* first attribute problem, with its line */
  unsigned long line;
  char msg[160];       /* room for a problem that quotes a value */
} xml_check;

/* readosm reads ids as signed 64-bit integers and wraps larger ones: an id
 * (or reference) past 2^63 - 1 is reported, not silently changed. */
static const char *id_problem(xml_check *c, const char *el, const char **attr) {
  const char *name = strcmp(el, "nd") == 0 || strcmp(el, "member") == 0 ? "ref" : "id";
  if (strcmp(el, "node") && strcmp(el, "way") && strcmp(el, "relation") && strcmp(el, "nd") &&
      strcmp(el, "member"))
    return NULL;
  for (int i = 0; attr[i]; i += 2) {
    if (strcmp(attr[i], name) != 0) continue;
    errno = 0;
    char *end = NULL;
    (void)strtoll(attr[i + 1], &end, 10);
    if (errno == ERANGE) {
      snprintf(c->msg, sizeof c->msg, "<%s> %s %.40s is past 2^63 - 1, the largest id "
               "readosm can read", el, name, attr[i + 1]);
      return c->msg;
    }
  }
  return NULL;
}

static int has_attr(const char **attr, const char *name) {
  for (int i = 0; attr[i]; i += 2)
    if (strcmp(attr[i], name) == 0) return 1;
  return 0;
}

/* readosm copies these attributes with strlen/strcpy without a NULL check. */
static void xml_check_start(void *data, const char *el, const char **attr) {
  xml_check *c = (xml_check *)data;
  if (c->problem) return;
  const char *problem = NULL;
  if (strcmp(el, "tag") == 0 && !(has_attr(attr, "k") && has_attr(attr, "v")))
    problem = "<tag> needs both k and v attributes";
  else if (strcmp(el, "member") == 0 && !has_attr(attr, "role"))
    problem = "<member> needs a role attribute";
  else
    problem = id_problem(c, el, attr);
  if (problem) {
    c->problem = problem;
    c->line = (unsigned long)XML_GetCurrentLineNumber(c->parser);
    XML_StopParser(c->parser, XML_FALSE);
  }
}

/* The longest XML tag accepted (from '<' to its '>', quoted values
 * included). OSM caps values at 255 characters; expat 2.5 rescans a token
 * that spans input chunks from its start at every chunk, so one huge
 * attribute made parsing quadratic (8 MB: 5.4 s). */
#define XML_TAG_MAX ((uint64_t)1 << 20)

typedef struct tag_scan {
  int in_tag;
  char quote;       /* the quote of an open attribute value, or 0 */
  uint64_t len;     /* bytes of the current tag so far */
  unsigned long line, tag_line;
} tag_scan;

/* 0, or -1 when a tag grows past XML_TAG_MAX (t->tag_line says where). */
static int scan_tags(tag_scan *t, const char *p, size_t len) {
  for (size_t i = 0; i < len; i++) {
    const char ch = p[i];
    if (ch == '\n') t->line++;
    if (!t->in_tag) {
      if (ch == '<') {
        t->in_tag = 1;
        t->len = 1;
        t->quote = 0;
        t->tag_line = t->line;
      }
      continue;
    }
    if (++t->len > XML_TAG_MAX) return -1;
    if (t->quote) {
      if (ch == t->quote) t->quote = 0;
    } else if (ch == '"' || ch == '\'') {
      t->quote = ch;
    } else if (ch == '>') {
      t->in_tag = 0;
    }
  }
  return 0;
}

static wg_status check_xml(wg_ctx_t *ctx, FILE *f, const char *display) {
  wg_status st = WG_OK;
  xml_check c = {0};
  tag_scan tags = {.line = 1};
  char *buf = NULL;
  c.parser = XML_ParserCreate(NULL);
  if (!c.parser) return wg__error(ctx, WG_ENOMEM, "%s: cannot create an XML parser", display);
  XML_SetUserData(c.parser, &c);
  XML_SetElementHandler(c.parser, xml_check_start, NULL);
  const size_t chunk = 1 << 16;
  if ((st = wg__alloc(ctx, &buf, chunk, 1, "XML buffer")) != WG_OK) goto done;
  for (;;) {
    size_t len = fread(buf, 1, chunk, f);
    if (ferror(f)) {
      st = wg__error(ctx, WG_EIO, "%s: read error: %s", display, strerror(errno));
      goto done;
    }
    int last = feof(f) != 0;
    if (scan_tags(&tags, buf, len) != 0) {
      st = wg__error(ctx, WG_EPARSE, "%s:%lu: an XML tag longer than %llu bytes (OSM "
                     "values are at most 255 characters)", display, tags.tag_line,
                     (unsigned long long)XML_TAG_MAX);
      goto done;
    }
    if (XML_Parse(c.parser, buf, (int)len, last) != XML_STATUS_OK) {
      if (c.problem)
        st = wg__error(ctx, WG_EPARSE, "%s:%lu: %s", display, c.line, c.problem);
      else
        st = wg__error(ctx, WG_EPARSE, "%s:%lu: malformed OSM XML: %s", display,
                       (unsigned long)XML_GetCurrentLineNumber(c.parser),
                       XML_ErrorString(XML_GetErrorCode(c.parser)));
      goto done;
    }
    if (last) break;
  }
done:
  wg__free(&buf);
  XML_ParserFree(c.parser);
  return st;
}

/* ---- pre-validation: PBF -------------------------------------------------- */

/* Protobuf wire format: one field of a message in [p, end). Returns 0 on a
 * malformed field. For length-delimited fields *data / *len describe the
 * payload; for varints *value holds it. */
typedef struct pb_field {
  uint32_t number, type;
  uint64_t value;
  const unsigned char *data;
  uint64_t len;
} pb_field;

static int pb_varint(const unsigned char **p, const unsigned char *end, uint64_t *out) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (*p >= end) return 0;
    unsigned char b = *(*p)++;
    v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *out = v;
      return 1;
    }
  }
  return 0;
}

static int pb_next(const unsigned char **p, const unsigned char *end, pb_field *f) {
  uint64_t key;
  if (!pb_varint(p, end, &key)) return 0;
  f->number = (uint32_t)(key >> 3);
  f->type = (uint32_t)(key & 7);
  f->data = NULL;
  f->len = 0;
  if (f->number == 0 || (key >> 3) > 0x1fffffff) return 0;
  switch (f->type) {
  case 0: return pb_varint(p, end, &f->value);
  case 1:
    if (end - *p < 8) return 0;
    *p += 8;
    return 1;
  case 5:
    if (end - *p < 4) return 0;
    *p += 4;
    return 1;
  case 2:
    if (!pb_varint(p, end, &f->len) || f->len > (uint64_t)(end - *p)) return 0;
    f->data = *p;
    *p += f->len;
    return 1;
  default: return 0;
  }
}

/* A message is well-formed when its fields tile it exactly. */
static int pb_well_formed(const unsigned char *p, uint64_t len) {
  const unsigned char *end = p + len;
  pb_field f;
  while (p < end)
    if (!pb_next(&p, end, &f)) return 0;
  return 1;
}

static wg_status pbf_error(wg_ctx_t *ctx, const char *display, uint64_t offset,
                           const char *what) {
  return wg__error(ctx, WG_EPARSE, "%s: invalid PBF: block at byte %llu: %s",
                   display, (unsigned long long)offset, what);
}

/* Walks the blob framing of a .osm.pbf (4-byte big-endian BlobHeader size,
 * BlobHeader, Blob), checks every size against the spec's limits and the
 * file, and inflates each block to check it decompresses to exactly the
 * size it claims (zlib's adler32 catches corrupted bytes). */
static wg_status check_pbf(wg_ctx_t *ctx, FILE *f, const char *display,
                           uint64_t file_size) {
  wg_status st = WG_OK;
  unsigned char *hdr = NULL, *blob = NULL, *raw = NULL;
  uint64_t offset = 0, blocks = 0, blob_cap = 0, raw_cap = 0;
  if ((st = wg__alloc(ctx, &hdr, PBF_MAX_HEADER, 1, "PBF header")) != WG_OK) goto done;
  while (offset < file_size) {
    unsigned char be[4];
    if (file_size - offset < 4 || fread(be, 1, 4, f) != 4) {
      st = pbf_error(ctx, display, offset, "truncated block size");
      goto done;
    }
    uint32_t hsize = (uint32_t)be[0] << 24 | (uint32_t)be[1] << 16 |
                     (uint32_t)be[2] << 8 | be[3];
    if (hsize == 0 || hsize > PBF_MAX_HEADER) {
      st = pbf_error(ctx, display, offset,
                     blocks == 0 ? "invalid PBF header (not an .osm.pbf file?)"
                                 : "block header size out of range");
      goto done;
    }
    if (hsize > file_size - offset - 4 || fread(hdr, 1, hsize, f) != hsize) {
      st = pbf_error(ctx, display, offset, "truncated block header");
      goto done;
    }
    /* BlobHeader: 1 type (string), 2 indexdata, 3 datasize (int32). */
    const unsigned char *p = hdr, *end = hdr + hsize;
    const unsigned char *type = NULL;
    uint64_t type_len = 0, datasize = 0;
    int have_size = 0;
    pb_field fl;
    while (p < end) {
      if (!pb_next(&p, end, &fl)) {
        st = pbf_error(ctx, display, offset, "malformed block header");
        goto done;
      }
      if (fl.number == 1 && fl.type == 2) type = fl.data, type_len = fl.len;
      if (fl.number == 3 && fl.type == 0) datasize = fl.value, have_size = 1;
    }
    const char *want = blocks == 0 ? "OSMHeader" : "OSMData";
    if (!type || type_len != strlen(want) || memcmp(type, want, type_len) != 0) {
      st = pbf_error(ctx, display, offset,
                     blocks == 0 ? "invalid PBF header (first block is not OSMHeader)"
                                 : "block type is not OSMData");
      goto done;
    }
    if (!have_size || datasize == 0 || datasize > PBF_MAX_BLOB) {
      st = pbf_error(ctx, display, offset, "block data size out of range");
      goto done;
    }
    if (datasize > file_size - offset - 4 - hsize) {
      st = pbf_error(ctx, display, offset, "truncated block (file cut short?)");
      goto done;
    }
    if (datasize > blob_cap) {
      if ((st = wg__realloc(ctx, &blob, datasize, 1, "PBF block")) != WG_OK) goto done;
      blob_cap = datasize;
    }
    if (fread(blob, 1, datasize, f) != datasize) {
      st = pbf_error(ctx, display, offset, "truncated block (file cut short?)");
      goto done;
    }
    /* Blob: 1 raw, 2 raw_size, 3 zlib_data, 4.. other codecs. */
    p = blob;
    end = blob + datasize;
    const unsigned char *rawp = NULL, *zp = NULL;
    uint64_t raw_len = 0, z_len = 0, raw_size = 0;
    int have_raw = 0, have_z = 0, have_other = 0, have_raw_size = 0;
    while (p < end) {
      if (!pb_next(&p, end, &fl)) {
        st = pbf_error(ctx, display, offset, "malformed block");
        goto done;
      }
      if (fl.number == 1 && fl.type == 2) rawp = fl.data, raw_len = fl.len, have_raw++;
      else if (fl.number == 2 && fl.type == 0) raw_size = fl.value, have_raw_size = 1;
      else if (fl.number == 3 && fl.type == 2) zp = fl.data, z_len = fl.len, have_z++;
      else if (fl.number >= 4 && fl.number <= 7) have_other = 1;
    }
    if (have_other && !have_raw && !have_z) {
      st = pbf_error(ctx, display, offset,
                     "compression other than zlib (lzma, lz4, zstd) is not supported");
      goto done;
    }
    if (have_raw + have_z != 1) {
      st = pbf_error(ctx, display, offset, "block must hold exactly one of raw or zlib data");
      goto done;
    }
    const unsigned char *content;
    uint64_t content_len;
    if (have_raw) {
      if (raw_len == 0) {
        st = pbf_error(ctx, display, offset, "empty block");
        goto done;
      }
      content = rawp;
      content_len = raw_len;
    } else {
      if (!have_raw_size || raw_size == 0 || raw_size > PBF_MAX_BLOB || z_len == 0 ||
          z_len > UINT_MAX) {
        st = pbf_error(ctx, display, offset, "compressed block size out of range");
        goto done;
      }
      if (raw_size > raw_cap) {
        if ((st = wg__realloc(ctx, &raw, raw_size, 1, "PBF block")) != WG_OK) goto done;
        raw_cap = raw_size;
      }
      z_stream zs;
      memset(&zs, 0, sizeof zs);
      if (inflateInit(&zs) != Z_OK) {
        st = wg__error(ctx, WG_ENOMEM, "%s: cannot initialise zlib", display);
        goto done;
      }
      zs.next_in = (unsigned char *)zp;
      zs.avail_in = (uInt)z_len;
      zs.next_out = raw;
      zs.avail_out = (uInt)raw_size;
      int zr = inflate(&zs, Z_FINISH);
      uint64_t got = zs.total_out;
      inflateEnd(&zs);
      if (zr != Z_STREAM_END || got != raw_size) {
        st = pbf_error(ctx, display, offset,
                       zr == Z_STREAM_END || zr == Z_BUF_ERROR
                           ? "compressed block does not match its declared size"
                           : "corrupt compressed block (zlib)");
        goto done;
      }
      content = raw;
      content_len = raw_size;
    }
    if (!pb_well_formed(content, content_len)) {
      st = pbf_error(ctx, display, offset, "malformed block contents");
      goto done;
    }
    offset += 4 + (uint64_t)hsize + datasize;
    blocks++;
  }
  if (blocks == 0) st = pbf_error(ctx, display, 0, "no blocks");
done:
  wg__free(&hdr);
  wg__free(&blob);
  wg__free(&raw);
  return st;
}

/* ---- graph construction ------------------------------------------------- */

static int cmp_node(const void *a, const void *b) {
  int64_t x = ((const osm_node *)a)->id, y = ((const osm_node *)b)->id;
  return (x > y) - (x < y);
}

static int64_t find_node(const osm_node *nodes, uint64_t count, int64_t id) {
  uint64_t lo = 0, hi = count;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (nodes[mid].id < id)
      lo = mid + 1;
    else
      hi = mid;
  }
  return (lo < count && nodes[lo].id == id) ? (int64_t)lo : -1;
}

static double radians(double deg) { return deg * (3.14159265358979323846 / 180.0); }

/* Great-circle distance in metres (haversine, mean Earth radius). */
static double haversine_m(double lat1, double lon1, double lat2, double lon2) {
  double dlat = radians(lat2 - lat1), dlon = radians(lon2 - lon1);
  double a = sin(dlat / 2) * sin(dlat / 2) +
             cos(radians(lat1)) * cos(radians(lat2)) * sin(dlon / 2) * sin(dlon / 2);
  if (a > 1.0) a = 1.0;
  return 2.0 * EARTH_RADIUS_M * asin(sqrt(a));
}

static const char *readosm_message(int rc) {
  switch (rc) {
  case READOSM_INVALID_SUFFIX: return "not an .osm or .pbf file name";
  case READOSM_FILE_NOT_FOUND: return "cannot open";
  case READOSM_INSUFFICIENT_MEMORY: return "out of memory in readosm";
  case READOSM_CREATE_XML_PARSER_ERROR: return "cannot create the XML parser";
  case READOSM_READ_ERROR: return "read error";
  case READOSM_XML_ERROR: return "malformed OSM XML (readosm gives no line number)";
  case READOSM_INVALID_PBF_HEADER: return "invalid PBF header or block";
  case READOSM_UNZIP_ERROR: return "corrupt compressed PBF block";
  case READOSM_ABORT: return "parse aborted";
  default: return "unknown readosm error";
  }
}

static wg_status readosm_status(int rc) {
  switch (rc) {
  case READOSM_FILE_NOT_FOUND: return WG_ENOENT;
  case READOSM_INSUFFICIENT_MEMORY:
  case READOSM_CREATE_XML_PARSER_ERROR: return WG_ENOMEM;
  case READOSM_READ_ERROR: return WG_EIO;
  case READOSM_INVALID_SUFFIX: return WG_EINVAL;
  default: return WG_EPARSE;
  }
}

static int ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a > b && strcasecmp(s + a - b, suffix) == 0;
}

wg_status wg__load_osm(wg_ctx_t *ctx, wg_graph_t **out, const char *path,
                       const char *display, wg_format format,
                       const wg_load_opts *opts) {
  wg_status st = WG_OK;
  osm_state s;
  const void *handle = NULL;
  FILE *f = NULL;
  char linkdir[4096] = "", linkpath[4200] = "", *abspath = NULL;
  uint32_t *vid = NULL;
  wg__edgelist el = {0};
  wg__road_edge *re = NULL;
  uint64_t nre = 0;
  wg_graph_t *g = NULL;
  const int pbf = format == WG_FORMAT_OSM_PBF;
  (void)opts; /* weight policies are applied by the dispatcher */
  memset(&s, 0, sizeof s);
  s.ctx = ctx;
  s.nodes_sorted = 1;
  if (out) *out = NULL;
  if (!out || !path) return wg__error(ctx, WG_EINVAL, "load osm: no path or output");
  if (!display) display = path;
  if (format != WG_FORMAT_OSM && format != WG_FORMAT_OSM_PBF)
    return wg__error(ctx, WG_EINVAL, "%s: not an OSM format", display);

  struct stat sb;
  if (stat(path, &sb) != 0)
    return wg__error(ctx, errno == ENOENT ? WG_ENOENT : WG_EIO, "%s: cannot open: %s",
                     display, strerror(errno));
  if (sb.st_size == 0) return wg__error(ctx, WG_EPARSE, "%s: empty file", display);

  /* Check what readosm would trust. */
  if (!(f = fopen(path, "rb"))) {
    st = wg__error(ctx, errno == ENOENT ? WG_ENOENT : WG_EIO, "%s: cannot open: %s",
                   display, strerror(errno));
    goto done;
  }
  st = pbf ? check_pbf(ctx, f, display, (uint64_t)sb.st_size) : check_xml(ctx, f, display);
  fclose(f);
  f = NULL;
  if (st != WG_OK) goto done;

  /* readosm picks its parser by the name's suffix; the dispatcher's
   * temporary files may have none, so give it a link with the right one. */
  const char *open_path = path;
  if (!ends_with(path, pbf ? ".pbf" : ".osm")) {
    const char *tmp = getenv("TMPDIR");
    snprintf(linkdir, sizeof linkdir, "%s/wattgraph-osm-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(linkdir)) {
      linkdir[0] = '\0';
      st = wg__error(ctx, WG_EIO, "%s: cannot create a temporary folder: %s", display,
                     strerror(errno));
      goto done;
    }
    if (!(abspath = realpath(path, NULL))) {
      st = wg__error(ctx, WG_EIO, "%s: %s", display, strerror(errno));
      goto done;
    }
    snprintf(linkpath, sizeof linkpath, "%s/input%s", linkdir, pbf ? ".osm.pbf" : ".osm");
    if (symlink(abspath, linkpath) != 0) {
      linkpath[0] = '\0';
      st = wg__error(ctx, WG_EIO, "%s: cannot link into %s: %s", display, linkdir,
                     strerror(errno));
      goto done;
    }
    open_path = linkpath;
  }

  /* libreadosm formats timestamps with gmtime(), one static buffer: two
   * threads parsing at once race on it (ThreadSanitizer). Its calls are
   * serialised process-wide, so separate contexts stay safe as core.h
   * promises (the parse of one file uses one thread anyway). */
  static pthread_mutex_t readosm_lock = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&readosm_lock);
  int rc = readosm_open(open_path, &handle);
  if (rc == READOSM_OK) rc = readosm_parse(handle, &s, on_node, on_way, NULL);
  pthread_mutex_unlock(&readosm_lock);
  if (rc != READOSM_OK) {
    if (rc == READOSM_ABORT && s.st != WG_OK)
      st = s.st; /* our callback failed and said why */
    else
      st = wg__error(ctx, readosm_status(rc), "%s: %s (after %llu nodes, %llu ways)",
                     display, readosm_message(rc), (unsigned long long)s.n_nodes,
                     (unsigned long long)s.ways_seen);
    goto done;
  }
  wg__progress(ctx, "osm", s.n_nodes, s.n_nodes);

  /* Nodes in id order, duplicates dropped (first kept). */
  if (!s.nodes_sorted) {
    qsort(s.nodes, s.n_nodes, sizeof *s.nodes, cmp_node);
    uint64_t k = 0;
    for (uint64_t i = 0; i < s.n_nodes; i++)
      if (k == 0 || s.nodes[i].id != s.nodes[k - 1].id) s.nodes[k++] = s.nodes[i];
    s.n_nodes = k;
  }
  if (s.n_nodes >= UINT32_MAX) {
    st = wg__error(ctx, WG_ERANGE, "%s: %llu nodes exceed the limit of %lu", display,
                   (unsigned long long)s.n_nodes, (unsigned long)WG_MAX_VERTICES);
    goto done;
  }

  /* Resolve refs to node indices (-1: missing), mark segment endpoints. */
  if ((st = wg__calloc(ctx, &vid, s.n_nodes ? s.n_nodes : 1, sizeof(uint32_t),
                       "OSM vertex map")) != WG_OK)
    goto done;
  uint64_t missing = 0, segments = 0, arcs = 0;
  int64_t first_missing = 0;
  for (uint64_t w = 0; w < s.n_ways; w++) {
    const osm_way *way = &s.ways[w];
    int64_t prev = -1;
    for (uint64_t i = way->first; i < way->first + way->count; i++) {
      int64_t idx = find_node(s.nodes, s.n_nodes, s.refs[i]);
      if (idx < 0) {
        if (missing++ == 0) first_missing = s.refs[i];
        s.refs[i] = -1;
        prev = -1;
        continue;
      }
      s.refs[i] = idx;
      if (prev >= 0 && idx != prev) {
        vid[prev] = vid[idx] = 1;
        segments++;
        arcs += way->dir == DIR_BOTH ? 2 : 1;
      }
      prev = idx;
    }
  }
  if (missing)
    wg__log(ctx, WG_LOG_WARN,
            "%s: %llu way node references name nodes missing from the file "
            "(first: node %lld); those ways are split there",
            display, (unsigned long long)missing, (long long)first_missing);
  if (s.bad_nodes)
    wg__log(ctx, WG_LOG_WARN,
            "%s: %llu nodes with a negative id or coordinates out of range were ignored",
            display, (unsigned long long)s.bad_nodes);
  if (segments == 0) {
    st = wg__error(ctx, WG_EPARSE,
                   "%s: no highway ways cars may use (%llu nodes, %llu ways read)", display,
                   (unsigned long long)s.n_nodes, (unsigned long long)s.ways_seen);
    goto done;
  }

  /* Dense ids in ascending OSM id order. */
  uint32_t n = 0;
  for (uint64_t i = 0; i < s.n_nodes; i++) vid[i] = vid[i] ? n++ : UINT32_MAX;

  if ((st = wg__edgelist_reserve(ctx, &el, arcs)) != WG_OK ||
      (st = wg__alloc(ctx, &re, arcs, sizeof *re, "OSM road attributes")) != WG_OK)
    goto done;
  for (uint64_t w = 0; w < s.n_ways; w++) {
    const osm_way *way = &s.ways[w];
    int64_t prev = -1;
    for (uint64_t i = way->first; i < way->first + way->count; i++) {
      int64_t idx = s.refs[i];
      if (idx >= 0 && prev >= 0 && idx != prev) {
        const osm_node *a = &s.nodes[prev], *b = &s.nodes[idx];
        double dm = 10.0 * haversine_m(a->lat, a->lon, b->lat, b->lon);
        uint32_t wt = (uint32_t)llround(dm);
        uint32_t u = vid[prev], v = vid[idx];
        if (way->dir != DIR_BACKWARD && (st = wg__edgelist_push(ctx, &el, u, v, wt)) != WG_OK)
          goto done;
        if (way->dir != DIR_FORWARD && (st = wg__edgelist_push(ctx, &el, v, u, wt)) != WG_OK)
          goto done;
        /* oneway=-1 drives the way backwards: its forward tags apply */
        if (way->dir != DIR_BACKWARD)
          re[nre++] = (wg__road_edge){u, v, wt, way->fwd}, re[nre - 1].a.length_m = (float)(dm / 10);
        if (way->dir != DIR_FORWARD)
          re[nre++] = (wg__road_edge){v, u, wt, way->dir == DIR_BACKWARD ? way->fwd : way->bwd},
          re[nre - 1].a.length_m = (float)(dm / 10);
      }
      prev = idx;
    }
  }
  wg__free(&s.refs);
  wg__free(&s.ways);

  if ((st = wg__graph_build(ctx, &g, n, &el, 0)) != WG_OK ||
      (st = wg__road_attach(ctx, g, re, nre)) != WG_OK)
    goto done;
  if ((st = wg__alloc(ctx, &g->file_ids, n, sizeof(uint64_t), "OSM ids")) != WG_OK ||
      (st = wg__alloc(ctx, &g->lon, n, sizeof(double), "longitudes")) != WG_OK ||
      (st = wg__alloc(ctx, &g->lat, n, sizeof(double), "latitudes")) != WG_OK)
    goto done;
  for (uint64_t i = 0; i < s.n_nodes; i++) {
    if (vid[i] == UINT32_MAX) continue;
    g->file_ids[vid[i]] = (uint64_t)s.nodes[i].id;
    g->lon[vid[i]] = s.nodes[i].lon;
    g->lat[vid[i]] = s.nodes[i].lat;
  }
  snprintf(g->info.format, sizeof g->info.format, "%s", pbf ? "osm.pbf" : "osm");
  g->info.weighted_input = 1;
  g->info.has_coordinates = 1;
  g->info.sparse_ids = 1;
  g->info.id_base = 0;
  g->info.input_edges = segments;
  g->info.ways_kept = s.n_ways;
  g->info.ways_dropped = s.ways_seen - s.n_ways;
  *out = g;
  g = NULL;

done:
  if (handle) readosm_close(handle);
  if (f) fclose(f);
  if (linkpath[0]) unlink(linkpath);
  if (linkdir[0]) rmdir(linkdir);
  free(abspath);
  wg__free(&vid);
  wg__free(&s.nodes);
  wg__free(&s.refs);
  wg__free(&s.ways);
  wg__edgelist_free(&el);
  wg__free(&re);
  wg_graph_destroy(&g);
  return st;
}
