/*
 * keyspec.c -- the keys of a request, from its command's key specs (Redis
 * 7's getKeysUsingKeySpecs and getKeysFromCommandWithSpecs): used by the
 * ACL key checks, COMMAND GETKEYS and COMMAND INFO.
 *
 * A row without key specs gets one from its legacy first/last/step: the
 * keys at first_key..last_key every key_step, flagged RO ACCESS for a
 * CMD_READONLY command and RW ACCESS UPDATE otherwise (needing both read
 * and write permission: the safe default for a row that does not say).
 */
#include <string.h>
#include <strings.h>

#include "server/keyspec.h"
#include "server/server.h"

int command_key_specs(const struct command *cmd, key_spec *out)
{
    int n = 0;
    while (n < KEY_SPECS_MAX && cmd->keys[n].bs != KSPEC_BS_NONE) {
        out[n] = cmd->keys[n];
        n++;
    }
    if (n || cmd->first_key <= 0) return n;
    key_spec s = {0};
    s.flags = (cmd->flags & CMD_READONLY) ? KEY_RO | KEY_ACCESS : KEY_RW | KEY_ACCESS | KEY_UPDATE;
    s.bs = KSPEC_BS_INDEX;
    s.pos = cmd->first_key;
    s.fk = KSPEC_FK_RANGE;
    s.fa = cmd->last_key < 0 ? cmd->last_key : cmd->last_key - cmd->first_key;
    s.fb = cmd->key_step;
    out[0] = s;
    return 1;
}

/* The first argument of spec's keys, or 0 when its keyword is absent. */
static int spec_begin(const key_spec *s, int argc, const arg *argv)
{
    if (s->bs == KSPEC_BS_INDEX) return s->pos;
    if (s->bs != KSPEC_BS_KEYWORD) return -1;
    int start = s->pos > 0 ? s->pos : argc + s->pos;
    int end = s->pos > 0 ? argc - 1 : 1;
    for (int i = start;; i = start <= end ? i + 1 : i - 1) {
        if (i >= argc || i < 1) break;
        if (!strcasecmp(argv[i].ptr, s->keyword)) return i + 1;
        if (i == end) break;
    }
    return 0;
}

/* Appends spec's keys; returns -1 when the arguments do not fit it. */
static int spec_keys(const key_spec *s, int argc, const arg *argv, key_ref *out, int *n, int max)
{
    int first = spec_begin(s, argc, argv), last, step;
    if (first == 0) return 0; /* keyword not there: no keys from this spec */
    if (first < 0) return -1;
    if (s->fk == KSPEC_FK_RANGE) {
        step = s->fb;
        if (s->fa >= 0)
            last = first + s->fa;
        else if (!s->fc)
            last = argc + s->fa;
        else
            last = first + ((argc - first) / s->fc + s->fa);
    } else if (s->fk == KSPEC_FK_KEYNUM) {
        step = s->fc;
        if (first + s->fa >= argc) return -1;
        long long nk;
        const arg *a = &argv[first + s->fa];
        if (!ks_string2ll(a->ptr, a->len, &nk) || nk < 0) return -1;
        first += s->fb;
        if (nk > argc) return -1;
        last = first + (int)nk - 1;
        if (nk == 0) return 0;
    } else {
        return -1;
    }
    if (last >= argc || last < first || first >= argc || step <= 0) return -1;
    for (int i = first; i <= last && i < argc; i += step) {
        if (*n < max) out[*n] = (key_ref){i, s->flags};
        (*n)++;
    }
    return (s->flags & KEY_INCOMPLETE) ? -1 : 0;
}

int command_get_keys(const struct command *cmd, int argc, const arg *argv, key_ref *out, int max,
                     int with_not_keys)
{
    key_spec specs[KEY_SPECS_MAX];
    int ns = command_key_specs(cmd, specs), varflags = 0, real = 0;
    for (int i = 0; i < ns; i++) {
        varflags |= specs[i].flags & KEY_VARIABLE_FLAGS;
        if (!(specs[i].flags & KEY_NOT_KEY)) real = 1;
    }
    if ((real || with_not_keys) && !varflags) {
        int n = 0, ok = 1;
        for (int i = 0; i < ns && ok; i++) {
            if ((specs[i].flags & KEY_NOT_KEY) && !with_not_keys) continue;
            if (spec_keys(&specs[i], argc, argv, out, &n, max) < 0) ok = 0;
        }
        if (ok) return n < max ? n : max;
    }
    if (cmd->getkeys) return cmd->getkeys(argc, argv, out, max);
    return 0;
}

int keyspec_getkeys_set(int argc, const arg *argv, key_ref *out, int max)
{
    if (max < 1 || argc < 2) return 0;
    out[0] = (key_ref){1, KEY_OW | KEY_UPDATE};
    for (int i = 3; i < argc; i++)
        if (!strcasecmp(argv[i].ptr, "get")) out[0].flags = KEY_RW | KEY_ACCESS | KEY_UPDATE;
    return 1;
}

int keyspec_getkeys_bitfield(int argc, const arg *argv, key_ref *out, int max)
{
    if (max < 1 || argc < 2) return 0;
    int readonly = 1;
    for (int i = 2; i < argc; i++) {
        int rem = argc - i - 1;
        if (!strcasecmp(argv[i].ptr, "get") && rem >= 2) {
            i += 2;
        } else if ((!strcasecmp(argv[i].ptr, "set") || !strcasecmp(argv[i].ptr, "incrby")) &&
                   rem >= 3) {
            readonly = 0;
            break;
        } else if (!strcasecmp(argv[i].ptr, "overflow") && rem >= 1) {
            i += 1;
        } else {
            readonly = 0; /* a syntax error: the safer flags */
            break;
        }
    }
    out[0] = (key_ref){1, readonly ? KEY_RO | KEY_ACCESS : KEY_RW | KEY_ACCESS | KEY_UPDATE};
    return 1;
}

int keyspec_getkeys_sort(int argc, const arg *argv, key_ref *out, int max)
{
    int pos[2], n = argc < 2 ? 0 : sort_getkeys(argv, argc, pos);
    if (n > max) n = max;
    for (int i = 0; i < n; i++)
        out[i] = (key_ref){pos[i], i ? KEY_OW | KEY_UPDATE : KEY_RO | KEY_ACCESS};
    return n;
}

int keyspec_getkeys_sort_ro(int argc, const arg *argv, key_ref *out, int max)
{
    if (max < 1 || argc < 2) return 0;
    out[0] = (key_ref){1, KEY_RO | KEY_ACCESS};
    return 1;
}
