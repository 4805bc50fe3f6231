/*
 * cmd_geo.c -- geo commands on sorted sets: GEOADD, GEODIST, GEOHASH,
 * GEOPOS, GEOSEARCH, GEOSEARCHSTORE, GEORADIUS, GEORADIUSBYMEMBER and
 * their _RO forms. A position is a member whose score is its 52-bit
 * geohash (geohash.h); a search reads the score ranges of up to 9 geohash
 * boxes (ks_zrange BYSCORE) and keeps the members inside the shape.
 * Argument rules, the order of checks, replies and error texts follow
 * Redis 7.0 (geo.c: georadiusGeneric).
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/cmd_zset.h"
#include "server/geohash.h"

#define ERR_BAD_UNIT "unsupported unit provided. please use M, KM, FT, MI"
#define ERR_NO_MEMBER "could not decode requested zset member"

/* ---- Arguments ----------------------------------------------------------------- */

/* lon lat from a[0], a[1]; replies and returns -1 on an error. */
static int arg_lonlat(client *c, const arg *a, double xy[2])
{
    for (int i = 0; i < 2; i++)
        if (!zarg_double(&a[i], &xy[i])) {
            add_reply_error(c, ERR_NOT_FLOAT);
            return -1;
        }
    if (xy[0] < GEO_LONG_MIN || xy[0] > GEO_LONG_MAX || xy[1] < GEO_LAT_MIN ||
        xy[1] > GEO_LAT_MAX) {
        add_reply_error_fmt(c, "invalid longitude,latitude pair %f,%f", xy[0], xy[1]);
        return -1;
    }
    return 0;
}

static int arg_unit(client *c, const arg *a, double *to_meters)
{
    if ((*to_meters = geo_unit(a->ptr)) >= 0) return 0;
    add_reply_error(c, ERR_BAD_UNIT);
    return -1;
}

/* radius unit */
static int arg_radius(client *c, const arg *a, geo_shape *s)
{
    if (!zarg_double(&a[0], &s->radius)) return add_reply_error(c, "need numeric radius"), -1;
    if (s->radius < 0) return add_reply_error(c, "radius cannot be negative"), -1;
    s->type = GEO_CIRCLE;
    return arg_unit(c, &a[1], &s->conversion);
}

/* width height unit */
static int arg_box(client *c, const arg *a, geo_shape *s)
{
    if (!zarg_double(&a[0], &s->width)) return add_reply_error(c, "need numeric width"), -1;
    if (!zarg_double(&a[1], &s->height)) return add_reply_error(c, "need numeric height"), -1;
    if (s->height < 0 || s->width < 0)
        return add_reply_error(c, "height or width cannot be negative"), -1;
    s->type = GEO_BOX;
    return arg_unit(c, &a[2], &s->conversion);
}

/* The key's type for a read: 1 a zset, 0 absent, -1 replied (WRONGTYPE). */
static int zset_key(client *c, const arg *key)
{
    ks_type t;
    ks_status st = ks_type_of(client_ks(c), key->ptr, key->len, &t);
    if (st != KS_OK) return reply_zerr(c, st), -1;
    if (t != KS_NONE && t != KS_ZSET) return add_reply_error(c, ERR_WRONGTYPE), -1;
    return t == KS_ZSET;
}

/* The scores of members m[0..n) of key (found[i] 0 when absent). */
static int scores_of(client *c, const arg *key, const arg *m, int n, double *sc, int *found)
{
    ks_field small[16];
    ks_field *f = n <= 16 ? small : malloc((size_t)n * sizeof(*f));
    if (!f) return add_reply_error(c, "ERR out of memory"), -1;
    for (int i = 0; i < n; i++)
        f[i] = (ks_field){m[i].ptr, m[i].len, NULL, 0};
    ks_status st = ks_zscore(client_ks(c), key->ptr, key->len, f, (size_t)n, sc, found);
    if (f != small) free(f);
    if (st != KS_OK && st != KS_NOTFOUND) return reply_zerr(c, st), -1;
    return 0;
}

/* ---- GEOADD, GEODIST, GEOHASH, GEOPOS ----------------------------------------------- */

/* GEOADD key [NX|XX] [CH] lon lat member [...]: ZADD of the members with
 * their geohash scores. */
