/*
 * mem_tree.c -- a B+tree of memtable entries (mem_tree.h) with prefix-
 * compressed 8-byte discriminators and optimistic, lock-free readers.
 *
 * Why a B+tree: an ordered insert into a skiplist of a million entries is a
 * chain of ~20-30 dependent cache misses, and user keys share long prefixes
 * ("m<db>user:000000..."), so every comparison reads the whole entry. Here a
 * node holds up to CAP keys as (disc, entry pointer) pairs: disc is the key's
 * bytes right after a prefix that every key of the node shares (T5), so a
 * binary search in a node compares integers in two or three cache lines and
 * reads an entry only on a tie. A million entries are four or five levels,
 * the upper ones cache-resident.
 *
 * Layout: every node is one arena allocation,
 *
 *   version | count | plen | kmax | dbytes | leaf | link | gsum | slot[CAP]
 *
 * a leaf's slot is (disc, key), an inner node's (disc, key, right); link is
 * a leaf's next leaf and an inner node's first child. key points at an entry
 * (mem_ent); in an inner node it is a separator: child 0 (link) holds the
 * keys below key 0, slot i's right child those k with key i <= k < key i+1.
 *
 * Concurrency: one writer (the memtable's, Invariant M1 of memtable.c) and
 * any number of readers that take no lock. The writer changes a node only
 * between write_lock and write_unlock, which make its version odd and then
 * even again; a reader notes a node's version, reads the node, and accepts
 * what it read only if the version is still the same, else starts again
 * from the root (optimistic lock coupling: the child's version is read
 * before the parent's is checked again). A split locks every node it will
 * change before it changes any, and builds new nodes before it links them.
 *
 * Invariants:
 *   T1. A node's version is odd exactly while the writer changes the node.
 *       Every field a reader loads is atomic (relaxed, pointers acquire), so
 *       a torn read is harmless: it is discarded when the version check
 *       fails. Entry and node pointers are published with release stores
 *       after what they point to is complete.
 *   T2. The keys of a node are strictly increasing in K1 order
 *       (ikey_compare), and lie within the node's fences: lo <= k < hi, where
 *       lo and hi are the separators around the child pointer the node hangs
 *       from in every ancestor (missing at the tree's ends).
 *   T3. Every leaf is at depth height - 1; a leaf reached other than as the
 *       root is not empty; an inner node has count + 1 children, and its
 *       leaf_kids says whether they are leaves.
 *   T4. Nodes and entries are never freed, moved or reused before the arena
 *       is: any pointer a reader loads can be dereferenced, whatever it read.
 *   T5. Every key of the node and its fences share their first plen bytes
 *       (user keys): plen is at most their longest common prefix, and is
 *       exactly the fences' when the node has both (what a split gives), so
 *       every key that can be routed to such a node shares those bytes (T2).
 *       A node with a fence missing (on the tree's left or right edge, the
 *       root) compares a search key with its prefix first, and lowers plen
 *       when a key that does not share it comes in. A slot's disc is
 *       bytes plen .. plen + dbytes of its key's user key, big-endian in the
 *       high bytes of the word, zero past the key's end and in the low
 *       8 - dbytes bytes; MIN_DBYTES <= dbytes <= 8. Unequal discs order two
 *       user keys as the keys are ordered; equal discs say nothing. kmax is
 *       at least the user-key length of every key in the node: when
 *       plen + dbytes reaches it, the discs hold every key to its end, so
 *       a split that lengthens plen can shift them instead of reading the
 *       keys again.
 *   T6. The leaves, in key order, form a list through next, the last one's
 *       next NULL.
 *   T7. root only changes when the old root splits, while it is locked.
 *   T8. An entry is in the leaf recorded for it at its insert (mt_insert's
 *       and mt_insert_before's *leaf) or in one after it in the leaf list:
 *       the insert records the leaf it lands in, and a split only ever
 *       moves a leaf's upper keys into a new leaf linked right after it.
 *       (Writer-only: readers never load the hint.)
 *   T9. A leaf's fences are its own keys: every leaf but the first has its
 *       lower fence as its first key, and its upper fence is the next
 *       leaf's first key (none for the last leaf). A leaf other than the
 *       first is made by a split with the separator as its first key; keys
 *       below a fence are routed away from it, and a split only moves a
 *       leaf's upper keys, never its first (split_point is >= 1). So the
 *       writer can tell from a leaf and its next one alone whether a key
 *       belongs there (the fingers of mt_insert).
 *  T10. An entry's user key is followed by the 8 bytes of its trailer
 *       (mem_ent: the ikey is user key | trailer), so from any offset
 *       within the user key, or at its start, 8 bytes can be read: a disc
 *       is one load and a mask, never a copy of the key's tail.
 *  T11. A leaf's summary gsum[g], for every g >= 1 with g * GROUP < count,
 *       is the high 32 bits of slot g * GROUP's disc (other words are
 *       unused), so a search can bound its slots by the groups before it
 *       reads any (leaf_bounds). Every change of a leaf's slots rewrites
 *       the words of the groups from the first changed slot on, while the
 *       leaf is locked (T1).
 */
