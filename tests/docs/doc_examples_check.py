#!/usr/bin/python3
"""Runs the examples of Markdown files and compares what they print.

An example is a fenced block whose info string starts with `console`:

    ```console
    $ april simulate --steps 3
    policy ...
    ...
    sync  ...
    ```

Each `$ ` line is a command (a line ending in a backslash goes on to the next
one); the lines after it, up to the next command, are what its standard
output must hold, line for line, trailing blanks aside, every number to the
digits shown. A line `...` stands for any number of lines, and `...` within a
line for any text (a date). A command with no lines after it must only
succeed. Rust's doc-tests and LLVM's lit are the
models.

Commands run with bash in a scratch folder holding links to the repository's
top-level entries (so `scenario/examples/...` and `traces/data/...` resolve
and nothing is written into the tree) and `build` linked to BUILD_DIR, with
BUILD_DIR/cli first on PATH (so `april` and `build/cli/april` are the built
programs). Blocks of one file share the folder, in order: a database one
example writes, the next can read.

A block whose info string is `console live` needs the live backend: it is run
where BUILD_DIR/cli/april-live exists, and reported as skipped otherwise.

usage: doc_examples_check.py BUILD_DIR REPO FILE.md... [--update]
  --update rewrites each command's expected lines (unless they hold `...`),
  empty ones included, with what the command prints, atomically; it fails if
  any command fails.
"""
import os
import re
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^```console(?:\s+(\w+))?\s*$")


class Example:
    def __init__(self, path, kind, start_line):
        self.path, self.kind, self.start_line = path, kind, start_line
        # [command text, its first line's number, [(expected line, line number)], its last line's number]
        self.commands = []


def read_examples(path):
    examples, current = [], None
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if current is None:
            m = FENCE.match(line)
            if m:
                current = Example(path, m.group(1) or "", i + 1)
            i += 1
            continue
        if line.startswith("```"):
            examples.append(current)
            current = None
            i += 1
            continue
        if line.startswith("$ "):
            number, text = i + 1, line[2:]
            while text.endswith("\\") and i + 1 < len(lines):
                i += 1
                text = text[:-1] + " " + lines[i].strip()
            current.commands.append([text, number, [], i + 1])
        elif current.commands:
            current.commands[-1][2].append((line, i + 1))
        elif line.strip():
            raise SystemExit(f"{path}:{i + 1}: a console block starts with a `$ ` command")
        i += 1
    if current is not None:
        raise SystemExit(f"{path}:{current.start_line}: console block not closed")
    return examples, lines


def line_matches(shown, printed):
    """A shown line with `...` inside it matches any text there (a date, a path)."""
    if "..." not in shown:
        return shown == printed
    pattern = ".*".join(re.escape(part) for part in shown.split("..."))
    return re.fullmatch(pattern, printed) is not None


def matches(expected, actual):
    """Line-for-line match with `...` as any number of lines; returns the first mismatch or None."""
    exp = [e.rstrip() for e, _ in expected]
    act = [a.rstrip() for a in actual]
    while act and not act[-1]:
        act.pop()
    while exp and not exp[-1]:
        exp.pop()

    memo = {}

    def go(i, j):
        key = (i, j)
        if key in memo:
            return memo[key]
        if i == len(exp):
            result = None if j == len(act) else (i, j)
        elif exp[i] == "...":
            result = (i, j)
            for k in range(j, len(act) + 1):
                r = go(i + 1, k)
                if r is None:
                    result = None
                    break
                result = max(result, r)
        elif j < len(act) and line_matches(exp[i], act[j]):
            result = go(i + 1, j + 1)
        else:
            result = (i, j)
        memo[key] = result
        return result

    sys.setrecursionlimit(100000)
    return go(0, 0), exp, act


def scratch_folder(repo, build):
    folder = tempfile.mkdtemp(prefix="april-doc-examples-")
    for name in os.listdir(repo):
        if name in (".git", "build") or name.startswith("build-"):
            continue
        os.symlink(os.path.join(repo, name), os.path.join(folder, name))
    os.symlink(build, os.path.join(folder, "build"))
    return folder


def main():
    args = [a for a in sys.argv[1:] if a != "--update"]
    update = "--update" in sys.argv[1:]
    if len(args) < 3:
        raise SystemExit(__doc__)
    build, repo, files = os.path.abspath(args[0]), os.path.abspath(args[1]), args[2:]
    env = dict(os.environ, PATH=os.path.join(build, "cli") + os.pathsep + os.environ.get("PATH", ""), COLUMNS="200")
    has_live = os.path.exists(os.path.join(build, "cli", "april-live"))
    failures, ran, skipped = 0, 0, 0
    for path in files:
        examples, lines = read_examples(path)
        folder = scratch_folder(repo, build)
        rewrites = {}  # line number of a block's first expected line -> (count, new lines)
        try:
            for ex in examples:
                if ex.kind == "live" and not has_live:
                    skipped += 1
                    print(f"{path}:{ex.start_line}: skipped (needs april-live, built where libtorch is found)")
                    continue
                for text, number, expected, last_line in ex.commands:
                    ran += 1
                    p = subprocess.run(["bash", "-c", "set -o pipefail; " + text], cwd=folder, env=env, capture_output=True,
                                       text=True, timeout=600)
                    actual = p.stdout.split("\n")
                    if p.returncode != 0:
                        failures += 1
                        print(f"{path}:{number}: `{text}` exited {p.returncode}:\n{p.stderr[-2000:]}")
                        continue
                    # Shown lines that skip ("...") are left to the hand; so is a
                    # command that shows nothing (it only has to succeed).
                    if update and expected and all("..." not in e for e, _ in expected):
                        # The printed lines, then as many blank lines as ended the old ones.
                        trailing = 0
                        while trailing < len(expected) and not expected[-1 - trailing][0].strip():
                            trailing += 1
                        while actual and not actual[-1].rstrip():
                            actual.pop()
                        # A command with no lines after it: its output goes right after it.
                        at = expected[0][1] if expected else -(last_line + 1)
                        rewrites[at] = (len(expected), [a.rstrip() for a in actual] + [""] * trailing)
                        continue
                    if not expected:
                        continue  # only has to succeed
                    bad, exp, act = matches(expected, actual)
                    if bad is not None:
                        failures += 1
                        i, j = bad
                        where = expected[i][1] if i < len(expected) else (expected[-1][1] if expected else number)
                        want = exp[i] if i < len(exp) else "(no more lines)"
                        if i < len(exp) and "..." in exp[:i] and j >= len(act):
                            # Past a skip: the printed line as far from the end as the shown one.
                            j = len(act) - (len(exp) - i)
                        got = act[j] if 0 <= j < len(act) else "(no more lines)"
                        print(f"{path}:{where}: `{text}` prints otherwise than the example shows\n  shown:   {want}\n  printed: {got}")
        finally:
            subprocess.run(["rm", "-rf", folder])
        if update and rewrites:
            out, n = [], 0
            while n < len(lines):
                number = n + 1
                if number in rewrites:  # replace the expected lines starting here
                    count, new = rewrites[number]
                    out.extend(new)
                    n += count
                    continue
                out.append(lines[n])
                n += 1
                if -(number + 1) in rewrites:  # insert after a command that showed nothing
                    out.extend(rewrites[-(number + 1)][1])
            tmp = path + ".april-tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                f.write("\n".join(out))
            os.replace(tmp, path)
            print(f"{path}: {len(rewrites)} example outputs rewritten")
    print(f"{ran} commands run, {skipped} live blocks skipped, {failures} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
