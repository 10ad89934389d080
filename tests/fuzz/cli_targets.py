"""Where a fuzzed command writes: every kind of output target a user can name.

`file_target(room, option, ext)` and `dir_target(room, option)` draw a kind, make what it needs in
the case's folder (a link, a FIFO, a read-only folder, a device node, ...) and return the `Output`:
the argument to give and what the command must do with it —

- write: written (the regular file `path`, or the bytes that reach `stream`);
- refuse: exit 2, nothing written (an input through any name, a directory for a file);
- fail: exit 2 once the command gets to write it (a full device, a read-only folder);
- either: written or refused (a file of an input folder that the command may not read).
"""

from __future__ import annotations

import os
import random
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

WRITE, REFUSE, FAIL, EITHER = "write", "refuse", "fail", "either"
FD = 63  # the descriptor of a process substitution, as bash numbers it (`--json >(jq .)`)
ODD = "out put\n\x1b[31m\t\x7f"  # a name with a space, a line end and control characters
OLD = b"an older file\n"


@dataclass(frozen=True)
class Output:
    option: str  # "--json", "-o", "--output-dir"
    given: str  # the argument (undecodable bytes kept as os.fsdecode keeps them)
    kind: str
    expect: str  # WRITE, REFUSE, FAIL or EITHER
    format: str  # json, md, html, csv, perfetto, text, dir
    path: str = ""  # the regular file (a directory for "dir") it lands in, absolute
    stream: str = ""  # where its bytes go instead: "stdout", "fifo:PATH", "fd"


@dataclass
class Room:
    """The case's folder (the command's working directory) and what is made in it so far."""

    folder: Path
    rng: random.Random
    inputs: list[Path] = field(default_factory=list)  # input files, absolute
    input_dirs: list[Path] = field(default_factory=list)
    no_dac: bool = False  # needs to run without CAP_DAC_OVERRIDE (as root)
    used: int = 0

    def fresh(self, stem: str, ext: str = "") -> str:
        self.used += 1
        return f"{stem}{self.used}{'.' + ext if ext else ''}"

    def relative(self, path: Path) -> str:
        return os.path.relpath(path, self.folder)


Maker = Callable[[Room, str, str, str], Output]  # (room, option, ext, format)


def file_target(room: Room, option: str, ext: str, format: str) -> Output:
    kinds = [k for k in FILE_KINDS if _possible(room, k)]
    kind = room.rng.choices(kinds, [FILE_KINDS[k][1] for k in kinds])[0]
    return FILE_KINDS[kind][0](room, option, ext, format)


def dir_target(room: Room, option: str) -> Output:
    kinds = [k for k in DIR_KINDS if _possible(room, k)]
    kind = room.rng.choices(kinds, [DIR_KINDS[k][1] for k in kinds])[0]
    return DIR_KINDS[kind][0](room, option, "", "dir")


def _possible(room: Room, kind: str) -> bool:
    if kind in ("same-as-input", "link-to-input", "hardlink-to-input", "dotdot-input", "input"):
        return bool(room.inputs)
    return kind != "file-in-input-dir" or bool(room.input_dirs)


def _at(room: Room, option: str, kind: str, format: str, given: str, expect: str = WRITE) -> Output:
    path = str((room.folder / given).absolute())
    return Output(option, given, kind, expect, format, path=path)


# -- regular files, fresh or not ------------------------------------------------------------------


def _new(room: Room, option: str, ext: str, format: str) -> Output:
    return _at(room, option, "new", format, room.fresh("out", ext))


def _existing(room: Room, option: str, ext: str, format: str) -> Output:
    name = room.fresh("existing", ext)
    (room.folder / name).write_bytes(OLD)
    return _at(room, option, "existing", format, name)


def _absolute(room: Room, option: str, ext: str, format: str) -> Output:
    given = str(room.folder / room.fresh("abs", ext))
    return Output(option, given, "absolute", WRITE, format, path=given)


def _missing_parent(room: Room, option: str, ext: str, format: str) -> Output:
    given = f"{room.fresh('no')}/such/{room.fresh('out', ext)}"
    return _at(room, option, "missing-parent", format, given)


def _odd_name(room: Room, option: str, ext: str, format: str) -> Output:
    return _at(room, option, "odd-name", format, room.fresh(ODD, ext))


