/*
 * script_conv.c -- Redis's conversions between replies and Lua values.
 *
 * Reply -> Lua (what redis.call returns), for the RESP2 or RESP3 reply the
 * command wrote to the script client:
 *   integer -> number            bulk -> string       null bulk/array -> false
 *   status  -> {ok=s}            error -> {err=s}     array -> table 1..n
 *   RESP3: null -> nil, boolean -> boolean, double -> {double=d},
 *   map -> {map={k=v}}, set -> {set={k=true}}, big number -> {big_number=s},
 *   verbatim -> {verbatim_string={format=f, string=s}}; attributes skipped.
 * Lua -> reply (what the script returns), in the caller's protocol:
 *   string -> bulk    number -> integer (truncated)    nil -> null
 *   boolean -> RESP2 script: :1 / null; RESP3 script: boolean
 *   table {err=} -> error, {ok=} -> status, {double=} -> double,
 *   {big_number=}, {verbatim_string=}, {map=}, {set=}, else an array of
 *   t[1], t[2] ... up to the first nil.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "server/script.h"

/* ---- Reply -> Lua ------------------------------------------------------- */

typedef struct rp {
    const char *p, *end;
} rp;

/* The line at r->p (without CRLF); advances past it. */
static const char *rp_line(rp *r, size_t *n)
{
    const char *s = r->p;
    const char *e = memchr(s, '\r', (size_t)(r->end - s));
    if (!e) e = r->end;
    *n = (size_t)(e - s);
    r->p = e + 2 <= r->end ? e + 2 : r->end;
    return s;
}

static long long rp_num(const char *s, size_t n)
{
    long long v = 0;
    int neg = n && s[0] == '-';
    for (size_t i = neg; i < n; i++)
        v = v * 10 + (s[i] - '0');
    return neg ? -v : v;
}

static void parse_one(lua_State *L, rp *r, int push);

static void tagged_table(lua_State *L, const char *tag)
{
    lua_newtable(L);
    lua_pushstring(L, tag);
}

/* Parses one reply; pushes its value when push (attributes are parsed
 * with push 0 and dropped). */
static void parse_one(lua_State *L, rp *r, int push)
{
    if (r->p >= r->end) {
        if (push) lua_pushboolean(L, 0);
        return;
    }
    luaL_checkstack(L, 4, "reply nesting too deep");
    char t = *r->p++;
    size_t n;
    const char *s = rp_line(r, &n);
    long long len;
    switch (t) {
    case '+':
        if (!push) return;
        tagged_table(L, "ok");
        lua_pushlstring(L, s, n);
        lua_rawset(L, -3);
        return;
    case '-':
        if (!push) return;
        lua_pushlstring(L, "-", 1);
        lua_pushlstring(L, s, n);
        lua_concat(L, 2);
        script_push_error(L, lua_tostring(L, -1));
        lua_remove(L, -2);
        return;
    case ':':
        if (push) lua_pushnumber(L, (lua_Number)rp_num(s, n));
        return;
    case '$':
    case '=':
        len = rp_num(s, n);
        if (len < 0) {
            if (push) lua_pushboolean(L, 0);
            return;
        }
        if (len > r->end - r->p) len = r->end - r->p;
        s = r->p;
        r->p += len;
        r->p = r->p + 2 <= r->end ? r->p + 2 : r->end;
        if (!push) return;
        if (t == '$' || len < 4) {
            lua_pushlstring(L, s, (size_t)len);
            return;
        }
        tagged_table(L, "verbatim_string");
        lua_newtable(L);
        lua_pushlstring(L, s + 4, (size_t)len - 4);
        lua_setfield(L, -2, "string");
        lua_pushlstring(L, s, 3);
        lua_setfield(L, -2, "format");
        lua_rawset(L, -3);
        return;
    case '*':
    case '>':
        len = rp_num(s, n);
        if (len < 0) {
            if (push) lua_pushboolean(L, 0);
            return;
        }
        if (push) lua_newtable(L);
        for (long long j = 0; j < len; j++) {
            if (push) lua_pushnumber(L, (lua_Number)(j + 1));
            parse_one(L, r, push);
            if (push) lua_settable(L, -3);
        }
        return;
    case '%':
    case '~':
        len = rp_num(s, n);
        if (push) {
            tagged_table(L, t == '%' ? "map" : "set");
            lua_newtable(L);
        }
        for (long long j = 0; j < len; j++) {
            parse_one(L, r, push);
            if (t == '%')
                parse_one(L, r, push);
            else if (push)
                lua_pushboolean(L, 1);
            if (push) lua_settable(L, -3);
        }
        if (push) lua_rawset(L, -3);
        return;
    case '|':
        len = rp_num(s, n);
        for (long long j = 0; j < 2 * len; j++)
            parse_one(L, r, 0);
        parse_one(L, r, push);
        return;
    case '_':
        if (push) lua_pushnil(L);
        return;
    case '#':
        if (push) lua_pushboolean(L, n && s[0] == 't');
        return;
    case ',': {
        if (!push) return;
        char buf[128];
        size_t k = n < sizeof(buf) - 1 ? n : sizeof(buf) - 1;
        memcpy(buf, s, k);
        buf[k] = '\0';
        tagged_table(L, "double");
        lua_pushnumber(L, strtod(buf, NULL));
        lua_rawset(L, -3);
        return;
    }
    case '(':
        if (!push) return;
        tagged_table(L, "big_number");
        lua_pushlstring(L, s, n);
        lua_rawset(L, -3);
        return;
    default:
        if (push) lua_pushboolean(L, 0);
        return;
    }
}

