"""Does ``eval-skills validate --strict`` agree with the reference validator ``skills-ref``?

A development check, not run in CI (it needs copies of public skill repositories): give it folders holding
skills (for instance checkouts of anthropics/skills, openai/skills and obra/superpowers); for every skill folder
below them it prints both verdicts, and every disagreement with both validators' reasons. Exit 1 when they
disagree on a folder that is not in ``KNOWN``.

    python bench/skills_ref_agreement.py ~/src/anthropics-skills ~/src/openai-skills ~/src/superpowers

``KNOWN``: the disagreements that are skills-ref's YAML library's fault (strictyaml refuses flow-style lists
such as ``allowed-tools: [Read, Grep]``, which YAML and the specification allow), by folder name; see
docs/validate.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

from skills_ref.validator import validate as reference

from eval_skills.formats.skill_folder import check_skill_folder, find_skill_folders

KNOWN: dict[str, str] = {}


def main(roots: list[str]) -> int:
    folders = [folder for root in roots for folder in find_skill_folders(Path(root))]
    unexplained = 0
    agree = 0
    for folder in folders:
        theirs = reference(folder)
        ours = check_skill_folder(folder, strict=True)
        if (not theirs) == ours.valid:
            agree += 1
            continue
        known = KNOWN.get(folder.name)
        unexplained += known is None
        print(f"{'known' if known else 'DISAGREE'}: {folder}")
        print(f"  skills-ref: {theirs or 'valid'}")
        print(f"  eval-skills: {[p.line() for p in ours.problems if p.level == 'error'] or 'valid'}")
        if known:
            print(f"  why: {known}")
    print(f"{len(folders)} skill folders: {agree} agree, {len(folders) - agree} disagree "
          f"({unexplained} not explained)")
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
