"""The format's reference validator beside `skillgraph check`.

For every fixture collection given, every skill folder below it (a folder
holding a SKILL.md, to a depth of four, as SPEC §7.4 finds them) is
validated by `skills_ref.validate`, the Agent Skills reference validator,
and its verdict must be the one `skillgraph check --format json` gives the
skill: invalid exactly when a `skill-file-invalid` problem names it. A
skill `check` leaves out as the second of its id (`duplicate-skill`) is not
judged by `check`, and is skipped here, said on a line of its own.

Usage: python skills_parity.py SKILLGRAPH COLLECTION...
Prints one line per collection and exits 1 on the first disagreement.
"""

import json
import subprocess
import sys
from pathlib import Path

from skills_ref import validate

DEPTH = 4
SKIPPED = {".git", "node_modules"}


def skill_folders(root: Path):
    """The skill folders below root, as the loader finds them."""
    if (root / "SKILL.md").exists() or (root / "SKILL.md").is_symlink():
        return [root]
    found = []

    def look(folder: Path, depth: int):
        for child in sorted(p for p in folder.iterdir() if p.is_dir()):
            holds = any((child / name).exists() or (child / name).is_symlink() for name in ("SKILL.md", "skill.md"))
            if holds:
                found.append(child)
            elif depth + 1 < DEPTH and child.name not in SKIPPED:
                look(child, depth + 1)

    look(root, 0)
    return found


def reference_verdict(folder: Path) -> bool:
    """Whether the reference calls the folder valid; a crash is invalid."""
    try:
        return not validate(folder)
    except Exception:  # the reference raises on files it cannot read
        return False


def main() -> int:
    skillgraph, collections = sys.argv[1], sys.argv[2:]
    for collection in map(Path, collections):
        out = subprocess.run(
            [skillgraph, "check", str(collection), "--format", "json"],
            capture_output=True, text=True, check=False,
        )
        problems = json.loads(out.stdout)["problems"]
        invalid = {p.get("skill") for p in problems if p["code"] == "skill-file-invalid"}
        duplicates = {p["message"].split(" and ")[1].split(" are both")[0]
                      for p in problems if p["code"] == "duplicate-skill"}
        judged = 0
        for folder in skill_folders(collection):
            place = (folder / "SKILL.md").relative_to(collection).as_posix() if folder != collection else "SKILL.md"
            if place in duplicates:
                print(f"skip {collection.name}/{place}: left out as a second skill of its id")
                continue
            ours = folder.name not in invalid
            theirs = reference_verdict(folder)
            judged += 1
            if ours != theirs:
                print(f"FAIL {collection.name}/{place}: the reference says {'valid' if theirs else 'invalid'}, check says {'valid' if ours else 'invalid'}")
                return 1
        print(f"ok {collection.name}: {judged} skills, every verdict the reference's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
