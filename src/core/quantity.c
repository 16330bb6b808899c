/*
 * quantity.c - the syntax of Kubernetes' resource.Quantity (quantity.h):
 * apimachinery's parseQuantityString and its suffixer, shared by the
 * canonical form kube/typed.c writes and the values cel/lib_quantity.c
 * computes with.
 */
#include "core/quantity.h"

#include <string.h>

const char sk_quantity_err_format[] = "quantities must match the regular expression "
                                      "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
const char sk_quantity_err_numeric[] = "unable to parse numeric part of quantity";
const char sk_quantity_err_suffix[] = "unable to parse quantity's suffix";

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

const char *sk_quantity_split(const char *s, sk_quantity_parts *q)
{
    size_t pos = 0, end = strlen(s);
    memset(q, 0, sizeof *q);
    q->positive = 1;
    q->value = s;
    q->suffix = s + end;
    if (end && (s[0] == '-' || s[0] == '+')) {
        q->positive = s[0] != '-';
        pos++;
    }
    while (pos < end && s[pos] == '0')
        pos++;
    if (pos >= end) {
        q->num = "0";
        q->num_len = 1;
        q->value = "0";
        q->value_len = 1;
        return NULL;
    }
    size_t i = pos;
    while (i < end && is_digit(s[i]))
        i++;
    q->num = s + pos;
    q->num_len = i - pos;
    if (i >= end) {
        q->value_len = end;
        return NULL;
    }
    pos = i;
    if (q->num_len == 0) {
        q->num = "0";
        q->num_len = 1;
    }
    if (s[pos] == '.') {
        pos++;
        i = pos;
        while (i < end && is_digit(s[i]))
            i++;
        q->denom = s + pos;
        q->denom_len = i - pos;
        if (i >= end) {
            q->value_len = end;
            return NULL;
        }
        pos = i;
    }
    q->value_len = pos;
    size_t suffix_start = pos;
    while (pos < end && strchr("eEinumkKMGTP", s[pos]))
        pos++;
    if (pos < end && (s[pos] == '-' || s[pos] == '+'))
        pos++;
    while (pos < end && is_digit(s[pos]))
        pos++;
    if (pos < end)
        return sk_quantity_err_format;
    q->suffix = s + suffix_start;
    q->suffix_len = end - suffix_start;
    return NULL;
}

int sk_quantity_suffix(const char *s, size_t len, int *base, int *exp, sk_quantity_format *fmt)
{
    static const struct {
        const char *s;
        int exp;
    } dec[] = {{"n", -9}, {"u", -6}, {"m", -3}, {"", 0},   {"k", 3},
               {"M", 6},  {"G", 9},  {"T", 12}, {"P", 15}, {"E", 18}},
      bin[] = {{"Ki", 10}, {"Mi", 20}, {"Gi", 30}, {"Ti", 40}, {"Pi", 50}, {"Ei", 60}};
    for (size_t i = 0; i < sizeof dec / sizeof dec[0]; i++)
        if (strlen(dec[i].s) == len && memcmp(dec[i].s, s, len) == 0) {
            *base = 10, *exp = dec[i].exp, *fmt = SK_QUANTITY_DECIMAL_SI;
            return 1;
        }
    for (size_t i = 0; i < sizeof bin / sizeof bin[0]; i++)
        if (strlen(bin[i].s) == len && memcmp(bin[i].s, s, len) == 0) {
            *base = 2, *exp = bin[i].exp, *fmt = SK_QUANTITY_BINARY_SI;
            return 1;
        }
    if (len > 1 && (s[0] == 'e' || s[0] == 'E')) {
        /* strconv.ParseInt(s[1:], 10, 64): optional sign, then digits only. */
        size_t i = 1;
        int neg = 0;
        if (s[i] == '+' || s[i] == '-')
            neg = s[i++] == '-';
        if (i == len)
            return 0;
        long long v = 0;
        for (; i < len; i++) {
            if (!is_digit(s[i]) || v > 100000000)
                return 0;
            v = v * 10 + (s[i] - '0');
        }
        *base = 10, *exp = (int)(neg ? -v : v), *fmt = SK_QUANTITY_DECIMAL_EXPONENT;
        return 1;
    }
    return 0;
}
