#!/usr/bin/python3
"""Vectors for devtext (payee names), from Python's unicodedata and the
rules of device/PROTOCOL.md 5.3.2 written out again here, independently of
devtext.c. One line per case:

    <input hex> <expected NFC output hex, or "-">

"-" means refused (devtext_payee_normalize() must not return DEVTEXT_OK).
Every code point alone (with "a" around it, so that the spacing rule does
not decide), then random strings over an alphabet of bases, marks in
every order, singletons, look-alikes and forbidden characters.
    devtext_vectors.py OUTFILE [COUNT]
"""
import random
import re
import sys
import unicodedata as ud


def allowed(cp):
    return ((0x20 <= cp <= 0x7e) or (0xa1 <= cp <= 0xff and cp != 0xad) or
            (0x100 <= cp <= 0x17e and cp != 0x149) or
            (0x218 <= cp <= 0x21b))


# What a character reads as (5.3.2): ASCII letters in upper case, the
# set's other letters and digits as the ASCII letter or digit of their
# compatibility decomposition, or of this list of letters that have none.
LOOKALIKE = dict(zip('\u0131\u0141\u0142\u0110\u0111\u00d0\u00f0\u00d8'
                     '\u00f8\u0126\u0127\u0166\u0167\u0138\u014a\u014b',
                     'ILLDDDDOOHHTTKNN'))
LABELS = ('AMOUNT', 'IBAN', 'PAY', 'PAYEE', 'PIN')


def reads_as(c):
    if c.isascii():
        return c.upper()
    if c in LOOKALIKE:
        return LOOKALIKE[c]
    k = ud.normalize('NFKD', c)[:1]
    return k.upper() if k.isascii() and k.isalnum() else c


def display_ok(n):
    f = ''.join(reads_as(c) for c in n)
    word = '[0-9A-Z\u00c0-\U0010ffff]'
    words = re.findall(word + '+', f.replace('\u00d7', ' ').replace(
        '\u00f7', ' '))
    if any(w in LABELS for w in words):
        return False
    if sum(c.isascii() and c.isdigit() for c in f) > 4:
        return False
    if re.search('[0-9][.,][0-9]', f):
        return False
    g = f.replace('\u00d7', ' ').replace('\u00f7', ' ')
    return not re.search('(?<!' + word + ')[A-Z]{2}[0-9]{2}', g)


def expect(s):
    n = ud.normalize('NFC', s)
    b = n.encode()
    if not 1 <= len(b) <= 70 or not all(allowed(ord(c)) for c in n):
        return None
    if n[0] == ' ' or n[-1] == ' ' or '  ' in n:
        return None
    if not display_ok(n):
        return None
    return b


ALPHABET = (
    list('aAeEiIoOuUnNcCsStTzZgGkKyY ') +
    [chr(c) for c in range(0x300, 0x370)] +          # combining marks
    ['\u0340', '\u0341', '\u0343', '\u0344', '\u037e', '\u0387',
     '\u1fef', '\u1ffd', '\u212a', '\u212b', '\u2126', '\u00c5', '\u00e9',
     '\u0131', '\u017f', '\u0149', '\u00ad', '\u00a0', '\u200b', '\u200d',
     '\u202e', '\u2066', '\ufeff', '\ufffe', '\ufdd0', '\U0010ffff',
     '\u0430', '\u03b1', '\u1e9e', '\u00df', '\u0218', '\u0219', '\u01fa',
     '\u1e08', '\u0106', '\u0107', '\u00c7', '\u0327', '\u0328', '\u0326',
     '\u0308', '\u0301', '\u030a', '\u0323', '\u031b', '\u0345'] +
    # the display rules: labels, digits, IBAN and amount look-alikes
    list('0123456789.,-') + ['\u00b2', '\u00b9', '\u00bd', '\u00aa',
                             '\u0131', '\u00cd', '\u0141', '\u00d7',
                             'IBAN', 'iban', 'Pay', 'PAYEE', 'pin',
                             'Amount', 'DE', 'gb', 'Ibanez', 'Pinto'])


def main():
    out = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
    rnd = random.Random(20240920)
    lines = []
    for cp in range(0x110000):
        if 0xd800 <= cp <= 0xdfff:
            continue
        s = 'a' + chr(cp) + 'a'
        e = expect(s)
        lines.append('%s %s' % (s.encode().hex(), e.hex() if e else '-'))
    for _ in range(count):
        k = rnd.randint(1, 12)
        s = ''.join(rnd.choice(ALPHABET) for _ in range(k))
        e = expect(s)
        lines.append('%s %s' % (s.encode().hex(), e.hex() if e else '-'))
    with open(out, 'w') as f:
        f.write('\n'.join(lines) + '\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())