#include "mem_tree_node.h"

/* ---- Nodes -------------------------------------------------------------- */

static mt_node *node_new(mem_tree *t, int leaf, int leaf_kids)
{
    size_t sz = node_size(leaf);
    mt_node *n = arena_alloc_aligned(t->arena, sz, 64); /* a leaf: 9 lines, not 9 or 10 */
    memset(n, 0, sz); /* before publication (T1): plain stores are fine */
    n->leaf = (uint8_t)leaf;
    n->leaf_kids = (uint8_t)leaf_kids;
    n->dbytes = 8;
    n->last_pos = NO_POS;
    return n;
}

void mt_init(mem_tree *t, arena *a)
{
    t->arena = a;
    t->height = 1;
    t->first = node_new(t, 1, 0);
    memset(t->finger, 0, sizeof(t->finger));
    memset(t->finger_fails, 0, sizeof(t->finger_fails));
    t->descents = 0;
    t->finger_tries = 0;
    t->hint_reads = 0;
    t->hinted = 0;
    atomic_store_explicit(&t->root, t->first, REL);
}

/* The writer's working copy of a node (one key more than fits). */
typedef struct slots {
    unsigned n, plen, dbytes, kmax;
    uint64_t disc[CAP + 1];
    const mem_ent *key[CAP + 1];
    mt_node *child[CAP + 2]; /* inner nodes */
} slots;

static void slots_load(const mt_node *n, slots *s)
{
    size_t stride = slot_stride(n);
    s->n = atomic_load_explicit(&n->count, RLX);
    s->plen = atomic_load_explicit(&n->plen, RLX);
    s->dbytes = atomic_load_explicit(&n->dbytes, RLX);
    s->kmax = atomic_load_explicit(&n->kmax, RLX);
    for (unsigned i = 0; i < s->n; i++) {
        const leaf_slot *sl = slot_at(n, stride, i);
        s->disc[i] = atomic_load_explicit(&sl->disc, RLX);
        s->key[i] = atomic_load_explicit(&sl->key, RLX);
    }
    if (!n->leaf)
        for (unsigned i = 0; i <= s->n; i++)
            s->child[i] = atomic_load_explicit(child_ref(n, i), RLX);
}

/* Puts key e (and, in an inner node, child c to its right) at slot pos. */
static void slots_insert(slots *s, unsigned pos, const mem_ent *e, mt_node *c, int leaf)
{
    memmove(&s->disc[pos + 1], &s->disc[pos], (s->n - pos) * sizeof(s->disc[0]));
    memmove(&s->key[pos + 1], &s->key[pos], (s->n - pos) * sizeof(s->key[0]));
    if (!leaf) memmove(&s->child[pos + 2], &s->child[pos + 1], (s->n - pos) * sizeof(c));
    s->disc[pos] = ent_disc(s->plen, s->dbytes, e);
    s->key[pos] = e;
    if (!leaf) s->child[pos + 1] = c;
    if (e->klen - 8 > s->kmax) s->kmax = e->klen - 8;
    s->n++;
}

