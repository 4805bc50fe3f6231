/*
 * lua_struct.c -- the `struct` library Redis scripts have: struct.pack(fmt,
 * ...), struct.unpack(fmt, s [, pos]) and struct.size(fmt), compatible
 * with the struct library by R. Ierusalimschy that Redis bundles (same
 * format language, results, and error texts).
 *
 * Format: '>' big endian, '<' little endian, '![n]' maximum alignment
 * (power of 2, default the platform's), ' ' ignored, 'x' a zero byte,
 * b/B h/H l/L T i[n]/I[n] integers (lower case signed; n bytes, at most
 * 32), f float, d double, 's' a zero-terminated string, 'c[n]' n chars
 * (pack: n 0 = the whole string; unpack: 0 = the previous number read is
 * the length). Items are aligned to min(size, alignment) from the start.
 * Integers travel through a 64-bit long, as in the original.
 */
#include <ctype.h>
#include <limits.h>
#include <stddef.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#define MAX_INT_SIZE 32

typedef struct fmt_state {
    int little; /* byte order */
    int align;  /* maximum alignment */
} fmt_state;

struct align_probe {
    char c;
    double d;
};
#define NATIVE_ALIGN                                                                               \
    ((offsetof(struct align_probe, d)) > sizeof(int) ? offsetof(struct align_probe, d)             \
                                                     : sizeof(int))

static int native_little(void)
{
    const int one = 1;
    return *(const char *)&one == 1;
}

static void fmt_init(fmt_state *st)
{
    st->little = native_little();
    st->align = 1;
}

/* A decimal count after an option, or dflt when none follows. */
static int read_count(lua_State *L, const char **f, int dflt)
{
    if (!isdigit((unsigned char)**f)) return dflt;
    int n = 0;
    while (isdigit((unsigned char)**f)) {
        int d = *(*f)++ - '0';
        if (n > (INT_MAX - d) / 10) luaL_error(L, "integral size overflow");
        n = n * 10 + d;
    }
    return n;
}

/* The size of option opt (reading its count); 0 for control options. */
static size_t item_size(lua_State *L, int opt, const char **f)
{
    switch (opt) {
    case 'b':
    case 'B':
    case 'x':
        return 1;
    case 'h':
    case 'H':
        return sizeof(short);
    case 'l':
    case 'L':
        return sizeof(long);
    case 'T':
        return sizeof(size_t);
    case 'f':
        return sizeof(float);
    case 'd':
        return sizeof(double);
    case 'c':
        return (size_t)read_count(L, f, 1);
    case 'i':
    case 'I': {
        int n = read_count(L, f, (int)sizeof(int));
        if (n > MAX_INT_SIZE)
            luaL_error(L, "integral size %d is larger than limit of %d", n, MAX_INT_SIZE);
        return (size_t)n;
    }
    default:
        return 0;
    }
}

static int is_int_opt(int opt)
{
    return opt && strchr("bBhHlLTiI", opt) != NULL;
}

static size_t padding(size_t pos, const fmt_state *st, int opt, size_t size)
{
    if (size == 0 || opt == 'c') return 0;
    if (size > (size_t)st->align) size = (size_t)st->align;
    return (size - (pos & (size - 1))) & (size - 1);
}

static void control(lua_State *L, int opt, const char **f, fmt_state *st)
{
    switch (opt) {
    case ' ':
        return;
    case '>':
        st->little = 0;
        return;
    case '<':
        st->little = 1;
        return;
    case '!': {
        int a = read_count(L, f, (int)NATIVE_ALIGN);
        if (a <= 0 || (a & (a - 1))) luaL_error(L, "alignment %d is not a power of 2", a);
        st->align = a;
        return;
    }
    default:
        luaL_argerror(L, 1, lua_pushfstring(L, "invalid format option '%c'", opt));
    }
}

/* Copies n bytes, reversed when the wanted order is not the native one. */
static void copy_order(char *dst, const char *src, size_t n, int little)
{
    if (little == native_little()) {
        memcpy(dst, src, n);
        return;
    }
    for (size_t i = 0; i < n; i++)
        dst[i] = src[n - 1 - i];
}

static void pack_int(lua_State *L, luaL_Buffer *b, int argi, int little, size_t size)
{
    lua_Number x = luaL_checknumber(L, argi);
    unsigned long v = x < 0 ? (unsigned long)(long)x : (unsigned long)x;
    char out[MAX_INT_SIZE];
    for (size_t i = 0; i < size; i++) {
        out[little ? i : size - 1 - i] = (char)(v & 0xff);
        v >>= 8;
    }
    luaL_addlstring(b, out, size);
}