void cmd_geoadd(client *c)
{
    int nx = 0, xx = 0, ch = 0, at = 2;
    for (; at < c->argc; at++) {
        if (arg_is(&c->argv[at], "nx"))
            nx = 1;
        else if (arg_is(&c->argv[at], "xx"))
            xx = 1;
        else if (arg_is(&c->argv[at], "ch"))
            ch = 1;
        else
            break;
    }
    int n = (c->argc - at) / 3;
    if ((c->argc - at) % 3 || (xx && nx) || n == 0) {
        add_reply_error(c, ERR_SYNTAX);
        return;
    }
    ks_zmember *z = malloc((size_t)n * sizeof(*z));
    if (!z) {
        add_reply_error(c, "ERR out of memory");
        return;
    }
    for (int i = 0; i < n; i++) {
        double xy[2];
        const arg *a = &c->argv[at + 3 * i];
        if (arg_lonlat(c, a, xy) < 0) {
            free(z);
            return;
        }
        z[i] = (ks_zmember){a[2].ptr, a[2].len, geo_score(xy[0], xy[1])};
    }
    ks_zadd_result r;
    ks_status st = ks_zadd(client_ks(c), c->argv[1].ptr, c->argv[1].len, z, (size_t)n,
                           (nx ? KS_ZADD_NX : 0) | (xx ? KS_ZADD_XX : 0), &r);
    free(z);
    if (st == KS_OK && (r.added || r.updated))
        notify_arg(c, NOTIFY_ZSET, "zadd", 1); /* Redis's ZADD */
    if (st != KS_OK)
        reply_zerr(c, st);
    else
        add_reply_long_long(c, (long long)(ch ? r.added + r.updated : r.added));
}

static void reply_distance(client *c, double d)
{
    char buf[64];
    int n = geo_distance_text(buf, sizeof(buf), d);
    add_reply_bulk(c, buf, (size_t)n);
}

/* GEODIST key member1 member2 [unit] */
void cmd_geodist(client *c)
{
    double to_meters = 1;
    if (c->argc == 5) {
        if (arg_unit(c, &c->argv[4], &to_meters) < 0) return;
    } else if (c->argc > 5) {
        add_reply_error(c, ERR_SYNTAX);
        return;
    }
    double sc[2], xy[4];
    int found[2];
    if (scores_of(c, &c->argv[1], &c->argv[2], 2, sc, found) < 0) return;
    if (!found[0] || !found[1] || !geo_score_position(sc[0], xy) ||
        !geo_score_position(sc[1], xy + 2))
        add_reply_null(c);
    else
        reply_distance(c, geo_distance(xy[0], xy[1], xy[2], xy[3]) / to_meters);
}

/* GEOHASH (hash) and GEOPOS: one reply per member, null when absent. */
static void geo_members(client *c, int hash)
{
    int n = c->argc - 2;
    double *sc = malloc((size_t)(n ? n : 1) * sizeof(*sc));
    int *found = malloc((size_t)(n ? n : 1) * sizeof(*found));
    if (!sc || !found) {
        add_reply_error(c, "ERR out of memory");
    } else if (scores_of(c, &c->argv[1], &c->argv[2], n, sc, found) == 0) {
        add_reply_array_len(c, n);
        for (int i = 0; i < n; i++) {
            double xy[2];
            char text[12];
            if (hash && found[i] && geo_hash_text(sc[i], text)) {
                add_reply_bulk(c, text, 11);
            } else if (!hash && found[i] && geo_score_position(sc[i], xy)) {
                add_reply_array_len(c, 2);
                add_reply_human_double(c, xy[0]);
                add_reply_human_double(c, xy[1]);
            } else if (hash) {
                add_reply_null(c);
            } else {
                add_reply_null_array(c);
            }
        }
    }
    free(sc);
    free(found);
}

void cmd_geohash(client *c)
{
    geo_members(c, 1);
}

void cmd_geopos(client *c)
{
    geo_members(c, 0);
}

/* ---- Searches --------------------------------------------------------------------------- */

enum {
    FROM_COORDS = 1,   /* GEORADIUS: lon lat radius unit */
    FROM_MEMBER = 2,   /* GEORADIUSBYMEMBER: member radius unit */
    NO_STORE = 4,      /* the _RO forms */
    SEARCH = 8,        /* GEOSEARCH's arguments */
    SEARCH_STORE = 16, /* GEOSEARCHSTORE: a destination first, STOREDIST */
};