void script_reply_to_lua(lua_State *L, const char *p, size_t n)
{
    rp r = {p, p + n};
    parse_one(L, &r, 1);
}

/* ---- Lua -> reply -------------------------------------------------------- */

/* A copy of the string at idx with CR and LF as spaces (statuses and big
 * numbers are one line). The caller frees it. */
static char *one_line(lua_State *L, int idx, size_t *n)
{
    const char *s = lua_tolstring(L, idx, n);
    char *d = malloc(*n + 1);
    if (!d) abort();
    memcpy(d, s, *n);
    d[*n] = '\0';
    for (size_t i = 0; i < *n; i++)
        if (d[i] == '\r' || d[i] == '\n') d[i] = ' ';
    return d;
}

/* As C's (long long) cast of a double on x86-64, without the undefined
 * behaviour: out of range and NaN give LLONG_MIN. */
static long long trunc_ll(lua_Number d)
{
    if (isnan(d) || d >= 9223372036854775808.0 || d < -9223372036854775808.0)
        return (long long)(-9223372036854775807LL - 1);
    return (long long)d;
}

/* Pushes t[field] (raw) for the table t at idx; returns its type. */
static int raw_field(lua_State *L, int idx, const char *field)
{
    lua_pushstring(L, field);
    lua_rawget(L, idx < 0 ? idx - 1 : idx);
    return lua_type(L, -1);
}

static void reply_error_table(client *c, lua_State *L)
{
    script_err e;
    script_err_read(L, &e);
    size_t n = e.msg ? strlen(e.msg) : 0;
    char *m = malloc(n + 2);
    if (!m) abort();
    m[0] = '-';
    if (n) memcpy(m + 1, e.msg, n);
    m[n + 1] = '\0';
    add_reply_error(c, m);
    free(m);
    script_err_free(&e);
}

