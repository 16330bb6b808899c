/*
 * patch_merge.c - a strategic merge patch of many owner references onto an
 * object that already has as many, measured in process.
 *
 * Owner references merge by uid, so each patch element is looked up in the
 * object's list: a scan per element made this quadratic (about a minute for
 * 20,000 onto 20,000). Two cases, each the median of R runs of
 * sk_patch_apply (parsing the patch included, building the inputs not):
 *   new     N references with uids the object does not have (2N result)
 *   merged  N references with the object's uids (N result, each merged)
 * The result is checked (count, first element) so a fast wrong answer
 * cannot pass as a fast one.
 *
 * Prints one JSON object. usage: patch_merge [N] [R]
 */
#include "bench_util.h"
#include "kube/patch.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* {"metadata":{"ownerReferences":[...]}} with n references whose uids and
 * names are numbered from first (new string). */
static char *owner_refs(const char *name_prefix, int first, int n)
{
    size_t cap = (size_t)n * 128 + 64, len = 0;
    char *b = malloc(cap);
    if (!b)
        abort();
    len += (size_t)snprintf(b, cap, "{\"metadata\":{\"ownerReferences\":[");
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(b + len, cap - len,
                                "%s{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":\"%s%d\","
                                "\"uid\":\"u-%d\"}",
                                i ? "," : "", name_prefix, first + i, first + i);
    snprintf(b + len, cap - len, "]}}");
    return b;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median seconds of runs applications of patch to target; exits if a run
 * fails or its result lacks want_refs references starting at want_uid. */
static double time_patch(const json_t *target, const char *patch, int runs, size_t want_refs,
                         const char *want_uid)
{
    double *t = malloc((size_t)runs * sizeof *t);
    if (!t)
        abort();
    for (int r = 0; r < runs; r++) {
        json_t *out = NULL;
        char *msg = NULL;
        double t0 = bench_now_s();
        sk_err e =
            sk_patch_apply(SK_PATCH_STRATEGIC, sk_schema_named("io.k8s.api.core.v1.ConfigMap"),
                           target, patch, strlen(patch), &out, &msg);
        t[r] = bench_now_s() - t0;
        const json_t *refs = json_object_get(json_object_get(out, "metadata"), "ownerReferences");
        const char *uid = json_string_value(json_object_get(json_array_get(refs, 0), "uid"));
        if (e != SK_OK || json_array_size(refs) != want_refs || !uid || strcmp(uid, want_uid)) {
            fprintf(stderr, "patch_merge: wrong result (%s)\n", msg ? msg : "bad list");
            exit(1);
        }
        json_decref(out);
    }
    qsort(t, (size_t)runs, sizeof *t, cmp_double);
    double median = t[runs / 2];
    free(t);
    return median;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 20000;
    int runs = argc > 2 ? atoi(argv[2]) : 5;
    if (n < 1 || runs < 1) {
        fprintf(stderr, "usage: patch_merge [N >= 1] [R >= 1]\n");
        return 2;
    }
    char *target_text = owner_refs("old", 0, n);
    char *fresh = owner_refs("new", n, n), *same = owner_refs("renamed", 0, n);
    json_t *target = json_loads(target_text, 0, NULL);
    if (!target)
        abort();
    char first_new[32];
    snprintf(first_new, sizeof first_new, "u-%d", n);
    double t_new = time_patch(target, fresh, runs, 2 * (size_t)n, first_new);
    double t_merged = time_patch(target, same, runs, (size_t)n, "u-0");
    printf("{\"references\":%d,\"runs\":%d,\"new_s\":%.4f,\"merged_s\":%.4f}\n", n, runs, t_new,
           t_merged);
    json_decref(target);
    free(target_text);
    free(fresh);
    free(same);
    return 0;
}