/* Lowers s's prefix length to plen, reading every key again (T5). */
static void slots_shrink(slots *s, unsigned plen)
{
    s->plen = plen;
    s->dbytes = 8;
    for (unsigned i = 0; i < s->n; i++)
        s->disc[i] = ent_disc(plen, 8, s->key[i]);
}

/* The prefix length n must drop to for e to come in (T5), or n's own when e
 * shares it. open: n lacks a fence (only then can e not share it). */
static unsigned plen_for(const mt_node *n, const mem_ent *e, int open)
{
    unsigned plen = atomic_load_explicit(&n->plen, RLX);
    if (!open || !plen || !atomic_load_explicit(&n->count, RLX)) return plen;
    unsigned l = ent_lcp(e, atomic_load_explicit(&slot_at(n, slot_stride(n), 0)->key, RLX));
    return l < plen ? l : plen;
}

/* Sets leaf n's summary (T11) for the groups whose first slot is at or
 * after slot from, as n's slots and count now are. REQUIRES: n is new or
 * locked. */
static void leaf_summarize(mt_node *n, unsigned from)
{
    unsigned cnt = atomic_load_explicit(&n->count, RLX);
    const leaf_slot *sl = slot_at(n, sizeof(leaf_slot), 0);
    for (unsigned g = from < GROUP ? 1 : (from + GROUP - 1) / GROUP; g * GROUP < cnt; g++)
        atomic_store_explicit(
            &n->gsum[g], (uint32_t)(atomic_load_explicit(&sl[g * GROUP].disc, RLX) >> 32), RLX);
}

/* Writes keys [from, to) of s (and their children) into n as its whole
 * content, with the prefix length plen its new fences give (T5): the discs
 * are shifted when that keeps enough of them, else read again. */
static void node_store(mt_node *n, const slots *s, unsigned from, unsigned to, unsigned plen)
{
    unsigned grow = plen - s->plen, dbytes = s->dbytes;
    int reread = 0;
    if (grow) {
        if (s->kmax <= s->plen + dbytes)
            dbytes = 8; /* the shifted-in zeros are past every key's end */
        else if (dbytes >= grow + MIN_DBYTES)
            dbytes -= grow;
        else
            reread = 1, dbytes = 8;
    }
    size_t stride = slot_stride(n);
    for (unsigned i = from; i < to; i++) {
        const mem_ent *e = s->key[i];
        uint64_t d = reread ? ent_disc(plen, 8, e) : grow >= 8 ? 0 : s->disc[i] << (8 * grow);
        leaf_slot *sl = slot_at(n, stride, i - from);
        atomic_store_explicit(&sl->disc, d & dmask(dbytes), RLX);
        atomic_store_explicit(&sl->key, e, REL);
    }
    if (!n->leaf)
        for (unsigned i = from; i <= to; i++)
            atomic_store_explicit(child_ref(n, i - from), s->child[i], REL);
    atomic_store_explicit(&n->plen, plen, RLX);
    atomic_store_explicit(&n->dbytes, (uint8_t)dbytes, RLX);
    atomic_store_explicit(&n->kmax, s->kmax, RLX);
    atomic_store_explicit(&n->count, to - from, RLX);
    if (n->leaf) leaf_summarize(n, 0);
}

