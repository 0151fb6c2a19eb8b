"""Where a paired run's file work is done: on the event loop when its folder is in memory and small, in a thread
when it is on a disk or large; the bounded walk that decides it, and the same files either way."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from eval_skills.agents import create_agent
from eval_skills.agents.workdir import Budget, TreeTooLarge, changed_files, snapshot
from eval_skills.paired import LocalExecutor
from eval_skills.paired.executor import RunSpec
from eval_skills.paired.local import INLINE_BYTES, INLINE_ENTRIES
from eval_skills.scratch import folder_prefix, memory_backed

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the mount table is Linux's")


def _kind(path: Path) -> str:
    return subprocess.run(["stat", "-f", "-c", "%T", str(path)], capture_output=True, text=True,
                          check=True).stdout.strip()


@linux
def test_a_folder_is_memory_backed_when_its_file_system_is_tmpfs(tmp_path):
    for path in (Path("/dev/shm"), tmp_path):
        assert memory_backed(str(path)) is (_kind(path) == "tmpfs"), path


def _tree(root: Path) -> None:
    (root / "a.txt").write_text("hello")
    (root / "sub").mkdir()
    (root / "sub" / "b.txt").write_text("x" * 20)
    (root / ".skills" / "one").mkdir(parents=True)
    for n in range(10):
        (root / ".skills" / "one" / f"{n}.md").write_text("left out")


def test_a_bounded_walk_counts_the_left_out_folders_and_the_bytes_it_reads(tmp_path):
    _tree(tmp_path)
    excluded = {".skills"}
    whole = snapshot(tmp_path, excluded)
    assert sorted(whole) == ["a.txt", "sub/b.txt"]
    # entries: a.txt, sub, .skills (3) + b.txt (1) + one (1) + ten files (10) = 15
    assert snapshot(tmp_path, excluded, budget=Budget(15, 1000)) == whole
    with pytest.raises(TreeTooLarge):
        snapshot(tmp_path, excluded, budget=Budget(14, 1000))  # the left-out files are counted
    budget = Budget(100, 25)
    assert snapshot(tmp_path, excluded, budget=budget) == whole and budget.bytes == 0  # 5 + 20 bytes read
    with pytest.raises(TreeTooLarge):
        snapshot(tmp_path, excluded, budget=Budget(100, 24))


def test_the_second_snapshot_keeps_the_bytes_of_what_changed_and_nothing_else(tmp_path):
    _tree(tmp_path)
    (tmp_path / "big.bin").write_bytes(b"x" * ((1 << 20) + 1))  # compared by size and time: never read
    (tmp_path / "gone.txt").write_text("bye")
    before = snapshot(tmp_path, {".skills"})
    (tmp_path / "sub" / "b.txt").write_text("changed")
    (tmp_path / "new.txt").write_text("new")
    (tmp_path / "link").symlink_to("a.txt")
    (tmp_path / "gone.txt").unlink()
    (tmp_path / "big.bin").write_bytes(b"y" * ((1 << 20) + 2))
    (tmp_path / ".skills" / "one" / "0.md").write_text("inside a left-out folder")
    kept: dict[str, bytes] = {}
    after = snapshot(tmp_path, {".skills"}, since=before, kept=kept)
    assert after == snapshot(tmp_path, {".skills"})  # the same snapshot
    assert kept == {"sub/b.txt": b"changed", "new.txt": b"new"}
    changes = {c.path: (c.kind, c.data) for c in changed_files(before, after, kept)}
    assert changes == {"sub/b.txt": ("modified", b"changed"), "new.txt": ("created", b"new"),
                       "link": ("created", None), "gone.txt": ("deleted", None), "big.bin": ("modified", None)}


class _Counting(ThreadPoolExecutor):
    """A loop's default executor that counts what is handed to it."""

    def __init__(self) -> None:
        super().__init__(max_workers=4)
        self.trips = 0

    def submit(self, fn, /, *args, **kwargs):
        self.trips += 1
        return super().submit(fn, *args, **kwargs)


def _run(agent, spec: RunSpec, scratch: Path):
    pool = _Counting()

    async def go():
        asyncio.get_running_loop().set_default_executor(pool)
        executor = LocalExecutor(agent, concurrency=1, scratch=scratch)
        return [out async for out in executor.run(iter([spec]))]

    [out] = asyncio.run(go())
    return out, pool.trips


WRITE = ("import pathlib, sys\nn = int(sys.argv[1])\npathlib.Path('made').mkdir()\n"
         "for i in range(n): pathlib.Path('made/%d.txt' % i).write_text(str(i))\n"
         "pathlib.Path('in.txt').write_text('changed')\nprint('wrote', n)\n")


