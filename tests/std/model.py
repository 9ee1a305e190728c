#!/usr/bin/env python3
"""Independent model of std.image and std.draw, written from the PNG specification (RFC 2083 /
ISO 15948), the zlib and deflate formats (RFC 1950, RFC 1951), the PPM format (netpbm) and the
rules the modules' comments document. It prints the expected values the test files use.

Nothing here reads the CAIRN sources: the CRC-32 and Adler-32 are computed from their definitions
(and cross-checked against Python's zlib), the glyphs come from console-setup's Lat15-Fixed13.psf
read through its own Unicode table, and the shapes from the stated inclusion rules.
"""
import gzip
import os
import struct
import zlib

M64 = (1 << 64) - 1


# --- checksums, from their definitions ------------------------------------------------------

def _crc_table():
    table = []
    for i in range(256):
        v = i
        for _ in range(8):
            v = (v >> 1) ^ 0xEDB88320 if v & 1 else v >> 1
        table.append(v)
    return table


CRC_TABLE = _crc_table()


def crc32(data, crc=0):
    c = crc ^ 0xFFFFFFFF
    for b in data:
        c = (c >> 8) ^ CRC_TABLE[(c ^ b) & 0xFF]
    return c ^ 0xFFFFFFFF


def adler32(data):
    a, b = 1, 0
    for x in data:
        a = (a + x) % 65521
        b = (b + a) % 65521
    return (b << 16) | a


# --- std.image ------------------------------------------------------------------------------

def rgba(r, g, b, a):
    return (r << 24) | (g << 16) | (b << 8) | a


def scanlines(w, h, px):
    out = bytearray()
    for y in range(h):
        out.append(0)  # filter type 0, none
        for x in range(w):
            out += struct.pack(">I", px[y * w + x])  # R, G, B, A: the value's bytes high to low
    return bytes(out)


def zlib_stored(raw):
    """RFC 1950 header 78 01, RFC 1951 stored blocks of at most 65535 bytes (one at least), Adler-32."""
    out = bytearray(b"\x78\x01")
    chunks = [raw[i:i + 65535] for i in range(0, len(raw), 65535)] or [b""]
    for k, part in enumerate(chunks):
        out.append(1 if k == len(chunks) - 1 else 0)  # BFINAL, BTYPE 00
        out += struct.pack("<HH", len(part), len(part) ^ 0xFFFF)
        out += part
    out += struct.pack(">I", adler32(raw))
    return bytes(out)


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc32(kind + data))


def png_packed(w, h, stream):
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0)  # 8-bit, RGBA, deflate, filter 0, no interlace
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", stream) + chunk(b"IEND", b"")


def png(w, h, px):
    return png_packed(w, h, zlib_stored(scanlines(w, h, px)))


def ppm(w, h, px):
    body = b"".join(struct.pack(">I", c)[:3] for c in px)
    return b"P6\n%d %d\n255\n" % (w, h) + body


