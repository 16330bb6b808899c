/*
 * fuzz_btree.c - libFuzzer target: the input is a program of tree updates,
 * snapshot drops, rebuilds and checks, run against the persistent B+tree
 * and the model (tests/support/btree_model.h). Any snapshot that no longer
 * reads as it did when taken, any broken invariant, and (under ASan) any
 * node freed while a retained snapshot reaches it aborts.
 *
 * Input: byte 0 picks the key count (8..1031), byte 1 the snapshots kept
 * (1..64); then per operation one opcode byte and two key bytes.
 */
#include "btree_model.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    int n_keys = 8 + (data[0] | (size > 2 ? (data[2] & 3) << 8 : 0));
    bt_model *m = bt_model_new(n_keys, 1 + data[1] % 64);
    unsigned probe = 0;
    for (size_t i = 3; i + 2 < size; i += 3) {
        int op = data[i] & 15, k = (data[i + 1] | data[i + 2] << 8) % n_keys;
        probe = probe * 31 + data[i];
        if (op < 8)
            bt_model_put(m, k);
        else if (op < 12)
            bt_model_del(m, k);
        else if (op < 14)
            bt_model_drop_oldest(m);
        else if (op == 14 && data[i + 1] == 0)
            bt_model_rebuild(m);
        else if (!bt_model_check(m, k % bt_model_snapshots(m), probe))
            abort();
        if (!bt_model_check(m, bt_model_snapshots(m) - 1, probe))
            abort();
    }
    if (!bt_model_check_all(m, probe))
        abort();
    bt_model_free(m);
    return 0;
}
