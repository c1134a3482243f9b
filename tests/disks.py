"""Small disks to fill: a tmpfs of a few blocks mounted for one test, so a
full disk (ENOSPC) is a real one, as the kernel says it to every write.

Mounting needs root (the suite runs as root in CI); elsewhere, or where the
kernel refuses (a container without CAP_SYS_ADMIN), the test is skipped,
saying why. Import the fixture into a test module:
``from tests.disks import small_disks as small_disks``.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

#: The room of a small disk: a few pages of a game, no more.
SIZE = "64k"


@dataclass
class SmallDisk:
    """A tmpfs mounted at ``path``."""

    path: Path

    def fill(self) -> None:
        """Take every free block (and keep them until :meth:`free`)."""
        block = b"\0" * 4096
        fd = os.open(self.path / ".filler", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            while True:
                os.write(fd, block)
        except OSError as e:
            if e.errno != errno.ENOSPC:
                raise
        finally:
            os.close(fd)

    def free(self) -> None:
        """Give the blocks :meth:`fill` took back."""
        (self.path / ".filler").unlink()

    def temporary_files(self) -> list[str]:
        """The names of every ``*.tmp`` file on the disk, in any folder."""
        return sorted(p.name for p in self.path.rglob("*.tmp"))


def mount(folder: Path, options: str) -> SmallDisk:
    """A tmpfs at ``folder`` (made), or the test skipped, saying why."""
    if os.geteuid() != 0:
        pytest.skip("a small disk is a tmpfs mounted for the test, which needs root")
    if shutil.which("mount") is None:
        pytest.skip("no mount command (util-linux) to mount a small disk with")
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)],
                          capture_output=True, text=True, timeout=30, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    return SmallDisk(folder)


@pytest.fixture
def small_disks() -> Iterator[Callable[..., SmallDisk]]:
    """``small_disks(folder, size=SIZE, inodes=None)`` mounts a small disk at
    ``folder``; every one is unmounted when the test ends, however it ends.
    ``inodes``: how many files it holds (its root folder is one)."""
    mounted: list[Path] = []

    def make(folder: Path, size: str = SIZE, inodes: int | None = None) -> SmallDisk:
        options = f"size={size},mode=0755" + (f",nr_inodes={inodes}" if inodes else "")
        disk = mount(folder, options)
        mounted.append(folder)
        return disk

    yield make
    for folder in reversed(mounted):
        subprocess.run(["umount", "--lazy", str(folder)], capture_output=True, timeout=30,
                       check=False)
