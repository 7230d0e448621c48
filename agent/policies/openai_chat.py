"""`openai-chat:NAME`: a Chat Completions server through the openai client, tolerant of quirky tool calling.

Self-hosted servers (SGLang, vLLM, llama.cpp, LiteLLM) often reject `strict`
tool schemas and more than one system message; the profile turns both off
(several instruction blocks are merged into one system message).
"""

from __future__ import annotations

import os

from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.profiles import ModelProfile, merge_profile
from pydantic_ai.profiles.openai import OpenAIModelProfile
from pydantic_ai.providers.openai import OpenAIProvider

DEFAULT_KEY_ENV = "OPENAI_API_KEY"

QUIRKS = OpenAIModelProfile(
    openai_supports_strict_tool_definition=False,
    openai_chat_supports_multiple_system_messages=False,
)


def _with_quirks(base: ModelProfile) -> ModelProfile:
    return merge_profile(base, QUIRKS)


def openai_chat_model(name: str, *, base_url: str | None = None, api_key_env: str | None = None) -> OpenAIChatModel:
    """The model NAME at base_url (else $OPENAI_BASE_URL), keyed from $api_key_env (default OPENAI_API_KEY)."""
    if not name:
        raise ValueError("openai-chat: needs a model name, e.g. openai-chat:Qwen/Qwen3-32B")
    base_url = base_url or os.environ.get("OPENAI_BASE_URL")
    # Local servers often need no key, but the client insists on one: any placeholder will do there.
    api_key = os.environ.get(api_key_env or DEFAULT_KEY_ENV) or ("not-needed" if base_url else None)
    if api_key is None:
        raise ValueError(
            f"openai-chat:{name}: no API key in ${api_key_env or DEFAULT_KEY_ENV} and no base URL: "
            "set the key, or point --base-url / OPENAI_BASE_URL at an OpenAI-compatible server"
        )
    provider = OpenAIProvider(base_url=base_url, api_key=api_key)
    return OpenAIChatModel(name, provider=provider, profile=_with_quirks)