@pytest.mark.parametrize("count", [3, INLINE_ENTRIES + 100])
def test_small_and_large_trees_give_the_same_files_and_leave_no_folder(tmp_path, count):
    scratch = Path("/dev/shm") if memory_backed("/dev/shm") else tmp_path
    agent = create_agent("command", command=[sys.executable, "-c", WRITE, str(count)])
    spec = RunSpec(run_id="r1", prompt="write", files={"in.txt": b"original"}, timeout=60)
    out, _ = _run(agent, spec, scratch)
    assert out.status == "ok", out.error
    got = {f.path: (f.kind, f.data) for f in out.files}
    assert got.pop("in.txt") == ("modified", b"changed")
    assert got == {f"made/{i}.txt": ("created", str(i).encode()) for i in range(count)}
    assert list(scratch.glob(folder_prefix("paired") + "*")) == []  # the run's folder and the process's are gone


@linux
def test_in_memory_a_small_run_s_files_stay_on_the_loop_and_a_large_tree_goes_to_a_thread():
    if not memory_backed("/dev/shm"):
        pytest.skip("no memory file system here")
    spec = RunSpec(run_id="r1", prompt="write", files={"in.txt": b"original"}, timeout=60)
    small, small_trips = _run(create_agent("command", command=[sys.executable, "-c", WRITE, "3"]), spec,
                              Path("/dev/shm"))
    large, large_trips = _run(create_agent("command", command=[sys.executable, "-c", WRITE, str(INLINE_ENTRIES)]),
                              spec, Path("/dev/shm"))
    assert small.status == large.status == "ok"
    assert large_trips == small_trips + 1  # the second half of the large run's file work, in one trip


def test_on_a_disk_every_run_s_file_work_goes_to_a_thread(tmp_path):
    if memory_backed(str(tmp_path)) or not memory_backed("/dev/shm"):
        pytest.skip("needs a temporary folder on a disk and a memory file system to compare")
    spec = RunSpec(run_id="r1", prompt="write", files={"in.txt": b"original"}, timeout=60)
    agent = create_agent("command", command=[sys.executable, "-c", WRITE, "3"])
    _, disk_trips = _run(agent, spec, tmp_path)
    _, memory_trips = _run(agent, spec, Path("/dev/shm"))
    assert disk_trips == memory_trips + 2


@linux
def test_in_memory_a_run_given_large_fixtures_does_all_its_file_work_in_threads():
    if not memory_backed("/dev/shm"):
        pytest.skip("no memory file system here")
    agent = create_agent("command", command=[sys.executable, "-c", WRITE, "3"])
    small = RunSpec(run_id="r1", prompt="write", files={"in.txt": b"original"}, timeout=60)
    large = RunSpec(run_id="r2", prompt="write", files={"in.txt": b"original", "big.bin": b"x" * (INLINE_BYTES + 1)},
                    timeout=60)
    _, small_trips = _run(agent, small, Path("/dev/shm"))
    out, large_trips = _run(agent, large, Path("/dev/shm"))
    assert out.status == "ok" and "big.bin" not in {f.path for f in out.files}  # unchanged: not an output
    assert large_trips == small_trips + 2  # the folder made, and the rest at the end


def test_a_run_s_outputs_are_written_only_inside_its_outputs_folder(tmp_path):
    from eval_skills.agents.usage import TokenUsage
    from eval_skills.paired.executor import OutputFile, RunOutput
    from eval_skills.paired.record import write_run

    outside = tmp_path / "abs.txt"  # an absolute name: were it followed, it would land beside the case, not in it
    names = ["../up.txt", str(outside), "a/../../b.txt", "..", "ok/fine.txt", "top.txt", "ok/deeper/x.txt"]
    out = RunOutput(run_id="r1", status="ok", response="done", error=None, transcript=[],
                    files=[OutputFile(name, "created", 2, b"hi") for name in names], duration_s=0.1,
                    usage=TokenUsage(), started_at="", finished_at="")
    folder = tmp_path / "case" / "with_skill" / "run-1"
    record = write_run(folder, out, case_key="1", arm="with_skill", number=1)
    written = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    outputs = "case/with_skill/run-1/outputs/"
    kept = ["ok/deeper/x.txt", "ok/fine.txt", "ok__deeper__x.txt", "ok__fine.txt", "response.md", "top.txt"]
    assert [w for w in written if w.startswith(outputs)] == [outputs + name for name in kept]
    assert all(w.startswith("case/with_skill/run-1/") for w in written) and not outside.exists(), written
    assert sorted(record.outputs) == ["ok/deeper/x.txt", "ok/fine.txt", "top.txt"]


def test_a_bounded_walk_stops_listing_a_huge_folder_at_its_budget(tmp_path):
    (tmp_path / "many").mkdir()
    for n in range(5000):
        (tmp_path / "many" / str(n)).touch()
    budget = Budget(10, 1000)
    with pytest.raises(TreeTooLarge):
        snapshot(tmp_path, set(), budget=budget)
    assert budget.entries == -1  # one folder entry, then ten of the 5000 listed before it ran out
