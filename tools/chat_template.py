"""A served model's own chat template, read from its directory on the host and rendered here.

Acceptance length depends on what the target generates, and a reasoning model
generates very differently with thinking on or off; the switch lives in its chat
template (Kimi: `thinking`, Qwen3: `enable_thinking`). The template is taken
from where transformers takes it: `chat_template.jinja` beside the weights, else
`tokenizer_config.json`'s `chat_template` (a string, or a list of named ones:
"default" is used). It is rendered in jinja2's sandbox, as transformers does,
with both switch names set, so one call serves either family.
"""

from __future__ import annotations

import functools
import json
import posixpath
from dataclasses import dataclass

from jinja2 import Template, TemplateError, meta
from jinja2.sandbox import ImmutableSandboxedEnvironment

from .hosts import Host, RemoteFileNotFound

# A template that reads one of these variables (from its caller, not set by itself) has a thinking switch.
_THINKING_SWITCHES = frozenset({"enable_thinking", "thinking"})


class ChatTemplateError(ValueError):
    """The template could not be read or rendered."""


@dataclass(frozen=True)
class ChatTemplate:
    source: str  # the file it came from, for the method line
    text: str
    special_tokens: dict[str, str]

    @property
    def has_thinking_switch(self) -> bool:
        """Whether the template reads `thinking` or `enable_thinking`. Raises ChatTemplateError when it does not parse."""
        try:
            _, variables = _compiled(self.text)
        except TemplateError as exc:
            raise ChatTemplateError(f"{self.source}: the chat template does not parse: {exc}") from None
        return not variables.isdisjoint(_THINKING_SWITCHES)

    def render(self, prompt: str, *, thinking: bool | None) -> str:
        """One user turn and the assistant's generation prompt; `thinking` None leaves the model's default."""
        switches = {} if thinking is None else {"thinking": thinking, "enable_thinking": thinking}
        try:
            template, _ = _compiled(self.text)
            return template.render(
                messages=[{"role": "user", "content": prompt}],
                add_generation_prompt=True,
                **self.special_tokens,
                **switches,
            )
        except TemplateError as exc:
            raise ChatTemplateError(f"{self.source}: the chat template does not render: {exc}") from None


def _raise(message: str) -> None:
    raise TemplateError(message)


_ENV = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
_ENV.globals["raise_exception"] = _raise  # templates call it on bad input, as transformers allows


@functools.lru_cache(maxsize=8)
def _compiled(text: str) -> tuple[Template, frozenset[str]]:
    """The template compiled once per text, and the variables it reads from its caller."""
    parsed = _ENV.parse(text)
    return _ENV.from_string(parsed), frozenset(meta.find_undeclared_variables(parsed))


def _token_text(value: object) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("content"), str):  # AddedToken as JSON
        content: str = value["content"]
        return content
    return None


def read_chat_template(host: Host, model_dir: str) -> ChatTemplate | None:
    """The model's chat template, or None when it has none. Raises ChatTemplateError on an unreadable config."""
    config_path = posixpath.join(model_dir, "tokenizer_config.json")
    try:
        config = json.loads(host.read_file(config_path))
    except RemoteFileNotFound:
        config = {}
    except (ValueError, UnicodeDecodeError) as exc:
        raise ChatTemplateError(f"{config_path} is not valid JSON: {exc}") from None
    special = {name: text for name in ("bos_token", "eos_token") if (text := _token_text(config.get(name)))}
    jinja_path = posixpath.join(model_dir, "chat_template.jinja")
    try:
        return ChatTemplate(source=jinja_path, text=host.read_file(jinja_path).decode("utf-8"), special_tokens=special)
    except RemoteFileNotFound:
        pass
    template = config.get("chat_template")
    if isinstance(template, list):  # [{"name": "default", "template": "..."}, ...]
        named = {t.get("name"): t.get("template") for t in template if isinstance(t, dict)}
        template = named.get("default")
    if not isinstance(template, str) or not template.strip():
        return None
    return ChatTemplate(source=config_path, text=template, special_tokens=special)
