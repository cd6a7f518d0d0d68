#!/usr/bin/env python3
"""Prints the Courier module's layout for the Architecture article: every file with its line count, and which
folders use types declared in which others (Swift has no imports inside a module, so a "use" is a type name
declared in one folder and written in another). Exits 1 when a folder uses one above it in LAYERS, or when two
folders of one layer use each other.

    python3 Scripts/architecture.py            # markdown tables
"""
import collections, glob, os, re, sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Sources", "Courier")
# Bottom first: a folder may use the ones before it, never one after it.
# Folders in one entry form one layer (a concern and its subfolders).
LAYERS = [["Errors"], ["Support"], ["HTTP/Body"], ["HTTP"], ["Values"], ["Images"], ["Parameters"], ["Security"], ["Cookies"],
          ["HTTP/Semantics"], ["Serialization/Request"], ["Serialization/Response"], ["Reachability"],
          ["Transport", "Transport/NIO", "Transport/URLSession"],
          ["Session/Tasks"], ["Session/Events", "Session/Interceptors"], ["Session/Configuration"], ["Session/Core"],
          ["Session/Features", "Session/Observability"], ["Session"],
          ["Operations"], ["Activity"], ["Images/Downloading"], ["ServerSentEvents"], ["WebSockets"]]
LAYER = {name: index for index, names in enumerate(LAYERS) for name in names}
WORD = re.compile(r"(?<![.\w])[A-Z]\w*")
DECL = re.compile(r"^(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|internal|private|fileprivate|final|open|indirect)\s+)*"
                  r"(?:struct|class|enum|protocol|actor|typealias)\s+(\w+)", re.M)


def folder(path):
    rel = os.path.relpath(os.path.dirname(path), ROOT)
    return rel


def strip(text):
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r'"(?:[^"\\\n]|\\.)*"', '""', text)


def main():
    files = sorted(glob.glob(os.path.join(ROOT, "**", "*.swift"), recursive=True))
    declared = {}
    for path in files:
        for name in DECL.findall(strip(open(path).read())):
            declared.setdefault(name, folder(path))
    uses = collections.defaultdict(collections.Counter)
    for path in files:
        here = folder(path)
        words = set(WORD.findall(strip(open(path).read())))
        for word in words:
            there = declared.get(word)
            if there and there != here:
                uses[here][there] += 1
    print("| File | Lines |\n|---|---:|")
    for path in files:
        print(f"| `{os.path.relpath(path, ROOT)}` | {sum(1 for _ in open(path))} |")
    print("\n| Folder | Uses types from |\n|---|---|")
    upward = []
    for here in sorted(uses, key=lambda f: (LAYER.get(f, 99), f)):
        listed = []
        for there, count in sorted(uses[here].items(), key=lambda item: (LAYER.get(item[0], 99), item[0])):
            listed.append(f"{there} ({count})")
            if LAYER.get(there, -1) > LAYER.get(here, 99):
                upward.append(f"{here} → {there}: " + ", ".join(
                    sorted(w for w in declared if declared[w] == there and w in set(WORD.findall("".join(
                        strip(open(p).read()) for p in files if folder(p) == here))))))
        print(f"| {here} | {', '.join(listed)} |")
    # Folders of one layer may use each other one way only: a two-way use is a cycle the layers cannot show.
    cycles = [f"{here} ⇄ {there}" for here in sorted(uses) for there in sorted(uses[here])
              if here < there and LAYER.get(here) == LAYER.get(there) and here in uses[there]]
    if upward:
        print("\nUpward uses:\n" + "\n".join(f"- {line}" for line in upward))
    if cycles:
        print("\nCycles within a layer:\n" + "\n".join(f"- {line}" for line in cycles))
    if upward or cycles:
        sys.exit(1)


main()