def shaded(w, h, f):
    return [f(i % w, i // w) for i in range(w * h)]


def fold(px):
    h = 0
    for c in px:
        h = (h * 31 + c) & M64
    return h


def pattern(x, y):
    """The pixels the tests shade: rgba((x*7+y)%256, (y*3)%256, (x^y)%256, (x+2*y)%256)."""
    return rgba((x * 7 + y) % 256, (y * 3) % 256, (x ^ y) % 256, (x + 2 * y) % 256)


def esc(b):
    return "".join("\\x%02x" % c for c in b)


# --- std.draw -------------------------------------------------------------------------------

def over(d, s):
    """Source over destination, each colour channel (s*a + d*(255-a) + 127) / 255, alpha
    a + (d_a*(255-a) + 127) / 255, as the module comment states."""
    a = s & 0xFF
    out = 0
    for shift in (24, 16, 8):
        sc, dc = (s >> shift) & 0xFF, (d >> shift) & 0xFF
        out |= ((sc * a + dc * (255 - a) + 127) // 255) << shift
    return out | (a + ((d & 0xFF) * (255 - a) + 127) // 255)


class Img:
    def __init__(self, w, h, fillc=0):
        self.w, self.h, self.px = w, h, [fillc] * (w * h)

    def plot(self, x, y, c):
        if 0 <= x < self.w and 0 <= y < self.h:
            self.px[y * self.w + x] = over(self.px[y * self.w + x], c)

    def rect(self, x, y, w, h, c):
        for yy in range(max(y, 0), min(y + h, self.h)):
            for xx in range(max(x, 0), min(x + w, self.w)):
                self.plot(xx, yy, c)

    def line(self, x0, y0, x1, y1, c):
        # Bresenham's all-octant integer form (each pixel once), clipped pixel by pixel.
        dx, dy = abs(x1 - x0), -abs(y1 - y0)
        sx, sy = (1 if x0 < x1 else -1), (1 if y0 < y1 else -1)
        err = dx + dy
        while True:
            self.plot(x0, y0, c)
            if x0 == x1 and y0 == y1:
                break
            e2 = 2 * err
            if e2 >= dy:
                err += dy
                x0 += sx
            if e2 <= dx:
                err += dx
                y0 += sy

    def circle(self, cx, cy, r, c):
        if r < 0:
            return
        for y in range(self.h):
            for x in range(self.w):
                if (x - cx) ** 2 + (y - cy) ** 2 <= r * r:
                    self.plot(x, y, c)

    def blit_part(self, src, sx, sy, w, h, x, y):
        for j in range(h):
            for i in range(w):
                if sx + i < src.w and sy + j < src.h:
                    self.plot(x + i, y + j, src.px[(sy + j) * src.w + sx + i])

    def text(self, x, y, s, c, scale):
        for k, ch in enumerate(s):
            rows = FONT.get(ord(ch), FONT[ord("?")])
            for row in range(13):
                for col in range(8):
                    if rows[row] >> (7 - col) & 1:
                        self.rect(x + (k * 8 + col) * scale, y + row * scale, scale, scale, c)

    def fold(self):
        return fold(self.px)


def load_font():
    """printable ASCII -> 13 row bytes, from the PSF1 file through its Unicode table."""
    # Debian's console-setup-linux package installs the font here.
    path = os.environ.get("PSF", "/usr/share/consolefonts/Lat15-Fixed13.psf.gz")
    data = gzip.open(path).read()  # console-setup-linux 1.221, usr/share/consolefonts
    assert data[0:2] == b"\x36\x04"
    mode, size = data[2], data[3]
    count = 512 if mode & 1 else 256
    glyphs = [data[4 + i * size:4 + (i + 1) * size] for i in range(count)]
    assert mode & 2, "a Unicode table"
    at, table = 4 + count * size, {}
    for g in range(count):
        seq = False
        while True:
            (u,) = struct.unpack_from("<H", data, at)
            at += 2
            if u == 0xFFFF:
                break
            if u == 0xFFFE:
                seq = True
            elif not seq:
                table.setdefault(u, g)
    return {u: glyphs[table[u]] for u in range(32, 127)}


FONT = load_font()


def layout_json(marks, w, h, at_ns):
    def name(s):
        out = ""
        for ch in s:
            if ch in "\"\\":
                out += "\\" + ch
            elif ord(ch) < 32:
                out += "\\u%04x" % ord(ch)
            else:
                out += ch
        return out
    items = ",".join('{"name":"%s","x":%d,"y":%d,"w":%d,"h":%d}' % ((name(n),) + m) for n, m in marks)
    return '{"width":%d,"height":%d,"at_ns":%d,"elements":[%s]}\n' % (w, h, at_ns, items)


def main():
    # The checksums agree with Python's zlib (a check of this model, not of the modules).
    for probe in (b"", b"123456789", bytes(range(256)) * 300):
        assert crc32(probe) == zlib.crc32(probe) and adler32(probe) == zlib.adler32(probe)
    # And every stored stream decompresses to its scanlines.
    for w, h in ((1, 1), (64, 255), (64, 256), (64, 510)):
        raw = scanlines(w, h, shaded(w, h, pattern))
        assert zlib.decompress(zlib_stored(raw)) == raw

    print("== image")
    print("png 1x1 0 =", esc(png(1, 1, [0])), len(png(1, 1, [0])))
    print("png 2x1 ext =", esc(png(2, 1, [0xFFFFFFFF, 0x80808080])))
    for w, h in ((3, 2), (1, 5), (64, 254), (64, 255), (64, 256), (64, 510), (1, 13107), (1, 13108)):
        f = png(w, h, shaded(w, h, pattern))
        raw = (4 * w + 1) * h
        print("png %dx%d pattern: raw %d len %d crc 0x%08x" % (w, h, raw, len(f), crc32(f)))
    for w, h in ((64, 256), (64, 510)):
        f = png(w, h, shaded(w, h, pattern))
        print("  %dx%d bytes 41..48: %s; second header at %d: %s; tail %s" % (
            w, h, f[41:48].hex(), 41 + 2 + 5 + 65535, f[41 + 2 + 5 + 65535:41 + 2 + 10 + 65535].hex(),
            f[-24:].hex()))
    f = png_packed(0xFFFFFFFF, 1, b"")
    print("packed max x 1 empty: len %d crc 0x%08x" % (len(f), crc32(f)), esc(f))
    f = png_packed(1, 0xFFFFFFFF, b"abc")
    print("packed 1 x max abc: len %d crc 0x%08x" % (len(f), crc32(f)))
    f = ppm(1, 1, [0x01020304])
    print("ppm 1x1 =", esc(f))
    f = ppm(12, 345, shaded(12, 345, pattern))
    print("ppm 12x345 pattern: len %d crc 0x%08x" % (len(f), crc32(f)))
    f = ppm(1000, 1, shaded(1000, 1, pattern))
    print("ppm 1000x1 pattern: len %d crc 0x%08x" % (len(f), crc32(f)))
    f = png(2, 2, [0] * 4)
    print("png 2x2 0 (capture frame): len %d crc 0x%08x" % (len(f), crc32(f)))
    print("shade 257x3 pattern fold", fold(shaded(257, 3, pattern)))
    print("shade 300x300 fill 0x80808080 fold", fold([0x80808080] * 90000))

    print("== draw")
    for d, s in ((0x000000FF, 0xFFFFFF80), (0, 0xFFFFFF80), (0xFFFFFFFF, 0x00000001),
                 (0xFFFFFFFF, 0x000000FE), (0x12345678, 0x9ABCDEF0), (0xFF000080, 0x00FF0080),
                 (0x80808080, 0x80808080), (0xFFFFFFFF, 0x00000080), (0, 0x00000080)):
        print("over(0x%08x, 0x%08x) = 0x%08x" % (d, s, over(d, s)))
    h = 0
    for a in range(256):
        for v in (0, 1, 127, 128, 254, 255):
            s = rgba(v, 255 - v, (v * 3) % 256, a)
            d = rgba(255 - v, v, 77, (a * 5) % 256)
            h = (h * 31 + over(d, s)) & M64
    print("over sweep fold", h)

    half = 0x40C0FF80
    img = Img(5, 4, 0x000000FF)
    img.rect(-2, -1, 3, 2, half)  # off the top left
    img.rect(4, 3, 9, 9, half)  # off the bottom right
    img.rect(1, 1, 3, 2, half)
    img.rect(2, -5, 1, 100, 0xFF0000FF)  # through the top and bottom edges
    print("rect scene fold", img.fold())
    img = Img(7, 6)
    for ends in ((-3, -2, 9, 7), (6, 0, 0, 5), (1, 5, 5, 4), (3, 3, 3, 3), (-4, 2, 10, 2), (2, -9, 2, 20),
                 (0, 5, 6, 0)):
        img.line(*ends, half)
    print("line scene fold", img.fold())
    img = Img(9, 9)
    img.line(8, 1, 0, 4, 0xFFFFFFFF)
    px_fwd = img.px[:]
    img = Img(9, 9)
    img.line(0, 4, 8, 1, 0xFFFFFFFF)
    print("line 8,1->0,4 fold", fold(px_fwd), "reverse fold", img.fold(),
          "set", sorted((i % 9, i // 9) for i, c in enumerate(px_fwd) if c))
    img = Img(12, 10)
    img.circle(0, 0, 4, half)
    img.circle(11, 9, 3, half)
    img.circle(6, 5, 2, half)
    img.circle(6, -3, 4, 0xFF00FFFF)
    img.circle(13, 5, 3, 0x00FF00FF)
    print("circle scene fold", img.fold())
    for r in range(6):
        c = Img(13, 13)
        c.circle(6, 6, r, 0xFFFFFFFF)
        print("circle r=%d count %d" % (r, sum(1 for p in c.px if p)))
    sheet = Img(4, 2)
    sheet.px = [0xFF0000FF, 0x00FF0080, 0x0000FFFF, 0xFFFFFF00, 0x11223344, 0x00000000, 0x55667788, 0xAABBCCFF]
    for (x, y) in ((1, 1), (-1, -1), (3, 1), (-3, 0), (4, 0), (0, 2), (0, -2)):
        d = Img(4, 3, 0x202020FF)
        d.blit_part(sheet, 0, 0, 4, 2, x, y)
        print("blit at (%d,%d) fold %d" % (x, y, d.fold()))
    for args in ((2, 0, 2, 2, 0, 0), (2, 0, 10, 10, 1, 1), (1, 1, 2, 5, -1, 0), (3, 1, 1, 1, 3, 2)):
        d = Img(4, 3, 0x202020FF)
        d.blit_part(sheet, *args)
        print("blit_part %s fold %d" % (args, d.fold()))
    big = Img(6, 6)
    big.px = shaded(6, 6, pattern)
    d = Img(4, 3, 0x202020FF)
    d.blit_part(big, 0, 0, 6, 6, -1, -2)
    print("blit 6x6 pattern at (-1,-2) on 4x3 fold", d.fold())
    base = Img(3, 2)
    base.px = [0x000000FF, 0xFFFFFFFF, 0x00000000, 0x80808080, 0x12345678, 0xFF0000FF]
    top = [0xFFFFFF80, 0x00000080, 0xFFFFFF80, 0x00000000, 0xFFFFFFFF, 0x00FF0001]
    print("layer", ["0x%08x" % over(b, t) for b, t in zip(base.px, top)])

    print("glyph A rows", [("%02x" % b) for b in FONT[ord("A")]])
    allp = "".join(chr(c) for c in range(32, 127))
    img = Img(95 * 8, 13)
    img.text(0, 0, allp, 0xFFFFFFFF, 1)
    print("all printable fold", img.fold(), "set", sum(1 for p in img.px if p))
    img = Img(20, 30)
    img.text(-5, -4, "Hi!", half, 3)
    print("Hi! at -5,-4 scale 3 on 20x30 fold", img.fold())
    img = Img(8, 13)
    img.text(0, 0, "?", 0xFFFFFFFF, 1)
    print("? fold", img.fold())
    img = Img(40, 13)
    img.text(2, 0, "ab", 0xFFFFFFFF, 1)
    img.text(6, 0, "ab", half, 1)
    print("ab overlap fold", img.fold())

    marks = [("title", (0, 0, 320, 24)), ("a \"q\" \\ b", (-5, 7, 1, 2)), ("\n\x1f\x00", (3, -4, 0, 0)),
             ("title", (10, 20, 30, 40))]
    print("json", repr(layout_json(marks, 3, 2, 123)))
    print("json empty", repr(layout_json([], 1, 1, M64)))


if __name__ == "__main__":
    main()
