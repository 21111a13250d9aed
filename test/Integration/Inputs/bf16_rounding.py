# Values for f64 -> bf16 truncation, and the check of the results: each must
# be the f64 value rounded to the nearest bf16 (ties to even), computed here
# exactly with fractions. Among them, ties at bf16 precision nudged below
# f32 precision, which rounding through f32 to nearest gets wrong.
# Usage: bf16_rounding.py write X.npy | bf16_rounding.py check RESULT.npy
import struct, sys, random
from fractions import Fraction
def f64bits(x): return struct.unpack('<Q', struct.pack('<d', x))[0]
def bits2f64(b): return struct.unpack('<d', struct.pack('<Q', b))[0]
def bf16_of(x):
    # correctly rounded (nearest even) f64 -> bf16 bits
    import math
    if math.isnan(x): return None
    if math.isinf(x): return 0x7f80 if x > 0 else 0xff80
    sign = 0x8000 if math.copysign(1, x) < 0 else 0
    a = Fraction(abs(x))
    if a == 0: return sign
    # bf16: 8 exponent bits (bias 127), 7 mantissa bits; enumerate candidates
    best=None
    e = math.frexp(abs(x))[1] - 1  # a in [2^e, 2^(e+1))
    e = max(e, -126)
    ulp = Fraction(2) ** (e - 7)
    q = a / ulp
    n = int(q); r = q - n
    if r > Fraction(1,2) or (r == Fraction(1,2) and n % 2 == 1): n += 1
    v = n * ulp
    if v >= Fraction(2)**128: return sign | 0x7f80
    # encode v as bf16
    f = float(v)
    b = struct.unpack('<I', struct.pack('<f', f))[0] >> 16
    assert struct.unpack('<I', struct.pack('<f', f))[0] & 0xffff == 0
    return sign | b
vals = [0.0, -0.0, 1.0, -1.5, 3.0e38, 3.395e38, 3.4e38, 1e300, -1e300, 1e-40, 1e-45, 1e-300, float('inf'), float('-inf'), float('nan')]
random.seed(1)
# ties at bf16 precision nudged below f32 precision: double rounding breaks them
while len(vals) < 64:
    m = random.randint(1 << 7, (1 << 8) - 1)
    e = random.randint(-100, 100)
    mid = (Fraction(2*m + 1, 2)) * Fraction(2) ** (e - 7)
    tiny = Fraction(2) ** (e - 7 - 30) * random.choice([1, -1])
    vals.append(float(mid + tiny) * random.choice([1, -1]))
vals = vals[:64]
if sys.argv[1] == 'write':
    header = "{'descr': '<f8', 'fortran_order': False, 'shape': (64,), }"
    header += ' ' * (118 - len(header)) + '\n'
    with open(sys.argv[2], 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(header)) + header.encode())
        f.write(struct.pack('<64d', *vals))
else:
    data = open(sys.argv[2], 'rb').read()
    hl = struct.unpack('<H', data[8:10])[0]
    got = struct.unpack('<64H', data[10 + hl:])
    bad = 0
    for x, g in zip(vals, got):
        want = bf16_of(x)
        if want is None:
            ok = (g & 0x7f80) == 0x7f80 and (g & 0x7f) != 0
        else:
            ok = g == want
        if not ok:
            bad += 1
            print('x=%r got %04x want %s' % (x, g, want if want is None else '%04x' % want))
    print('%d of 64 correctly rounded' % (64 - bad))
