/*
 * lua_cmsgpack.c -- the `cmsgpack` library Redis scripts have, compatible
 * with lua-cmsgpack 0.4.0 as Redis bundles it: cmsgpack.pack(v, ...) (the
 * MessagePack encodings of its arguments, concatenated),
 * cmsgpack.unpack(s) (every value in s), cmsgpack.unpack_one(s [, off])
 * and cmsgpack.unpack_limit(s, n [, off]) (the next offset, -1 at the end,
 * then at most n values).
 *
 * Encoding choices (they decide the bytes, so they follow lua-cmsgpack):
 * a number equal to an int64 is an integer in the smallest form (positive
 * fixnum, uint8/16/32/64, negative fixnum, int8/16/32/64); any other
 * number is float32 when that is exact, else float64; strings use fixstr,
 * str8, str16 or str32; a table whose keys are exactly 1..n is an array
 * (elements read with metamethods), any other table a map (raw pairs);
 * tables nested deeper than 16 levels, and functions, userdata and nil,
 * are nil (0xc0). Decoding accepts those forms (0xd9 str8 included) and
 * nothing else: "Bad data format in input." / "Missing bytes in input.".
 */
#include <limits.h>
#include <stdlib.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#define MAX_NESTING 16

/* ---- Encoding ----------------------------------------------------------------
 * Encoding walks tables with the Lua stack, so it cannot use luaL_Buffer
 * (which keeps pieces on the stack); it writes into a growable C buffer
 * owned by a userdata, so an error raised midway (stack overflow) leaks
 * nothing: the garbage collector frees it. */

typedef struct mbuf {
    unsigned char *p;
    size_t n, cap;
} mbuf;

static int mbuf_gc(lua_State *L)
{
    mbuf *m = lua_touserdata(L, 1);
    free(m->p);
    m->p = NULL;
    return 0;
}

static void put(lua_State *L, mbuf *m, const void *p, size_t n)
{
    if (m->n + n > m->cap) {
        size_t cap = (m->n + n) * 2;
        unsigned char *q = realloc(m->p, cap);
        if (!q) luaL_error(L, "out of memory");
        m->p = q;
        m->cap = cap;
    }
    memcpy(m->p + m->n, p, n);
    m->n += n;
}

static void put_byte(lua_State *L, mbuf *m, unsigned char c)
{
    put(L, m, &c, 1);
}

static void put_be(lua_State *L, mbuf *m, unsigned char tag, uint64_t v, int bytes)
{
    unsigned char h[9];
    h[0] = tag;
    for (int i = 0; i < bytes; i++)
        h[1 + i] = (unsigned char)(v >> (8 * (bytes - 1 - i)));
    put(L, m, h, (size_t)bytes + 1);
}

static void encode_int(lua_State *L, mbuf *m, int64_t n)
{
    if (n >= 0) {
        if (n <= 127)
            put_byte(L, m, (unsigned char)n);
        else if (n <= 0xff)
            put_be(L, m, 0xcc, (uint64_t)n, 1);
        else if (n <= 0xffff)
            put_be(L, m, 0xcd, (uint64_t)n, 2);
        else if (n <= 0xffffffffLL)
            put_be(L, m, 0xce, (uint64_t)n, 4);
        else
            put_be(L, m, 0xcf, (uint64_t)n, 8);
    } else {
        if (n >= -32)
            put_byte(L, m, (unsigned char)(signed char)n);
        else if (n >= -128)
            put_be(L, m, 0xd0, (uint64_t)n, 1);
        else if (n >= -32768)
            put_be(L, m, 0xd1, (uint64_t)n, 2);
        else if (n >= -2147483648LL)
            put_be(L, m, 0xd2, (uint64_t)n, 4);
        else
            put_be(L, m, 0xd3, (uint64_t)n, 8);
    }
}

static void encode_number(lua_State *L, mbuf *m, lua_Number d)
{
    if (!isnan(d) && d >= -9223372036854775808.0 && d < 9223372036854775808.0 &&
        (lua_Number)(int64_t)d == d) {
        encode_int(L, m, (int64_t)d);
        return;
    }
    float f = (float)d;
    if ((double)f == d) {
        uint32_t u;
        memcpy(&u, &f, 4);
        put_be(L, m, 0xca, u, 4);
    } else {
        uint64_t u;
        memcpy(&u, &d, 8);
        put_be(L, m, 0xcb, u, 8);
    }
}

