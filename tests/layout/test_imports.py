"""The folders of the code and the way their imports point, kept true.

The graph is derived from the `#include "..."` lines of every .c and .h
file under src/ and device/, each resolved as the compiler does (the
including file's folder, then -Isrc, -Idevice, -Isrc/ctl): a file
belongs to its folder under src/ (src/db/db.c: db) or to device. An
import between two folders points the wrong way when the imported folder
sits in a higher layer of LAYERS than the importing one. Two folders of
one layer may use each other only without a circle.

To see the graph and the numbers:
    sh tests/run-suite.sh layout -k imports -rP
"""

import os
import re

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

# Top to bottom; each layer may use only itself and those below.
LAYERS = [
    ["app"],                    # main: Kore's entry points, timers
    ["ctl"],                    # psd2ctl, a program of its own
    ["staff"],                  # handlers: the back office
    ["bg"],                     # the Berlin Group standard interface
    ["pis"],                    # payments
    ["oauth"],                  # authorisation server
    ["ais"],                    # account information
    ["psu"],                    # the PSU's login, used by the handlers
    ["web", "api"],             # pages, forms; request plumbing, respond.c
    ["tpp"],                    # TPP verification
    ["db"],                     # the query driver, the LISTEN connection
    ["metrics"],                # the shared counters
    ["device"],                 # device formats and psd2-deviced
    ["common", "build"],        # configuration, key rings, crypto, ...
]

# These numbers may only go down.
WRONG_WAY_MAX = 0
CIRCLES_MAX = 0
# Circles of modules (a .c with its .h) inside one folder.
MODULE_CIRCLES_MAX = 0

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SEARCH = ["src", "device", os.path.join("src", "ctl")]


def sources():
    for root in ("src", "device"):
        for d, _, files in os.walk(os.path.join(TOP, root)):
            for name in files:
                if name.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(d, name), TOP)


def resolve(src, name):
    """The file an include names, as the compiler finds it; None for a
    generated file (build/gen)."""
    for d in [os.path.dirname(src)] + SEARCH:
        path = os.path.normpath(os.path.join(d, name))
        if os.path.isfile(os.path.join(TOP, path)):
            return path
    return None


def folder(path):
    parts = path.split(os.sep)
    return parts[1] if parts[0] == "src" else parts[0]


def imports(across=True):
    """(importing file, imported file) for every include across folders
    (or every include at all)."""
    edges = []
    for src in sorted(sources()):
        with open(os.path.join(TOP, src), errors="replace") as f:
            text = f.read()
        for name in INCLUDE.findall(text):
            dst = resolve(src, name)
            if dst is not None and (not across or
                                    folder(src) != folder(dst)):
                edges.append((src, dst))
    return edges


def module(path):
    """A file's module: x.c with its x.h."""
    return os.path.splitext(path)[0]


def layer_of():
    return {f: i for i, layer in enumerate(LAYERS) for f in layer}


def wrong_way(edges):
    rank = layer_of()
    return [(s, d) for s, d in edges if rank[folder(d)] < rank[folder(s)]]


def circles(edges, node=folder):
    """Circles: the strongly connected components of more than one node
    (a folder, or what node makes of a file), by Tarjan's algorithm."""
    graph = {}
    for s, d in edges:
        graph.setdefault(node(s), set()).add(node(d))
        graph.setdefault(node(d), set())
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_imports_report():
    """Prints the folder graph (shown with -rP); fails on nothing."""
    edges = imports()
    pairs = {}
    for s, d in edges:
        key = (folder(s), folder(d))
        pairs[key] = pairs.get(key, 0) + 1
    bad = wrong_way(edges)
    print("folders: %d, imports across folders: %d, wrong-way: %d, "
          "folder circles: %d" % (len({folder(p) for p in sources()}),
                                  len(edges), len(bad), len(circles(edges))))
    for (s, d), n in sorted(pairs.items()):
        print("  %-8s -> %-8s %3d" % (s, d, n))
    for s, d in bad:
        print("wrong way: %s -> %s" % (s, d))
    for c in circles(edges):
        print("circle: %s" % " ".join(c))
    # Circles of modules (x.c and x.h), inside folders too.
    for c in circles(imports(across=False), module):
        print("module circle: %s" % " ".join(c))


def test_every_folder_has_a_layer():
    missing = sorted({folder(p) for p in sources()} - set(layer_of()))
    assert missing == [], "add these folders to LAYERS: %s" % missing


def test_import_circles_across_folders_at_most_the_declared_number():
    found = circles(imports())
    assert len(found) <= CIRCLES_MAX, found


def test_wrong_way_imports_at_most_the_declared_number():
    bad = wrong_way(imports())
    assert len(bad) <= WRONG_WAY_MAX, "\n".join(
        "%s -> %s" % e for e in bad)


def test_module_circles_at_most_the_declared_number():
    found = circles(imports(across=False), module)
    assert len(found) <= MODULE_CIRCLES_MAX, found
