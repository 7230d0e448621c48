"""Runs ON THE HOST with the host's python3: reads the first rows of a dataset file, prints them as JSON.

    python3 host_reader.py --format parquet --columns '["question"]' --limit 128 FILE

prints one JSON document on stdout:
    {"rows": [{"question": ...}, ...], "total_rows": 1319, "columns": ["question", "answer"]}
`rows` holds the first `limit` rows (file order), with only the columns asked for.

Standard library only, plus pyarrow for parquet (imported only then: a real SGLang
host has it through `datasets`). Python 3.8 or newer. It is uploaded and run as a
script (specops.tools.datasets.fetch), so it imports nothing of specops.

Failures print one line on stderr, "specops-dataset-reader: <what>", and exit:
  2  the file is missing or cannot be parsed
  3  a column asked for is not in the file
  4  pyarrow is not installed (parquet only)
"""

from __future__ import annotations

import argparse
import json
import sys

EXIT_UNREADABLE = 2
EXIT_MISSING_COLUMNS = 3
EXIT_NO_PYARROW = 4
PREFIX = "specops-dataset-reader: "


class ReaderError(Exception):
    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def _plain(value: object) -> object:
    """Values JSON can carry: numpy-free, bytes decoded."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def read_parquet(path: str, columns: list[str], limit: int) -> dict[str, object]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise ReaderError(
            "pyarrow is not installed for " + sys.executable + " (pip install pyarrow)", EXIT_NO_PYARROW
        ) from None
    try:
        parquet = pq.ParquetFile(path)
    except FileNotFoundError:
        raise ReaderError("no such file: " + path, EXIT_UNREADABLE) from None
    except Exception as exc:  # pyarrow's ArrowInvalid and kin: not a parquet file
        raise ReaderError("cannot read " + path + " as parquet: " + str(exc).splitlines()[0], EXIT_UNREADABLE) from None
    names = list(parquet.schema_arrow.names)
    missing = [c for c in columns if c not in names]
    if missing:
        raise ReaderError(
            "columns " + json.dumps(missing) + " not in the file, which has " + json.dumps(names), EXIT_MISSING_COLUMNS
        )
    rows: list[dict[str, object]] = []
    if limit > 0:
        for batch in parquet.iter_batches(batch_size=max(1, min(limit, 1024)), columns=columns):
            rows.extend(batch.to_pylist())
            if len(rows) >= limit:
                break
    return {"rows": [_plain(r) for r in rows[:limit]], "total_rows": parquet.metadata.num_rows, "columns": names}


def read_jsonl(path: str, columns: list[str], limit: int) -> dict[str, object]:
    rows: list[dict[str, object]] = []
    names: list[str] = []
    total = 0
    try:
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except ValueError as exc:
                    raise ReaderError(
                        path + " line " + str(number) + " is not JSON: " + str(exc), EXIT_UNREADABLE
                    ) from None
                if not isinstance(record, dict):
                    raise ReaderError(path + " line " + str(number) + " is not a JSON object", EXIT_UNREADABLE)
                total += 1
                for key in record:
                    if key not in names:
                        names.append(key)
                if len(rows) < limit:
                    missing = [c for c in columns if c not in record]
                    if missing:
                        raise ReaderError(
                            "columns "
                            + json.dumps(missing)
                            + " not in row "
                            + str(total)
                            + ", which has "
                            + json.dumps(list(record)),
                            EXIT_MISSING_COLUMNS,
                        )
                    rows.append({c: record[c] for c in columns})
    except FileNotFoundError:
        raise ReaderError("no such file: " + path, EXIT_UNREADABLE) from None
    except UnicodeDecodeError as exc:
        raise ReaderError(path + " is not UTF-8 text: " + str(exc), EXIT_UNREADABLE) from None
    return {"rows": rows, "total_rows": total, "columns": names}


def read(path: str, file_format: str, columns: list[str], limit: int) -> dict[str, object]:
    if file_format == "parquet":
        return read_parquet(path, columns, limit)
    if file_format == "jsonl":
        return read_jsonl(path, columns, limit)
    raise ReaderError("unknown format " + repr(file_format), EXIT_UNREADABLE)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Print the first rows of a dataset file as JSON.")
    parser.add_argument("--format", required=True, choices=["parquet", "jsonl"])
    parser.add_argument("--columns", required=True, help="a JSON list of column names")
    parser.add_argument("--limit", required=True, type=int)
    parser.add_argument("path")
    args = parser.parse_args(argv)
    try:
        columns = json.loads(args.columns)
        if not isinstance(columns, list) or not all(isinstance(c, str) for c in columns):
            raise ReaderError("--columns must be a JSON list of names", EXIT_UNREADABLE)
        out = read(args.path, args.format, columns, max(0, args.limit))
    except ReaderError as exc:
        sys.stderr.write(PREFIX + str(exc) + "\n")
        return exc.code
    json.dump(out, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
