#!/usr/bin/env python3
"""The SDK's portability gate: what Linux can check about code an iOS or macOS app compiles.

No Apple toolchain runs here, so `swift build` on Linux proves only that the SDK builds on Linux. This gate checks,
over every Swift file an app compiles (Sources/FlowmeterModels, Sources/FlowmeterReporter) and the example app
(Examples/FlowUIExample):

1. imports: a module other than Foundation, Dispatch and the SDK's own is imported only inside an
   `#if canImport(<that module>)` clause (Glibc, Darwin, UIKit, SwiftUI, FoundationNetworking, ...);
2. syntax: every file parses with `swiftc -parse`, which also parses the `#if canImport(UIKit)` / `os(iOS)` blocks
   Linux never compiles;
3. deployment targets: no API newer than iOS 15 / macOS 12 (a list of those that exist on Linux too, so a Linux
   build cannot notice) outside a declaration or block marked `@available`/`#available` for iOS 16 or later;
4. platform-only behaviour: no Foundation API missing on iOS (Process, Host, ...), no Linux file-system paths, no
   Linux-only libc symbol outside a `canImport(Glibc)`/`os(Linux)` clause and no Darwin-only one outside a
   `canImport(Darwin)` clause;
5. the package graph (with Package.swift in the root): FlowmeterModels depends on nothing, FlowmeterReporter on
   FlowmeterModels only, and their products hold nothing else.

What it cannot prove (docs/reporter.md): that the Apple-only blocks type-check against the real UIKit and SwiftUI,
and every availability rule the Apple SDKs declare. Only an Apple build does.

Usage: scripts/portability-gate.py [--root DIR]    (DIR: a checkout, or a copy of its SDK folders; default: here)
Exit status 0 when every check passes, 1 with one line per finding otherwise.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SDK_FOLDERS = ["Sources/FlowmeterModels", "Sources/FlowmeterReporter", "Examples/FlowUIExample"]
ALWAYS_IMPORTABLE = {"Foundation", "Dispatch", "Swift", "_Concurrency", "FlowmeterModels", "FlowmeterReporter"}
DEPLOYMENT = "iOS 15, macOS 12"
MINIMUM_IOS = 15

# APIs newer than iOS 15 / macOS 12 that the Linux toolchain has too, with what they need.
NEWER_APIS = [
    (r"\bimport\s+Synchronization\b|\bMutex\s*[<(]|\bAtomic\s*<", "Synchronization (iOS 18, macOS 15)"),
    (r"\b(Duration|ContinuousClock|SuspendingClock)\b|\.sleep\(for:|Task\.sleep\(until:", "Clock and Duration (iOS 16)"),
    (r"\bRegex\s*[<(]|\.(wholeMatch|firstMatch|prefixMatch)\(|\.matches\(of:|#/", "Regex (iOS 16)"),
    (r"\bString\(validating:", "String(validating:) (iOS 18)"),
    (r"URL\(filePath:|\.appending\((path|component|components):|\.path\(percentEncoded:", "URL's new API (iOS 16)"),
    (r"URL\.(homeDirectory|temporaryDirectory|documentsDirectory|cachesDirectory)\b", "URL directories (iOS 16)"),
    (r"\bwith(Throwing)?DiscardingTaskGroup\b", "discarding task groups (iOS 17)"),
    (r"\bAsyncStream(<[^>]*>)?\.makeStream\b|\bAsyncThrowingStream(<[^>]*>)?\.makeStream\b", "makeStream (iOS 17)"),
    (r"@Observable\b|\bimport\s+Observation\b", "Observation (iOS 17)"),
    (r"\b(InlineArray|RawSpan|MutableSpan|UTF8Span)\b|\bSpan\s*<", "spans and InlineArray (iOS 26)"),
    (r"\.replacing\(|\.ranges\(of:|\.trimmingPrefix\(", "string processing algorithms (iOS 16)"),
    (r"\bTask\.immediate\b|\bTask\(name:", "named and immediate tasks (iOS 26)"),
]

# Foundation API an iOS app does not have, and paths only Linux has.
PLATFORM_ONLY = [
    (r"\bProcess\(\)|\bProcess\.run\(|\bProcess\.launchedProcess\b|\bNSTask\b", "Process is macOS and Linux only"),
    (r"\bHost\.current\(\)|\bNSHost\b", "Host is macOS and Linux only"),
    (r"\bhomeDirectoryForCurrentUser\b", "homeDirectoryForCurrentUser is macOS and Linux only"),
    (r"\"/(proc|sys|dev/shm|tmp|var/tmp)\b", "a Linux file-system path (use FileManager's directories)"),
]
LINUX_ONLY_SYMBOLS = (r"\b(CLOCK_BOOTTIME|O_TMPFILE|O_PATH|epoll_\w+|eventfd|inotify_\w+|MSG_NOSIGNAL|SOCK_CLOEXEC|"
                      r"SOCK_NONBLOCK|pipe2|accept4|memfd_create|sendfile|prctl|sched_getcpu|gettid)\b")
DARWIN_ONLY_SYMBOLS = (r"\b(mach_\w+|CLOCK_UPTIME_RAW|O_EVTONLY|F_FULLFSYNC|SO_NOSIGPIPE|os_unfair_lock\w*|"
                       r"arc4random\w*|clock_gettime_nsec_np)\b")


def strip_comments_and_strings(text):
    """The text with comments and string literals blanked (newlines kept), so patterns see only code."""
    out = []
    i, n = 0, len(text)
    while i < n:
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith('"""', i):
            j = text.find('"""', i + 3)
            j = n if j < 0 else j + 3
            out.append('"' + re.sub(r"[^\n]", " ", text[i + 1:j - 1]) + '"')
            i = j
        elif text[i] == '"':
            j = i + 1
            while j < n and text[j] != '"' and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            # Keep a path literal's first segment visible to the path check.
            literal = text[i:j + 1]
            keep = re.match(r'"/[a-z/]*', literal)
            kept = keep.group(0) if keep else '"'
            out.append(kept + " " * max(0, len(literal) - len(kept) - 1) + '"')
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def clauses(lines):
    """For each line, the conditions of the `#if` clauses it sits in, innermost last."""
    stack, result = [], []
    for line in lines:
        stripped = line.strip()
        directive = re.match(r"#(if|elseif|else|endif)\b(.*)", stripped)
        if directive:
            kind, condition = directive.group(1), directive.group(2).strip()
            if kind == "if":
                stack.append(condition)
            elif kind == "elseif" and stack:
                stack[-1] = condition
            elif kind == "else" and stack:
                stack[-1] = "!(previous clauses)"
            elif kind == "endif" and stack:
                stack.pop()
            result.append(list(stack))
            continue
        result.append(list(stack))
    return result