/* Inserts into n, which has room, in place: one shift of the slots. */
static void node_insert(mt_node *n, unsigned pos, const mem_ent *e, mt_node *c)
{
    unsigned cnt = atomic_load_explicit(&n->count, RLX);
    if (n->leaf) {
        leaf_slot *sl = slot_at(n, sizeof(leaf_slot), 0);
        for (unsigned i = cnt; i > pos; i--) {
            atomic_store_explicit(&sl[i].disc, atomic_load_explicit(&sl[i - 1].disc, RLX), RLX);
            atomic_store_explicit(&sl[i].key, atomic_load_explicit(&sl[i - 1].key, RLX), RLX);
        }
    } else {
        inner_slot *sl = (inner_slot *)(n + 1);
        for (unsigned i = cnt; i > pos; i--) {
            atomic_store_explicit(&sl[i].disc, atomic_load_explicit(&sl[i - 1].disc, RLX), RLX);
            atomic_store_explicit(&sl[i].key, atomic_load_explicit(&sl[i - 1].key, RLX), RLX);
            atomic_store_explicit(&sl[i].right, atomic_load_explicit(&sl[i - 1].right, RLX), RLX);
        }
        atomic_store_explicit(&sl[pos].right, c, REL);
    }
    leaf_slot *sp = slot_at(n, slot_stride(n), pos);
    atomic_store_explicit(
        &sp->disc,
        ent_disc(atomic_load_explicit(&n->plen, RLX), atomic_load_explicit(&n->dbytes, RLX), e),
        RLX);
    atomic_store_explicit(&sp->key, e, REL); /* T1: e is complete */
    n->last_pos = (uint8_t)pos;
    if (e->klen - 8 > atomic_load_explicit(&n->kmax, RLX))
        atomic_store_explicit(&n->kmax, e->klen - 8, RLX);
    atomic_store_explicit(&n->count, cnt + 1, RLX);
    if (n->leaf) leaf_summarize(n, pos);
}

/* node_insert into leaf n, which has room, under its lock (T1): an
 * insert without a descent (a finger's, a hint's). */
static void leaf_insert(mt_node *n, unsigned pos, const mem_ent *e)
{
    write_lock(n);
    node_insert(n, pos, e, NULL);
    write_unlock(n);
}

/* Where a full node of CAP + 1 keys splits, the new key at pos and the
 * node's previous insert at last (NO_POS: unknown): the left half keeps
 * keys [0, m). An insert at either end (ascending or descending keys)
 * leaves the old node full and starts a nearly empty one, so sequential
 * inserts fill nodes instead of leaving them half empty. So does an insert
 * just after the previous one (one or two slots on: ascending keys amid
 * older ones, such as the next entry of an index whose last field grows,
 * before the next index's entries, or "user:10010" after "user:10009" and
 * "user:1001"): the left node keeps it and fills on, and the keys after it,
 * which the run has passed, go right. */
static unsigned split_point(unsigned pos, unsigned last, int leaf)
{
    if (pos == CAP) return leaf ? CAP : CAP - 1;
    if (pos == 0) return 1;
    /* An inner node's separator m moves up: the right half keeps a key. */
    if (last != NO_POS && pos > last && pos - last <= 2 && pos + 1 < (leaf ? CAP + 1 : CAP))
        return pos + 1;
    return (CAP + 1) / 2;
}

/* The insert path: per level from the root, the node, the child slot taken
 * and the node's fences. */
typedef struct path {
    mt_node *node[MAX_HEIGHT];
    unsigned pos[MAX_HEIGHT];
    const mem_ent *lo[MAX_HEIGHT], *hi[MAX_HEIGHT];
} path;

static inline int path_open(const path *p, int d)
{
    return !p->lo[d] || !p->hi[d];
}

/* Inserts key up (and child right, inner levels) at p->pos[d] into n =
 * p->node[d], locked. When n is full it splits: n keeps the lower half and
 * the new node -- returned, complete and linked in the leaf list -- the
 * upper one, and *sep is the key that goes up. Returns NULL when n had room. */