typedef struct search {
    geo_shape shape;
    const arg *src, *store;
    int storedist, withdist, withhash, withcoords, any, sort; /* sort: 0, 1 ASC, 2 DESC */
    int from_member, from_lonlat, by_radius, by_box;
    long long count;
} search;

/* One point found: its member (copied), score, position and distance. */
typedef struct gpoint {
    ks_zmember z;
    double xy[2], dist;
} gpoint;

typedef struct found {
    gpoint *p;
    size_t n, cap;
    char *names; /* the members' bytes, one after the other */
    size_t used, room;
    const geo_shape *shape;
    uint64_t limit; /* ANY: stop at this many (0: all) */
    int oom;
} found;

/* The members of one box range, in score order: those inside the shape. */
static void box_fn(void *arg, const ks_zmember *z, size_t n)
{
    found *f = arg;
    for (size_t i = 0; i < n && !f->oom; i++) {
        gpoint g;
        if (!geo_within(f->shape, z[i].score, g.xy, &g.dist)) continue;
        if (f->n == f->cap) {
            size_t cap = f->cap ? f->cap * 2 : 16;
            gpoint *np = realloc(f->p, cap * sizeof(*np));
            if (!np) {
                f->oom = 1;
                return;
            }
            f->p = np;
            f->cap = cap;
        }
        if (f->used + z[i].ml > f->room) {
            size_t room = (f->used + z[i].ml) * 2 + 64;
            char *nn = realloc(f->names, room);
            if (!nn) {
                f->oom = 1;
                return;
            }
            f->names = nn;
            f->room = room;
        }
        if (z[i].ml) memcpy(f->names + f->used, z[i].m, z[i].ml);
        /* The offset for now: the buffer may still move. */
        g.z = (ks_zmember){(const char *)(uintptr_t)f->used, z[i].ml, z[i].score};
        f->used += z[i].ml;
        f->p[f->n++] = g;
        if (f->limit && f->n >= f->limit) return;
    }
}

/* Reads the boxes of s's shape in Redis's order (skipping one equal to
 * the box read just before), stopping early for ANY. */
static ks_status search_boxes(client *c, search *s, found *f)
{
    geo_hash boxes[9];
    geo_search_boxes(&s->shape, boxes);
    int last = -1;
    for (int i = 0; i < 9; i++) {
        if (!boxes[i].bits && !boxes[i].step) continue;
        if (last >= 0 && boxes[i].bits == boxes[last].bits && boxes[i].step == boxes[last].step)
            continue;
        if (f->limit && f->n >= f->limit) break;
        ks_zspec r = {.by = KS_ZBY_SCORE, .maxex = 1, .limit = -1};
        geo_box_scores(boxes[i], &r.min, &r.max);
        ks_status st = ks_zrange(client_ks(c), s->src->ptr, s->src->len, &r, box_fn, f);
        if (st != KS_OK && st != KS_NOTFOUND) return st;
        if (f->oom) return ks_oom(client_ks(c));
        last = i;
    }
    return KS_OK;
}

/* Redis sorts all results with glibc's (stable, merge) qsort; a COUNT
 * below the number found uses its partial quicksort, whose order of equal
 * distances strata does not reproduce (a stable order instead). */
static void sort_points(gpoint *p, size_t n, int desc)
{
    if (n < 2) return;
    gpoint *tmp = malloc(n * sizeof(*tmp));
    if (!tmp) return;
    for (size_t width = 1; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n,
                   hi = lo + 2 * width < n ? lo + 2 * width : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                int take_right = desc ? p[j].dist > p[i].dist : p[j].dist < p[i].dist;
                tmp[k++] = take_right ? p[j++] : p[i++];
            }
            while (i < mid)
                tmp[k++] = p[i++];
            while (j < hi)
                tmp[k++] = p[j++];
        }
        memcpy(p, tmp, n * sizeof(*p));
    }
    free(tmp);
}

