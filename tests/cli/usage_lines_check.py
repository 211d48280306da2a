#!/usr/bin/python3
"""Usage lines say what the parser accepts.

For each command, the options its `--help` usage line names must be options
the parser knows; an option the usage line shows outside brackets must be one
the parser requires, and one inside brackets one it does not. What the parser
requires is found by running the command with nothing and adding, one at a
time, each option it reports "required but missing" (in a scratch folder,
with a dummy value, so nothing real runs).

usage: usage_lines_check.py APRIL
"""
import os
import re
import subprocess
import sys
import tempfile

APRIL = os.path.abspath(sys.argv[1])
COMMANDS = [["simulate"], ["whatif"], ["sweep"], ["tune"], ["reproduce"], ["keys"], ["hardware", "show"],
            ["model", "show"], ["calibrate"], ["trace", "import"], ["trace", "stats"], ["trace", "fit"],
            ["trace", "synth"]]


def run(args, cwd):
    p = subprocess.run([APRIL] + args, cwd=cwd, capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout + p.stderr


def usage_block(help_text):
    """The usage line and its continuation lines, without alternative forms (mpirun ...)."""
    lines = help_text.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("usage:"))
    block = [lines[start]]
    for l in lines[start + 1:]:
        if "mpirun" in l or "srun" in l:
            continue
        # A continuation is indented and goes on with options, not prose.
        if not l.startswith(" ") or not l.strip().startswith(("[", "--")):
            break
        block.append(l)
    return " ".join(block)


def usage_options(usage):
    """{--name: bracketed?} for every option the usage line names."""
    out, depth, quoted = {}, 0, False
    for i, ch in enumerate(usage):
        if ch == "'":
            quoted = not quoted
        if quoted:
            continue
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif usage.startswith("--", i) and (i == 0 or usage[i - 1] in " [|"):
            name = re.match(r"--[a-z][a-z0-9-]*", usage[i:]).group(0)
            out[name] = out.get(name, True) and depth > 0
    return out


def parser_options(help_text):
    """The options a Boost.Program_options parser lists, or None for a parser written by hand."""
    found = set(re.findall(r"^  (?:-\w \[ )?(--[a-z][a-z0-9-]*)", help_text, re.M))
    return found if "--help" in found else None


def accepted_by_hand_parser(cmd, opt, usage, cwd):
    """A hand-written parser: the option is accepted (any error but 'unknown')."""
    after = usage.split(opt, 1)[1].lstrip().split(" ", 1)[0]
    args = cmd + [opt] + (["1"] if re.match(r"[A-Za-z'<]", after) else [])
    _, text = run(args, cwd)
    return not re.search(r"unknown option|unexpected argument|unrecognised option", text)


def required_options(cmd, cwd):
    args, required = list(cmd), set()
    for _ in range(30):
        _, text = run(args, cwd)
        m = re.search(r"the option '(--[a-z0-9-]+)' is required but missing", text)
        if not m:
            return required
        required.add(m.group(1))
        args += [m.group(1), "1"]
    raise SystemExit(f"{' '.join(cmd)}: more than 30 required options?")


problems = []
with tempfile.TemporaryDirectory() as scratch:
    for cmd in COMMANDS:
        name = " ".join(cmd)
        rc, text = run(cmd + ["--help"], scratch)
        if rc != 0:
            problems.append(f"april {name} --help exits {rc}")
            continue
        usage = usage_block(text)
        named, known, required = usage_options(usage), parser_options(text), required_options(cmd, scratch)
        for opt, bracketed in sorted(named.items()):
            if known is None:
                if not accepted_by_hand_parser(cmd, opt, usage, scratch):
                    problems.append(f"april {name}: the usage line names {opt}, which the parser refuses")
            elif opt not in known:
                problems.append(f"april {name}: the usage line names {opt}, which the parser does not know")
            elif not bracketed and opt not in required:
                problems.append(f"april {name}: the usage line shows {opt} as required; the parser does not require it")
            elif bracketed and opt in required:
                problems.append(f"april {name}: the usage line shows {opt} in brackets; the parser requires it")
        print(f"april {name}: {len(named)} options in the usage line, {len(required)} required: {usage.strip()}")
for p in problems:
    print("PROBLEM:", p)
sys.exit(1 if problems else 0)