static void encode_string(lua_State *L, mbuf *m, const char *s, size_t n)
{
    if (n < 32)
        put_byte(L, m, (unsigned char)(0xa0 | n));
    else if (n <= 0xff)
        put_be(L, m, 0xd9, n, 1);
    else if (n <= 0xffff)
        put_be(L, m, 0xda, n, 2);
    else
        put_be(L, m, 0xdb, n, 4);
    put(L, m, s, n);
}

static void encode_header(lua_State *L, mbuf *m, size_t n, unsigned char fix, unsigned char t16,
                          unsigned char t32)
{
    if (n <= 15)
        put_byte(L, m, (unsigned char)(fix | n));
    else if (n <= 65535)
        put_be(L, m, t16, n, 2);
    else
        put_be(L, m, t32, n, 4);
}

/* Are the keys of the table on top exactly 1..n? */
static int is_array(lua_State *L)
{
    lua_Number max = 0, count = 0;
    int top = lua_gettop(L);
    luaL_checkstack(L, 2, "in function table_is_an_array");
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pop(L, 1);
        lua_Number k;
        if (lua_type(L, -1) != LUA_TNUMBER || (k = lua_tonumber(L, -1)) <= 0 || k > INT_MAX ||
            (lua_Number)(int)k != k) {
            lua_settop(L, top);
            return 0;
        }
        if (k > max) max = k;
        count++;
    }
    lua_settop(L, top);
    return max == count;
}

static void encode_value(lua_State *L, mbuf *m, int level);

static void encode_table(lua_State *L, mbuf *m, int level)
{
    if (is_array(L)) {
        size_t n = lua_objlen(L, -1);
        encode_header(L, m, n, 0x90, 0xdc, 0xdd);
        luaL_checkstack(L, 1, "in function mp_encode_lua_table_as_array");
        for (size_t j = 1; j <= n; j++) {
            lua_pushnumber(L, (lua_Number)j);
            lua_gettable(L, -2);
            encode_value(L, m, level + 1);
        }
        return;
    }
    size_t n = 0;
    luaL_checkstack(L, 3, "in function mp_encode_lua_table_as_map");
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pop(L, 1);
        n++;
    }
    encode_header(L, m, n, 0x80, 0xde, 0xdf);
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pushvalue(L, -2);
        encode_value(L, m, level + 1); /* key */
        encode_value(L, m, level + 1); /* value */
    }
}

/* Encodes and pops the value on top. */
static void encode_value(lua_State *L, mbuf *m, int level)
{
    int t = lua_type(L, -1);
    if (t == LUA_TTABLE && level == MAX_NESTING) t = LUA_TNIL;
    size_t n;
    const char *s;
    switch (t) {
    case LUA_TSTRING:
        s = lua_tolstring(L, -1, &n);
        encode_string(L, m, s, n);
        break;
    case LUA_TBOOLEAN:
        put_byte(L, m, lua_toboolean(L, -1) ? 0xc3 : 0xc2);
        break;
    case LUA_TNUMBER:
        encode_number(L, m, lua_tonumber(L, -1));
        break;
    case LUA_TTABLE:
        encode_table(L, m, level);
        break;
    default:
        put_byte(L, m, 0xc0);
    }
    lua_pop(L, 1);
}

static int mp_pack(lua_State *L)
{
    int nargs = lua_gettop(L);
    if (nargs == 0) return luaL_argerror(L, 0, "MessagePack pack needs input.");
    if (!lua_checkstack(L, nargs + 4))
        return luaL_argerror(L, 0, "Too many arguments for MessagePack pack.");
    mbuf *m = lua_newuserdata(L, sizeof(*m));
    m->p = NULL;
    m->n = m->cap = 0;
    lua_newtable(L);
    lua_pushcfunction(L, mbuf_gc);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    for (int i = 1; i <= nargs; i++) {
        lua_pushvalue(L, i);
        encode_value(L, m, 0);
    }
    lua_pushlstring(L, (const char *)m->p, m->n);
    return 1;
}

