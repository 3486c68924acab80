/* treiber.h - a lock-free stack that any thread pushes to and one thread,
 * its owner, takes whole, in arrival order (a multi-producer hand-back list:
 * finished tasks for their owner, committed events for their worker).
 *
 * owns: the push and take protocol. never: the nodes (intrusive: a node
 * embeds a struct treiber_link) or waking the owner (its caller's).
 *
 * Protocol: a producer writes its node, then pushes with a seq_cst CAS; the
 * owner takes the whole stack with an acquire exchange, so it reads
 * everything written before each push. Nothing else touches a node while it
 * is on the stack. ABA cannot happen: nodes are only ever popped all at
 * once, by the one owner.
 */
#ifndef PRIMED_TREIBER_H
#define PRIMED_TREIBER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

struct treiber_link {
    struct treiber_link *next;
};

struct treiber {
    _Atomic(struct treiber_link *) head;
};

/* From any thread. */
static inline void treiber_push(struct treiber *s, struct treiber_link *l)
{
    struct treiber_link *head = atomic_load_explicit(&s->head, memory_order_relaxed);
    do {
        l->next = head;
    } while (!atomic_compare_exchange_weak_explicit(&s->head, &head, l, memory_order_seq_cst, memory_order_relaxed));
}

/* The owner: everything pushed so far, oldest first (NULL-terminated
 * through next), the stack left empty. */
static inline struct treiber_link *treiber_take(struct treiber *s)
{
    struct treiber_link *l = atomic_exchange_explicit(&s->head, NULL, memory_order_acquire);
    struct treiber_link *fifo = NULL;
    while (l) { /* the stack is newest first: reverse it */
        struct treiber_link *next = l->next;
        l->next = fifo;
        fifo = l;
        l = next;
    }
    return fifo;
}

/* Whether anything waits: seq_cst where it pairs with a sleep announcement
 * (Dekker), relaxed as a hint. */
static inline bool treiber_nonempty(struct treiber *s, memory_order mo)
{
    return atomic_load_explicit(&s->head, mo) != NULL;
}

/* The node that embeds link l as its field member. */
#define treiber_entry(l, type, member) ((type *)((char *)(l) - offsetof(type, member)))

#endif
