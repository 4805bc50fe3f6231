/*
 * geohash.c -- Redis's geo encoding and search geometry as pure functions
 * (geohash.h). The arithmetic is Redis 7.0's step for step (the same
 * expressions in the same order, the same constants), because a score, a
 * position or a distance that differs in its last bit from redis-server's
 * would print differently.
 *
 * Encoding: each coordinate's offset in its range is scaled to
 * [0, 2^step) and truncated; the two step-bit integers are interleaved,
 * latitude in the even bits, longitude in the odd ones. A score is the
 * step-26 hash (52 bits, exact in a double). A search covers its shape's
 * bounding box with the box of the center at a step fit to the radius and
 * its 8 neighbours, dropping the neighbours the bounding box does not
 * reach.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "server/geohash.h"

#define D_R (M_PI / 180.0)
#define EARTH_RADIUS_IN_METERS 6372797.560856
#define MERCATOR_MAX 20037726.37

static double deg_rad(double ang)
{
    return ang * D_R;
}

static double rad_deg(double ang)
{
    return ang / D_R;
}

/* ---- Bits ------------------------------------------------------------------ */

/* Spreads the low 32 bits of v to the even bits of the result. */
static uint64_t spread(uint32_t v)
{
    uint64_t x = v;
    x = (x | (x << 16)) & 0x0000FFFF0000FFFFull;
    x = (x | (x << 8)) & 0x00FF00FF00FF00FFull;
    x = (x | (x << 4)) & 0x0F0F0F0F0F0F0F0Full;
    x = (x | (x << 2)) & 0x3333333333333333ull;
    x = (x | (x << 1)) & 0x5555555555555555ull;
    return x;
}

/* Gathers the even bits of x into 32 bits. */
static uint32_t gather(uint64_t x)
{
    x &= 0x5555555555555555ull;
    x = (x | (x >> 1)) & 0x3333333333333333ull;
    x = (x | (x >> 2)) & 0x0F0F0F0F0F0F0F0Full;
    x = (x | (x >> 4)) & 0x00FF00FF00FF00FFull;
    x = (x | (x >> 8)) & 0x0000FFFF0000FFFFull;
    x = (x | (x >> 16)) & 0x00000000FFFFFFFFull;
    return (uint32_t)x;
}

int geo_encode(double lon_min, double lon_max, double lat_min, double lat_max, double lon,
               double lat, int step, geo_hash *h)
{
    if (step < 1 || step > 32) return 0;
    if (lon > GEO_LONG_MAX || lon < GEO_LONG_MIN || lat > GEO_LAT_MAX || lat < GEO_LAT_MIN)
        return 0;
    if (lat < lat_min || lat > lat_max || lon < lon_min || lon > lon_max) return 0;
    double lat_offset = (lat - lat_min) / (lat_max - lat_min);
    double lon_offset = (lon - lon_min) / (lon_max - lon_min);
    lat_offset *= (double)(1ull << step);
    lon_offset *= (double)(1ull << step);
    h->bits = spread((uint32_t)lat_offset) | (spread((uint32_t)lon_offset) << 1);
    h->step = (uint8_t)step;
    return 1;
}

int geo_encode_wgs84(double lon, double lat, int step, geo_hash *h)
{
    return geo_encode(GEO_LONG_MIN, GEO_LONG_MAX, GEO_LAT_MIN, GEO_LAT_MAX, lon, lat, step, h);
}

int geo_decode(geo_hash h, geo_area *a)
{
    if (!h.bits && !h.step) return 0;
    const double lat_scale = GEO_LAT_MAX - GEO_LAT_MIN, lon_scale = GEO_LONG_MAX - GEO_LONG_MIN;
    uint32_t ilat = gather(h.bits), ilon = gather(h.bits >> 1);
    double cells = (double)(1ull << h.step);
    a->hash = h;
    a->lat_min = GEO_LAT_MIN + (ilat * 1.0 / cells) * lat_scale;
    a->lat_max = GEO_LAT_MIN + ((ilat + 1) * 1.0 / cells) * lat_scale;
    a->lon_min = GEO_LONG_MIN + (ilon * 1.0 / cells) * lon_scale;
    a->lon_max = GEO_LONG_MIN + ((ilon + 1) * 1.0 / cells) * lon_scale;
    return 1;
}

uint64_t geo_align52(geo_hash h)
{
    return h.bits << (52 - h.step * 2);
}

double geo_score(double lon, double lat)
{
    geo_hash h = {0, 0};
    geo_encode_wgs84(lon, lat, GEO_STEP_MAX, &h);
    return (double)geo_align52(h);
}

/* (uint64_t)d as x86-64 code compiled by gcc computes it, also for the
 * scores no GEOADD writes (negative, 2^63 and above): Redis casts the
 * score that way before decoding it. */
