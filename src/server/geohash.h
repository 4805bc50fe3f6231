/*
 * geohash.h -- Redis's geo encoding as pure functions: the 52-bit
 * interleaved geohash a GEOADD stores as a sorted-set score, its decoding
 * to a position, the 9 boxes a radius or box search reads, distances on
 * Redis's sphere, and the texts GEOHASH and WITHDIST print. Every result
 * is bit for bit Redis 7.0's (the same arithmetic in the same order), so
 * scores, positions and distances agree with redis-server's.
 *
 * A hash of step s has 2s bits: bit 2i+1 a longitude bit, bit 2i a
 * latitude bit, most significant first, over longitude [-180, 180] and
 * latitude [-85.05112878, 85.05112878] (the Web Mercator square: no
 * poles). No state, no locks; any thread.
 */
#ifndef STRATA_GEOHASH_H
#define STRATA_GEOHASH_H

#include <stddef.h>
#include <stdint.h>

#define GEO_STEP_MAX 26 /* 52 bits: what fits a double exactly */
#define GEO_LAT_MIN -85.05112878
#define GEO_LAT_MAX 85.05112878
#define GEO_LONG_MIN -180.0
#define GEO_LONG_MAX 180.0

typedef struct geo_hash {
    uint64_t bits;
    uint8_t step; /* 0 with bits 0: no box */
} geo_hash;

typedef struct geo_area {
    geo_hash hash;
    double lon_min, lon_max, lat_min, lat_max;
} geo_area;

/* The hash of (lon, lat) with step bits per coordinate over the given
 * ranges; 0 when outside them (or outside Redis's square), else 1. */
int geo_encode(double lon_min, double lon_max, double lat_min, double lat_max, double lon,
               double lat, int step, geo_hash *h);
/* geo_encode over Redis's square. */
int geo_encode_wgs84(double lon, double lat, int step, geo_hash *h);
/* The box of h over Redis's square. 0 for the empty hash. */
int geo_decode(geo_hash h, geo_area *a);
/* A GEOADD score: the step-26 hash of (lon, lat), as a double. */
double geo_score(double lon, double lat);
/* The position a score stands for (the middle of its box, clamped to the
 * square): xy[0] longitude, xy[1] latitude. 0 when it cannot decode. */
int geo_score_position(double score, double xy[2]);
/* h's bits shifted to 52 (a score prefix). */
uint64_t geo_align52(geo_hash h);

/* Great-circle distance in meters (Redis's haversine, its earth radius). */
double geo_distance(double lon1, double lat1, double lon2, double lat2);
/* The north-south part of it. */
double geo_lat_distance(double lat1, double lat2);

/* A search: around xy, a circle of radius or a box of width x height,
 * those in units of conversion meters. */
enum { GEO_CIRCLE = 1, GEO_BOX = 2 };
typedef struct geo_shape {
    int type;
    double xy[2];
    double conversion;
    double radius, width, height;
    double bounds[4]; /* set by geo_search_boxes: min lon, min lat, max lon, max lat */
} geo_shape;
/* The 9 boxes to read for s, in Redis's order (center, N, S, E, W, NE,
 * NW, SE, SW); a box with step 0 is not read. */
void geo_search_boxes(geo_shape *s, geo_hash boxes[9]);
/* The score range [min, max) of the members inside box h. */
void geo_box_scores(geo_hash h, double *min, double *max);
/* 1 when the member of score is inside s (xy and *dist, in meters, set),
 * else 0. */
int geo_within(const geo_shape *s, double score, double xy[2], double *dist);

/* GEOHASH's 11-character text of a score (the position re-encoded over
 * latitude [-90, 90], a final '0'); 0 when it cannot decode. */
int geo_hash_text(double score, char out[12]);
/* WITHDIST and GEODIST's text: d rounded to 4 decimals (llrint, as Redis's
 * fixedpoint_d2string). Returns the length (cap >= 32). */
int geo_distance_text(char *buf, size_t cap, double d);
/* The meters per unit of m, km, ft, mi (any case); -1 for others. */
double geo_unit(const char *u);

#endif
