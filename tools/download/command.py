"""The command a download runs on the host: the downloader's argv, wrapped in a retrying supervisor.

Every word is an argv word: the repo id, paths and patterns reach the
downloader as positional parameters of fixed code (the supervisor's `"$@"`, the
library snippet's sys.argv), never spliced into a shell line or Python source.
The token travels in the environment (HF_TOKEN), never in argv.
"""

from __future__ import annotations

import json

from .causes import TRANSIENT
from .models import DownloadMethod

# Runs the download up to `attempts` times. An attempt that fails with a transient
# error (TRANSIENT found in its part of the log) is followed by another after a wait;
# hf keeps files already complete, so each attempt fetches only the rest. Markers
# go to the log so that download_status can tell attempts and the end apart.
# Positional parameters: log, pattern, attempts, waits ("w1 w2 ..."), then the command.
SUPERVISOR = r"""log=$1; pattern=$2; attempts=$3; waits=$4; shift 4
n=1
for wait_s in $waits end; do
  echo "[specops-download] attempt $n of $attempts"
  start=$(wc -c < "$log")
  "$@" </dev/null
  rc=$?
  echo "[specops-download] attempt $n exited $rc"
  [ "$rc" -eq 0 ] && break
  [ "$wait_s" = end ] && break
  tail -c +"$((start + 1))" -- "$log" | grep -Eq -- "$pattern" || break
  echo "[specops-download] transient failure: next attempt in ${wait_s}s"
  sleep "$wait_s"
  n=$((n + 1))
done
echo "[specops-download] finished: exit $rc"
exit "$rc"
"""

# The library method: fixed code, its inputs from sys.argv.
LIBRARY_SNIPPET = """\
import json, sys
from huggingface_hub import snapshot_download
repo_id, local_dir, revision, include, exclude = sys.argv[1:6]
path = snapshot_download(repo_id=repo_id, revision=revision, local_dir=local_dir,
                         allow_patterns=json.loads(include) or None, ignore_patterns=json.loads(exclude) or None)
print("Downloaded to", path)
"""

# Quiet, line-buffered output: the log is read by people and by the classifier.
DOWNLOAD_ENV = {
    "NO_COLOR": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "PYTHONUNBUFFERED": "1",
}


def downloader_argv(
    method: DownloadMethod, *, repo_id: str, target_dir: str, revision: str, include: list[str], exclude: list[str]
) -> list[str]:
    if method is DownloadMethod.LIBRARY:
        return [
            "python3",
            "-c",
            LIBRARY_SNIPPET,
            repo_id,
            target_dir,
            revision,
            json.dumps(include),
            json.dumps(exclude),
        ]
    argv = [method.value, "download", repo_id, "--local-dir", target_dir, "--revision", revision]
    if method is DownloadMethod.HF:
        # hf's list options repeat the flag.
        for pattern in include:
            argv += ["--include", pattern]
        for pattern in exclude:
            argv += ["--exclude", pattern]
    else:
        # The old argparse CLI takes the patterns after one flag (nargs="*"); a repeated flag keeps only the last.
        if include:
            argv += ["--include", *include]
        if exclude:
            argv += ["--exclude", *exclude]
    return argv


def backoff_waits(max_attempts: int, first_wait_s: float) -> list[float]:
    """Waits before attempts 2..max_attempts: first_wait_s, then doubling."""
    return [first_wait_s * 2**i for i in range(max_attempts - 1)]


def supervised_argv(download: list[str], *, log_path: str, max_attempts: int, first_wait_s: float) -> list[str]:
    waits = " ".join(f"{w:.3f}" for w in backoff_waits(max_attempts, first_wait_s))
    return ["sh", "-c", SUPERVISOR, "specops-download", log_path, TRANSIENT, str(max_attempts), waits, *download]