def _non_utf8(room: Room, option: str, ext: str, format: str) -> Output:
    name = os.fsdecode(b"out\xff\xfe" + room.fresh("", ext).encode())
    return _at(room, option, "non-utf8", format, name)


def _dangling_link(room: Room, option: str, ext: str, format: str) -> Output:
    link, target = room.fresh("dangling", ext), room.fresh("through-link", ext)
    (room.folder / link).symlink_to(target)
    path = str(room.folder / target)
    return Output(option, link, "dangling-link", WRITE, format, path=path)


def _link_to_file(room: Room, option: str, ext: str, format: str) -> Output:
    target = room.folder / "real" / room.fresh("target", ext)
    target.parent.mkdir(exist_ok=True)
    target.write_bytes(OLD)
    link = room.fresh("link", ext)
    (room.folder / link).symlink_to(target if room.rng.random() < 0.5 else room.relative(target))
    return Output(option, link, "link-to-file", WRITE, format, path=str(target))


def _hardlink_bystander(room: Room, option: str, ext: str, format: str) -> Output:
    """A second name of a file that is not an output: that file must keep its bytes."""
    keep, link = room.folder / room.fresh("keep", "txt"), room.fresh("hardlink", ext)
    keep.write_bytes(b"keep me\n")
    os.link(keep, room.folder / link)
    return _at(room, option, "hardlink-bystander", format, link)


# -- an input under another name --------------------------------------------------------------


def _same_as_input(room: Room, option: str, ext: str, format: str) -> Output:
    path = room.rng.choice(room.inputs)
    given = str(path) if room.rng.random() < 0.3 else room.relative(path)
    return Output(option, given, "same-as-input", REFUSE, format)


def _link_to_input(room: Room, option: str, ext: str, format: str) -> Output:
    link = room.fresh("input-link", ext)
    (room.folder / link).symlink_to(room.rng.choice(room.inputs))
    return Output(option, link, "link-to-input", REFUSE, format)


def _hardlink_to_input(room: Room, option: str, ext: str, format: str) -> Output:
    link = room.fresh("input-hardlink", ext)
    os.link(room.rng.choice(room.inputs), room.folder / link)
    return Output(option, link, "hardlink-to-input", REFUSE, format)


def _dotdot_input(room: Room, option: str, ext: str, format: str) -> Output:
    path = room.rng.choice(room.inputs)
    (path.parent / "x").mkdir(exist_ok=True)
    given = os.path.join(room.relative(path.parent), "x", "..", path.name)
    return Output(option, given, "dotdot-input", REFUSE, format)


def _file_in_input_dir(room: Room, option: str, ext: str, format: str) -> Output:
    folder = room.rng.choice(room.input_dirs)
    files = sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink())
    if not files:
        return _new(room, option, ext, format)
    path = room.rng.choice(files)
    return Output(option, room.relative(path), "file-in-input-dir", EITHER, format, str(path))


# -- devices, FIFOs, descriptors, standard output ---------------------------------------------


def _dev_null(room: Room, option: str, ext: str, format: str) -> Output:
    return Output(option, "/dev/null", "dev-null", WRITE, format)


