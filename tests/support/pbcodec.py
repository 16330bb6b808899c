"""The few protobuf wire-format pieces the tests and benchmarks decode and
build kube's and etcd's messages with by hand (field numbers from the
upstream .proto files, at each caller): varints, and a message's fields.
Kept apart from sqlkube's own codecs, so a test reads the bytes with code
that is not the code under test."""


def varint(n):
    """n as a varint; a negative int64 as its 64-bit two's complement."""
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def read_varint(data, i):
    """The varint at data[i:]: (value, index after it)."""
    v = shift = 0
    while True:
        b = data[i]
        i += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return v, i


def fields(data):
    """A message's fields, {number: [values]}: ints for varints, bytes for
    length-delimited fields (kube's and etcd's messages here use no other
    wire type; one is refused)."""
    out, i = {}, 0
    while i < len(data):
        tag, i = read_varint(data, i)
        num, wt = tag >> 3, tag & 7
        if wt == 0:
            v, i = read_varint(data, i)
        elif wt == 2:
            n, i = read_varint(data, i)
            v, i = data[i:i + n], i + n
        else:
            raise ValueError("unexpected wire type %d" % wt)
        out.setdefault(num, []).append(v)
    return out
