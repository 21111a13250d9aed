"""Checks a PNG that zero-trace-render wrote: chunk CRCs, the zlib stream,
the size, and which of the renderer's span colours it shows."""
import struct
import sys
import zlib

COLOURS = {
    "compute": (76, 120, 168),
    "wait": (228, 87, 86),
    "all_reduce": (245, 133, 24),
    "reduce_scatter": (84, 162, 75),
    "all_gather": (178, 121, 162),
}

data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG signature"
at, idat, width, height = 8, b"", 0, 0
while at < len(data):
    (length,) = struct.unpack(">I", data[at : at + 4])
    kind = data[at + 4 : at + 8]
    body = data[at + 8 : at + 8 + length]
    (crc,) = struct.unpack(">I", data[at + 8 + length : at + 12 + length])
    assert zlib.crc32(kind + body) == crc, "bad CRC in %s" % kind
    if kind == b"IHDR":
        width, height, depth, colour = struct.unpack(">IIBB", body[:10])
        assert (depth, colour) == (8, 2), "not 8-bit RGB"
    elif kind == b"IDAT":
        idat += body
    at += 12 + length
raw = zlib.decompress(idat)
assert len(raw) == height * (3 * width + 1), "wrong pixel data size"
seen = set()
for y in range(height):
    row = raw[y * (3 * width + 1) + 1 : (y + 1) * (3 * width + 1)]
    for x in range(width):
        seen.add(tuple(row[3 * x : 3 * x + 3]))
print("png %dx%d" % (width, height))
for name, colour in COLOURS.items():
    print("%s: %s" % (name, "drawn" if colour in seen else "absent"))
