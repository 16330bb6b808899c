/*
 * fuzz_tokenfile.c - libFuzzer target: the static token file parser
 * (kube/tokenfile) on arbitrary bytes.
 *
 * Invariants checked: a parse either succeeds or fails with a message that
 * names a line; a table's users have NUL-free names and uids and as many
 * groups as they claim; every token is found again by lookup (of the last
 * record that named it), and a token one byte longer than the input is not.
 */
#include "kube/tokenfile.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sk_tokenfile *t = NULL;
    char *msg = NULL;
    sk_err err = sk_tokenfile_parse((const char *)data, size, &t, &msg);
    if (err != SK_OK) {
        if (err != SK_ERR_INVALID || t || !msg || strncmp(msg, "line ", 5) != 0)
            abort();
        free(msg);
        return 0;
    }
    if (!t || msg || sk_tokenfile_count(t) > size)
        abort();
    /* Every first field of a simple line is a token found again. */
    char *copy = malloc(size + 1);
    memcpy(copy, data, size);
    copy[size] = '\0';
    if (!memchr(data, '"', size) && !memchr(data, '\0', size) && !memchr(data, '\r', size)) {
        for (char *line = strtok(copy, "\n"); line; line = strtok(NULL, "\n")) {
            char *comma = strchr(line, ',');
            if (!comma || comma == line)
                continue;
            *comma = '\0';
            const sk_user *u = sk_tokenfile_lookup(t, line);
            if (!u || !u->name || !u->uid)
                abort();
            for (size_t i = 0; i < u->n_groups; i++)
                if (!u->groups[i])
                    abort();
        }
    }
    char *longer = malloc(size + 2);
    memset(longer, 'x', size + 1);
    longer[size + 1] = '\0';
    if (sk_tokenfile_lookup(t, longer))
        abort();
    free(longer);
    free(copy);
    sk_tokenfile_free(t);
    return 0;
}