static void reply_points(client *c, const search *s, const gpoint *p, size_t n)
{
    int opts = s->withdist + s->withhash + s->withcoords;
    add_reply_array_len(c, (long)n);
    for (size_t i = 0; i < n; i++) {
        if (opts) add_reply_array_len(c, opts + 1);
        add_reply_bulk(c, p[i].z.m, p[i].z.ml);
        if (s->withdist) reply_distance(c, p[i].dist / s->shape.conversion);
        if (s->withhash) add_reply_long_long(c, (long long)p[i].z.score);
        if (s->withcoords) {
            add_reply_array_len(c, 2);
            add_reply_human_double(c, p[i].xy[0]);
            add_reply_human_double(c, p[i].xy[1]);
        }
    }
}

/* The options after the fixed arguments (from argv[j]); FROMMEMBER reads
 * the member's position as it is met. 0, or -1 after replying. */
static int search_options(client *c, int j, int flags, int exists, search *s)
{
    for (; j < c->argc; j++) {
        const arg *a = &c->argv[j];
        int left = c->argc - j - 1;
        if (arg_is(a, "withdist")) {
            s->withdist = 1;
        } else if (arg_is(a, "withhash")) {
            s->withhash = 1;
        } else if (arg_is(a, "withcoord")) {
            s->withcoords = 1;
        } else if (arg_is(a, "any")) {
            s->any = 1;
        } else if (arg_is(a, "asc")) {
            s->sort = 1;
        } else if (arg_is(a, "desc")) {
            s->sort = 2;
        } else if (arg_is(a, "count") && left >= 1) {
            if (zarg_long(c, &c->argv[++j], &s->count) < 0) return -1;
            if (s->count <= 0) return add_reply_error(c, "COUNT must be > 0"), -1;
        } else if ((arg_is(a, "store") || arg_is(a, "storedist")) && left >= 1 &&
                   !(flags & (NO_STORE | SEARCH))) {
            s->storedist = arg_is(a, "storedist");
            s->store = &c->argv[++j];
        } else if (arg_is(a, "storedist") && (flags & SEARCH_STORE)) {
            s->storedist = 1;
        } else if (arg_is(a, "frommember") && left >= 1 && (flags & SEARCH) && !s->from_lonlat) {
            const arg *m = &c->argv[++j];
            s->from_member = 1;
            double sc;
            int got;
            if (!exists) continue; /* no key: parse on, reply at the end */
            if (scores_of(c, s->src, m, 1, &sc, &got) < 0) return -1;
            if (!got || !geo_score_position(sc, s->shape.xy))
                return add_reply_error(c, ERR_NO_MEMBER), -1;
        } else if (arg_is(a, "fromlonlat") && left >= 2 && (flags & SEARCH) && !s->from_member) {
            if (arg_lonlat(c, &c->argv[j + 1], s->shape.xy) < 0) return -1;
            s->from_lonlat = 1;
            j += 2;
        } else if (arg_is(a, "byradius") && left >= 2 && (flags & SEARCH) && !s->by_box) {
            if (arg_radius(c, &c->argv[j + 1], &s->shape) < 0) return -1;
            s->by_radius = 1;
            j += 2;
        } else if (arg_is(a, "bybox") && left >= 3 && (flags & SEARCH) && !s->by_radius) {
            if (arg_box(c, &c->argv[j + 1], &s->shape) < 0) return -1;
            s->by_box = 1;
            j += 3;
        } else {
            return add_reply_error(c, ERR_SYNTAX), -1;
        }
    }
    if (s->store && (s->withdist || s->withhash || s->withcoords)) {
        add_reply_error_fmt(c, "%s is not compatible with WITHDIST, WITHHASH and WITHCOORD options",
                            flags & SEARCH_STORE ? "GEOSEARCHSTORE" : "STORE option in GEORADIUS");
        return -1;
    }
    if ((flags & SEARCH) && !(s->from_member || s->from_lonlat)) {
        add_reply_error_fmt(c, "exactly one of FROMMEMBER or FROMLONLAT can be specified for %s",
                            c->argv[0].ptr);
        return -1;
    }
    if ((flags & SEARCH) && !(s->by_radius || s->by_box)) {
        add_reply_error_fmt(c, "exactly one of BYRADIUS and BYBOX can be specified for %s",
                            c->argv[0].ptr);
        return -1;
    }
    if (s->any && !s->count)
        return add_reply_error(c, "the ANY argument requires COUNT argument"), -1;
    return 0;
}

/* Stores the points at s->store (scores: geohashes, or distances with
 * STOREDIST) and replies their number. */
