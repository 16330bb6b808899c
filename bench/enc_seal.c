/*
 * enc_seal.c - what each encryption-at-rest provider (enc/enc.h) costs per
 * object, in process: seal and open of a 1 KiB Secret as the store keeps
 * it (its JSON, about 1.4 KB), with the object's storage key as aesgcm's
 * additional data.
 *
 * The end-to-end benchmark (bench/encryption.py) compares whole servers,
 * where a create costs hundreds of microseconds and a shared machine's
 * noise is larger than the provider's share; this puts a number on that
 * share alone, to set beside it.
 *
 * Prints one JSON line per provider: microseconds per seal and per open.
 * usage: enc_seal [--iterations N]
 */
#include "bench_util.h"
#include "enc/enc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const providers[] = {"identity: {}",
                                        "aescbc:\n      keys:\n      - name: k\n        secret: ",
                                        "aesgcm:\n      keys:\n      - name: k\n        secret: ",
                                        "secretbox:\n      keys:\n      - name: k\n        secret: "};

/* base64 of 32 bytes 0..31 */
#define KEY "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="

int main(int argc, char **argv)
{
    long iterations = 100000;
    if (argc == 3 && strcmp(argv[1], "--iterations") == 0)
        iterations = atol(argv[2]);
    char object[2048];
    char value[1025];
    for (size_t i = 0; i < 1024; i++)
        value[i] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[bench_rand() % 64];
    value[1024] = '\0';
    int n = snprintf(object, sizeof object,
                     "{\"kind\":\"Secret\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"s-1\","
                     "\"namespace\":\"bench\",\"uid\":\"8d5c5bb4-0f3e-4c8a-9f41-2f6f7d1c0b6e\","
                     "\"creationTimestamp\":\"2026-12-06T16:00:00Z\"},\"data\":{\"v\":\"%s\"},"
                     "\"type\":\"Opaque\"}",
                     value);
    const char *aad = "/registry/secrets/bench/s-1";
    for (size_t p = 0; p < sizeof providers / sizeof *providers; p++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\n"
                 "resources:\n- resources: [secrets]\n  providers:\n  - %s%s\n",
                 providers[p], p ? KEY : "");
        sk_enc_config *c = NULL;
        char *err = NULL;
        if (sk_enc_config_parse(text, strlen(text), &c, &err) != SK_OK) {
            fprintf(stderr, "config: %s\n", err);
            return 1;
        }
        const sk_enc_chain *ch = sk_enc_lookup(c, "", "secrets");
        char *sealed = NULL, *opened = NULL;
        size_t sealed_len = 0, opened_len = 0;
        double t0 = bench_now_s();
        for (long i = 0; i < iterations; i++) {
            free(sealed);
            if (sk_enc_seal(ch, object, (size_t)n, aad, strlen(aad), &sealed, &sealed_len) !=
                SK_OK)
                return 1;
        }
        double t1 = bench_now_s();
        for (long i = 0; i < iterations; i++) {
            free(opened);
            if (sk_enc_open(ch, sealed, sealed_len, aad, strlen(aad), &opened, &opened_len, NULL,
                            &err) != SK_OK) {
                fprintf(stderr, "open: %s\n", err);
                return 1;
            }
        }
        double t2 = bench_now_s();
        if (opened_len != (size_t)n || memcmp(opened, object, (size_t)n) != 0)
            return 1;
        const char *name = p == 0 ? "identity" : p == 1 ? "aescbc" : p == 2 ? "aesgcm" : "secretbox";
        printf("{\"provider\":\"%s\",\"object_bytes\":%d,\"stored_bytes\":%zu,"
               "\"seal_us\":%.2f,\"open_us\":%.2f}\n",
               name, n, sealed_len, (t1 - t0) / (double)iterations * 1e6,
               (t2 - t1) / (double)iterations * 1e6);
        free(sealed);
        free(opened);
        sk_enc_config_free(c);
    }
    return 0;
}