static uint64_t score_bits(double d)
{
    const double two63 = 9223372036854775808.0;
    if (d >= two63) {
        double t = d - two63;
        uint64_t v = t < two63 ? (uint64_t)(int64_t)t : 1ull << 63;
        return v ^ (1ull << 63);
    }
    if (!(d > -two63 - 1025.0)) return 1ull << 63; /* below INT64_MIN: x86's "indefinite" */
    return (uint64_t)(int64_t)d;
}

int geo_score_position(double score, double xy[2])
{
    geo_hash h = {score_bits(score), GEO_STEP_MAX};
    geo_area a;
    if (!geo_decode(h, &a)) return 0;
    xy[0] = (a.lon_min + a.lon_max) / 2;
    if (xy[0] > GEO_LONG_MAX) xy[0] = GEO_LONG_MAX;
    if (xy[0] < GEO_LONG_MIN) xy[0] = GEO_LONG_MIN;
    xy[1] = (a.lat_min + a.lat_max) / 2;
    if (xy[1] > GEO_LAT_MAX) xy[1] = GEO_LAT_MAX;
    if (xy[1] < GEO_LAT_MIN) xy[1] = GEO_LAT_MIN;
    return 1;
}

/* ---- Distances ------------------------------------------------------------------ */

double geo_lat_distance(double lat1, double lat2)
{
    return EARTH_RADIUS_IN_METERS * fabs(deg_rad(lat2) - deg_rad(lat1));
}

double geo_distance(double lon1, double lat1, double lon2, double lat2)
{
    double lon1r = deg_rad(lon1), lon2r = deg_rad(lon2);
    double v = sin((lon2r - lon1r) / 2);
    if (v == 0.0) return geo_lat_distance(lat1, lat2); /* the same meridian */
    double lat1r = deg_rad(lat1), lat2r = deg_rad(lat2);
    double u = sin((lat2r - lat1r) / 2);
    double a = u * u + cos(lat1r) * cos(lat2r) * v * v;
    return 2.0 * EARTH_RADIUS_IN_METERS * asin(sqrt(a));
}

/* ---- Search boxes -------------------------------------------------------------- */

/* The step whose box is about the size of the radius. */
static int steps_for_radius(double range_meters, double lat)
{
    if (range_meters == 0) return 26;
    int step = 1;
    while (range_meters < MERCATOR_MAX) {
        range_meters *= 2;
        step++;
    }
    step -= 2;                   /* the range inside the box in most cases */
    if (lat > 66 || lat < -66) { /* boxes narrow towards the poles */
        step--;
        if (lat > 80 || lat < -80) step--;
    }
    if (step < 1) step = 1;
    if (step > 26) step = 26;
    return step;
}

static void bounding_box(geo_shape *s)
{
    double lon = s->xy[0], lat = s->xy[1];
    double height = s->conversion * (s->type == GEO_CIRCLE ? s->radius : s->height / 2);
    double width = s->conversion * (s->type == GEO_CIRCLE ? s->radius : s->width / 2);
    const double lat_delta = rad_deg(height / EARTH_RADIUS_IN_METERS);
    const double lon_delta_top =
        rad_deg(width / EARTH_RADIUS_IN_METERS / cos(deg_rad(lat + lat_delta)));
    const double lon_delta_bottom =
        rad_deg(width / EARTH_RADIUS_IN_METERS / cos(deg_rad(lat - lat_delta)));
    /* The wider edge is the one nearer the equator. */
    int south = lat < 0;
    s->bounds[0] = south ? lon - lon_delta_bottom : lon - lon_delta_top;
    s->bounds[2] = south ? lon + lon_delta_bottom : lon + lon_delta_top;
    s->bounds[1] = lat - lat_delta;
    s->bounds[3] = lat + lat_delta;
}

/* Moves h by d boxes east-west (lon: the odd bits) or north-south (lat:
 * the even bits), wrapping within the step's bits. */
static void move(geo_hash *h, int d, int lon)
{
    if (d == 0) return;
    const uint64_t odd = 0xaaaaaaaaaaaaaaaaull, even = 0x5555555555555555ull;
    uint64_t mine = h->bits & (lon ? odd : even), other = h->bits & (lon ? even : odd);
    uint64_t zz = (lon ? even : odd) >> (64 - h->step * 2);
    if (d > 0)
        mine = mine + (zz + 1);
    else
        mine = (mine | zz) - (zz + 1);
    mine &= (lon ? odd : even) >> (64 - h->step * 2);
    h->bits = mine | other;
}

static geo_hash moved(geo_hash h, int dlon, int dlat)
{
    move(&h, dlon, 1);
    move(&h, dlat, 0);
    return h;
}

