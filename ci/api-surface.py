#!/usr/bin/env python3
"""The solver API crate's size and public items: lines of code (without tests) per module, and
every `pub` item with whether a doc comment precedes it (the crate denies missing docs, so the
compiler already refuses an undocumented one; this lists them for docs/architecture.md).

Usage: python3 ci/api-surface.py [--items]
"""

import os
import re
import sys

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "api", "src")
ITEM = re.compile(r"^\s*pub (?:const |unsafe )?(fn|struct|enum|trait|type|const|mod|use)\s+([A-Za-z_][\w]*)")


def main():
    show = "--items" in sys.argv
    total, items, undocumented = 0, [], []
    for name in sorted(os.listdir(SRC)):
        if not name.endswith(".rs"):
            continue
        lines = open(os.path.join(SRC, name)).read().split("\n")
        end = next((i for i, l in enumerate(lines) if l.startswith("#[cfg(test)]")), len(lines))
        code = [l for l in lines[:end] if l.strip() and not l.strip().startswith("//")]
        total += len(code)
        print(f"{name:16} {len(code):5} lines")
        for i, l in enumerate(lines[:end]):
            m = ITEM.match(l)
            if not m or m.group(1) == "use":
                continue
            j = i - 1
            while j >= 0 and lines[j].strip().startswith("#["):
                j -= 1
            documented = j >= 0 and lines[j].strip().startswith("///")
            if m.group(1) == "mod":
                # a module is documented by the `//!` lines that open its file
                f = os.path.join(SRC, m.group(2) + ".rs")
                documented = documented or (os.path.exists(f) and open(f).read().startswith("//!"))
            items.append((name, m.group(1), m.group(2), documented))
            if not documented:
                undocumented.append(f"{name}: {m.group(1)} {m.group(2)}")
    print(f"{'total':16} {total:5} lines (code, without comments, blank lines and tests)")
    print(f"{len(items)} public items, {len(items) - len(undocumented)} with a doc comment")
    if show:
        for f, kind, n, d in items:
            print(f"  {f}: {kind} {n}{'' if d else '  (undocumented)'}")
    if undocumented:
        print("undocumented:\n  " + "\n  ".join(undocumented))
    return 0


if __name__ == "__main__":
    sys.exit(main())
