#!/usr/bin/env python3
"""ClusterShell's answers for the host-list differential test.

Usage: clustershell_oracle.py INPUT OUTPUT

INPUT holds one host-list expression per line. For each, OUTPUT gets one line:
  OK<TAB><folded form, as `nodeset -f` prints it><TAB><names, comma-separated>
or
  ERR<TAB><ClusterShell's parse error>
Exit status 3 when ClusterShell cannot be imported (the test then skips).
"""
import sys

try:
    from ClusterShell.NodeSet import NodeSet, NodeSetParseError, RESOLVER_NOGROUP
except ImportError as exc:  # pragma: no cover - depends on the machine
    sys.stderr.write("ClusterShell is not importable: %s\n" % exc)
    sys.exit(3)


def answer(expr):
    try:
        ns = NodeSet(expr, resolver=RESOLVER_NOGROUP)
        return "OK\t%s\t%s" % (ns, ",".join(ns))
    except (NodeSetParseError, ValueError) as exc:
        return "ERR\t%s" % str(exc).replace("\t", " ").replace("\n", " ")


def main():
    if len(sys.argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    with open(sys.argv[1]) as src, open(sys.argv[2], "w") as dst:
        for line in src:
            dst.write(answer(line.rstrip("\n")) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
