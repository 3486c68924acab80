/* item_id.h - the one rule for an item's id (a product's, an inventory
 * item's): 1..ITEM_ID_MAX bytes of [A-Za-z0-9._-], so that it is a path
 * segment as it stands. The route table (a "/{name}" route's id), the
 * catalog and the JSON scan hold ids to it.
 */
#ifndef PRIMED_ITEM_ID_H
#define PRIMED_ITEM_ID_H

#include <stdbool.h>

#define ITEM_ID_MAX 32

/* Whether ch may stand in an item id. */
static inline bool item_id_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' ||
           ch == '_' || ch == '-';
}

#endif
