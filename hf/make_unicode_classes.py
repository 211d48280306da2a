#!/usr/bin/python3
"""Writes unicode_classes.cpp: the Unicode tables april's tokenizer needs.

usage: /usr/bin/python3 make_unicode_classes.py > unicode_classes.cpp

Run by hand (the build does not run it); its output is checked in. It reads
Python's unicodedata (Unicode 14.0.0 in Debian bookworm's Python 3.11) and
/usr/share/unicode/DerivedAge.txt (Debian's unicode-data package), and matches
two Unicode versions that Hugging Face's tokenizers (0.23.2, measured against
its own build, the `tokenizers` npm package) uses, not Python's:

- The pre-tokenizer's \\p{L}, \\p{N} and \\s come from Oniguruma, which knows
  Unicode 16.0. unicodedata 14.0 lacks the letters and numbers assigned in
  15.0, 15.1 and 16.0; POST_14_LETTERS and POST_14_NUMBERS below add them
  (from those versions' UnicodeData.txt; checked code point by code point
  against tokenizers 0.23.2's split). \\s is White_Space, unchanged since 6.0.
- The NFC normalizer is the crate unicode-normalization-alignments, whose
  tables are Unicode 9.0: combining marks and compositions added later are
  unknown to it (a mark of 10.0 or later is a starter there, and is not
  reordered). The NFC tables below are therefore Unicode 9.0's: 14.0's data
  for the code points DerivedAge puts at 9.0 or earlier (canonical combining
  classes and decompositions of assigned characters never change).
"""
import sys
import unicodedata

NFC_UNICODE_AGE = (9, 0)
AGE_FILE = "/usr/share/unicode/DerivedAge.txt"

# Letters (general category L*) and numbers (N*) assigned after Unicode 14.0:
# (first, last, version).
POST_14_LETTERS = [
    (0x1C89, 0x1C8A, "16.0"), (0xA7CB, 0xA7CD, "16.0"), (0xA7DA, 0xA7DC, "16.0"), (0x105C0, 0x105F3, "16.0"),
    (0x10D4A, 0x10D65, "16.0"), (0x10D6F, 0x10D85, "16.0"), (0x10EC2, 0x10EC4, "16.0"), (0x1123F, 0x11240, "15.0"),
    (0x11380, 0x11389, "16.0"), (0x1138B, 0x1138B, "16.0"), (0x1138E, 0x1138E, "16.0"), (0x11390, 0x113B5, "16.0"),
    (0x113B7, 0x113B7, "16.0"), (0x113D1, 0x113D1, "16.0"), (0x113D3, 0x113D3, "16.0"), (0x11BC0, 0x11BE0, "16.0"),
    (0x11F02, 0x11F02, "15.0"), (0x11F04, 0x11F10, "15.0"), (0x11F12, 0x11F33, "15.0"), (0x1342F, 0x1342F, "15.0"),
    (0x13441, 0x13446, "15.0"), (0x13460, 0x143FA, "16.0"), (0x16100, 0x1611D, "16.0"), (0x16D40, 0x16D6C, "16.0"),
    (0x18CFF, 0x18CFF, "16.0"), (0x1B132, 0x1B132, "15.0"), (0x1B155, 0x1B155, "15.0"), (0x1DF25, 0x1DF2A, "15.0"),
    (0x1E030, 0x1E06D, "15.0"), (0x1E4D0, 0x1E4EB, "15.0"), (0x1E5D0, 0x1E5ED, "16.0"), (0x1E5F0, 0x1E5F0, "16.0"),
    (0x2B739, 0x2B739, "15.0"), (0x2EBF0, 0x2EE5D, "15.1"), (0x31350, 0x323AF, "15.0"),
]
POST_14_NUMBERS = [
    (0x10D40, 0x10D49, "16.0"), (0x116D0, 0x116E3, "16.0"), (0x11BF0, 0x11BF9, "16.0"), (0x11F50, 0x11F59, "15.0"),
    (0x16130, 0x16139, "16.0"), (0x16D70, 0x16D79, "16.0"), (0x1CCF0, 0x1CCF9, "16.0"), (0x1D2C0, 0x1D2D3, "15.0"),
    (0x1E4F0, 0x1E4F9, "15.0"), (0x1E5F1, 0x1E5FA, "16.0"),
]

MAX_CP = 0x110000
HANGUL_S_BASE, HANGUL_S_COUNT = 0xAC00, 11172


def code_points():
    return (cp for cp in range(MAX_CP) if not 0xD800 <= cp < 0xE000)


def read_ages():
    ages = {}
    with open(AGE_FILE, encoding="utf-8") as f:
        for line in f:
            line = line.split("#")[0].strip()
            if not line:
                continue
            span, version = (x.strip() for x in line.split(";"))
            first, _, last = span.partition("..")
            major, minor = (int(x) for x in version.split("."))
            for cp in range(int(first, 16), int(last or first, 16) + 1):
                ages[cp] = (major, minor)
    return ages


def char_class(cp, extra_letters, extra_numbers):
    cat = unicodedata.category(chr(cp))
    if cat[0] == "L" or cp in extra_letters:
        return "kLetter"
    if cat[0] == "N" or cp in extra_numbers:
        return "kNumber"
    # White_Space: the separators and the C0/C1 controls Unicode names as spaces.
    if cat in ("Zs", "Zl", "Zp") or cp in (0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x85):
        return "kWhitespace"
    return None


