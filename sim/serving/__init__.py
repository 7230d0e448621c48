"""The SGLang serving simulator: `python -m sglang.launch_server` on a sim host.

- `launch.main(argv, root)`: the entry point the host's stub sglang package calls.
- `ports.resolve_port(layout, port)`: the real loopback port behind a host port.
- `performance`: the performance model (configuration choice, step times, acceptance).
"""

from .launch import main
from .performance import Launch, PerformanceModel, build_performance_model, choose_config
from .ports import PortNotListening, resolve_port

__all__ = ["Launch", "PerformanceModel", "PortNotListening", "build_performance_model", "choose_config", "main", "resolve_port"]
