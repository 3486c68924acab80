/* test_trace.c - W3C traceparent and B3: valid forms and each malformed shape. */
#include <criterion/criterion.h>
#include <string.h>

#include "trace.h"

#define TP "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

Test(trace, parses_valid_traceparent)
{
    struct trace t;
    cr_assert(trace_parse_traceparent(TP, strlen(TP), &t));
    cr_assert_str_eq(t.trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
    cr_assert_str_eq(t.parent_id, "00f067aa0ba902b7");
    cr_assert_eq(t.flags, 1);
    const char *future = "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra";
    cr_assert(trace_parse_traceparent(future, strlen(future), &t));
}

Test(trace, refuses_malformed_traceparent)
{
    static const char *const bad[] = {
        "",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-",
        "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
        "0-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-011",
        "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct trace t;
        cr_assert_not(trace_parse_traceparent(bad[i], strlen(bad[i]), &t), "%s", bad[i]);
        cr_assert_not(t.valid);
    }
}

Test(trace, continues_with_a_new_span)
{
    struct trace t;
    cr_assert(trace_parse_traceparent(TP, strlen(TP), &t));
    char out[56];
    cr_assert_eq(trace_format_traceparent(&t, 0x1234, out), 55);
    cr_assert_str_eq(out, "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000001234-01");
    struct trace back;
    cr_assert(trace_parse_traceparent(out, strlen(out), &back));
    cr_assert_eq(trace_format_traceparent(&t, 0, out), 55); /* span 0 is invalid: never emitted */
    cr_assert(trace_parse_traceparent(out, strlen(out), &back));
}

Test(trace, b3_single_forms)
{
    struct trace t;
    const char *single = "80f198ee56343ba864fe8b2a57d3eff7-e457b5a2e4d86bd1-1";
    cr_assert(trace_parse_b3(single, strlen(single), &t));
    cr_assert_str_eq(t.trace_id, "80f198ee56343ba864fe8b2a57d3eff7");
    cr_assert_str_eq(t.parent_id, "e457b5a2e4d86bd1");
    cr_assert_eq(t.flags, 1);
    /* the longest valid form: 68 characters, with the parent span id */
    const char *full = "80f198ee56343ba864fe8b2a57d3eff7-e457b5a2e4d86bd1-1-05e3ac9a4f6e3b90";
    cr_assert_eq(strlen(full), 68);
    cr_assert(trace_parse_b3(full, strlen(full), &t));
    cr_assert_str_eq(t.parent_id, "e457b5a2e4d86bd1");
    const char *unsampled = "80f198ee56343ba864fe8b2a57d3eff7-e457b5a2e4d86bd1-0";
    cr_assert(trace_parse_b3(unsampled, strlen(unsampled), &t));
    cr_assert_eq(t.flags, 0, "sampled=0 must stay unsampled");
    const char *debug = "463ac35c9f6413ad-e457b5a2e4d86bd1-d";
    cr_assert(trace_parse_b3(debug, strlen(debug), &t));
    cr_assert_str_eq(t.trace_id, "0000000000000000463ac35c9f6413ad");
    cr_assert_eq(t.flags, 1);
    const char *deferred = "463ac35c9f6413ad-e457b5a2e4d86bd1";
    cr_assert(trace_parse_b3(deferred, strlen(deferred), &t));
    cr_assert_eq(t.flags, 1);
}

Test(trace, b3_single_rejects)
{
    static const char *const bad[] = {
        "0",
        "1",
        "d",
        "xyz",
        "463ac35c9f6413ad", /* no span id */
        "0000000000000000-e457b5a2e4d86bd1-1",
        "463ac35c9f6413ad-0000000000000000-1",
        "463ac35c9f6413ad-e457b5a2e4d86bd-1",
        "463ac35c9f6413ad-e457b5a2e4d86bd1-2",
        "463ac35c9f6413ad-e457b5a2e4d86bd1-1-xyz",
        "463ac35c9f6413ad-e457b5a2e4d86bd1-1-05e3ac9a4f6e3b90-extra",
        "463ac35c9f6413a-e457b5a2e4d86bd1-1",
    };
    struct trace t;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_assert_not(trace_parse_b3(bad[i], strlen(bad[i]), &t), "accepted '%s'", bad[i]);
}

Test(trace, b3_multi_headers)
{
    struct trace t;
    cr_assert(trace_parse_b3_multi("463ac35c9f6413ad", 16, "", 0, "", 0, "", 0, &t));
    cr_assert_str_eq(t.trace_id, "0000000000000000463ac35c9f6413ad");
    cr_assert_eq(t.flags, 1);
    cr_assert(trace_parse_b3_multi("80F198EE56343BA864FE8B2A57D3EFF7", 32, "e457b5a2e4d86bd1", 16, "0", 1, "", 0, &t));
    cr_assert_str_eq(t.trace_id, "80f198ee56343ba864fe8b2a57d3eff7");
    cr_assert_str_eq(t.parent_id, "e457b5a2e4d86bd1");
    cr_assert_eq(t.flags, 0);
    cr_assert(trace_parse_b3_multi("463ac35c9f6413ad", 16, "e457b5a2e4d86bd1", 16, "false", 5, "", 0, &t));
    cr_assert_eq(t.flags, 0);
    cr_assert(trace_parse_b3_multi("463ac35c9f6413ad", 16, "e457b5a2e4d86bd1", 16, "0", 1, "1", 1, &t));
    cr_assert_eq(t.flags, 1, "X-B3-Flags: 1 (debug) is sampled");
    cr_assert_not(trace_parse_b3_multi("", 0, "e457b5a2e4d86bd1", 16, "1", 1, "", 0, &t));
    cr_assert_not(trace_parse_b3_multi("463ac35c9f6413ad", 16, "xyz", 3, "1", 1, "", 0, &t));
    cr_assert_not(trace_parse_b3_multi("463ac35c9f6413ad", 16, "e457b5a2e4d86bd1", 16, "yes", 3, "", 0, &t));
    cr_assert_not(trace_parse_b3_multi("0000000000000000", 16, "", 0, "", 0, "", 0, &t));
}

Test(trace, outbound_carries_both_styles)
{
    struct trace t;
    cr_assert(trace_parse_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", 55, &t));
    char out[TRACE_OUTBOUND_MAX];
    size_t n = trace_format_outbound(&t, 0x1111222233334444ULL, 0xaaaabbbbccccddddULL, out, sizeof(out));
    cr_assert_gt(n, 0);
    cr_assert_str_eq(out, "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-aaaabbbbccccdddd-01\r\n"
                          "X-B3-TraceId: 4bf92f3577b34da6a3ce929d0e0e4736\r\n"
                          "X-B3-SpanId: aaaabbbbccccdddd\r\n"
                          "X-B3-ParentSpanId: 1111222233334444\r\n"
                          "X-B3-Sampled: 1\r\n");
    cr_assert_eq(trace_format_outbound(&t, 1, 2, out, 50), 0, "a short buffer is refused, not cut");
    t.flags = 0;
    trace_format_outbound(&t, 1, 2, out, sizeof(out));
    cr_assert(strstr(out, "-00\r\n") && strstr(out, "X-B3-Sampled: 0\r\n"), "the decision is kept: %s", out);
}

Test(trace, start_makes_a_sampled_root)
{
    struct trace t;
    trace_start(&t, 0, 0);
    cr_assert(t.valid);
    cr_assert_str_eq(t.trace_id, "00000000000000000000000000000001", "never all zero");
    trace_start(&t, 0x0123456789abcdefULL, 0xfedcba9876543210ULL);
    cr_assert_str_eq(t.trace_id, "0123456789abcdeffedcba9876543210");
    cr_assert_eq(t.flags, 1);
    cr_assert_str_eq(t.parent_id, "");
}

/* The trace headers' keep list is laid out by hand (a const the parser
 * shares across workers): it must be what http_keep_init() lays out. */
Test(trace, keep_list_is_laid_out_as_the_parser_lays_it_out)
{
    struct http_keep k = trace_keep;
    cr_assert_eq(http_keep_init(&k), 0);
    cr_assert_eq(k.size, trace_keep.size);
    for (unsigned i = 0; i < k.n; i++)
        cr_assert_eq(k.off[i], trace_keep.off[i], "value %u", i);
    cr_assert_eq(trace_keep.n, TRACE_KEEP_N);
}

/* From kept values to a context: traceparent first, then b3, then the
 * X-B3-* headers; an overlong part of the multi form is no trace. */
Test(trace, from_request_takes_the_forms_in_order)
{
    static char kept[512];
    struct http_req q = {.kept = kept};
    struct trace t;
    const char *tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    const char *b3 = "463ac35c9f6413ad463ac35c9f6413ad-e457b5a2e4d86bd1-1";
    memcpy(kept + trace_keep.off[TRACE_KEEP_B3], b3, strlen(b3));
    q.kept_len[TRACE_KEEP_B3] = (uint8_t)strlen(b3);
    trace_from_request(&q, &t);
    cr_assert(t.valid);
    cr_assert_str_eq(t.trace_id, "463ac35c9f6413ad463ac35c9f6413ad");
    memcpy(kept + trace_keep.off[TRACE_KEEP_TRACEPARENT], tp, strlen(tp));
    q.kept_len[TRACE_KEEP_TRACEPARENT] = (uint8_t)strlen(tp);
    trace_from_request(&q, &t);
    cr_assert_str_eq(t.trace_id, "4bf92f3577b34da6a3ce929d0e0e4736", "traceparent wins");
    memset(q.kept_len, 0, sizeof(q.kept_len));
    memcpy(kept + trace_keep.off[TRACE_KEEP_XB3_TRACE], "463ac35c9f6413ad", 16);
    q.kept_len[TRACE_KEEP_XB3_TRACE] = 16;
    trace_from_request(&q, &t);
    cr_assert(t.valid, "the multi form alone");
    q.kept_len[TRACE_KEEP_XB3_SAMPLED] = (uint8_t)(trace_keep.h[TRACE_KEEP_XB3_SAMPLED].cap + 1);
    trace_from_request(&q, &t);
    cr_assert_not(t.valid, "an overlong part: no trace");
    q.kept = NULL;
    trace_from_request(&q, &t);
    cr_assert_not(t.valid, "nothing kept: no trace");
}
