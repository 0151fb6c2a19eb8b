"""Starting programs: each exit seen by the event loop through a pidfd (Python 3.11 on Linux), from any
thread's loop; a program found on PATH once is found again, and found anew when it went away."""

from __future__ import annotations

import asyncio
import sys
import threading
import warnings
from pathlib import Path

import pytest

from eval_skills.errors import SkillCrashed
from eval_skills.procs import Child, install_child_watcher, resolve_argv

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pidfds are Linux's")


async def _run(argv: list[str], cwd: Path) -> tuple[int, int]:
    """Start ``argv``, return its exit code and the most threads alive while it ran."""
    child = await Child.start(argv, cwd=cwd, env={"PATH": "/usr/bin:/bin"})
    most = threading.active_count()
    assert child.proc.stdout is not None
    await child.proc.stdout.read()
    code = await child.exited()
    await child.kill()
    return code, max(most, threading.active_count())


@linux
def test_exits_are_seen_without_a_thread_per_program(tmp_path: Path) -> None:
    async def main() -> list[tuple[int, int]]:
        await _run(["true"], tmp_path)  # the first start installs the watcher
        before = threading.active_count()
        results = await asyncio.gather(*(_run(["sh", "-c", f"sleep 0.2; exit {n}"], tmp_path) for n in range(6)))
        return [(code, most - before) for code, most in results]

    results = asyncio.run(main())
    assert [code for code, _ in results] == list(range(6))
    if sys.version_info < (3, 12):  # 3.12 and newer do the same by themselves
        assert all(extra == 0 for _, extra in results), results
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            assert type(asyncio.get_event_loop_policy().get_child_watcher()).__name__ == "_PidfdWatcher"


@linux
def test_programs_started_from_loops_in_other_threads_are_watched_by_their_own_loop(tmp_path: Path) -> None:
    install_child_watcher()
    codes: list[int] = []

    def in_thread(n: int) -> None:
        codes.append(asyncio.run(_run(["sh", "-c", f"exit {n}"], tmp_path))[0])

    threads = [threading.Thread(target=in_thread, args=(n,)) for n in (3, 4, 5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(codes) == [3, 4, 5]
    assert asyncio.run(_run(["sh", "-c", "kill -9 $$"], tmp_path))[0] == -9  # a signal, as asyncio reports it


@linux
@pytest.mark.skipif(sys.version_info >= (3, 12), reason="3.12 and newer watch children by themselves")
def test_a_program_whose_pidfd_cannot_be_had_is_waited_for_by_a_thread() -> None:
    from eval_skills.procs.watcher import _PidfdWatcher

    async def main() -> list[tuple[int, int]]:
        seen: list[tuple[int, int]] = []
        done = asyncio.Event()
        loop = asyncio.get_running_loop()

        def exited(pid: int, code: int) -> None:
            seen.append((pid, code))
            loop.call_soon_threadsafe(done.set)

        gone = 2 ** 22 + 12345  # above any pid Linux hands out: pidfd_open fails (ESRCH), as it would with EMFILE
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            _PidfdWatcher().add_child_handler(gone, exited)
        await asyncio.wait_for(done.wait(), 10)
        return seen

    assert asyncio.run(main()) == [(2 ** 22 + 12345, 255)]  # asyncio's code for an exit status it could not read


def _program(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "eval-skills-probe"
    path.write_text(f"#!/bin/sh\necho {text}\n")
    path.chmod(0o755)
    return path


def test_a_program_on_path_is_found_again_and_found_anew_once_it_is_gone(tmp_path: Path) -> None:
    first, second = _program(tmp_path / "a", "a"), _program(tmp_path / "b", "b")
    env = {"PATH": f"{tmp_path / 'early'}:{first.parent}:{second.parent}"}
    assert resolve_argv(["eval-skills-probe", "x"], cwd=tmp_path, env=env) == [str(first), "x"]
    _program(tmp_path / "early", "early")  # kept: a program put earlier on PATH is not looked for again
    assert resolve_argv(["eval-skills-probe"], cwd=tmp_path, env=env) == [str(first)]
    (tmp_path / "early" / "eval-skills-probe").unlink()
    first.chmod(0o644)  # no longer runnable: the next folder's
    assert resolve_argv(["eval-skills-probe"], cwd=tmp_path, env=env) == [str(second)]
    second.unlink()
    with pytest.raises(SkillCrashed, match="not found on PATH"):
        resolve_argv(["eval-skills-probe"], cwd=tmp_path, env=env)
    third = _program(tmp_path / "c", "c")  # another PATH is another search
    assert resolve_argv(["eval-skills-probe"], cwd=tmp_path, env={"PATH": str(third.parent)}) == [str(third)]