def availability_regions(lines):
    """For each line, whether it sits in a declaration or block marked available from iOS 16 on."""
    marked = [False] * len(lines)
    depth, pending, regions = 0, False, []
    for index, line in enumerate(lines):
        attribute = re.search(r"[@#]available\(([^)]*)\)", line)
        if attribute:
            ios = re.search(r"\biOS\s+(\d+)", attribute.group(1))
            if ios and int(ios.group(1)) > MINIMUM_IOS:
                pending = True
        marked[index] = pending or bool(regions)
        for character in line:
            if character == "{":
                depth += 1
                if pending:
                    regions.append(depth)
                    pending = False
            elif character == "}":
                if regions and regions[-1] == depth:
                    regions.pop()
                depth -= 1
    return marked


def check_file(path, relative, findings):
    text = open(path, encoding="utf-8").read()
    code = strip_comments_and_strings(text)
    lines = code.split("\n")
    conditions = clauses(lines)
    available = availability_regions(lines)
    for number, line in enumerate(lines, start=1):
        where = f"{relative}:{number}"
        inside = conditions[number - 1]
        imported = re.match(r"\s*(?:@\w+\s+)*(?:(?:public|package|internal|private|fileprivate)\s+)?import\s+"
                            r"(?:(?:struct|class|enum|protocol|func|var|let|typealias)\s+)?(\w+)", line)
        if imported:
            module = imported.group(1)
            if module not in ALWAYS_IMPORTABLE and not any(
                    re.search(r"\bcanImport\(\s*%s\s*\)" % module, c) and not c.startswith("!") for c in inside):
                findings.append(f"{where}: `import {module}` outside `#if canImport({module})`: an app on another "
                                f"platform does not have {module}")
        for pattern, what in NEWER_APIS:
            if re.search(pattern, line) and not available[number - 1]:
                findings.append(f"{where}: {what} is newer than the SDK's deployment targets ({DEPLOYMENT}); mark "
                                f"the declaration @available or use an older API")
        for pattern, what in PLATFORM_ONLY:
            if re.search(pattern, line):
                findings.append(f"{where}: {what}")
        linux = re.search(LINUX_ONLY_SYMBOLS, line)
        if linux and not any(re.search(r"canImport\(Glibc\)|canImport\(Musl\)|os\(Linux\)", c) and not c.startswith("!")
                             for c in inside):
            findings.append(f"{where}: `{linux.group(0)}` is Linux only; keep it in a `#if canImport(Glibc)` clause")
        darwin = re.search(DARWIN_ONLY_SYMBOLS, line)
        if darwin and not any(re.search(r"canImport\(Darwin\)|os\((iOS|macOS|tvOS|watchOS|visionOS)\)", c)
                              and not c.startswith("!") for c in inside):
            findings.append(f"{where}: `{darwin.group(0)}` is Apple only; keep it in a `#if canImport(Darwin)` clause")