static void store_points(client *c, const search *s, const gpoint *p, size_t n, const char *event)
{
    int existed = notify_exists(c, s->store->ptr, s->store->len);
    ks_zmember *z = malloc((n ? n : 1) * sizeof(*z));
    if (!z) {
        add_reply_error(c, "ERR out of memory");
        return;
    }
    for (size_t i = 0; i < n; i++)
        z[i] = (ks_zmember){p[i].z.m, p[i].z.ml,
                            s->storedist ? p[i].dist / s->shape.conversion : p[i].z.score};
    ks_status st = ks_zstore(client_ks(c), s->store->ptr, s->store->len, z, n);
    free(z);
    if (st == KS_OK) notify_stored(c, NOTIFY_ZSET, event, s->store, n, existed);
    if (st != KS_OK)
        reply_zerr(c, st);
    else
        add_reply_long_long(c, (long long)n);
}

/* georadiusGeneric: the source key at argv[src], the rest as flags say. */
static void geo_search(client *c, int src, int flags)
{
    search s;
    memset(&s, 0, sizeof(s));
    s.src = &c->argv[src];
    int exists = zset_key(c, s.src), base;
    if (exists < 0) return;
    if (flags & FROM_COORDS) {
        base = 6;
        if (arg_lonlat(c, &c->argv[2], s.shape.xy) < 0 || arg_radius(c, &c->argv[4], &s.shape) < 0)
            return;
    } else if (flags & FROM_MEMBER) {
        base = 5;
        if (exists) {
            double sc;
            int got;
            if (scores_of(c, s.src, &c->argv[2], 1, &sc, &got) < 0) return;
            if (!got || !geo_score_position(sc, s.shape.xy)) {
                add_reply_error(c, ERR_NO_MEMBER);
                return;
            }
            if (arg_radius(c, &c->argv[3], &s.shape) < 0) return;
        }
    } else {
        base = (flags & SEARCH_STORE) ? 3 : 2;
        if (flags & SEARCH_STORE) s.store = &c->argv[1];
    }
    if (search_options(c, base, flags, exists, &s) < 0) return;
    if (!exists) {
        if (s.store) {
            int deleted;
            ks_status st = ks_del(client_ks(c), s.store->ptr, s.store->len, &deleted);
            if (st == KS_OK && deleted) notify_stored(c, NOTIFY_ZSET, "", s.store, 0, 1);
            if (st != KS_OK)
                reply_zerr(c, st);
            else
                add_reply_long_long(c, 0);
        } else {
            add_reply_array_len(c, 0);
        }
        return;
    }
    /* COUNT without an order means the nearest: ASC (not for ANY). */
    if (s.count && !s.sort && !s.any) s.sort = 1;
    found f = {.shape = &s.shape, .limit = s.any ? (uint64_t)s.count : 0};
    ks_status st = search_boxes(c, &s, &f);
    if (st != KS_OK) {
        reply_zerr(c, st);
        goto out;
    }
    /* The member bytes are in place now; none at all (every match the
     * empty member) leaves names NULL, and a reply copies from z.m. */
    for (size_t i = 0; i < f.n; i++)
        f.p[i].z.m = f.names ? f.names + (uintptr_t)f.p[i].z.m : "";
    if (s.sort) sort_points(f.p, f.n, s.sort == 2);
    size_t n = s.count && (uint64_t)s.count < f.n ? (size_t)s.count : f.n;
    if (s.store)
        store_points(c, &s, f.p, n, flags & SEARCH ? "geosearchstore" : "georadiusstore");
    else
        reply_points(c, &s, f.p, n);
out:
    free(f.p);
    free(f.names);
}

void cmd_georadius(client *c)
{
    geo_search(c, 1, FROM_COORDS);
}
void cmd_georadius_ro(client *c)
{
    geo_search(c, 1, FROM_COORDS | NO_STORE);
}
void cmd_georadiusbymember(client *c)
{
    geo_search(c, 1, FROM_MEMBER);
}
void cmd_georadiusbymember_ro(client *c)
{
    geo_search(c, 1, FROM_MEMBER | NO_STORE);
}
void cmd_geosearch(client *c)
{
    geo_search(c, 1, SEARCH);
}
void cmd_geosearchstore(client *c)
{
    geo_search(c, 2, SEARCH | SEARCH_STORE);
}
