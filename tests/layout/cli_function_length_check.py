#!/usr/bin/env python3
"""No function in cli/ is longer than 80 lines.

A command reads as parse, run, print when each step is a named function; a
long one hides which of them a change touches. Lines are counted from the
line where the signature starts to the line of the closing brace, lambdas
inside a function counting as part of it.

usage: cli_function_length_check.py ROOT   (checks ROOT/cli/*.cpp and *.hpp)
exit: 0 when every function is short enough, 1 when one is not, 2 on misuse.
"""

import pathlib
import re
import sys

LIMIT = 80


def blank_out(text):
    """The text with comments, string and character literals and preprocessor
    lines replaced by spaces, newlines kept, so that braces in them do not count."""
    out = []
    i, n = 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c == "#":
            # A directive runs to an unescaped end of line.
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append(" \n")
                    i += 2
                    continue
                out.append(" ")
                i += 1
            continue
        if c == "/" and text.startswith("//", i):
            while i < n and text[i] != "\n":
                out.append(" ")
                i += 1
            continue
        if c == "/" and text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
            continue
        raw = re.match(r'(?:u8|u|U|L)?R"([^()\\\s]{0,16})\(', text[i:i + 24])
        if raw and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = text.find(")" + raw.group(1) + '"', i + raw.end())
            end = n if end < 0 else end + len(raw.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
            continue
        if c in "\"'":
            # A ' between digits is a digit separator (1'000), not a literal.
            if c == "'" and i > 0 and text[i - 1].isalnum() and i + 1 < n and text[i + 1].isalnum():
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            end = min(j + 1, n)
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
            continue
        out.append(c)
        at_line_start = c == "\n" or (at_line_start and c in " \t")
        i += 1
    return "".join(out)


def matching(code, open_at):
    """The index of the brace that closes the one at open_at."""
    depth = 0
    for k in range(open_at, len(code)):
        if code[k] == "{":
            depth += 1
        elif code[k] == "}":
            depth -= 1
            if depth == 0:
                return k
    return len(code) - 1


def function_name(head):
    """The name before the parameter list of a declaration head, or None when
    the head declares no function (a variable, a type, a namespace)."""
    head = " ".join(head.split())
    lambda_var = re.match(r"^(?:[\w:<>,\s*&]+?\s)?([A-Za-z_]\w*)\s*=\s*\[", head)
    if lambda_var:
        return lambda_var.group(1)
    depth = 0
    for k, c in enumerate(head):
        if c == "<":
            depth += 1
        elif c == ">":
            depth = max(0, depth - 1)
        elif c == "=" and depth == 0:
            return None
        elif c == "(" and depth == 0:
            before = head[:k].rstrip()
            op = re.search(r"((?:[A-Za-z_]\w*::)*operator\s*\S+)$", before)
            if op:
                return op.group(1)
            name = re.search(r"(~?[A-Za-z_]\w*(?:::~?[A-Za-z_]\w*)*)$", before)
            if not name or name.group(1) in ("if", "for", "while", "switch", "return", "decltype", "alignas"):
                return None
            return name.group(1)
    return None


def body_brace(code, start, open_at):
    """For a function head starting at start whose first top-level brace is at
    open_at, the brace that opens the body: a constructor's initializer list
    may hold braces of its own (a_{x})."""
    head = code[start:open_at]
    if not re.search(r"\)\s*(?:noexcept\s*)?:(?!:)", head):
        return open_at
    k = open_at
    while k < len(code):
        prev = code[:k].rstrip()
        if prev and (prev[-1].isalnum() or prev[-1] in "_>"):
            k = matching(code, k) + 1
            nxt = code.find("{", k)
            if nxt < 0:
                return open_at
            k = nxt
            continue
        return k
    return open_at


def long_functions(path):
    """(line, name, lines) for each function in path over LIMIT lines."""
    code = blank_out(path.read_text(encoding="utf-8", errors="replace"))
    found = []

    def line_of(index):
        return code.count("\n", 0, index) + 1

    def scan(begin, end):
        start = begin
        k = begin
        while k < end:
            c = code[k]
            if c in ";}":
                start = k + 1
            elif c == "{":
                head = code[start:k]
                words = head.split()
                close = matching(code, k)
                if re.search(r"\bnamespace\b|\bextern\b", head) and "(" not in head:
                    scan(k + 1, close)
                elif re.search(r"\b(?:class|struct|union)\b", head) and "(" not in head:
                    scan(k + 1, close)
                elif words and (name := function_name(head)):
                    body = body_brace(code, start, k)
                    close = matching(code, body)
                    first = start + (len(head) - len(head.lstrip()))
                    lines = line_of(close) - line_of(first) + 1
                    if lines > LIMIT:
                        found.append((line_of(first), name, lines))
                k = close
                start = k + 1
            k += 1

    scan(0, len(code))
    return found


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        return 2
    root = pathlib.Path(argv[1])
    cli = root / "cli"
    if not cli.is_dir():
        print(f"{cli}: no such folder", file=sys.stderr)
        return 2
    bad = 0
    for path in sorted([*cli.glob("*.cpp"), *cli.glob("*.hpp")]):
        for line, name, lines in long_functions(path):
            print(f"{path.relative_to(root)}:{line}: {name} is {lines} lines (at most {LIMIT})")
            bad += 1
    if bad:
        print(f"{bad} function{'' if bad == 1 else 's'} in cli/ over {LIMIT} lines: split them into named steps")
        return 1
    print(f"every function in cli/ is at most {LIMIT} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