static mt_node *node_put(mem_tree *t, path *p, int d, const mem_ent *up, mt_node *right,
                         const mem_ent **sep)
{
    mt_node *n = p->node[d];
    int leaf = n->leaf;
    unsigned plen = plen_for(n, up, path_open(p, d));
    if (atomic_load_explicit(&n->count, RLX) < CAP && plen == atomic_load_explicit(&n->plen, RLX)) {
        node_insert(n, p->pos[d], up, right);
        return NULL;
    }
    slots s;
    slots_load(n, &s);
    if (plen != s.plen) slots_shrink(&s, plen);
    slots_insert(&s, p->pos[d], up, right, leaf);
    if (s.n <= CAP) { /* room, but a lower plen: rewrite n */
        node_store(n, &s, 0, s.n, s.plen);
        n->last_pos = (uint8_t)p->pos[d];
        return NULL;
    }
    unsigned pos = p->pos[d], m = split_point(pos, n->last_pos, leaf), rfrom = leaf ? m : m + 1;
    *sep = s.key[m];
    mt_node *r = node_new(t, leaf, n->leaf_kids);
    /* The new node is complete before anything links it (T1). An inner
     * node's separator moves up: r gets the keys after it. */
    node_store(r, &s, rfrom, s.n, split_plen(*sep, p->hi[d], *sep, s.key[s.n - 1]));
    if (leaf) atomic_store_explicit(&r->link, atomic_load_explicit(&n->link, RLX), RLX);
    node_store(n, &s, 0, m, split_plen(p->lo[d], *sep, s.key[0], *sep));
    if (leaf) atomic_store_explicit(&n->link, r, REL);
    n->last_pos = pos < m ? (uint8_t)pos : NO_POS;
    r->last_pos = pos >= rfrom ? (uint8_t)(pos - rfrom) : NO_POS;
    return r;
}

/* The levels an insert at the leaf changes: from the leaf up while nodes
 * are full. Returns the highest, -1 when the root splits too. */
static int changed_top(const path *p, int depth)
{
    int top = depth;
    while (top >= 0 && atomic_load_explicit(&p->node[top]->count, RLX) == CAP)
        top--;
    return top;
}

/* Inserts e at the leaf and the separators the splits produce into the
 * levels above, every changed node locked before any changes. */
static mt_node *insert_path(mem_tree *t, path *p, int depth, mem_ent *e, mt_node **leaf)
{
    int top = changed_top(p, depth), first = top < 0 ? 0 : top;
    for (int d = first; d <= depth; d++)
        write_lock(p->node[d]);
    const mem_ent *up = e;        /* what goes into the level above: a key ... */
    mt_node *right = NULL;        /* ... and the child to its right (inner levels) */
    mt_node *in = p->node[depth]; /* T8: where e lands */
    for (int d = depth; d >= first; d--) {
        right = node_put(t, p, d, up, right, &up);
        if (!right) break;
        if (d == depth) { /* T8: the leaf split; e is in the new one from up on */
            tkey tu = tkey_of(up);
            if (up == e || ent_cmp(e, &tu) > 0) in = right;
        }
    }
    if (leaf) *leaf = in;
    if (top < 0) { /* T7: the old root is still locked */
        mt_node *root = node_new(t, 0, p->node[0]->leaf);
        inner_slot *sl = (inner_slot *)(root + 1);
        root->count = 1;
        root->plen = up->klen - 8; /* T5: the common prefix of its one key */
        root->kmax = up->klen - 8;
        root->link = p->node[0];
        sl[0].disc = ent_disc(root->plen, 8, up);
        sl[0].key = up;
        sl[0].right = right;
        atomic_store_explicit(&t->root, root, REL);
        t->height++;
    }
    for (int d = first; d <= depth; d++)
        write_unlock(p->node[d]);
    return in;
}

/* The finger of keys that start as uk does: the first six bytes (an index
 * entry's 'x' 'E' <id>, a keyspace key's namespace, db and the start of its
 * name) hashed; keys of one stream (an index, a key family) that arrive
 * in order keep landing in the leaf the previous one took. */
static inline unsigned finger_of(const char *uk, size_t ul)
{
    /* An entry's key (T10): the 8 bytes at uk can be read. */
    uint64_t w =
        dec_fixed64(uk) & (ul >= 6 ? UINT64_C(0xffffffffffff) : (UINT64_C(1) << (8 * ul)) - 1);
    w *= UINT64_C(0xff51afd7ed558ccd); /* every byte reaches the top bits */
    w ^= w >> 33;
    w *= UINT64_C(0xc4ceb9fe1a85ec53);
    return (unsigned)(w >> 58) & (MT_FINGERS - 1);
}

/* Inserts e into leaf n in place when e belongs there (T9: n's first key,
 * unless n is the first leaf, is <= e, and e is below the next leaf's
 * first key) and n has room under its prefix; returns 1, else 0 with
 * nothing changed. */
