"""Policies: who decides the next step. A model spec becomes a pydantic-ai Model.

playbook               the built-in deterministic pipeline (a FunctionModel); the default
playbook:K=V;K=V       the playbook with settings (playbook_settings.py), e.g. playbook:levels=1,64
search:tpe             Optuna's TPE over the configuration space, 8 trials (search.py), e.g. search:tpe:trials=12;seed=3
search:random          random search over the same space, with the same settings
openai-chat:NAME       any OpenAI-compatible Chat Completions server (SGLang, vLLM, ...)
PROVIDER:MODEL         any other model string pydantic-ai knows (anthropic:..., google:...)
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from .playbook_settings import PLAYBOOK, PlaybookSettingsError, is_playbook_spec, parse_playbook_spec
from .search_settings import SearchSettingsError, is_search_spec, parse_search_spec

if TYPE_CHECKING:
    from pydantic_ai.models import Model

# Model providers (the openai package above all) load only when a policy asks for one: every `specops`
# command imports this module, and most never talk to a model.
OPENAI_CHAT_PREFIX = "openai-chat:"
MODEL_ENV = "SPECOPS_MODEL"


class PolicyUnavailable(ValueError):
    """The policy spec cannot be turned into a model (unknown provider, missing key, bad form)."""


def is_scripted_spec(spec: str) -> bool:
    """A policy that is code over the playbook's goal reading (the playbook, a search), not a model."""
    return is_playbook_spec(spec) or is_search_spec(spec)


def default_policy_spec() -> str:
    """$SPECOPS_MODEL when set, else the playbook (no model configured)."""
    return os.environ.get(MODEL_ENV) or PLAYBOOK


def resolve_policy(spec: str | None = None, *, base_url: str | None = None, api_key_env: str | None = None) -> Model:
    spec = spec or default_policy_spec()
    if is_playbook_spec(spec):
        from .playbook import playbook_model  # written beside this module; imported only when asked for

        try:
            return playbook_model(parse_playbook_spec(spec))
        except PlaybookSettingsError as exc:
            raise PolicyUnavailable(str(exc)) from None
    if is_search_spec(spec):
        from .search import search_model  # Optuna loads only when a search is asked for

        try:
            return search_model(parse_search_spec(spec))
        except SearchSettingsError as exc:
            raise PolicyUnavailable(str(exc)) from None
    if spec.startswith(OPENAI_CHAT_PREFIX):
        from .openai_chat import openai_chat_model

        try:
            return openai_chat_model(spec[len(OPENAI_CHAT_PREFIX) :], base_url=base_url, api_key_env=api_key_env)
        except ValueError as exc:
            raise PolicyUnavailable(str(exc)) from None
    if ":" not in spec:
        raise PolicyUnavailable(
            f"unknown policy {spec!r}: use playbook, search:tpe, search:random, openai-chat:NAME (with --base-url) "
            "or a pydantic-ai PROVIDER:MODEL string such as anthropic:claude-sonnet-4-5"
        )
    from pydantic_ai.models import infer_model

    try:
        return infer_model(spec)
    except Exception as exc:  # unknown provider, missing package or key: say which
        raise PolicyUnavailable(f"cannot use policy {spec!r}: {exc}") from None


def policy_settings(spec: str, *, base_url: str | None, api_key_env: str | None) -> dict[str, object]:
    """What the run_start event records about the policy (never the key itself)."""
    settings: dict[str, object] = {"spec": spec}
    if is_playbook_spec(spec):
        try:
            settings["playbook"] = parse_playbook_spec(spec).model_dump(mode="json")
        except PlaybookSettingsError:
            pass
    if is_search_spec(spec):
        try:
            settings["search"] = parse_search_spec(spec).model_dump(mode="json")
        except SearchSettingsError:
            pass
    if spec.startswith(OPENAI_CHAT_PREFIX):
        settings["base_url"] = base_url or os.environ.get("OPENAI_BASE_URL")
        settings["api_key_env"] = api_key_env or "OPENAI_API_KEY"
        settings["profile"] = {"strict_tool_definitions": False, "single_system_message": True}
    return settings
