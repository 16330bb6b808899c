/*
 * replay.c - a main() for fuzz targets built without libFuzzer (gcc, the
 * default build): runs the target on each file named on the command line,
 * or on `runs` pseudo-random inputs from a fixed seed, so every build
 * compiles and exercises the targets and a crash found by the fuzzer can be
 * replayed under any compiler.
 *
 * usage: fuzz_x [file...] | fuzz_x --random RUNS [MAX_LEN]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return 1;
    }
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0, n;
    uint8_t chunk[65536];
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (len + n > cap) {
            cap = (len + n) * 2;
            buf = realloc(buf, cap);
            if (!buf)
                abort();
        }
        memcpy(buf + len, chunk, n);
        len += n;
    }
    fclose(f);
    LLVMFuzzerTestOneInput(buf ? buf : chunk, len);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "--random") == 0) {
        long runs = atol(argv[2]);
        size_t max_len = argc >= 4 ? (size_t)atol(argv[3]) : 4096;
        uint64_t x = 0x9e3779b97f4a7c15ULL;
        uint8_t *buf = malloc(max_len + 1);
        if (!buf)
            return 1;
        for (long r = 0; r < runs; r++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            size_t len = (size_t)(x % (max_len + 1));
            for (size_t i = 0; i < len; i++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                buf[i] = (uint8_t)(x >> 32);
            }
            LLVMFuzzerTestOneInput(buf, len);
        }
        free(buf);
        printf("%ld random inputs: ok\n", runs);
        return 0;
    }
    int rc = 0;
    for (int i = 1; i < argc; i++)
        rc |= run_file(argv[i]);
    return rc;
}