static int s_pack(lua_State *L)
{
    const char *f = luaL_checkstring(L, 1);
    fmt_state st;
    fmt_init(&st);
    int argi = 2;
    size_t total = 0;
    luaL_Buffer b;
    lua_pushnil(L); /* keeps the arguments apart from the buffer */
    luaL_buffinit(L, &b);
    while (*f) {
        int opt = *f++;
        size_t size = item_size(L, opt, &f);
        size_t pad = padding(total, &st, opt, size);
        total += pad;
        while (pad--)
            luaL_addchar(&b, '\0');
        if (is_int_opt(opt)) {
            pack_int(L, &b, argi++, st.little, size);
            total += size;
            continue;
        }
        switch (opt) {
        case 'x':
            luaL_addchar(&b, '\0');
            break;
        case 'f': {
            float v = (float)luaL_checknumber(L, argi++);
            char out[sizeof(v)];
            copy_order(out, (const char *)&v, sizeof(v), st.little);
            luaL_addlstring(&b, out, sizeof(v));
            break;
        }
        case 'd': {
            double v = luaL_checknumber(L, argi++);
            char out[sizeof(v)];
            copy_order(out, (const char *)&v, sizeof(v), st.little);
            luaL_addlstring(&b, out, sizeof(v));
            break;
        }
        case 'c':
        case 's': {
            size_t l;
            const char *s = luaL_checklstring(L, argi++, &l);
            if (size == 0) size = l;
            luaL_argcheck(L, l >= size, argi, "string too short");
            luaL_addlstring(&b, s, size);
            if (opt == 's') {
                luaL_addchar(&b, '\0');
                size++;
            }
            break;
        }
        default:
            control(L, opt, &f, &st);
        }
        total += size;
    }
    luaL_pushresult(&b);
    return 1;
}

static lua_Number unpack_int(const char *p, int little, int is_signed, size_t size)
{
    unsigned long v = 0;
    for (size_t i = 0; i < size; i++) {
        unsigned char byte = (unsigned char)p[little ? size - 1 - i : i];
        v = (v << 8) | byte;
    }
    if (!is_signed) return (lua_Number)v;
    if (size >= sizeof(v)) return (lua_Number)(long)v;
    unsigned long sign = ~0UL << (size * 8 - 1);
    if (v & sign) v |= sign;
    return (lua_Number)(long)v;
}

static int s_unpack(lua_State *L)
{
    const char *f = luaL_checkstring(L, 1);
    size_t ld;
    const char *data = luaL_checklstring(L, 2, &ld);
    size_t pos = (size_t)luaL_optinteger(L, 3, 1);
    luaL_argcheck(L, pos > 0, 3, "offset must be 1 or greater");
    pos--;
    fmt_state st;
    fmt_init(&st);
    int n = 0;
    while (*f) {
        int opt = *f++;
        size_t size = item_size(L, opt, &f);
        pos += padding(pos, &st, opt, size);
        luaL_argcheck(L, size <= ld && pos <= ld - size, 2, "data string too short");
        luaL_checkstack(L, 2, "too many results");
        if (is_int_opt(opt)) {
            lua_pushnumber(L, unpack_int(data + pos, st.little, islower(opt), size));
            n++;
            pos += size;
            continue;
        }
        switch (opt) {
        case 'x':
            break;
        case 'f': {
            float v;
            copy_order((char *)&v, data + pos, sizeof(v), st.little);
            lua_pushnumber(L, v);
            n++;
            break;
        }
        case 'd': {
            double v;
            copy_order((char *)&v, data + pos, sizeof(v), st.little);
            lua_pushnumber(L, v);
            n++;
            break;
        }
        case 'c':
            if (size == 0) {
                if (n == 0 || !lua_isnumber(L, -1))
                    luaL_error(L, "format 'c0' needs a previous size");
                size = (size_t)lua_tonumber(L, -1);
                lua_pop(L, 1);
                n--;
                luaL_argcheck(L, size <= ld && pos <= ld - size, 2, "data string too short");
            }
            lua_pushlstring(L, data + pos, size);
            n++;
            break;
        case 's': {
            const char *e = memchr(data + pos, '\0', ld - pos);
            if (!e) luaL_error(L, "unfinished string in data");
            size = (size_t)(e - (data + pos)) + 1;
            lua_pushlstring(L, data + pos, size - 1);
            n++;
            break;
        }
        default:
            control(L, opt, &f, &st);
        }
        pos += size;
    }
    lua_pushinteger(L, (lua_Integer)pos + 1);
    return n + 1;
}

static int s_size(lua_State *L)
{
    const char *f = luaL_checkstring(L, 1);
    fmt_state st;
    fmt_init(&st);
    size_t pos = 0;
    while (*f) {
        int opt = *f++;
        size_t size = item_size(L, opt, &f);
        pos += padding(pos, &st, opt, size);
        if (opt == 's')
            luaL_argerror(L, 1, "option 's' has no fixed size");
        else if (opt == 'c' && size == 0)
            luaL_argerror(L, 1, "option 'c0' has no fixed size");
        if (!isalnum(opt)) control(L, opt, &f, &st);
        pos += size;
    }
    lua_pushinteger(L, (lua_Integer)pos);
    return 1;
}

int luaopen_struct(lua_State *L)
{
    static const luaL_Reg fns[] = {
        {"pack", s_pack}, {"unpack", s_unpack}, {"size", s_size}, {NULL, NULL}};
    luaL_register(L, "struct", fns);
    return 1;
}
