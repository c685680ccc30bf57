"""Every malformed input of the generated corpus (``malformed_inputs.py``) is refused by
``alpa-opt`` at its source: exit code 1, ``file:line:col: error:`` (or the option, flag
or file named), no output, no traceback, no internal error. Run in-process, one case
per test."""

from __future__ import annotations

import re

import pytest
from malformed_inputs import INPUT, Case, corpus

from alpa_mlir.dialect.text import nesting_too_deep
from alpa_mlir.tools import alpa_opt

CASES = corpus()


def test_the_corpus_is_large_and_varied():
    kinds = {case.name.rsplit("/", 1)[1].rstrip("0123456789").rstrip("-") if "#" in case.name
             else case.name.split("/")[0] for case in CASES}
    assert len(CASES) >= 300
    assert kinds >= {"cut-short", "undeclared-value", "return-type", "unknown-op", "sharding", "sdy-mesh",
                     "alpa-mesh", "option", "semantics", "pipeline", "flags", "file"}


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_malformed_input_is_a_located_error(case: Case, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "input.mlir"
    if isinstance(case.text, bytes):
        path.write_bytes(case.text)
    elif case.text is not None:
        path.write_text(case.text)
    argv = [str(path) if arg == INPUT else arg for arg in case.argv]

    code = alpa_opt.main(argv)

    out, err = capsys.readouterr()
    assert code == 1, err
    assert out.replace("// -----", "").strip() == ""  # failed parts of a split input keep their place
    assert "Traceback" not in err and "internal error" not in err, err
    if case.names == "located":
        first = err.splitlines()[0]
        assert re.match(rf"{re.escape(str(path))}:[1-9]\d*:[1-9]\d*: error: ", first), err
    else:
        assert re.match(r"alpa-opt: error: ", err) and case.names in err, err


def test_nesting_counts_brackets_outside_strings_comments_and_arrows():
    assert nesting_too_deep("a<b<c>> -> x", 1) == 3  # the second '<'
    assert nesting_too_deep('"(((" // (((\n [[', 1) == 15  # the second '[': the string and comment do not count
    assert nesting_too_deep("(tensor<4xf32>) -> tensor<4xf32>", 2) is None
    assert nesting_too_deep('{a = "\\"{{{"}', 1) is None  # an escaped quote inside a string
    assert nesting_too_deep("[" * 257 + "]" * 257, 256) == 256
