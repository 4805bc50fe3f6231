/*
 * cmd_pubsub.c -- pub/sub commands: SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE,
 * PUNSUBSCRIBE, SSUBSCRIBE, SUNSUBSCRIBE, PUBLISH, SPUBLISH, PUBSUB.
 * Replies follow Redis 7.0 (pubsub.c); the registry is src/server/pubsub.c.
 */
#include "server/pubsub.h"
#include "server/repl.h"
#include "server/server.h"

static void subscribe_generic(client *c, int kind)
{
    for (int j = 1; j < c->argc; j++)
        pubsub_subscribe(c, kind, c->argv[j].ptr, c->argv[j].len);
}

static void unsubscribe_generic(client *c, int kind)
{
    if (c->argc == 1) {
        pubsub_unsubscribe_all(c, kind, 1);
        return;
    }
    for (int j = 1; j < c->argc; j++)
        pubsub_unsubscribe(c, kind, c->argv[j].ptr, c->argv[j].len, 1);
}

void cmd_subscribe(client *c)
{
    subscribe_generic(c, PUBSUB_CHANNEL);
}
void cmd_unsubscribe(client *c)
{
    unsubscribe_generic(c, PUBSUB_CHANNEL);
}
void cmd_psubscribe(client *c)
{
    subscribe_generic(c, PUBSUB_PATTERN);
}
void cmd_punsubscribe(client *c)
{
    unsubscribe_generic(c, PUBSUB_PATTERN);
}
void cmd_ssubscribe(client *c)
{
    subscribe_generic(c, PUBSUB_SHARD);
}
void cmd_sunsubscribe(client *c)
{
    unsubscribe_generic(c, PUBSUB_SHARD);
}

void cmd_publish(client *c)
{
    add_reply_long_long(
        c, pubsub_publish(c->argv[1].ptr, c->argv[1].len, c->argv[2].ptr, c->argv[2].len, 0));
    repl_propagate(c); /* as Redis: subscribers on replicas get it too */
}

void cmd_spublish(client *c)
{
    add_reply_long_long(
        c, pubsub_publish(c->argv[1].ptr, c->argv[1].len, c->argv[2].ptr, c->argv[2].len, 1));
    repl_propagate(c);
}

/* PUBSUB CHANNELS takes at most one pattern; Redis's table lets more
 * through and the handler refuses them with this text. */
static void channels_generic(client *c, int shard)
{
    if (c->argc > 3)
        return add_reply_error_fmt(c,
                                   "unknown subcommand or wrong number of arguments for '%.128s'. "
                                   "Try PUBSUB HELP.",
                                   c->argv[1].ptr);
    pubsub_reply_channels(c, c->argc == 3 ? &c->argv[2] : NULL, shard);
}

static void numsub_generic(client *c, int shard)
{
    add_reply_array_len(c, (long)(c->argc - 2) * 2);
    for (int j = 2; j < c->argc; j++) {
        add_reply_bulk(c, c->argv[j].ptr, c->argv[j].len);
        add_reply_long_long(c, pubsub_numsub(c->argv[j].ptr, c->argv[j].len, shard));
    }
}

static void pubsub_channels(client *c)
{
    channels_generic(c, 0);
}
static void pubsub_shardchannels(client *c)
{
    channels_generic(c, 1);
}
static void pubsub_numsubs(client *c)
{
    numsub_generic(c, 0);
}
static void pubsub_shardnumsub(client *c)
{
    numsub_generic(c, 1);
}
static void pubsub_numpat(client *c)
{
    add_reply_long_long(c, (long long)pubsub_pattern_count());
}

static const char *pubsub_help_lines[] = {
    "CHANNELS [<pattern>]",
    "    Return the currently active channels matching a <pattern> (default: '*').",
    "NUMPAT",
    "    Return number of subscriptions to patterns.",
    "NUMSUB [<channel> ...]",
    "    Return the number of subscribers for the specified channels, excluding",
    "    pattern subscriptions(default: no channels).",
    "SHARDCHANNELS [<pattern>]",
    "    Return the currently active shard level channels matching a <pattern> (default: '*').",
    "SHARDNUMSUB [<shardchannel> ...]",
    "    Return the number of subscribers for the specified shard level channel(s)",
    NULL};

static void pubsub_help(client *c)
{
    add_reply_help(c, pubsub_help_lines);
}

static const subcommand pubsub_subs[] = {{"channels", -2, pubsub_channels},
                                         {"help", 2, pubsub_help},
                                         {"numpat", 2, pubsub_numpat},
                                         {"numsub", -2, pubsub_numsubs},
                                         {"shardchannels", -2, pubsub_shardchannels},
                                         {"shardnumsub", -2, pubsub_shardnumsub},
                                         {NULL, 0, NULL}};

void cmd_pubsub(client *c)
{
    dispatch_subcommand(c, pubsub_subs);
}
