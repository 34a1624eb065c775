#!/usr/bin/env python3
"""Compare Drover's `scontrol show hostnames|hostlist|hostlistsorted` with
real Slurm's on random host lists. A developer's tool, not run in CI: it needs
Slurm's own scontrol (Debian package slurm-client); no controller is needed.

Usage: compare_with_slurm.py DROVER_SCONTROL [COUNT] [SEED]

Both are run once per command; stdout, the exit status and whether anything
was written to stderr must agree (the wording of errors may differ). Where
Slurm's `hostlistsorted` output stands for a different number of hosts than
its input (a Slurm 22.05 bug with duplicates), and Drover's has the right
count, the case is counted apart, not as a difference. Prints the first
differences and a summary; exits 1 when any differ.
"""
import os
import random
import subprocess
import sys
import tempfile

TEXTS = ["gpu", "node", "cn", "r", "rack", "x", "compute-", "a.b", "/dev/nvidia", "n", "gpu-h100-",
         "ib", "_", "s-", "login", "c", "A", "z", "-n", "r1n", "a0", "b-1-"]


def number(rng, value, width):
    return str(value).rjust(width, "0")


def element(rng):
    width = rng.choice([0, 0, 2, 3])
    lo = rng.randint(0, 110)
    if rng.random() < 0.35:
        return number(rng, lo, width)
    return number(rng, lo, width) + "-" + number(rng, lo + rng.randint(1, 12), width)


def word(rng, previous):
    kind = rng.random()
    if previous and kind < 0.1:
        return rng.choice(previous)
    if kind < 0.4:
        name = rng.choice(TEXTS)
        if rng.random() < 0.8:
            name += number(rng, rng.randint(0, 120), rng.choice([0, 0, 2, 3]))
        return name
    out = rng.choice(TEXTS)
    for g in range(rng.choice([1, 1, 1, 2, 3])):
        if g:
            out += rng.choice(TEXTS)
        out += "[" + ",".join(element(rng) for _ in range(rng.randint(1, 3))) + "]"
    return out  # Slurm rejects text after the last bracket


def expressions(count, seed):
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        words = []
        for _ in range(rng.randint(1, 5)):
            words.append(word(rng, words))
        out.append(",".join(words))
    return out


def around(text, other, width=120):
    """The part of `text` around its first difference from `other`."""
    if len(text) <= 2 * width:
        return text
    at = next((i for i, (a, b) in enumerate(zip(text, other)) if a != b), min(len(text), len(other)))
    start = max(0, at - width)
    return "...%s...(%d chars)" % (text[start:at + width], len(text))


def name_count(output, env):
    """How many names a compressed list stands for (expanded by real scontrol)."""
    listed = run(["scontrol", "--", "show", "hostnames", output.strip()], env)[0]
    return len(listed.split())


def run(argv, env):
    proc = subprocess.run(argv, env=env, capture_output=True, text=True)
    return proc.stdout, proc.returncode, bool(proc.stderr.strip())


def main():
    if len(sys.argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    binary = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    commands = []
    for expr in expressions(count, seed):
        for entity in ("hostnames", "hostlist", "hostlistsorted"):
            commands.append("show %s %s" % (entity, expr))
    env = dict(os.environ)
    differences = slurm_lost = 0  # slurm_lost: Slurm's sorted list had the wrong number of hosts
    with tempfile.TemporaryDirectory() as tmp:
        if "SLURM_CONF" not in env:
            env["SLURM_CONF"] = os.path.join(tmp, "slurm.conf")
            with open(env["SLURM_CONF"], "w") as f:
                f.write("ClusterName=compare\nSlurmctldHost=localhost\n")
        for command in commands:
            argv = command.split(" ")
            expected = run(["scontrol"] + argv, env)
            got = run([binary] + argv, env)
            if got == expected:
                continue
            if argv[1] == "hostlistsorted" and expected[1] == 0 and got[1] == 0:
                total = name_count(argv[2], env)
                if name_count(expected[0], env) != total == name_count(got[0], env):
                    # Slurm 22.05's sort loses or repeats hosts when a list holds duplicates
                    # ("a[99-100],a[99-100],a[009-012]" -> "a[99,99-100,100]"); Drover keeps them.
                    slurm_lost += 1
                    continue
            differences += 1
            if differences <= 20:
                print("DIFF %s\n  slurm:  %s\n  drover: %s" % (around(command, command),
                                                               around(repr(expected), repr(got)),
                                                               around(repr(got), repr(expected))))
    print("seed %d: %d commands, %d differences; %d more where Slurm's sorted list has the wrong host count"
          % (seed, len(commands), differences, slurm_lost))
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