static int finger_insert(mem_tree *t, mt_node *n, mem_ent *e, const tkey *k)
{
    unsigned cnt = atomic_load_explicit(&n->count, RLX);
    if (cnt == 0 || cnt >= CAP) return 0;
    if (n != t->first &&
        ent_cmp(atomic_load_explicit(&slot_at(n, sizeof(leaf_slot), 0)->key, RLX), k) > 0)
        return 0;
    const mt_node *next = atomic_load_explicit(&n->link, RLX);
    if (next &&
        ent_cmp(atomic_load_explicit(&slot_at(next, sizeof(leaf_slot), 0)->key, RLX), k) <= 0)
        return 0;
    int open = n == t->first || !next; /* a fence missing (T5) */
    if (plen_for(n, e, open) != atomic_load_explicit(&n->plen, RLX)) return 0;
    unsigned pos = search(n, k, 0, open);
    leaf_insert(n, pos, e);
    return 1;
}

void mt_insert(mem_tree *t, mem_ent *e, mt_node **leaf)
{
    tkey k = tkey_of(e);
    unsigned fi = finger_of(k.uk, k.ul);
    mt_node **f = &t->finger[fi];
    /* A failed try costs a miss or two (the leaf's first key, the next
     * leaf and its first key): keys in random order would pay them on
     * every insert, so a finger that keeps failing rests. */
    if (*f && t->finger_fails[fi] < MT_FINGER_TRIES) {
        t->finger_tries++;
        if (finger_insert(t, *f, e, &k)) {
            t->finger_fails[fi] = 0;
            if (leaf) *leaf = *f; /* T8 */
            return;
        }
        t->finger_fails[fi]++;
    }
    t->descents++;
    path p;
    mt_node *n = atomic_load_explicit(&t->root, RLX);
    const mem_ent *lo = NULL, *hi = NULL;
    int d = 0;
    for (;; d++) {
        p.node[d] = n;
        p.lo[d] = lo;
        p.hi[d] = hi;
        if (n->leaf) break;
        unsigned i = search(n, &k, 1, !lo || !hi), cnt = atomic_load_explicit(&n->count, RLX);
        const inner_slot *sl = (const inner_slot *)(n + 1);
        p.pos[d] = i;
        if (i > 0) lo = atomic_load_explicit(&sl[i - 1].key, RLX);
        if (i < cnt) hi = atomic_load_explicit(&sl[i].key, RLX);
        int kid_leaf = n->leaf_kids;
        n = atomic_load_explicit(child_ref(n, i), RLX);
        prefetch_node(n, kid_leaf);
    }
    p.pos[d] = search(n, &k, 0, !lo || !hi);
    mt_node *in = insert_path(t, &p, d, e, leaf);
    if (in == *f) t->finger_fails[fi] = 0; /* the finger would have done: try it again */
    *f = in;
}

void mt_insert_hinted(mem_tree *t, mem_ent *e, mt_node **leaf, const mt_leaf_hint *hint)
{
    mt_node *n = hint ? (mt_node *)hint->leaf : NULL;
    unsigned cnt = n ? atomic_load_explicit(&n->count, RLX) : CAP;
    if (!n || !n->leaf || cnt >= CAP) {
        mt_insert(t, e, leaf);
        return;
    }
    tkey k = tkey_of(e);
    /* T1: an even version unchanged since the descent: no split since, so
     * n's fences are those the descent passed (T2), and they hold the
     * newest possible version of e's user key. */
    if (atomic_load_explicit(&n->version, RLX) == hint->version && !(hint->version & 1)) {
        const mt_node *next = atomic_load_explicit(&n->link, RLX);
        int open = n == t->first || !next; /* T9 */
        unsigned pos = search(n, &k, 0, open);
        /* e is in n's fences when a key of n follows it, or n is the
         * last leaf; else older versions of its user key (a tree-only
         * key, or sequence numbers out of order) could put it past the
         * upper fence. */
        if ((pos < cnt || !next) && plen_for(n, e, open) == atomic_load_explicit(&n->plen, RLX)) {
            leaf_insert(n, pos, e);
            if (leaf) *leaf = n; /* T8 */
            t->hinted++;
            return;
        }
    }
    /* The hint's leaf changed since the descent (an earlier insert of the
     * batch landed there), or e goes after its last key: n's own first key
     * and the next leaf's tell whether e still belongs there (T9), for two
     * comparisons instead of a descent. An append to a collection, whose
     * new last key is often its leaf's last, takes this way. */
    if (finger_insert(t, n, e, &k)) {
        if (leaf) *leaf = n; /* T8 */
        t->hinted++;
        return;
    }
    mt_insert(t, e, leaf);
}

