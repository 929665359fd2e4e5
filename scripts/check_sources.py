#!/usr/bin/env python3
"""Provenance check (docs/sources.md).

1. Every source key cited in brackets in the data files and docs ([OLCF-Summit], [nccl-tests#29],
   ...) has an entry in docs/sources.md: a bold `**[Key]**` line, or for issue threads
   `**[nccl-tests#N]**` / `**[nccl#N]**` with a `**#29**` item in that entry.
2. No tracked or new file refers to a folder outside the repository: the developers' reference
   notes are not shipped, so a pointer to them is a dead end for anyone who clones the project.

Usage: check_sources.py [--self-test]   (--self-test proves both checks catch a violation)
"""
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
TAGS = {"computed", "unconfirmed", "assumption", "secondary", "recommendation"}
KEY = re.compile(r"\[([A-Za-z][A-Za-z0-9+-]*(?:#[0-9]+)?)\]")
# Files whose bracketed tokens are source keys: data files and prose.
SCANNED = re.compile(r"^(platforms/[^/]+\.yaml|scenarios/.+\.yaml|calibration/data/.+\.(yaml|md)"
                     r"|docs/.+\.md|(.+/)?README\.md)$")
# Built from parts so this file does not match itself.
SHARED = "shar" + "ed"
OUTSIDE = [re.escape("../" + SHARED), SHARED + "/(reference|design|validation|calibration-data|hooks)"]
OUTSIDE += [re.escape(n) for n in ("hardware" + ".md", "calibration" + ".md §", "models" + ".md",
                                    "traces-and-outputs" + ".md", "llm-training-measurements" + ".md")]
OUTSIDE_RE = re.compile("|".join(OUTSIDE))


def is_key(token):
    if token in TAGS:
        return False
    if re.fullmatch(r"[A-Z_]+", token):  # placeholders such as [SECONDS]
        return False
    # A key names a publisher or document: it has a capital letter, a '#' or is one of the few
    # lowercase keys (checked against the bibliography like the rest).
    return bool(re.search(r"[A-Z#]", token)) or token in {"torchvision", "cputronic", "spec-sites"}


def entries(sources_text):
    keys, threads = set(), {}
    for line in sources_text.splitlines():
        for k in re.findall(r"\*\*\[([^\]]+)\]\*\*", line):
            keys.add(k)
    for prefix in ("nccl-tests", "nccl"):
        m = re.search(r"\*\*\[" + re.escape(prefix) + r"#N\]\*\*(.*?)(?=\n- \*\*|\n#|\Z)",
                      sources_text, re.S)
        threads[prefix] = set(re.findall(r"\*\*#([0-9]+)\*\*", m.group(1))) if m else set()
    return keys, threads


def check(root, files, counted=None):
    problems = []
    sources = (root / "docs/sources.md").read_text(encoding="utf-8")
    keys, threads = entries(sources)
    for rel in files:
        path = root / rel
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if OUTSIDE_RE.search(line):
                problems.append(f"{rel}:{n}: refers outside the repository: {line.strip()[:100]}")
            if not SCANNED.match(rel) or rel == "docs/sources.md":
                continue
            for token in KEY.findall(line):
                if not is_key(token):
                    continue
                if counted is not None:
                    counted.add(token)
                m = re.fullmatch(r"(nccl-tests|nccl)#([0-9]+)", token)
                if m:
                    if m.group(2) not in threads.get(m.group(1), set()):
                        problems.append(f"{rel}:{n}: [{token}] has no item in docs/sources.md")
                elif token not in keys:
                    problems.append(f"{rel}:{n}: [{token}] has no entry in docs/sources.md")
    return problems


def repo_files():
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                         cwd=ROOT, check=True, capture_output=True, text=True).stdout
    return [f for f in out.splitlines() if f != "scripts/check_sources.py"
            and not f.endswith((".csv", ".png", ".sqlite"))]


def self_test():
    with tempfile.TemporaryDirectory() as tmp:
        t = pathlib.Path(tmp)
        (t / "docs").mkdir()
        (t / "platforms").mkdir()
        (t / "docs/sources.md").write_text(
            "- **[Good-Key]** x\n- **[nccl#N]** https://x/N. **#7**: y\n", encoding="utf-8")
        (t / "platforms/a.yaml").write_text(
            "x: 1  # [Good-Key] [nccl#7] [computed]\ny: 2  # [Missing-Key] [nccl#8]\n"
            "# see ../" + SHARED + "/notes\n", encoding="utf-8")
        got = "\n".join(check(t, ["docs/sources.md", "platforms/a.yaml"]))
        for want in ("[Missing-Key] has no entry", "[nccl#8] has no item", "refers outside"):
            if want not in got:
                print(f"self-test: missed '{want}'\n{got}")
                return 1
        for unwanted in ("Good-Key", "nccl#7]", "computed"):
            if unwanted in got:
                print(f"self-test: false positive '{unwanted}'\n{got}")
                return 1
    print("sources self-test passed")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    files = repo_files()
    cited = set()
    problems = check(ROOT, files, cited)
    if problems:
        print("\n".join(problems))
        sys.exit(1)
    print(f"sources ok: {len(cited)} distinct keys cited in {len(files)} files, each in docs/sources.md;"
          " nothing refers outside the repository")
