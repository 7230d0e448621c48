"""Shared test settings: no real model calls, no network beyond loopback."""

import os

# Real model requests are never made from tests (pydantic-ai's switch).
try:
    from pydantic_ai import models

    models.ALLOW_MODEL_REQUESTS = False
except ImportError:  # pragma: no cover - pydantic-ai is a hard dependency
    pass

os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("HF_HUB_DISABLE_UPDATE_CHECK", "1")
