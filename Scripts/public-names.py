"""Checks that no public top-level name of Courier's libraries is also a public top-level name of a module people
import beside them: SwiftNIO, AsyncHTTPClient, swift-http-types, swift-openapi-runtime, Vapor 4 (with the modules it
re-exports) and Hummingbird 2. Such a name makes every unqualified use in a file that imports both ambiguous.

Names come from symbol graphs (`swift-symbolgraph-extract`) of the built modules, with the flags SwiftPM used to
build them (read from the package's `.build/debug.yaml`).

    python3 Scripts/public-names.py                       # Courier against the modules of this package's build
                                                          #   and the name lists in Scripts/public-names/
    python3 Scripts/public-names.py --package Examples/VaporApp --write Vapor
                                                          # also extracts the modules of that build and writes
                                                          #   (or, with --check, compares) their list; with
                                                          #   --build-dir DIR when it was built with
                                                          #   `swift build --scratch-path DIR`

Exits 1 on a collision, or with --check when a saved list differs from the build's.
"""
import argparse, glob, json, os, re, subprocess, sys, tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
LISTS = os.path.join(ROOT, "Scripts", "public-names")
COURIER = ["Courier", "CourierImageDecoding", "CourierHTTPTypes", "CourierOpenAPI", "CourierTesting"]
# The modules of Courier's own build that people import beside it.
NEIGHBOURS = ["NIOCore", "NIOHTTP1", "NIOHTTP2", "NIOWebSocket", "NIOPosix", "NIOSSL", "AsyncHTTPClient", "HTTPTypes",
              "OpenAPIRuntime", "Logging"]
# The frameworks of the examples, with every module they re-export (`@_exported import`).
FRAMEWORKS = {
    "Vapor": ["Vapor", "AsyncKit", "ConsoleKit", "ConsoleKitTerminal", "ConsoleKitCommands", "RoutingKit",
              "MultipartKit", "WebSocketKit", "Crypto"],
    "Hummingbird": ["Hummingbird", "HummingbirdCore"],
}


def build_flags(build_dir):
    if not os.path.exists(os.path.join(build_dir, "debug.yaml")):
        sys.exit(f"error: {build_dir} holds no debug build (run `swift build` first)")
    text = open(os.path.join(build_dir, "debug.yaml")).read()
    maps = sorted(set(re.findall(r'"-Xcc","(-fmodule-map-file=[^"]*)"', text)))
    includes = sorted(set(re.findall(r'"-I","([^"]*)"', text)))
    modules = glob.glob(os.path.join(build_dir, "*", "debug", "Modules"))
    if not modules:
        sys.exit(f"error: {build_dir} holds no debug build (run `swift build` first)")
    flags = ["-I", modules[0]]
    for include in includes: flags += ["-I", include]
    for map_flag in maps: flags += ["-Xcc", map_flag]
    return flags


def top_level_names(module, flags):
    with tempfile.TemporaryDirectory() as out:
        subprocess.run(["swift-symbolgraph-extract", "-module-name", module, "-target", "x86_64-unknown-linux-gnu",
                        "-minimum-access-level", "public", "-output-dir", out] + flags,
                       check=True, stdout=subprocess.DEVNULL)
        graph = json.load(open(os.path.join(out, f"{module}.symbols.json")))
    return {symbol["pathComponents"][0].split("(")[0] for symbol in graph["symbols"]
            if len(symbol["pathComponents"]) == 1 and symbol["kind"]["identifier"] != "swift.extension"}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--package", help="an example package whose build has a framework")
    parser.add_argument("--build-dir", help="--package's build directory (its `swift build --scratch-path`); "
                        "default: its .build")
    parser.add_argument("--write", metavar="FRAMEWORK", help="write that framework's list from --package's build")
    parser.add_argument("--check", metavar="FRAMEWORK", help="fail when that framework's saved list is stale")
    args = parser.parse_args()
    flags = build_flags(os.path.join(ROOT, ".build"))
    courier = {module: top_level_names(module, flags) for module in COURIER}
    others = {module: top_level_names(module, flags) for module in NEIGHBOURS}
    framework = args.write or args.check
    if framework:
        package_flags = build_flags(args.build_dir or os.path.join(args.package, ".build"))
        names = set()
        for module in FRAMEWORKS[framework]:
            names |= top_level_names(module, package_flags)
        listed = os.path.join(LISTS, f"{framework}.txt")
        text = "\n".join(sorted(names)) + "\n"
        if args.write:
            open(listed, "w").write(text)
        elif open(listed).read() != text:
            sys.exit(f"error: {listed} differs from {framework}'s build; run Scripts/public-names.py --package "
                     f"{args.package} --write {framework}")
    for listed in sorted(glob.glob(os.path.join(LISTS, "*.txt"))):
        others[os.path.basename(listed)[:-4]] = set(open(listed).read().split())
    collisions = [f"{mine}.{name} is also {theirs}.{name}"
                  for mine, names in courier.items() for theirs, their_names in others.items()
                  for name in sorted(names & their_names)]
    if collisions:
        print("Public names that collide:\n" + "\n".join(f"- {line}" for line in collisions), file=sys.stderr)
        sys.exit(1)
    print(f"{sum(map(len, courier.values()))} public names of {', '.join(COURIER)}: none is a name of "
          f"{', '.join(others)}")


main()