/* How many leaves mt_insert_before follows from a stale hint (T8). */
#define HINT_HOPS 2

/* next's slot in leaf n, or n's count when n does not hold it. The slot
 * the leaf's last insert took comes first (a key updated over and over,
 * such as a list's metadata, takes the same slot each time); then a binary
 * search of the discs, which reads a few of the leaf's lines where a scan
 * of the key pointers would read every line up to next's: next's disc in
 * n, when n holds it, is its slot's (T5), and only slots with that disc
 * can hold it. */
static unsigned leaf_slot_of(mem_tree *t, const mt_node *n, const mem_ent *next)
{
    unsigned cnt = atomic_load_explicit(&n->count, RLX), lo = 0, hi = cnt;
    const leaf_slot *sl = slot_at(n, sizeof(leaf_slot), 0);
    t->hint_reads++;
    if (n->last_pos < cnt && atomic_load_explicit(&sl[n->last_pos].key, RLX) == next)
        return n->last_pos;
    uint64_t nd =
        ent_disc(atomic_load_explicit(&n->plen, RLX), atomic_load_explicit(&n->dbytes, RLX), next);
    leaf_bounds(n, nd, &lo, &hi);
    while (lo < hi) { /* the first slot whose disc is >= nd */
        unsigned mid = (lo + hi) / 2;
        if (atomic_load_explicit(&sl[mid].disc, RLX) < nd)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < cnt && atomic_load_explicit(&sl[lo].disc, RLX) == nd; lo++, t->hint_reads++)
        if (atomic_load_explicit(&sl[lo].key, RLX) == next) return lo;
    return cnt;
}

/* A replace is one pointer store under the leaf's lock (T1): a reader
 * sees next or e, each in order there (K1, T2); the disc is the user
 * key's, so it and the summary (T11) stay. */
int mt_insert_before(mem_tree *t, mem_ent *e, mt_node **leaf, const mem_ent *next,
                     mt_node *next_leaf, int replace)
{
    mt_node *n = next_leaf;
    for (int hop = 0; n && hop <= HINT_HOPS; hop++, n = atomic_load_explicit(&n->link, RLX)) {
        unsigned cnt = atomic_load_explicit(&n->count, RLX), i = leaf_slot_of(t, n, next);
        leaf_slot *sl = slot_at(n, sizeof(leaf_slot), 0);
        if (i == cnt) continue; /* moved right by a split (T8) */
        /* Slot 0 of any leaf but the first is its fence, a separator above
         * (T9): e may belong in the leaf before, and a replace would move
         * the fence. */
        if (i == 0 && n != t->first) return 0;
        if (replace) {
            write_lock(n);
            atomic_store_explicit(&sl[i].key, e, RLX);
            write_unlock(n);
            n->last_pos = (uint8_t)i;
            *leaf = n;
            return MT_REPLACED;
        }
        /* A full leaf splits: that needs the path from the root. */
        if (cnt >= CAP) return 0;
        tkey te = tkey_of(e);
        if (i > 0 && ent_cmp(atomic_load_explicit(&sl[i - 1].key, RLX), &te) >= 0) return 0;
        /* T2: sl[i - 1] (or the tree's start) < e < next; T5: e has next's
         * user key, so it shares the node's prefix and kmax holds. */
        leaf_insert(n, i, e);
        *leaf = n;
        return MT_INSERTED;
    }
    return 0;
}
