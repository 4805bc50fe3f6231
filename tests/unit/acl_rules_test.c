/*
 * acl_rules_test.c -- ACL rules checked without a server: channel patterns
 * (&pattern, allchannels, resetchannels; a PSUBSCRIBE pattern must match a
 * user pattern literally), key patterns with %R~ / %W~ against key spec
 * flags, and the rules' description round-trip (ACL LIST shows what
 * SETUSER was given, normalised).
 */
#include <stdlib.h>
#include <string.h>

#include "server/acl_internal.h"
#include "test.h"

static acl_user *make_user(const char *name, const char *rules)
{
    char *copy = strdup(rules), *argv[32];
    size_t lens[32];
    int argc = 0;
    for (char *t = strtok(copy, " "); t && argc < 32; t = strtok(NULL, " ")) {
        argv[argc] = t;
        lens[argc++] = strlen(t);
    }
    char *e = acl_user_set_rules(NULL, name, strlen(name), argc, argv, lens);
    CHECK_MSG(e == NULL, "rules '%s': %s", rules, e ? e : "");
    free(copy);
    acl_user *u = acl_user_find(name, strlen(name));
    CHECK(u != NULL);
    return u;
}

TEST(ChannelPatternsMatchChannelsAndPatternsLiterally)
{
    acl_init();
    acl_user *u = make_user("chan", "on nopass +@all resetchannels &news.*");
    CHECK_EQ_INT(acl_check_channel(u, "news.today", 10, 0), ACL_OK);
    CHECK_EQ_INT(acl_check_channel(u, "gossip", 6, 0), ACL_DENIED_CHANNEL);
    /* a subscription pattern is allowed only when it is one of the user's */
    CHECK_EQ_INT(acl_check_channel(u, "news.*", 6, 1), ACL_OK);
    CHECK_EQ_INT(acl_check_channel(u, "news.t*", 7, 1), ACL_DENIED_CHANNEL);
    acl_user *all = make_user("allch", "on nopass +@all allchannels");
    CHECK_EQ_INT(acl_check_channel(all, "anything", 8, 1), ACL_OK);
}

TEST(KeyPermissionsFollowTheSpecFlags)
{
    acl_init();
    acl_user *u = make_user("keys", "on nopass +@all %R~r:* %W~w:* ~rw:*");
    CHECK_EQ_INT(acl_check_key(u, "r:1", 3, KEY_RO | KEY_ACCESS), ACL_OK);
    CHECK_EQ_INT(acl_check_key(u, "r:1", 3, KEY_RW | KEY_UPDATE), ACL_DENIED_KEY);
    CHECK_EQ_INT(acl_check_key(u, "w:1", 3, KEY_OW | KEY_UPDATE), ACL_OK);
    CHECK_EQ_INT(acl_check_key(u, "w:1", 3, KEY_RW | KEY_ACCESS | KEY_UPDATE), ACL_DENIED_KEY);
    CHECK_EQ_INT(acl_check_key(u, "rw:1", 4, KEY_RW | KEY_ACCESS | KEY_DELETE), ACL_OK);
    CHECK_EQ_INT(acl_check_key(u, "x", 1, KEY_RO | KEY_ACCESS), ACL_DENIED_KEY);
}

TEST(DescriptionIsTheNormalisedRules)
{
    acl_init();
    acl_user *u = make_user("descr", "on nopass ~a* &c +get +set -set +@string");
    const char *d = acl_user_describe(u);
    CHECK_MSG(strstr(d, "on nopass") && strstr(d, "~a*") && strstr(d, "&c"), "%s", d);
    CHECK_MSG(strstr(d, "+@string"), "%s", d);
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
