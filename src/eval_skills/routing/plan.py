"""What a routing test runs: the skill, its queries, the distractor skills beside it, and runs per query.

Everything is checked here, before any agent runs: the skill's ``SKILL.md`` (the Agent Skills rules), the
routing file (a non-empty array, every query with a non-blank ``query`` and a boolean ``should_trigger``), each
distractor's ``SKILL.md`` and that no two skills share a name. The skill folders are read here, once (regular
files only: what is skipped is a note).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..agents.bundle import SkillBundle, read_bundle
from ..errors import InputError
from ..formats.agentskills import ROUTING_FILE, SKILL_MD, RoutingQuery, SkillDoc, load_routing, load_skill_md

__all__ = ["RoutingPlan", "RunItem", "check_agent_reports_skills", "check_min_f1", "check_workspace",
           "find_distractors", "load_plan", "load_queries", "routing_file_of", "skill_folder"]


@dataclass(frozen=True)
class RunItem:
    """One agent run: query number ``query_index`` (1-based, the order of the routing file), run ``run_number``."""

    query_index: int
    query: RoutingQuery
    run_number: int


@dataclass(frozen=True)
class RoutingPlan:
    skill: SkillDoc
    queries: list[RoutingQuery]
    routing_file: Path
    distractors: list[SkillDoc]
    runs: int
    notes: list[str] = field(default_factory=list)  # what the user should know (a distractor skipped, ...)
    bundles: list[SkillBundle] = field(default_factory=list)  # the skill folders as read (skill_folders' order)

    @property
    def total(self) -> int:
        return len(self.queries) * self.runs

    @property
    def skill_folders(self) -> list[Path]:
        """What each run's workspace gets installed: the skill, then the distractors."""
        return [self.skill.folder, *(d.folder for d in self.distractors)]

    def items(self) -> Iterator[RunItem]:
        """Run 1 of every query, then run 2 of every query, ...: an interrupted test has covered every query
        as evenly as it could."""
        for run_number in range(1, self.runs + 1):
            for index, query in enumerate(self.queries, start=1):
                yield RunItem(index, query, run_number)


def find_distractors(folders: Sequence[Path], skill: SkillDoc, notes: list[str] | None = None) -> list[SkillDoc]:
    """The distractor skills: each folder is a skill (it holds ``SKILL.md``) or a folder of skills (every
    subfolder holding one). The skill under test found among them is skipped: its own folder, or, in a folder
    of skills, another copy of it (such as the copy installed in ``~/.agents/skills``), which is said in
    ``notes``. So is, in a folder of skills, a skill whose ``SKILL.md`` is invalid. A skill folder given on its
    own that is invalid or named like the skill, or two distractors of one name, is an InputError."""
    found: dict[str, SkillDoc] = {}
    own = skill.folder.resolve()
    for folder in folders:
        folder = Path(folder)
        if not folder.is_dir():
            raise InputError("distractor folder not found", file=str(folder), field="--distractors")
        given = (folder / SKILL_MD).is_file()
        if given:
            candidates = [folder]
        else:
            candidates = sorted(p for p in folder.iterdir() if p.is_dir() and (p / SKILL_MD).is_file())
            if not candidates:
                raise InputError("holds no SKILL.md, and no subfolder holds one", file=str(folder),
                                 field="--distractors", hint="give a skill folder or a folder of skill folders")
        for candidate in candidates:
            if candidate.resolve() == own:
                continue
            try:
                doc = load_skill_md(candidate)
            except InputError as exc:
                if given:  # named by the user: their mistake to fix
                    raise
                if notes is not None:  # one broken skill among many (~/.claude/skills) blocks nothing
                    notes.append(f"{candidate} is not a valid skill, not installed as a distractor: {exc.line()}")
                continue
            if doc.name == skill.name and not given:
                if notes is not None:
                    notes.append(f"{candidate} is named {doc.name!r} like the skill under test (a copy of it?): "
                                 "not installed as a distractor")
                continue
            if doc.name == skill.name:
                raise InputError(f"a distractor is named {doc.name!r} like the skill under test",
                                 file=str(candidate), field="--distractors",
                                 hint="two skills of one name cannot be installed side by side")
            if doc.name in found and found[doc.name].folder.resolve() == candidate.resolve():
                continue  # one folder named twice (--distractors ~/.claude/skills ~/.claude/skills/x)
            if doc.name in found:
                raise InputError(f"two distractors are named {doc.name!r} (the other: {found[doc.name].folder})",
                                 file=str(candidate), field="--distractors")
            found[doc.name] = doc
    return list(found.values())


