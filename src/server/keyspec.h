/*
 * keyspec.h -- getkeys functions of the rows whose key flags depend on
 * their arguments (KEY_VARIABLE_FLAGS), as Redis's setGetKeys and
 * bitfieldGetKeys; named in .getkeys of their commands.def rows. Each
 * writes up to max key_refs and returns how many (command_getkeys_proc).
 */
#ifndef STRATA_KEYSPEC_H
#define STRATA_KEYSPEC_H

#include "server/server.h"

int keyspec_getkeys_set(int argc, const arg *argv, key_ref *out, int max);
int keyspec_getkeys_bitfield(int argc, const arg *argv, key_ref *out, int max);
/* SORT: the sorted key (RO ACCESS) and the last STORE's (OW UPDATE). */
int keyspec_getkeys_sort(int argc, const arg *argv, key_ref *out, int max);
/* SORT_RO: the sorted key only (BY/GET patterns are no key names). */
int keyspec_getkeys_sort_ro(int argc, const arg *argv, key_ref *out, int max);

#endif
