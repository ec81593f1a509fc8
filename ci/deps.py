#!/usr/bin/env python3
"""The workspace's dependency graph, from its manifests and `use` lines, and a check that it has
no loop.

Two graphs:
- crates: each workspace member's [dependencies] on other members (dev-dependencies are left out:
  a test may use anything);
- modules: inside each crate, top-level module A -> B when a non-test line of A names `crate::B`
  (or `super::B` from a file directly under src/). Lines inside `#[cfg(test)]` modules and files
  named tests.rs or *_tests.rs are left out, as are re-exports of a module by the crate root.

Usage: python3 ci/deps.py [--mermaid] [--check]
  --mermaid  prints the crate graph as a Mermaid flowchart (docs/architecture.md holds it);
  --check    exits 1, naming the loop, if either graph has one, or if the figure of
             docs/architecture.md is not the crate graph (CI runs it).
Without flags: prints both graphs as edge lists.
"""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Module loops known and not yet removed, by crate, with the reason; --check prints them and does
# not fail on them (any other loop fails it). kernels: the Backend trait lives in backend/, whose
# AnyBackend enum holds the CPU and CUDA implementations (iterative, sparse_inverse, gpu), which
# in turn implement the trait: a trait module of its own would cut it.
KNOWN_LOOPS = {"kernels": "the Backend trait and its implementations (backend <-> gpu, iterative, sparse_inverse)"}


def members():
    """Workspace members (folder names) and the root package, from the root manifest."""
    text = open(os.path.join(ROOT, "Cargo.toml")).read()
    m = re.search(r"members\s*=\s*\[([^\]]*)\]", text)
    names = re.findall(r'"([^"]+)"', m.group(1)) if m else []
    return {name: os.path.join(ROOT, name) for name in names} | {"signorini": ROOT}


def crate_deps(path, known):
    """Names of workspace crates in the [dependencies] table of the manifest in `path`."""
    deps, section = set(), None
    for line in open(os.path.join(path, "Cargo.toml")):
        s = line.strip()
        if s.startswith("["):
            section = s.strip("[]")
            continue
        if section == "dependencies":
            name = re.split(r"[\s.=]", s, maxsplit=1)[0]
            if name in known:
                deps.add(name)
    return deps


def strip_tests(text):
    """The text without `#[cfg(test)] mod name { ... }` blocks (brace matching; braces inside
    strings and comments in test code are rare enough here and only shorten what is dropped)."""
    out, i = [], 0
    pat = re.compile(r"#\[cfg\(test\)\]\s*(pub\s+)?mod\s+\w+\s*\{")
    while True:
        m = pat.search(text, i)
        if not m:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i : m.start()])
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        i = j


def module_graph(src):
    """Top-level module edges of the crate whose sources are in `src`."""
    mods = set()
    for name in os.listdir(src):
        p = os.path.join(src, name)
        if name.endswith(".rs") and name not in ("lib.rs", "main.rs"):
            mods.add(name[:-3])
        elif os.path.isdir(p):
            mods.add(name)
    edges = set()
    for dirpath, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs") or f == "tests.rs" or f.endswith("_tests.rs"):
                continue
            rel = os.path.relpath(os.path.join(dirpath, f), src)
            top = rel.split(os.sep)[0]
            top = top[:-3] if top.endswith(".rs") else top
            if top in ("lib", "main"):
                continue
            text = strip_tests(open(os.path.join(dirpath, f)).read())
            text = re.sub(r"//[^\n]*", "", text)
            names = set(re.findall(r"\bcrate::(\w+)", text))
            for g in re.findall(r"\buse crate::\{([^}]*)\}", text):
                names |= {x.strip().split("::")[0] for x in g.split(",")}
            if os.sep not in rel:
                names |= set(re.findall(r"\bsuper::(\w+)", text))
            for n in names:
                if n in mods and n != top:
                    edges.add((top, n))
    return mods, edges


def find_cycle(nodes, edges):
    """A loop of the graph as a list of nodes, or None."""
    adj = {n: sorted(b for a, b in edges if a == n) for n in nodes}
    state, stack = {}, []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in adj.get(n, []):
            if state.get(m) == 1:
                return stack[stack.index(m) :] + [m]
            if m not in state:
                c = visit(m)
                if c:
                    return c
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(nodes):
        if n not in state:
            c = visit(n)
            if c:
                return c
    return None


def main():
    args = set(sys.argv[1:])
    crates = members()
    cgraph = {name: crate_deps(path, crates) for name, path in crates.items()}
    cedges = {(a, b) for a, ds in cgraph.items() for b in ds}
    if "--mermaid" in args:
        print("flowchart BT")
        for a, b in sorted(cedges):
            print(f"  {a} --> {b}")
        return 0
    loops, known = [], []
    c = find_cycle(set(crates), cedges)
    if c:
        loops.append("crates: " + " -> ".join(c))
    report = ["crates:"] + [f"  {a} -> {b}" for a, b in sorted(cedges)]
    for name, path in sorted(crates.items()):
        src = os.path.join(path, "src")
        if not os.path.isdir(src):
            continue
        mods, edges = module_graph(src)
        c = find_cycle(mods, edges)
        if c and name in KNOWN_LOOPS:
            known.append(f"modules of {name}: " + " -> ".join(c) + f" (known: {KNOWN_LOOPS[name]})")
        elif c:
            loops.append(f"modules of {name}: " + " -> ".join(c))
        report.append(f"modules of {name} ({len(mods)} modules, {len(edges)} edges):")
        report += [f"  {a} -> {b}" for a, b in sorted(edges)]
    if known:
        print("known module loops, not gated:\n  " + "\n  ".join(known), file=sys.stderr)
    doc = os.path.join(ROOT, "docs", "architecture.md")
    figure = "flowchart BT\n" + "".join(f"  {a} --> {b}\n" for a, b in sorted(cedges))
    if os.path.exists(doc) and figure not in open(doc).read():
        loops.append("docs/architecture.md: its figure is not the graph of the manifests (python3 ci/deps.py --mermaid)")
    if "--check" in args:
        if loops:
            print("error: dependency loop\n  " + "\n  ".join(loops), file=sys.stderr)
            return 1
        print(f"no dependency loop: {len(crates)} crates, {len(cedges)} crate edges, modules checked per crate")
        return 0
    print("\n".join(report))
    if loops:
        print("loops:\n  " + "\n  ".join(loops))
    return 0


if __name__ == "__main__":
    sys.exit(main())
