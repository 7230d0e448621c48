"""host_reader.py, the script a host runs on a downloaded dataset file: parquet and jsonl, first rows, failures."""

from __future__ import annotations

import json
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from specops.tools.datasets import host_reader
from specops.tools.datasets.fetch import READER_SCRIPT

ROWS = [
    {"task_id": 1, "prompt": "Write a function to add two numbers.", "test_list": ["assert add(1, 2) == 3"]},
    {"task_id": 2, "prompt": "Write a function to négate a flag.", "test_list": []},
    {"task_id": 3, "prompt": "Write a function to reverse a list.", "test_list": ["a", "b"]},
]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    # As the host runs it: a script of its own, no specops on the path.
    return subprocess.run(
        [sys.executable, "-I", str(READER_SCRIPT), *args], capture_output=True, text=True, timeout=60, check=False
    )


@pytest.fixture
def parquet_file(tmp_path):
    path = tmp_path / "sanitized" / "test-00000-of-00001.parquet"
    path.parent.mkdir()
    schema = pa.schema([("task_id", pa.int32()), ("prompt", pa.string()), ("test_list", pa.list_(pa.string()))])
    pq.write_table(pa.Table.from_pylist(ROWS, schema=schema), path, row_group_size=2)
    return path


@pytest.fixture
def jsonl_file(tmp_path):
    path = tmp_path / "test.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS) + "\n")
    return path


def test_parquet_first_rows_of_the_columns_asked(parquet_file):
    done = _run("--format", "parquet", "--columns", '["prompt", "test_list"]', "--limit", "2", str(parquet_file))
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["rows"] == [{"prompt": r["prompt"], "test_list": r["test_list"]} for r in ROWS[:2]]
    assert out["total_rows"] == 3 and out["columns"] == ["task_id", "prompt", "test_list"]


def test_jsonl_first_rows_and_blank_lines(jsonl_file):
    done = _run("--format", "jsonl", "--columns", '["prompt"]', "--limit", "5", str(jsonl_file))
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert [r["prompt"] for r in out["rows"]] == [r["prompt"] for r in ROWS]
    assert out["total_rows"] == 3 and out["columns"] == ["task_id", "prompt", "test_list"]


def test_a_limit_of_zero_reads_no_rows_but_counts_them(parquet_file):
    out = host_reader.read(str(parquet_file), "parquet", ["prompt"], 0)
    assert out["rows"] == [] and out["total_rows"] == 3


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_a_missing_column_exits_3_and_names_what_the_file_has(fmt, parquet_file, jsonl_file):
    path = parquet_file if fmt == "parquet" else jsonl_file
    done = _run("--format", fmt, "--columns", '["question"]', "--limit", "1", str(path))
    assert done.returncode == host_reader.EXIT_MISSING_COLUMNS == 3
    assert done.stdout == ""
    assert done.stderr.startswith(host_reader.PREFIX) and '["question"]' in done.stderr and "prompt" in done.stderr


def test_a_missing_or_broken_file_exits_2(tmp_path):
    done = _run("--format", "parquet", "--columns", '["prompt"]', "--limit", "1", str(tmp_path / "none.parquet"))
    assert done.returncode == 2 and "no such file" in done.stderr
    broken = tmp_path / "broken.parquet"
    broken.write_text("not parquet")
    done = _run("--format", "parquet", "--columns", '["prompt"]', "--limit", "1", str(broken))
    assert done.returncode == 2 and "cannot read" in done.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"prompt": "ok"}\n{not json\n')
    done = _run("--format", "jsonl", "--columns", '["prompt"]', "--limit", "1", str(bad))
    assert done.returncode == 2 and "line 2 is not JSON" in done.stderr


def test_without_pyarrow_parquet_exits_4(parquet_file, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(host_reader.ReaderError) as missing:
        host_reader.read(str(parquet_file), "parquet", ["prompt"], 1)
    assert missing.value.code == host_reader.EXIT_NO_PYARROW and "pip install pyarrow" in str(missing.value)


def test_the_reader_imports_only_the_standard_library_at_the_top():
    source = READER_SCRIPT.read_text()
    top = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
    assert top == ["from __future__ import annotations", "import argparse", "import json", "import sys"]
