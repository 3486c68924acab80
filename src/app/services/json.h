/* json.h - a strict scanner for the two answers the gateway reads from its
 * upstreams: the catalog's array of product objects and inventory's object.
 *
 * RFC 8259 grammar (strings with their escapes, numbers, literals, nesting up
 * to JSON_DEPTH_MAX), strings that decode (well-formed UTF-8, surrogate
 * escapes only in pairs), no allocation, no copy: it finds where each object is
 * in the caller's text so the gateway can pass it on as it came. Anything not
 * JSON is refused, never guessed at.
 */
#ifndef PRIMED_JSON_H
#define PRIMED_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "item_id.h"

#define JSON_DEPTH_MAX 16

/* One top-level object of an array. */
struct json_obj {
    uint32_t off, len;           /* its text, '{' to '}' */
    bool empty;                  /* "{}" */
    bool has_id;                 /* it has an "itemId" usable as a path segment (written without escapes) */
    bool id_not_string;          /* it has an "itemId" that is not a string (the contract's type) */
    bool has_availability;       /* it has a member "availability" (the gateway's to add) */
    char id[ITEM_ID_MAX + 1]; /* that id: a string of 1..32 of [A-Za-z0-9._-] */
};

/* The UTF-8 sequence at s[0, n) (n >= 1): its length with the code point in
 * *cp, or 0 when it is not well-formed (RFC 3629: overlong, a surrogate,
 * past U+10FFFF, cut short). */
size_t json_utf8_len(const unsigned char *s, size_t n, uint32_t *cp);

/* Scans s (len bytes) as a JSON array of objects into out (at most max).
 * Returns how many, or -EINVAL (not JSON, or not an array of objects) or
 * -E2BIG (more than max). */
int json_objects(const char *s, size_t len, struct json_obj *out, unsigned max);

/* Whether s is one JSON object (whitespace around it allowed); its text's
 * offset and length into *off and *olen. */
bool json_object(const char *s, size_t len, uint32_t *off, uint32_t *olen);

#endif
