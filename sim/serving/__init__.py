"""The SGLang serving simulator: `python -m sglang.launch_server` on a sim host.

- `launch.main(argv, root)`: the entry point the host's stub sglang package calls.
- `performance`: the performance model (configuration choice, step times, acceptance).
"""

from .launch import main
from .performance import Launch, PerformanceModel, build_performance_model, choose_config

__all__ = ["Launch", "PerformanceModel", "build_performance_model", "choose_config", "main"]
