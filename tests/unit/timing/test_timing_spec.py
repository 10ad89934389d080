"""Loading `file.py:function` targets and the errors a user sees for bad ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuscope.errors import InputError
from gpuscope.timing.spec import load, parse

SOURCE = """
import helper_for_target


def just_fn():
    return sum


def with_args():
    return sum, ([1, 2, 3],)


def with_kwargs():
    return sorted, [[3, 1, 2]], {"reverse": True}


def broken():
    raise RuntimeError("no device")


def wrong():
    return 42
"""


@pytest.fixture
def target_file(tmp_path: Path) -> Path:
    (tmp_path / "helper_for_target.py").write_text("VALUE = 1\n")
    path = tmp_path / "kernels.py"
    path.write_text(SOURCE)
    return path


def test_callable_alone(target_file: Path) -> None:
    t = load(f"{target_file}:just_fn")
    assert (t.fn, t.args, t.has_inputs) == (sum, (), False)


def test_callable_with_args_and_kwargs(target_file: Path) -> None:
    t = load(f"{target_file}:with_kwargs")
    assert t.fn(*t.args, **t.kwargs) == [3, 2, 1]
    assert t.has_inputs
    assert load(f"{target_file}:with_args").fn(*load(f"{target_file}:with_args").args) == 6


@pytest.mark.parametrize("spec", ["kernels.py", "kernels.py:", ":fn", "kernels.py:not-a-name"])
def test_malformed_specs_name_the_expected_form(spec: str) -> None:
    with pytest.raises(InputError, match=r"expected path/to/file\.py:function"):
        parse(spec)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found"):
        load(f"{tmp_path}/absent.py:f")


def test_missing_function_lists_what_is_there(target_file: Path) -> None:
    with pytest.raises(InputError, match=r"no function 'nope' \(functions there: broken"):
        load(f"{target_file}:nope")


def test_setup_errors_and_wrong_results(target_file: Path) -> None:
    with pytest.raises(InputError, match=r"broken\(\) raised RuntimeError: no device"):
        load(f"{target_file}:broken")
    with pytest.raises(InputError, match="returned int"):
        load(f"{target_file}:wrong")


def test_import_errors_are_reported(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import module_that_does_not_exist\n")
    with pytest.raises(InputError, match=r"importing .*ModuleNotFoundError"):
        load(f"{bad}:f")