def ranges_of(values):
    """[(first, last, value)] over code points whose value is not None, merged."""
    out = []
    for cp, value in values:
        if value is None:
            continue
        if out and out[-1][1] == cp - 1 and out[-1][2] == value:
            out[-1][1] = cp
        else:
            out.append([cp, cp, value])
    return out


def expand(ranges):
    return {cp for first, last, _ in ranges for cp in range(first, last + 1)}


def emit_rows(rows, per_line):
    lines = []
    for i in range(0, len(rows), per_line):
        lines.append("    " + " ".join(rows[i:i + per_line]))
    return "\n".join(lines)


def main():
    ages = read_ages()
    known = lambda cp: ages.get(cp, (99, 0)) <= NFC_UNICODE_AGE  # noqa: E731

    extra_letters, extra_numbers = expand(POST_14_LETTERS), expand(POST_14_NUMBERS)
    for cp in extra_letters | extra_numbers:
        assert unicodedata.category(chr(cp)) == "Cn", hex(cp)  # unassigned in 14.0, or the list is wrong
    classes = ranges_of((cp, char_class(cp, extra_letters, extra_numbers)) for cp in code_points())

    ccc = ranges_of((cp, unicodedata.combining(chr(cp)) or None if known(cp) else None) for cp in code_points())

    decompositions, pool = [], []
    compositions = []
    for cp in code_points():
        if HANGUL_S_BASE <= cp < HANGUL_S_BASE + HANGUL_S_COUNT:
            continue  # Hangul syllables decompose and compose by arithmetic
        mapping = unicodedata.decomposition(chr(cp))
        if not mapping or mapping.startswith("<"):
            continue  # no canonical decomposition (a compatibility one is NFKC's)
        if not known(cp):
            continue  # newer than the normalizer's tables (U+11938, 13.0): it neither decomposes nor composes there
        full = unicodedata.normalize("NFD", chr(cp))
        decompositions.append((cp, len(pool), len(full)))
        pool.extend(ord(c) for c in full)
        parts = [int(x, 16) for x in mapping.split()]
        # A primary composite: a pair mapping that NFC recomposes (not a
        # composition exclusion, not a non-starter decomposition).
        if len(parts) == 2 and unicodedata.normalize("NFC", chr(cp)) == chr(cp):
            compositions.append((parts[0], parts[1], cp))
    compositions.sort()

    # Code points that can make NFC differ from its input (UAX #15's quick
    # check): a nonzero combining class, NFC_QC No (NFC changes the code point
    # alone) or Maybe (the second of a composition pair). Text with none of
    # them is its own NFC.
    seconds = {b for _, b, _ in compositions} | set(range(0x1161, 0x1176)) | set(range(0x11A8, 0x11C3))
    changed = {cp for cp in code_points() if known(cp) and unicodedata.normalize("NFC", chr(cp)) != chr(cp)}  # NFC_QC No
    unsafe = ranges_of((cp, True if known(cp) and (unicodedata.combining(chr(cp)) or cp in seconds or cp in changed) else None)
                       for cp in code_points())
    assert unsafe[0][0] >= 0x300  # the lookup skips the search below U+0300

    out = sys.stdout
    out.write(f"""// Generated by hf/make_unicode_classes.py; do not edit.
// Sources: Python {sys.version.split()[0]} unicodedata (Unicode {unicodedata.unidata_version}) and
// {AGE_FILE}, with the letters and numbers of Unicode 15.0-16.0 listed in the
// generator. Character classes are Unicode 16.0's (as Oniguruma in Hugging
// Face tokenizers 0.23.2); the NFC tables are Unicode {NFC_UNICODE_AGE[0]}.{NFC_UNICODE_AGE[1]}'s (as its NFC
// normalizer). See the generator's docstring for why.
// The generator lays out the tables:
// clang-format off
#include "hf/unicode_classes.hpp"

namespace april::hf::unicode {{
namespace {{

constexpr ClassRange kClassRanges[] = {{
{emit_rows([f"{{0x{a:X}, 0x{b:X}, CharClass::{v}}}," for a, b, v in classes], 3)}
}};

constexpr CombiningRange kCombiningRanges[] = {{
{emit_rows([f"{{0x{a:X}, 0x{b:X}, {v}}}," for a, b, v in ccc], 5)}
}};

constexpr char32_t kDecompositionPool[] = {{
{emit_rows([f"0x{c:X}," for c in pool], 10)}
}};

constexpr Decomposition kDecompositions[] = {{
{emit_rows([f"{{0x{cp:X}, {o}, {n}}}," for cp, o, n in decompositions], 5)}
}};

constexpr Composition kCompositions[] = {{
{emit_rows([f"{{0x{a:X}, 0x{b:X}, 0x{c:X}}}," for a, b, c in compositions], 4)}
}};

constexpr CodePointRange kNfcUnsafeRanges[] = {{
{emit_rows([f"{{0x{a:X}, 0x{b:X}}}," for a, b, _ in unsafe], 5)}
}};

}}  // namespace

std::span<const ClassRange> class_ranges() {{ return kClassRanges; }}
std::span<const CombiningRange> combining_ranges() {{ return kCombiningRanges; }}
std::span<const char32_t> decomposition_pool() {{ return kDecompositionPool; }}
std::span<const Decomposition> decompositions() {{ return kDecompositions; }}
std::span<const Composition> compositions() {{ return kCompositions; }}
std::span<const CodePointRange> nfc_unsafe_ranges() {{ return kNfcUnsafeRanges; }}

}}  // namespace april::hf::unicode
""")


if __name__ == "__main__":
    main()