static void neighbours(geo_hash h, geo_hash b[9])
{
    b[0] = h;
    b[1] = moved(h, 0, 1);   /* north */
    b[2] = moved(h, 0, -1);  /* south */
    b[3] = moved(h, 1, 0);   /* east */
    b[4] = moved(h, -1, 0);  /* west */
    b[5] = moved(h, 1, 1);   /* north-east */
    b[6] = moved(h, -1, 1);  /* north-west */
    b[7] = moved(h, 1, -1);  /* south-east */
    b[8] = moved(h, -1, -1); /* south-west */
}

void geo_search_boxes(geo_shape *s, geo_hash b[9])
{
    bounding_box(s);
    double min_lon = s->bounds[0], min_lat = s->bounds[1], max_lon = s->bounds[2],
           max_lat = s->bounds[3];
    double lon = s->xy[0], lat = s->xy[1];
    /* A box's radius is its half diagonal. */
    double radius_meters =
        s->type == GEO_CIRCLE
            ? s->radius
            : sqrt((s->width / 2) * (s->width / 2) + (s->height / 2) * (s->height / 2));
    radius_meters *= s->conversion;
    int steps = steps_for_radius(radius_meters, lat);
    geo_hash h = {0, 0};
    geo_area area, n, so, e, w;
    geo_encode_wgs84(lon, lat, steps, &h);
    neighbours(h, b);
    geo_decode(h, &area);
    /* Near a box's edge the step can be too fine for a neighbour to reach
     * the bounding box: one step coarser then. */
    geo_decode(b[1], &n);
    geo_decode(b[2], &so);
    geo_decode(b[3], &e);
    geo_decode(b[4], &w);
    int coarser =
        n.lat_max < max_lat || so.lat_min > min_lat || e.lon_max < max_lon || w.lon_min > min_lon;
    if (steps > 1 && coarser) {
        steps--;
        geo_encode_wgs84(lon, lat, steps, &h);
        neighbours(h, b);
        geo_decode(h, &area);
    }
    /* Drop the neighbours beyond the bounding box. */
    const geo_hash none = {0, 0};
    if (steps >= 2) {
        if (area.lat_min < min_lat) b[2] = b[8] = b[7] = none;
        if (area.lat_max > max_lat) b[1] = b[5] = b[6] = none;
        if (area.lon_min < min_lon) b[4] = b[8] = b[6] = none;
        if (area.lon_max > max_lon) b[3] = b[7] = b[5] = none;
    }
}

void geo_box_scores(geo_hash h, double *min, double *max)
{
    *min = (double)geo_align52(h);
    h.bits++;
    *max = (double)geo_align52(h);
}

int geo_within(const geo_shape *s, double score, double xy[2], double *dist)
{
    if (!geo_score_position(score, xy)) return 0;
    if (s->type == GEO_CIRCLE) {
        *dist = geo_distance(s->xy[0], s->xy[1], xy[0], xy[1]);
        return *dist <= s->radius * s->conversion;
    }
    /* The box: the cheaper north-south test first, then east-west along
     * the point's latitude. */
    double width_m = s->width * s->conversion, height_m = s->height * s->conversion;
    if (geo_lat_distance(xy[1], s->xy[1]) > height_m / 2) return 0;
    if (geo_distance(xy[0], xy[1], s->xy[0], xy[1]) > width_m / 2) return 0;
    *dist = geo_distance(s->xy[0], s->xy[1], xy[0], xy[1]);
    return 1;
}

/* ---- Texts ------------------------------------------------------------------------ */

int geo_hash_text(double score, char out[12])
{
    static const char alphabet[] = "0123456789bcdefghjkmnpqrstuvwxyz";
    double xy[2];
    geo_hash h = {0, 0};
    if (!geo_score_position(score, xy)) return 0;
    /* The standard geohash's latitude range is [-90, 90], not Redis's. */
    geo_encode(-180, 180, -90, 90, xy[0], xy[1], 26, &h);
    for (int i = 0; i < 11; i++)
        out[i] = alphabet[i == 10 ? 0 : (h.bits >> (52 - (i + 1) * 5)) & 0x1f];
    out[11] = '\0';
    return 1;
}

int geo_distance_text(char *buf, size_t cap, double d)
{
    long long v = d == 0 ? 0 : llrint(d * 10000.0);
    unsigned long long u = v < 0 ? (unsigned long long)-(v + 1) + 1 : (unsigned long long)v;
    return snprintf(buf, cap, "%s%llu.%04llu", v < 0 ? "-" : "", u / 10000, u % 10000);
}

double geo_unit(const char *u)
{
    if (!strcasecmp(u, "m")) return 1;
    if (!strcasecmp(u, "km")) return 1000;
    if (!strcasecmp(u, "ft")) return 0.3048;
    if (!strcasecmp(u, "mi")) return 1609.34;
    return -1;
}
