"""The standard datasets acceptance is reported on (GSM8K, MATH-500, HumanEval, MBPP, MT-Bench), loaded on the host.

catalog.py    the five datasets: Hub repo, config, split, file, columns, prompt formatting, usual sample count
fetch.py      load_standard_prompts / load_standard_dataset: download and read on the host, format here
host_reader.py the script the host runs (python3, pyarrow for parquet): first rows of a file as JSON
models.py     DatasetPrompts, DatasetFailure, StandardPrompts (the loaded list, with its failures)
errors.py     DatasetError and its kinds (not found, gated, Hub unreachable, unreadable)

The shipped prompt sets (specops.prompts.acceptance) stay the offline fallback.
"""

from .catalog import DATASET_NAMES, STANDARD_DATASETS, StandardDataset, standard_dataset
from .errors import (
    DatasetError,
    DatasetGated,
    DatasetHubUnreachable,
    DatasetNotFound,
    DatasetsIncomplete,
    DatasetUnreadable,
)
from .fetch import DEFAULT_DATASETS_DIR, load_standard_dataset, load_standard_prompts
from .models import DatasetFailure, DatasetPrompts, StandardPrompts

__all__ = [
    "DATASET_NAMES",
    "DEFAULT_DATASETS_DIR",
    "STANDARD_DATASETS",
    "DatasetError",
    "DatasetFailure",
    "DatasetGated",
    "DatasetHubUnreachable",
    "DatasetNotFound",
    "DatasetPrompts",
    "DatasetUnreadable",
    "DatasetsIncomplete",
    "StandardDataset",
    "StandardPrompts",
    "load_standard_dataset",
    "load_standard_prompts",
    "standard_dataset",
]
