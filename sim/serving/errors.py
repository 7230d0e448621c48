"""How a launch fails: the text SGLang prints and the exit status it leaves."""

from __future__ import annotations


class LaunchError(Exception):
    """A startup failure. `text` is printed to stderr as it is (a traceback, an argparse
    usage line, ...); `exit_code` is what the process exits with."""

    def __init__(self, text: str, exit_code: int = 1) -> None:
        super().__init__(text)
        self.text = text
        self.exit_code = exit_code


def python_traceback(frames: list[tuple[str, int, str, str]], exception: str) -> str:
    """A traceback as CPython prints it: frames are (file, line, function, source)."""
    lines = ["Traceback (most recent call last):"]
    for file, line, function, source in frames:
        lines.append(f'  File "{file}", line {line}, in {function}')
        lines.append(f"    {source}")
    lines.append(exception)
    return "\n".join(lines)


SGLANG_SRC = "/usr/local/lib/python3.12/dist-packages/sglang"


def server_args_traceback(exception: str, check: str = "check_server_args", line: int = 4987) -> str:
    """A failure raised while ServerArgs validates itself (before anything is loaded)."""
    return python_traceback(
        [
            ("<frozen runpy>", 198, "_run_module_as_main", ""),
            ("<frozen runpy>", 88, "_run_code", ""),
            (f"{SGLANG_SRC}/launch_server.py", 32, "<module>", "server_args = prepare_server_args(sys.argv[1:])"),
            (
                f"{SGLANG_SRC}/srt/server_args.py",
                5502,
                "prepare_server_args",
                "return ServerArgs.from_cli_args(raw_args)",
            ),
            (
                f"{SGLANG_SRC}/srt/server_args.py",
                5095,
                "from_cli_args",
                "return cls(**{attr: getattr(args, attr) for attr in attrs})",
            ),
            ("<string>", 389, "__init__", ""),
            (f"{SGLANG_SRC}/srt/server_args.py", 702, "__post_init__", f"self.{check}()"),
            (f"{SGLANG_SRC}/srt/server_args.py", line, check, "raise ValueError("),
        ],
        exception,
    )


def scheduler_traceback(frames: list[tuple[str, int, str, str]], exception: str) -> str:
    """A failure inside the scheduler process while it loads or starts, as SGLang logs it."""
    base = [
        (f"{SGLANG_SRC}/srt/managers/scheduler.py", 3120, "run_scheduler_process", "scheduler = Scheduler("),
        (f"{SGLANG_SRC}/srt/managers/scheduler.py", 331, "__init__", "self.init_model_worker()"),
        (f"{SGLANG_SRC}/srt/managers/scheduler.py", 498, "init_model_worker", "self.tp_worker = TpModelWorker("),
    ]
    return python_traceback(base + frames, exception)
