"""Ed25519 signature verification (RFC 8032, section 5.1.7), in pure Python.

Written from the RFC's reference arithmetic (its section 6): points in extended twisted
Edwards coordinates over GF(2^255 - 19). Verification only: it holds no secret, so the
variable-time arithmetic of Python's integers leaks nothing. The check is the cofactorless
[S]B = R + [k]A that Go's crypto/ed25519 and OpenSSL make, so the three accept the same
signatures; S must be below the group order L (no malleable signatures).
"""

import hashlib
from typing import List, Optional, Tuple

Point = Tuple[int, int, int, int]  # (X, Y, Z, T) with x = X/Z, y = Y/Z, x*y = T/Z

_P = 2**255 - 19
_L = 2**252 + 27742317777372353535851937790883648493
_D = -121665 * pow(121666, _P - 2, _P) % _P
_SQRT_M1 = pow(2, (_P - 1) // 4, _P)
_IDENTITY: Point = (0, 1, 1, 0)


def _inverse(x: int) -> int:
    return pow(x, _P - 2, _P)


def _add(p: Point, q: Point) -> Point:
    a = (p[1] - p[0]) * (q[1] - q[0]) % _P
    b = (p[1] + p[0]) * (q[1] + q[0]) % _P
    c = 2 * p[3] * q[3] * _D % _P
    d = 2 * p[2] * q[2] % _P
    e, f, g, h = b - a, d - c, d + c, b + a
    return (e * f % _P, g * h % _P, f * g % _P, e * h % _P)


def _double(p: Point) -> Point:
    """2P, by RFC 8032's doubling formulas (5.1.4): cheaper than _add(p, p)."""
    a = p[0] * p[0] % _P
    b = p[1] * p[1] % _P
    c = 2 * p[2] * p[2] % _P
    h = a + b
    e = h - (p[0] + p[1]) ** 2 % _P
    g = a - b
    f = c + g
    return (e * f % _P, g * h % _P, f * g % _P, e * h % _P)


def _multiply(s: int, p: Point) -> Point:
    """[s]P, double and add, from the top bit down."""
    q = _IDENTITY
    for i in reversed(range(s.bit_length())):
        q = _double(q)
        if (s >> i) & 1:
            q = _add(q, p)
    return q


_base_powers: List[Point] = []  # 2^i B for i < 253, made on first use


def _multiply_base(s: int) -> Point:
    """[s]B from the table of 2^i B: an addition per set bit, no doubling."""
    if not _base_powers:
        p = _G
        for _ in range(253):
            _base_powers.append(p)
            p = _double(p)
    q = _IDENTITY
    for i in range(s.bit_length()):
        if (s >> i) & 1:
            q = _add(q, _base_powers[i])
    return q


def _equal(p: Point, q: Point) -> bool:
    return (p[0] * q[2] - q[0] * p[2]) % _P == 0 and (p[1] * q[2] - q[1] * p[2]) % _P == 0


def _recover_x(y: int, sign: int) -> Optional[int]:
    """x from y and x's low bit (RFC 8032, 5.1.3): the square root of u/v, u = y² - 1,
    v = d y² + 1, as u v³ (u v⁷)^((p-5)/8), one exponentiation."""
    if y >= _P:
        return None
    u = (y * y - 1) % _P
    v = (_D * y * y + 1) % _P
    v3 = v * v * v % _P
    x = u * v3 * pow(u * v3 * v3 * v % _P, (_P - 5) // 8, _P) % _P
    vx2 = v * x * x % _P
    if vx2 == (-u) % _P:
        x = x * _SQRT_M1 % _P
    elif vx2 != u:
        return None
    if x == 0 and sign:
        return None
    if (x & 1) != sign:
        x = _P - x
    return x


def _decompress(b: bytes) -> Optional[Point]:
    """A 32-byte point encoding, or None when it is not one (RFC 8032, 5.1.3)."""
    y = int.from_bytes(b, "little")
    sign = y >> 255
    y &= (1 << 255) - 1
    x = _recover_x(y, sign)
    if x is None:
        return None
    return (x, y, 1, x * y % _P)


_G_Y = 4 * _inverse(5) % _P
_G: Point = (_recover_x(_G_Y, 0) or 0, _G_Y, 1, (_recover_x(_G_Y, 0) or 0) * _G_Y % _P)


def verify(public_key: bytes, message: bytes, signature: bytes) -> bool:
    """Whether signature is public_key's Ed25519 signature of message."""
    if len(public_key) != 32 or len(signature) != 64:
        return False
    a = _decompress(public_key)
    r = _decompress(signature[:32])
    if a is None or r is None:
        return False
    s = int.from_bytes(signature[32:], "little")
    if s >= _L:
        return False
    k = int.from_bytes(hashlib.sha512(signature[:32] + public_key + message).digest(), "little") % _L
    return _equal(_multiply_base(s), _add(r, _multiply(k, a)))