def _private_null(room: Room, option: str, ext: str, format: str) -> Output:
    """A node of the null device in the case's folder (as root): the same kind of target as
    /dev/null without risking the machine's own."""
    name = room.fresh("null")
    try:
        os.mknod(room.folder / name, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except OSError:
        return _dev_null(room, option, ext, format)
    return Output(option, name, "private-null", WRITE, format)


def _dev_full(room: Room, option: str, ext: str, format: str) -> Output:
    return Output(option, "/dev/full", "dev-full", FAIL, format)


def _fifo(room: Room, option: str, ext: str, format: str) -> Output:
    name = room.fresh("pipe", ext)
    os.mkfifo(room.folder / name)
    return Output(option, name, "fifo", WRITE, format, stream=f"fifo:{room.folder / name}")


def _dev_fd(room: Room, option: str, ext: str, format: str) -> Output:
    return Output(option, f"/dev/fd/{FD}", "dev-fd", WRITE, format, stream="fd")


def _dev_stdout(room: Room, option: str, ext: str, format: str) -> Output:
    return Output(option, "/dev/stdout", "dev-stdout", WRITE, format, stream="stdout")


def _dash(room: Room, option: str, ext: str, format: str) -> Output:
    return Output(option, "-", "dash", WRITE, format, stream="stdout")


# -- folders -----------------------------------------------------------------------------------


def _readonly_dir(room: Room, option: str, ext: str, format: str) -> Output:
    folder = room.folder / room.fresh("readonly")
    folder.mkdir()
    folder.chmod(0o555)
    room.no_dac = True
    given = room.relative(folder) if format == "dir" else f"{room.relative(folder)}/out.{ext}"
    return Output(option, given, "readonly-dir", FAIL, format)


def _existing_dir(room: Room, option: str, ext: str, format: str) -> Output:
    folder = room.folder / room.fresh("folder")
    folder.mkdir()
    (folder / "older.txt").write_bytes(OLD)
    if format == "dir":
        return Output(option, folder.name, "existing-dir", WRITE, format, path=str(folder))
    return Output(option, folder.name, "existing-dir", REFUSE, format)


def _link_to_dir(room: Room, option: str, ext: str, format: str) -> Output:
    folder = room.folder / room.fresh("real-folder")
    folder.mkdir()
    link = room.fresh("folder-link")
    (room.folder / link).symlink_to(folder.name)
    return Output(option, link, "link-to-dir", WRITE, format, path=str(folder))


def _a_file(room: Room, option: str, ext: str, format: str) -> Output:
    name = room.fresh("a-file")
    (room.folder / name).write_bytes(OLD)
    return Output(option, name, "a-file", FAIL, format)


def _input_as_dir(room: Room, option: str, ext: str, format: str) -> Output:
    return Output(option, room.relative(room.rng.choice(room.inputs)), "input", FAIL, format)


def _dir_at(kind: str, make: Maker, expect: str = WRITE) -> Maker:
    """A file maker's name, used as a folder: the folder appears there."""

    def maker(room: Room, option: str, ext: str, format: str) -> Output:
        made = make(room, option, "", format)
        return Output(option, made.given, kind, expect, format, path=made.path)

    return maker


def _not_a_dir(kind: str, make: Maker) -> Maker:
    def maker(room: Room, option: str, ext: str, format: str) -> Output:
        made = make(room, option, "", format)
        return Output(option, made.given, kind, FAIL, format, stream=made.stream)

    return maker


FILE_KINDS: dict[str, tuple[Maker, int]] = {
    "new": (_new, 8),
    "existing": (_existing, 3),
    "absolute": (_absolute, 2),
    "missing-parent": (_missing_parent, 2),
    "odd-name": (_odd_name, 2),
    "non-utf8": (_non_utf8, 2),
    "dangling-link": (_dangling_link, 2),
    "link-to-file": (_link_to_file, 2),
    "hardlink-bystander": (_hardlink_bystander, 2),
    "same-as-input": (_same_as_input, 3),
    "link-to-input": (_link_to_input, 2),
    "hardlink-to-input": (_hardlink_to_input, 2),
    "dotdot-input": (_dotdot_input, 2),
    "file-in-input-dir": (_file_in_input_dir, 1),
    "dev-null": (_dev_null, 2),
    "private-null": (_private_null, 2),
    "dev-full": (_dev_full, 2),
    "fifo": (_fifo, 2),
    "dev-fd": (_dev_fd, 2),
    "dev-stdout": (_dev_stdout, 2),
    "dash": (_dash, 3),
    "readonly-dir": (_readonly_dir, 2),
    "existing-dir": (_existing_dir, 2),
}
DIR_KINDS: dict[str, tuple[Maker, int]] = {
    "new": (_dir_at("new", _new), 6),
    "existing-dir": (_existing_dir, 4),
    "missing-parent": (_dir_at("missing-parent", _missing_parent), 2),
    "odd-name": (_dir_at("odd-name", _odd_name), 2),
    "non-utf8": (_dir_at("non-utf8", _non_utf8), 2),
    "link-to-dir": (_link_to_dir, 2),
    "dangling-link": (_dir_at("dangling-link", _dangling_link, EITHER), 1),
    "readonly-dir": (_readonly_dir, 2),
    "a-file": (_a_file, 2),
    "input": (_input_as_dir, 1),
    "dev-null": (_not_a_dir("dev-null", _dev_null), 1),
    "fifo": (_not_a_dir("fifo", _fifo), 1),
}