/* {verbatim_string={format=, string=}} on top; returns 1 when replied. */
static int reply_verbatim(client *c, lua_State *L)
{
    int done = 0;
    if (raw_field(L, -1, "verbatim_string") == LUA_TTABLE) {
        if (raw_field(L, -1, "format") == LUA_TSTRING) {
            if (raw_field(L, -2, "string") == LUA_TSTRING) {
                char ext[4] = "   "; /* padded to three bytes, as Redis */
                size_t fl, n;
                const char *f = lua_tolstring(L, -2, &fl);
                const char *s = lua_tolstring(L, -1, &n);
                memcpy(ext, f, fl < 3 ? fl : 3);
                add_reply_verbatim(c, s, n, ext);
                done = 1;
            }
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return done;
}

/* {map=t} or {set=t} on top (which in is_map); returns 1 when replied. */
static int reply_aggregate(client *c, int script_resp, lua_State *L, int is_map)
{
    if (raw_field(L, -1, is_map ? "map" : "set") != LUA_TTABLE) {
        lua_pop(L, 1);
        return 0;
    }
    long count = 0;
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        count++;
        lua_pop(L, 1);
    }
    if (is_map)
        add_reply_map_len(c, count);
    else
        add_reply_set_len(c, count);
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        if (is_map) {
            lua_pushvalue(L, -2);
            script_lua_to_reply(c, script_resp, L); /* the key */
            script_lua_to_reply(c, script_resp, L); /* the value */
        } else {
            lua_pop(L, 1);
            lua_pushvalue(L, -1);
            script_lua_to_reply(c, script_resp, L);
        }
    }
    lua_pop(L, 1);
    return 1;
}

/* The tagged tables; returns 1 when the table on top was one (replied,
 * the table still on top), 0 with the stack unchanged. */
static int reply_tagged(client *c, int script_resp, lua_State *L)
{
    size_t n;
    int t = raw_field(L, -1, "err");
    lua_pop(L, 1);
    if (t == LUA_TSTRING) {
        reply_error_table(c, L);
        return 1;
    }
    if (raw_field(L, -1, "ok") == LUA_TSTRING) {
        char *s = one_line(L, -1, &n);
        add_reply_status(c, s);
        free(s);
        lua_pop(L, 1);
        return 1;
    }
    lua_pop(L, 1);
    if (raw_field(L, -1, "double") == LUA_TNUMBER) {
        add_reply_double(c, lua_tonumber(L, -1));
        lua_pop(L, 1);
        return 1;
    }
    lua_pop(L, 1);
    if (raw_field(L, -1, "big_number") == LUA_TSTRING) {
        char *s = one_line(L, -1, &n);
        if (c->resp >= 3) {
            reply_append(c, "(", 1);
            reply_append(c, s, n);
            reply_append(c, "\r\n", 2);
        } else {
            add_reply_bulk(c, s, n);
        }
        free(s);
        lua_pop(L, 1);
        return 1;
    }
    lua_pop(L, 1);
    return reply_verbatim(c, L) || reply_aggregate(c, script_resp, L, 1) ||
           reply_aggregate(c, script_resp, L, 0);
}

void script_lua_to_reply(client *c, int script_resp, lua_State *L)
{
    if (!lua_checkstack(L, 4)) {
        add_reply_error(c, "reached lua stack limit");
        lua_pop(L, 1);
        return;
    }
    size_t n;
    const char *s;
    switch (lua_type(L, -1)) {
    case LUA_TSTRING:
        s = lua_tolstring(L, -1, &n);
        add_reply_bulk(c, s, n);
        break;
    case LUA_TBOOLEAN:
        if (script_resp == 2) {
            if (lua_toboolean(L, -1))
                add_reply_long_long(c, 1);
            else
                add_reply_null(c);
        } else {
            add_reply_bool(c, lua_toboolean(L, -1));
        }
        break;
    case LUA_TNUMBER:
        add_reply_long_long(c, trunc_ll(lua_tonumber(L, -1)));
        break;
    case LUA_TTABLE: {
        if (reply_tagged(c, script_resp, L)) break;
        void *len = add_reply_deferred_len(c);
        long count = 0;
        for (int j = 1;; j++) {
            lua_pushnumber(L, j);
            lua_rawget(L, -2);
            if (lua_isnil(L, -1)) {
                lua_pop(L, 1);
                break;
            }
            script_lua_to_reply(c, script_resp, L);
            count++;
        }
        set_deferred_array_len(c, len, count);
        break;
    }
    default:
        add_reply_null(c);
    }
    lua_pop(L, 1);
}
