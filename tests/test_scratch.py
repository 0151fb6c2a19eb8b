"""Where runs' private folders go (a folder in memory when the temporary folder is on disk), and the sweep of
what killed processes left there."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from test_sandbox import needs_bwrap

from eval_skills.agents import create_agent
from eval_skills.agents.workdir import RunFolders
from eval_skills.errors import InputError
from eval_skills.paired import LocalExecutor
from eval_skills.paired.executor import RunSpec
from eval_skills.sandbox import create_sandbox
from eval_skills.scratch import SCRATCH_VARIABLE, folder_prefix, in_memory, scratch_root, sweep

MOUNTS = """\
22 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard
25 22 0:23 / /dev/shm rw,nosuid,nodev - tmpfs tmpfs rw,size=1024k
26 22 0:24 / /run/user/0 rw,nosuid,nodev,noexec,relatime - tmpfs tmpfs rw,size=100k
27 22 0:25 / /mnt/my\\040disk rw,relatime - tmpfs tmpfs rw
28 27 254:1 / /mnt/my\\040disk/data rw,relatime - xfs /dev/vdb rw
29 22 0:26 / /srv rw,relatime - tmpfs tmpfs rw
30 22 254:2 / /srv rw,relatime - ext4 /dev/vdc rw
"""


@pytest.mark.parametrize(("path", "memory"), [
    ("/tmp", False),  # on the root file system, ext4
    ("/dev/shm", True),
    ("/dev/shm/eval-skills-x/run", True),
    ("/dev/shmem", False),  # a prefix of the name is not a parent folder
    ("/run/user/0", False),  # noexec: a skill's scripts could not run there
    ("/mnt/my disk/work", True),  # the mount point's escaped space
    ("/mnt/my disk/data/x", False),  # a disk mounted inside the tmpfs
    ("/srv/x", False),  # two mounts at one point: the last listed hides the first
])
def test_a_folder_counts_as_in_memory_by_the_mount_that_holds_it(path, memory):
    assert in_memory(MOUNTS, path) is memory


def test_the_variable_chooses_the_folder_and_a_missing_one_is_refused(tmp_path):
    assert scratch_root({SCRATCH_VARIABLE: str(tmp_path)}) == tmp_path
    with pytest.raises(InputError) as caught:
        scratch_root({SCRATCH_VARIABLE: str(tmp_path / "missing")})
    assert SCRATCH_VARIABLE in str(caught.value) and "not a folder" in str(caught.value)
    assert scratch_root({"TMPDIR": str(tmp_path)}) is None  # a temporary folder the user chose is kept


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the mount table is Linux's")
def test_on_this_machine_the_runs_go_to_memory_when_the_temporary_folder_is_on_disk(tmp_path):
    mounts = Path("/proc/self/mountinfo").read_text()
    env = {k: v for k, v in os.environ.items() if k not in ("TMPDIR", SCRATCH_VARIABLE)}
    chosen = scratch_root(env)
    if in_memory(mounts, os.path.realpath(tempfile.gettempdir())) or not in_memory(mounts, "/dev/shm"):
        assert chosen is None
    else:
        assert chosen == Path("/dev/shm") or os.statvfs("/dev/shm").f_bavail * os.statvfs("/dev/shm").f_frsize < 1 << 30


def test_a_paired_run_works_in_the_scratch_folder_and_leaves_nothing_there(tmp_path, monkeypatch):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setenv(SCRATCH_VARIABLE, str(scratch))
    agent = create_agent("command", command=[sys.executable, "-c", "import os; print(os.getcwd())"])

    async def go():
        specs = iter([RunSpec(run_id="r1", prompt="where?", files={"data/in.txt": b"x"}, timeout=30)])
        return [out async for out in LocalExecutor(agent, concurrency=1).run(specs)]

    [out] = asyncio.run(go())
    assert out.status == "ok", out.error
    assert Path(out.response.strip()).is_relative_to(scratch.resolve())
    assert Path(out.response.strip()).name != "scratch" and list(scratch.iterdir()) == []


def test_a_killed_process_s_folders_are_swept_and_a_living_one_s_are_kept(tmp_path):
    code = ("import sys, time\nfrom pathlib import Path\nfrom eval_skills.agents.workdir import RunFolders\n"
            "folders = RunFolders('paired', Path(sys.argv[1]))\n(folders.new() / 'big.txt').write_text('x' * 1000)\n"
            "print(folders.root, flush=True)\ntime.sleep(60)\n")
    killed = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    living = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        left, alive = Path(killed.stdout.readline().strip()), Path(living.stdout.readline().strip())
        killed.send_signal(signal.SIGKILL)
        killed.wait(timeout=30)
        other = tmp_path / "eval-skills-paired-1-1-abc"  # another pid namespace's: never ours to judge
        other.mkdir()
        mine = RunFolders("paired", tmp_path)  # this process's own
        assert left.is_dir() and left.name.startswith("eval-skills-paired-")
        assert sweep(tmp_path) == [left.name]
        assert not left.exists() and alive.is_dir() and other.is_dir() and mine.root.is_dir()
        assert mine.root.name.startswith(folder_prefix("paired"))
    finally:
        living.kill()
        living.wait(timeout=30)


@needs_bwrap
def test_under_bwrap_a_scratch_folder_outside_tmp_is_hidden_from_the_runs(monkeypatch):
    # outside /tmp and /dev, which bwrap hides already: only the run's own places are seen in it
    scratch = Path(tempfile.mkdtemp(prefix="eval-skills-test-scratch-", dir="/var/tmp"))
    try:
        (scratch / "another-run").mkdir()
        (scratch / "another-run" / "secret.txt").write_text("not yours")
        monkeypatch.setenv(SCRATCH_VARIABLE, str(scratch))
        agent = create_agent("command", command=["/bin/sh", "-c", f"ls -A {scratch}; cat {scratch}/another-run/*"])
        agent.use_sandbox(create_sandbox("bwrap"))

        async def go():
            specs = iter([RunSpec(run_id="r1", prompt="look around", files={}, timeout=60)])
            return [out async for out in LocalExecutor(agent, concurrency=1).run(specs)]

        [out] = asyncio.run(go())
        listed = (out.response or "").split()  # what ls printed; cat's complaint is in the error
        assert "another-run" not in listed and "not yours" not in f"{out.response} {out.error}", (listed, out.error)
        assert len(listed) == 2 and all(name.startswith("eval-skills-") for name in listed)  # the run's own two
    finally:
        import shutil
        shutil.rmtree(scratch, ignore_errors=True)