def parse_all(files, findings):
    swiftc = shutil.which("swiftc")
    if swiftc is None:
        findings.append("swiftc not found: the Apple-only blocks could not be parsed")
        return
    # The driver leaves a TemporaryDirectory.* behind for each run; keep it in a folder of our own.
    scratch = tempfile.mkdtemp(prefix="portability-gate-")
    try:
        run = subprocess.run([swiftc, "-parse", *files], capture_output=True, text=True,
                             env={**os.environ, "TMPDIR": scratch})
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if run.returncode != 0:
        errors = [line for line in (run.stdout + run.stderr).splitlines() if ": error:" in line]
        findings.extend(f"{line.strip()} (swiftc -parse)" for line in errors or [run.stderr.strip()])


def check_package(root, findings):
    swift = shutil.which("swift")
    if swift is None:
        findings.append("swift not found: the package graph was not checked")
        return
    scratch = tempfile.mkdtemp(prefix="portability-gate-")
    try:
        run = subprocess.run([swift, "package", "--package-path", root, "dump-package"], capture_output=True,
                             text=True, env={**os.environ, "TMPDIR": scratch})
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if run.returncode != 0:
        findings.append(f"Package.swift: swift package dump-package failed: {run.stderr.strip()[:300]}")
        return
    package = json.loads(run.stdout)
    targets = {target["name"]: target for target in package["targets"]}

    def dependencies(name):
        names = []
        for dependency in targets.get(name, {}).get("dependencies", []):
            for value in dependency.values():
                names.append(value[0] if isinstance(value, list) else value)
        return set(names)

    allowed = {"FlowmeterModels": set(), "FlowmeterReporter": {"FlowmeterModels"}}
    for name, expected in allowed.items():
        if name not in targets:
            findings.append(f"Package.swift: no target {name}")
        elif dependencies(name) != expected:
            findings.append(f"Package.swift: {name} depends on {sorted(dependencies(name))}, an app may compile only "
                            f"{sorted(expected) or 'Foundation'}")
        elif targets[name].get("settings") and any(
                setting.get("tool") == "linker" for setting in targets[name]["settings"]):
            findings.append(f"Package.swift: {name} links a library an app does not have")
    for product in package["products"]:
        if product["name"] in allowed and set(product["targets"]) != {product["name"]}:
            findings.append(f"Package.swift: product {product['name']} holds {product['targets']}")
    platforms = {platform["platformName"]: platform["version"] for platform in package.get("platforms", [])}
    if platforms.get("ios") and int(platforms["ios"].split(".")[0]) > MINIMUM_IOS:
        findings.append(f"Package.swift: iOS {platforms['ios']} declared, the SDK promises iOS {MINIMUM_IOS}")


def main():
    arguments = sys.argv[1:]
    root = os.getcwd()
    if arguments[:1] == ["--root"] and len(arguments) == 2:
        root = os.path.abspath(arguments[1])
    elif arguments:
        print(__doc__.strip().splitlines()[-2])
        return 2
    files = []
    for folder in SDK_FOLDERS:
        base = os.path.join(root, folder)
        for directory, _, names in os.walk(base):
            files += [os.path.join(directory, name) for name in sorted(names) if name.endswith(".swift")]
    if not files:
        print(f"portability gate: no Swift files under {', '.join(SDK_FOLDERS)} in {root}")
        return 1
    findings = []
    for path in sorted(files):
        check_file(path, os.path.relpath(path, root), findings)
    parse_all(sorted(files), findings)
    has_package = os.path.exists(os.path.join(root, "Package.swift"))
    if has_package:
        check_package(root, findings)
    if findings:
        print(f"portability gate: {len(findings)} finding(s) in what an app compiles:")
        for finding in findings:
            print("  " + finding)
        return 1
    graph = "and the package graph " if has_package else ""
    print(f"portability gate: {len(files)} files {graph}pass (imports guarded, Apple-only blocks parse, nothing "
          f"newer than {DEPLOYMENT}, no platform-only Foundation)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
