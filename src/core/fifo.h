/* fifo.h - a one-thread queue, oldest first, of nodes that embed a struct
 * fifo_link (intrusive: no allocation): the connections paused by the
 * throttle (conn.c), the calls waiting for an upstream connection
 * (client/upstream.c), the jobs waiting for a dispatch task (dispatch.c), the
 * events waiting for PostgreSQL's next batch (app/store/pg.c).
 *
 * owns: the head and tail pointers and the link of each node on it. never:
 * the nodes, a count (its callers keep theirs), or a lock (one thread only:
 * the other threads' hand-back list is treiber.h).
 *
 * Append and pop are O(1); removing a node from the middle walks the queue
 * (cold: a client that went away while it waited).
 */
#ifndef PRIMED_FIFO_H
#define PRIMED_FIFO_H

#include <stdbool.h>
#include <stddef.h>

struct fifo_link {
    struct fifo_link *next; /* the next newer node, or NULL */
};

struct fifo {
    struct fifo_link *head; /* the oldest, or NULL */
    struct fifo_link *tail; /* the newest, or NULL */
};

static inline bool fifo_empty(const struct fifo *q)
{
    return q->head == NULL;
}

/* Appends l as the newest. */
static inline void fifo_push(struct fifo *q, struct fifo_link *l)
{
    l->next = NULL;
    if (q->tail)
        q->tail->next = l;
    else
        q->head = l;
    q->tail = l;
}

/* Puts l before every other node: it goes next (a call sent again). */
static inline void fifo_push_front(struct fifo *q, struct fifo_link *l)
{
    l->next = q->head;
    q->head = l;
    if (!q->tail)
        q->tail = l;
}

/* Removes and returns the oldest, or NULL when empty. */
static inline struct fifo_link *fifo_pop(struct fifo *q)
{
    struct fifo_link *l = q->head;
    if (!l)
        return NULL;
    q->head = l->next;
    if (!q->head)
        q->tail = NULL;
    l->next = NULL;
    return l;
}

/* Empties q and returns its nodes, oldest first, NULL-terminated through
 * next: a caller may re-queue each as it goes. */
static inline struct fifo_link *fifo_take(struct fifo *q)
{
    struct fifo_link *l = q->head;
    q->head = q->tail = NULL;
    return l;
}

/* Removes l from q. Returns whether it was there. Walks q. */
static inline bool fifo_remove(struct fifo *q, struct fifo_link *l)
{
    struct fifo_link *prev = NULL;
    for (struct fifo_link **pp = &q->head; *pp; prev = *pp, pp = &(*pp)->next) {
        if (*pp != l)
            continue;
        *pp = l->next;
        if (q->tail == l)
            q->tail = prev;
        l->next = NULL;
        return true;
    }
    return false;
}

/* The node that embeds link l as its field member. */
#define fifo_entry(l, type, member) ((type *)((char *)(l) - offsetof(type, member)))

#endif