/* ---- Decoding --------------------------------------------------------------- */

enum { DEC_OK, DEC_EOF, DEC_BADFMT };

typedef struct cur {
    const unsigned char *p;
    size_t left;
    int err;
} cur;

static uint64_t get_be(const unsigned char *p, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v = (v << 8) | p[i];
    return v;
}

#define NEED(c, n)                                                                                 \
    do {                                                                                           \
        if ((c)->left < (size_t)(n)) {                                                             \
            (c)->err = DEC_EOF;                                                                    \
            return;                                                                                \
        }                                                                                          \
    } while (0)
#define TAKE(c, n) ((c)->p += (n), (c)->left -= (n))

static void decode_value(lua_State *L, cur *c);

static void decode_array(lua_State *L, cur *c, size_t n)
{
    lua_newtable(L);
    luaL_checkstack(L, 1, "in function mp_decode_to_lua_array");
    for (size_t i = 1; i <= n; i++) {
        lua_pushnumber(L, (lua_Number)i);
        decode_value(L, c);
        if (c->err) return;
        lua_settable(L, -3);
    }
}

static void decode_map(lua_State *L, cur *c, size_t n)
{
    lua_newtable(L);
    while (n--) {
        decode_value(L, c);
        if (c->err) return;
        decode_value(L, c);
        if (c->err) return;
        lua_settable(L, -3);
    }
}

static void decode_bytes(lua_State *L, cur *c, int hdr)
{
    NEED(c, 1 + hdr);
    size_t n = (size_t)get_be(c->p + 1, hdr);
    TAKE(c, 1 + hdr);
    NEED(c, n);
    lua_pushlstring(L, (const char *)c->p, n);
    TAKE(c, n);
}

static void decode_value(lua_State *L, cur *c)
{
    NEED(c, 1);
    luaL_checkstack(L, 1,
                    "too many return values at once; use unpack_one or unpack_limit instead.");
    unsigned char t = c->p[0];
    switch (t) {
    case 0xcc:
    case 0xcd:
    case 0xce:
    case 0xcf: {
        int k = 1 << (t - 0xcc);
        NEED(c, 1 + k);
        uint64_t v = get_be(c->p + 1, k);
        if (k == 8)
            lua_pushinteger(L, (lua_Integer)(int64_t)v); /* wraps past 2^63, as lua-cmsgpack */
        else
            lua_pushinteger(L, (lua_Integer)v);
        TAKE(c, 1 + k);
        return;
    }
    case 0xd0:
    case 0xd1:
    case 0xd2:
    case 0xd3: {
        int k = 1 << (t - 0xd0);
        NEED(c, 1 + k);
        uint64_t v = get_be(c->p + 1, k);
        int64_t s = k == 1 ? (int8_t)v : k == 2 ? (int16_t)v : k == 4 ? (int32_t)v : (int64_t)v;
        if (k == 8)
            lua_pushnumber(L, (lua_Number)s);
        else
            lua_pushinteger(L, (lua_Integer)s);
        TAKE(c, 1 + k);
        return;
    }
    case 0xc0:
        lua_pushnil(L);
        TAKE(c, 1);
        return;
    case 0xc2:
    case 0xc3:
        lua_pushboolean(L, t == 0xc3);
        TAKE(c, 1);
        return;
    case 0xca: {
        NEED(c, 5);
        uint32_t u = (uint32_t)get_be(c->p + 1, 4);
        float f;
        memcpy(&f, &u, 4);
        lua_pushnumber(L, f);
        TAKE(c, 5);
        return;
    }
    case 0xcb: {
        NEED(c, 9);
        uint64_t u = get_be(c->p + 1, 8);
        double d;
        memcpy(&d, &u, 8);
        lua_pushnumber(L, d);
        TAKE(c, 9);
        return;
    }
    case 0xd9:
        decode_bytes(L, c, 1);
        return;
    case 0xda:
        decode_bytes(L, c, 2);
        return;
    case 0xdb:
        decode_bytes(L, c, 4);
        return;
    case 0xdc:
    case 0xdd:
    case 0xde:
    case 0xdf: {
        int k = (t == 0xdc || t == 0xde) ? 2 : 4;
        NEED(c, 1 + k);
        size_t n = (size_t)get_be(c->p + 1, k);
        TAKE(c, 1 + k);
        if (t <= 0xdd)
            decode_array(L, c, n);
        else
            decode_map(L, c, n);
        return;
    }
    default:
        break;
    }
    if ((t & 0x80) == 0) {
        lua_pushinteger(L, t);
        TAKE(c, 1);
    } else if ((t & 0xe0) == 0xe0) {
        lua_pushinteger(L, (signed char)t);
        TAKE(c, 1);
    } else if ((t & 0xe0) == 0xa0) {
        size_t n = t & 0x1f;
        NEED(c, 1 + n);
        lua_pushlstring(L, (const char *)c->p + 1, n);
        TAKE(c, 1 + n);
    } else if ((t & 0xf0) == 0x90) {
        TAKE(c, 1);
        decode_array(L, c, t & 0xf);
    } else if ((t & 0xf0) == 0x80) {
        TAKE(c, 1);
        decode_map(L, c, t & 0xf);
    } else {
        c->err = DEC_BADFMT;
    }
}