def skill_folder(path: Path) -> Path:
    """The skill's folder: a path to its ``SKILL.md`` names the folder holding it (as ``paired`` takes it)."""
    path = Path(path)
    return path.parent if path.name == SKILL_MD and path.is_file() else path


def routing_file_of(skill_path: Path, routing_file: Path | None) -> Path:
    """The routing file: the one given, else ``<skill>/evals/routing.json`` (InputError when the skill folder
    has no ``SKILL.md`` or the default file is missing)."""
    skill_path = skill_folder(skill_path)
    if not (skill_path / SKILL_MD).is_file():
        raise InputError(f"no {SKILL_MD} in this folder", file=str(skill_path),
                         hint="pass the folder of an Agent Skill (it holds SKILL.md)")
    if routing_file is not None:
        return Path(routing_file)
    routing = skill_path / ROUTING_FILE
    if not routing.is_file():
        raise InputError("no routing file", file=str(routing),
                         hint="write [{\"query\": ..., \"should_trigger\": true}, ...] there or pass --routing")
    return routing


def load_queries(path: Path) -> list[RoutingQuery]:
    """The queries of a routing file (see :func:`~eval_skills.formats.agentskills.load_routing`); a query
    that is only blanks is an InputError too, since no agent can be asked it."""
    queries = load_routing(path)
    for index, query in enumerate(queries):
        if not query.query.strip():
            raise InputError("the query is blank", file=str(path), field=f"$[{index}].query",
                             hint="write the request a user would type")
    return queries


def load_plan(skill_path: Path, routing_file: Path | None = None, distractors: Sequence[Path] = (),
              runs: int = 1) -> RoutingPlan:
    """Load and check everything a routing test needs; the first problem is an InputError."""
    if runs < 1:
        raise InputError(f"runs must be at least 1, not {runs}", field="--runs")
    skill = load_skill_md(skill_folder(skill_path))
    routing = routing_file_of(skill.folder, routing_file)
    queries = load_queries(routing)
    notes: list[str] = []
    found = find_distractors(distractors, skill, notes)
    bundles = [read_bundle(folder, folder.resolve().name) for folder in (skill.folder, *(d.folder for d in found))]
    notes += [line for bundle in bundles for line in bundle.skipped]
    return RoutingPlan(skill, queries, routing, found, runs, notes, bundles)


def check_workspace(workspace: Path, plan: RoutingPlan) -> None:
    """InputError when ``workspace`` cannot hold the results: a file is in the way, or it is inside a skill
    that every run installs (each run would get the earlier runs' results, queries and answers with it)."""
    for parent in (workspace, *workspace.parents):
        if parent.exists():
            if not parent.is_dir():
                raise InputError("is not a folder", file=str(parent), field="--workspace")
            break
    where = workspace.resolve()
    for folder in plan.skill_folders:
        if where.is_relative_to(folder.resolve()):
            raise InputError(f"is inside the skill folder {folder}, which every run installs: the agent would "
                             "see the earlier runs' results", file=str(workspace), field="--workspace",
                             hint="put the workspace beside the skill (the default)")


def check_min_f1(queries: Sequence[RoutingQuery], routing_file: Path) -> None:
    """``--min-f1`` needs a query that should trigger: without one, F1 is undefined whatever the agent does."""
    if not any(q.should_trigger for q in queries):
        raise InputError("no query has should_trigger true, so F1 is undefined and --min-f1 cannot be met",
                         file=str(routing_file), field="should_trigger",
                         hint="add queries that should trigger the skill, or drop --min-f1")


def check_agent_reports_skills(agent: object) -> None:
    """An agent whose output is plain text (a ``command`` agent with ``output="text"``) shows no skill
    invocation, so every run would read as "not triggered": refuse it before any run."""
    if getattr(agent, "output", None) == "text":
        raise InputError("a command agent read as plain text reports no skill invocations, so routing cannot be "
                         "measured", field="--agent-output",
                         hint="make it print the events format and pass --agent-output events (or claude, codex, "
                              "opencode)")