/* limit 0 and offset 0: every value, no offset returned. */
static int unpack_full(lua_State *L, lua_Integer limit, lua_Integer offset)
{
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    int all = !limit && !offset;
    if (offset < 0 || limit < 0)
        return luaL_error(L, "Invalid request to unpack with offset of %d and limit of %d.",
                          (int)offset, (int)len);
    if ((size_t)offset > len)
        return luaL_error(L, "Start offset %d greater than input length %d.", (int)offset,
                          (int)len);
    if (all) limit = INT_MAX;
    cur c = {(const unsigned char *)s + offset, len - (size_t)offset, DEC_OK};
    int n;
    for (n = 0; c.left > 0 && n < limit; n++) {
        decode_value(L, &c);
        if (c.err == DEC_EOF) return luaL_error(L, "Missing bytes in input.");
        if (c.err == DEC_BADFMT) return luaL_error(L, "Bad data format in input.");
    }
    if (all) return n;
    luaL_checkstack(L, 1, "in function mp_unpack_full");
    lua_pushinteger(L, c.left == 0 ? -1 : (lua_Integer)(len - c.left));
    lua_insert(L, 2);
    return n + 1;
}

static int mp_unpack(lua_State *L)
{
    return unpack_full(L, 0, 0);
}

static int mp_unpack_one(lua_State *L)
{
    lua_Integer offset = luaL_optinteger(L, 2, 0);
    lua_settop(L, 1);
    return unpack_full(L, 1, offset);
}

static int mp_unpack_limit(lua_State *L)
{
    lua_Integer limit = luaL_checkinteger(L, 2);
    lua_Integer offset = luaL_optinteger(L, 3, 0);
    lua_settop(L, 1);
    return unpack_full(L, limit, offset);
}

int luaopen_cmsgpack(lua_State *L)
{
    static const luaL_Reg fns[] = {{"pack", mp_pack},
                                   {"unpack", mp_unpack},
                                   {"unpack_one", mp_unpack_one},
                                   {"unpack_limit", mp_unpack_limit},
                                   {NULL, NULL}};
    lua_newtable(L);
    for (const luaL_Reg *f = fns; f->name; f++) {
        lua_pushcfunction(L, f->func);
        lua_setfield(L, -2, f->name);
    }
    lua_pushliteral(L, "cmsgpack");
    lua_setfield(L, -2, "_NAME");
    lua_pushliteral(L, "lua-cmsgpack 0.4.0");
    lua_setfield(L, -2, "_VERSION");
    lua_pushliteral(L, "Copyright (C) 2012, Salvatore Sanfilippo");
    lua_setfield(L, -2, "_COPYRIGHT");
    lua_pushliteral(L, "MessagePack C implementation for Lua");
    lua_setfield(L, -2, "_DESCRIPTION");
    return 1;
}
